"""The Users page: console users, their grants, and managing both (superusers only).

docs/administrators/console.md: "Grants are managed on a Users page (superusers)". The page's
existence is no
secret, so a logged-in non-superuser gets a 403 page and an access-log row, not a 404.
Grants change through memory_core.accounts.grants (which checks again and writes the ledger).
Deactivating, reactivating and setting a new password go through memory_core.accounts.users (one
audited change each, ledger event and access-log row, no password material in either).
The list is paged and searched by username; revoking a grant and deactivating a user have
a confirmation step (a <details> that opens the form, so it needs no JavaScript), and a
deactivation POSTed without its confirmation is answered with the question, changing
nothing. Creating a user goes through memory_core.accounts.users too (a `user.created`
ledger event), after Django's UserCreationForm has checked the form.
"""

from django.contrib import messages
from django.contrib.auth import update_session_auth_hash
from django.contrib.auth.forms import UserCreationForm
from django.shortcuts import redirect
from django.views.decorators.http import require_GET

from memory_console.console.common.access import (
    console_view,
    grant_for_superuser,
    require_superuser,
)
from memory_console.console.common.forms import page_number
from memory_console.console.common.methods import post_only
from memory_console.console.common.rendering import render_page, wants_fragment
from memory_console.console.users import reads
from memory_console.console.users.forms import (
    DeactivateForm,
    GrantForm,
    GrantRevokeForm,
    PasswordForm,
    UserSearch,
)
from memory_core.accounts import grants, users
from memory_core.accounts.principals import Principal
from memory_core.errors import Invalid, NotFound
from memory_core.ledger import access_log
from memory_core.models.access import Role


def _render_users(
    request, *, errors=None, posted=None, new_user_form=None, status=200, fragment=None
):
    query = UserSearch(request.GET).values()["q"]
    context = {
        **reads.listing(query, page_number(request.GET.get("page"))),
        "query": query,
        "roles": Role.values,
        "errors": errors or {},
        "posted": posted or {},
        "new_user_form": new_user_form or UserCreationForm(),
    }
    return render_page(
        request, "console/users/users.html", context, fragment=fragment, status=status
    )


@console_view
@require_GET
def user_list(request):
    require_superuser(request.user, "users.read")
    if wants_fragment(request):  # a search or a page of the list
        return _render_users(request, fragment="console/users/_user_rows.html")
    return _render_users(request)


def _grant_invalid(request, error):
    return _render_users(request, errors={"grant": error.message}, posted=request.POST, status=422)


@post_only("console:users")
@console_view(invalid=_grant_invalid)
def grant_set(request):
    require_superuser(request.user, "grant")
    form = GrantForm(request.POST).cleaned()
    username, scope, role = form["username"], form["scope"], form["role"]
    try:
        grants.grant(username, scope, role, principal=Principal.for_user(request.user))
    except NotFound as error:
        # A slip in the form, not a probe: a superuser sees every user anyway.
        raise Invalid(error.message) from error
    messages.success(request, f"{username} is now {role} of {scope.token}.")
    return redirect("console:users")


@post_only("console:users")
@console_view
def grant_revoke(request):
    form = GrantRevokeForm(request.POST).cleaned()
    row = grant_for_superuser(request.user, form["username"], form["scope"])
    username, token, role = row.user.get_username(), row.scope.token, row.role
    grants.revoke_grant(row, principal=Principal.for_user(request.user))
    messages.success(request, f"{username} is no longer {role} of {token}.")
    return redirect("console:users")


@post_only("console:users")
@console_view
def user_create(request):
    require_superuser(request.user, "user.create")
    form = UserCreationForm(request.POST)
    if not form.is_valid():
        return _render_users(request, new_user_form=form, status=422)
    try:
        person = users.create_user(
            form.cleaned_data["username"],
            form.cleaned_data["password1"],
            principal=Principal.for_user(request.user),
        )
    except Invalid as error:  # the same name, created a moment ago by someone else
        form.add_error(None, error.message)
        return _render_users(request, new_user_form=form, status=422)
    messages.success(
        request,
        f"Created {person.get_username()}. They see nothing until you give them a grant.",
    )
    return redirect("console:users")


def _user_invalid(request, error, username):
    return _render_users(request, errors={"user": error.message, "username": username}, status=422)


@post_only("console:users")
@console_view(invalid=_user_invalid)
def user_deactivate(request, username):
    require_superuser(request.user, "user.deactivate")
    if not DeactivateForm(request.POST).cleaned()["confirm"]:
        return _confirm_deactivation(request, username)
    users.set_active(username, False, principal=Principal.for_user(request.user))
    messages.success(request, f"Deactivated {username}: they cannot log in until reactivated.")
    return redirect("console:users")


def _confirm_deactivation(request, username):
    """A deactivation POSTed without its confirmation (a stale page, a script, a form
    without JavaScript's <details>): the question, asked on a page of its own; nothing is
    changed. Refusals are those of the deactivation itself, logged the same way."""
    with access_log.refusals_logged(Principal.for_user(request.user), "user.deactivate"):
        person = reads.person(username)
        if person.pk == request.user.pk:
            raise Invalid("you cannot deactivate yourself")
    if not person.is_active:
        messages.info(request, f"{username} is already inactive.")
        return redirect("console:users")
    return render_page(request, "console/users/deactivate_confirm.html", {"person": person})


@post_only("console:users")
@console_view(invalid=_user_invalid)
def user_reactivate(request, username):
    require_superuser(request.user, "user.reactivate")
    users.set_active(username, True, principal=Principal.for_user(request.user))
    messages.success(request, f"Reactivated {username}: they can log in again.")
    return redirect("console:users")


@post_only("console:users")
@console_view(invalid=_user_invalid)
def user_set_password(request, username):
    require_superuser(request.user, "user.set_password")
    password = PasswordForm(request.POST).cleaned()["password1"]
    person = users.set_password(username, password, principal=Principal.for_user(request.user))
    ended = "their sessions end"
    if person.pk == request.user.pk:
        update_session_auth_hash(request, person)  # keep this session; others end
        ended = "your other sessions end"
    messages.success(request, f"Set a new password for {username}; {ended}.")
    return redirect("console:users")
