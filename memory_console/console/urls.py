"""The console's addresses (docs/administrators/console.md, "Addresses"): scripts, bookmarks and
the audit
trail's links depend on these staying put. Included at "" by memory_console/urls.py."""

from django.contrib.auth import views as auth_views
from django.urls import path

from memory_console.console.actors import views as actors
from memory_console.console.common.methods import post_only
from memory_console.console.conflicts import views as conflicts
from memory_console.console.dashboard import views as dashboard
from memory_console.console.finder import bulk_views as finder_bulk
from memory_console.console.finder import views as finder
from memory_console.console.garden import views as garden
from memory_console.console.keys import views as keys
from memory_console.console.ledger import export_views as exports
from memory_console.console.ledger import views as ledger
from memory_console.console.memories import views as memories
from memory_console.console.runs import capture as runs_capture
from memory_console.console.runs import views as runs
from memory_console.console.scopes import views as scopes
from memory_console.console.users import views as users
from memory_console.login_throttle import ThrottledLoginView

app_name = "console"

urlpatterns = [
    path(
        "login/",
        # Django's LoginView, refusing with a 429 after repeated failures (login_throttle.py).
        ThrottledLoginView.as_view(redirect_authenticated_user=True),
        name="login",
    ),
    path(
        "logout/",
        # Logging out is a POST (Django's LogoutView); a GET is sent home (common/methods.py).
        post_only("console:home")(auth_views.LogoutView.as_view(next_page="/login/")),
        name="logout",
    ),
    path("", dashboard.dashboard, name="home"),
    path("scopes/", scopes.scope_list, name="scopes"),
    # Tokens named inside a tenant hold a "/" (`team:acme/ops`); "publish/" below a scope
    # is tried first, and answers a GET with the page of the scope whose last name is
    # "publish" when the user reads one, and otherwise sends it to the scope (scopes/views.py).
    path("scopes/<path:token>/publish/", scopes.scope_publish, name="scope-publish"),
    path("scopes/<path:token>/", scopes.scope_detail, name="scope"),
    # The finder and its bulk actions; memory ids never read "bulk" (memory_core/rules/ids.py).
    path("memories/", finder.memory_finder, name="memories"),
    path("memories/bulk/", finder_bulk.bulk_action, name="memories-bulk"),
    # A bulk's report and its undo, by bulk id (ids read "bulk_…"; finder/bulk_views.py).
    path("memories/bulk/<str:uid>/", finder_bulk.bulk_report, name="memories-bulk-report"),
    path("memories/bulk/<str:uid>/undo/", finder_bulk.bulk_undo, name="memories-bulk-undo"),
    path("memories/<str:uid>/", memories.memory_detail, name="memory"),
    path("memories/<str:uid>/correct/", memories.correct, name="memory-correct"),
    path("memories/<str:uid>/republish/", memories.republish, name="memory-republish"),
    path("memories/<str:uid>/pin/", memories.pin, name="memory-pin"),
    path("memories/<str:uid>/unpin/", memories.unpin, name="memory-unpin"),
    path("memories/<str:uid>/invalidate/", memories.invalidate, name="memory-invalidate"),
    path("memories/<str:uid>/reinstate/", memories.reinstate, name="memory-reinstate"),
    path("memories/<str:uid>/revert/", memories.revert, name="memory-revert"),
    path("memories/<str:uid>/tags/", memories.tags, name="memory-tags"),
    path("memories/<str:uid>/expiry/", memories.expiry, name="memory-expiry"),
    path("memories/<str:uid>/expiry/clear/", memories.expiry_clear, name="memory-expiry-clear"),
    path("memories/<str:uid>/forget/", memories.forget, name="memory-forget"),
    # Refs are qualified by their tenant (`acme/u1`). "erase/" and "reopen/" below an actor
    # are tried first, and answer a GET with the page of the actor whose ref ends so
    # (actors/views.py); nothing else is routed below an actor.
    path("actors/", actors.actor_search, name="actors"),
    path("actors/<path:ref>/erase/", actors.actor_erase, name="actor-erase"),
    path("actors/<path:ref>/reopen/", actors.actor_reopen, name="actor-reopen"),
    path("actors/<path:ref>/", actors.actor_detail, name="actor"),
    path("conflicts/", conflicts.conflict_list, name="conflicts"),
    # A conflicts-page row's inline decisions (the narrower memory, then the wider one).
    path(
        "conflicts/<str:narrow>/<str:wide>/republish/",
        conflicts.conflict_republish,
        name="conflict-republish",
    ),
    path(
        "conflicts/<str:narrow>/<str:wide>/invalidate/",
        conflicts.conflict_invalidate,
        name="conflict-invalidate",
    ),
    # Gardening proposals (memory_core/garden/); proposal ids read "prop_…", never "approve".
    path("garden/", garden.garden_list, name="garden"),
    path("garden/approve/", garden.garden_bulk_approve, name="garden-bulk-approve"),
    path("garden/<str:uid>/", garden.garden_proposal, name="garden-proposal"),
    path("garden/<str:uid>/approve/", garden.garden_approve, name="garden-approve"),
    path("garden/<str:uid>/dismiss/", garden.garden_dismiss, name="garden-dismiss"),
    path("ledger/", ledger.ledger_list, name="ledger"),
    path("ledger/new/", ledger.ledger_new, name="ledger-new"),
    path("ledger/verify/", ledger.ledger_verify, name="ledger-verify"),
    path("access/", ledger.access_list, name="access"),
    path("attribution/", runs.attribution, name="attribution"),
    # Exports with proofs (ledger/export_views.py); each manifest at the address + /manifest.
    *[
        p
        for fmt in ("csv", "jsonl")
        for p in (
            path(
                f"exports/ledger.{fmt}",
                exports.ledger_export,
                {"fmt": fmt},
                name=f"export-ledger-{fmt}",
            ),
            path(
                f"exports/ledger.{fmt}/manifest",
                exports.ledger_manifest,
                {"fmt": fmt},
                name=f"export-ledger-{fmt}-manifest",
            ),
            path(
                f"exports/access.{fmt}",
                exports.access_export,
                {"fmt": fmt},
                name=f"export-access-{fmt}",
            ),
            path(
                f"exports/access.{fmt}/manifest",
                exports.access_manifest,
                {"fmt": fmt},
                name=f"export-access-{fmt}-manifest",
            ),
        )
    ],
    path("exports/attribution.jsonl", exports.attribution_export, name="export-attribution"),
    path("runs/", runs.run_list, name="runs"),
    # Host run and thread ids may contain "/", and so may actor refs: <path:> takes the
    # rest whole (nothing is routed below a run or a thread). Links are built by
    # common/links.py, never by pasting an id into a path. See runs/views.py.
    path("runs/<path:path>/", runs.run_detail, name="run"),
    path("threads/", runs.thread_list, name="threads"),
    path("threads/<path:thread_id>/", runs.thread_detail, name="thread"),
    # Capture's "Extract now" (runs/capture.py): the thread in the form, since a thread id
    # may hold "/" and nothing is routed below a thread.
    path("capture/extract/", runs_capture.capture_extract, name="capture-extract"),
    path("keys/", keys.key_list, name="keys"),
    path("keys/create/", keys.key_create, name="key-create"),
    path("keys/<str:uid>/revoke/", keys.key_revoke, name="key-revoke"),
    path("keys/<str:uid>/pause/", keys.key_pause, name="key-pause"),
    path("keys/<str:uid>/resume/", keys.key_resume, name="key-resume"),
    path("users/", users.user_list, name="users"),
    path("users/create/", users.user_create, name="user-create"),
    path("users/grants/", users.grant_set, name="user-grant"),
    path("users/grants/revoke/", users.grant_revoke, name="user-grant-revoke"),
    path("users/<str:username>/deactivate/", users.user_deactivate, name="user-deactivate"),
    path("users/<str:username>/reactivate/", users.user_reactivate, name="user-reactivate"),
    path("users/<str:username>/password/", users.user_set_password, name="user-password"),
]
