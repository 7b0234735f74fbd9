"""Access-scoped lookups and the console's permission decorator (docs/architecture/decisions.md).

Console views never call a bare `get_object_or_404`: they go through these helpers, which
encode who may see what, so a missing check is a missing helper call, visible in review.
Something outside a user's grants is a 404, never a 403: a 403 would confirm it exists.

Which scopes a user reads is memory_core.accounts.permissions' rule: `role_for` for one scope and
`readable_scope_roles` for all of them at once (imported here, where the views look for it).

What a user may *do* is decided by the memory_core services (each raises Forbidden and
writes the refusal to the access log); `console_view` turns those DomainErrors into pages,
and first refuses (400) parameters no view may read (common/parameters.py).

A look-up that finds nothing the user may see writes its 404 to the access log, channel
`console`, as the API writes its own (`not_found`): a tenant's administrator opening
another tenant's memory, actor, run or thread page is probing, and the superuser's access
log must show it. The row holds what the address named (ids and refs, only when they have
the shape of one: an address is typed by the user and may be anything, of any length), and
never a key or a text. `action=None` looks up without logging: a second look-up in the same
request, whose refusal (if any) was written already, or a probe that is not an attempt.
"""

import re
from dataclasses import dataclass
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import JsonResponse
from django.shortcuts import render

from memory_console.console.common import parameters
from memory_console.console.common.links import run_candidates
from memory_core.accounts.permissions import readable_scope_roles, role_for
from memory_core.accounts.principals import Principal
from memory_core.errors import DomainError, Forbidden, Invalid, NotFound
from memory_core.garden import reads as garden_reads
from memory_core.ledger import access_log
from memory_core.models import (
    AccessLog,
    Actor,
    ApiKey,
    Digest,
    DigestLine,
    LedgerEvent,
    Memory,
    Scope,
    ScopeGrant,
    Thread,
)
from memory_core.models.access import Role
from memory_core.rules.inputs import host_id_problem
from memory_core.rules.names import is_valid_ref
from memory_core.rules.scopes import is_valid_scope
from memory_core.visibility import MEMORY_ID_RE


def _public_id(prefix: str, value: str) -> str | None:
    """`value` if it has the shape of a public id (memory_core.rules.ids), else None."""
    return value if re.fullmatch(rf"{prefix}_[0-9A-Z]{{26}}", value) else None


def _host_id(value: str | None) -> str | None:
    """A host's run or thread id as typed, if it is one (1-128 printable characters)."""
    return value if value and host_id_problem(value, "id") is None else None


def not_found(
    user,
    action: str | None,
    message: str,
    *,
    scope: str | None = None,
    actor_ref: str | None = None,
    memory_id: str | None = None,
    ids: dict[str, str | None] | None = None,
) -> NotFound:
    """The NotFound to raise for what `user` may not see, its refusal written first (under
    `action`; nothing when None). Each ref the address named is copied only when it is
    well formed; `ids` go into the row's detail (`{"thread": "t1"}`), checked by the caller."""
    if action is not None:
        detail = {"reason": NotFound.reason}
        detail.update({name: value for name, value in (ids or {}).items() if value})
        access_log.record(
            Principal.for_user(user),
            action,
            NotFound.status,
            actor_ref=actor_ref if actor_ref and is_valid_ref(actor_ref) else None,
            scope=scope if scope and is_valid_scope(scope) else None,
            memory_ids=[memory_id] if memory_id and MEMORY_ID_RE.fullmatch(memory_id) else [],
            detail=detail,
        )
    return NotFound(message)


def scope_for_reader(user, token: str, *, action: str | None = "scope.read") -> Scope:
    """The scope `token` if any of the user's grants reaches it, else NotFound."""
    scope = Scope.objects.select_related("parent").filter(token=token).first()
    if scope is None or role_for(user, scope) is None:
        raise not_found(user, action, "scope not found", scope=token)
    return scope


def memory_for_reader(user, uid: str, *, action: str | None = "memory.read") -> Memory:
    """Any version of memory `uid` (live or retired) if the user may read its scope."""
    memory = (
        Memory.objects.select_related("scope", "origin_actor", "supersedes", "promoted_from__scope")
        .filter(uid=uid)
        .first()
    )
    if memory is None or role_for(user, memory.scope) is None:
        raise not_found(user, action, "memory not found", memory_id=uid)
    return memory


def memory_in_lineage(memory: Memory, uid: str) -> Memory:
    """Version `uid` of the same memory as `memory` (readable with it: one lineage, one
    scope); anything else is chosen wrongly, not hidden."""
    version = Memory.objects.filter(uid=uid, lineage=memory.lineage).first()
    if version is None:
        raise Invalid("choose an earlier version of this memory")
    return version


def actor_for_reader(user, ref: str, *, action: str | None = "actor.read") -> Actor:
    """The actor `ref` if any of the user's grants reaches its own scope, else NotFound.

    A grant reaches an actor whose chain holds the granted scope or whose own scope lies
    below it (permissions.role_for); an unknown ref and another tenant's look the same.
    """
    actor = Actor.objects.select_related("scope").filter(ref=ref).first()
    if actor is None or role_for(user, actor.scope) is None:
        raise not_found(user, action, "actor not found", actor_ref=ref)
    return actor


def api_key_for_admin(user, uid: str, *, action: str = "api_key.revoke") -> ApiKey:
    """API key `uid` for an administrator of its reach (superuser: any key).

    A key whose reach no grant of the user reaches is NotFound, like anything else outside
    their grants. An auditor of the reach already sees the key on the keys page, so refusing
    them says nothing new: Forbidden, written to the access log as `action`.
    """
    key = ApiKey.objects.select_related("reach").filter(uid=uid).first()
    role = role_for(user, key.reach) if key is not None else None
    if role is None:
        raise not_found(user, action, "API key not found", ids={"api_key": _public_id("key", uid)})
    if role != Role.ADMIN:
        with access_log.refusals_logged(Principal.for_user(user), action, scope=key.reach.token):
            raise Forbidden(f"managing this key needs an administrator of {key.reach.token}")
    return key


def require_superuser(user, action: str) -> None:
    """Users and grants are a superuser's business (docs/administrators/index.md, "People and what
    they may do"). That page is no
    secret, so a logged-in non-superuser gets Forbidden (a 403 page), logged as `action`."""
    if not user.is_superuser:
        with access_log.refusals_logged(Principal.for_user(user), action):
            raise Forbidden("only a superuser manages users and grants")


def grant_for_superuser(user, username: str, token: str) -> ScopeGrant:
    """The grant of `username` at scope `token`, for a superuser; NotFound if none."""
    require_superuser(user, "grant.revoke")
    grant = (
        ScopeGrant.objects.select_related("user", "scope")
        .filter(user__username=username, scope__token=token)
        .first()
    )
    if grant is None:
        raise NotFound("grant not found")
    return grant


def reached_actor_tokens(roles: dict[int, str] | None) -> list[str] | None:
    """The own-scope tokens of the actors that `roles` (from readable_scope_roles) reach.

    None stays None ("every actor"). Every chain starts with its actor's own scope, so as
    memory_core.conflicts' `reach_tokens` this selects exactly the actors whose pages the
    user may open; the granted tokens alone would miss an actor hanging below a granted
    scope in the tree without naming that scope in its chain.
    """
    if roles is None:
        return None
    return list(
        Scope.objects.filter(id__in=list(roles), token__startswith="actor:").values_list(
            "token", flat=True
        )
    )


STATUS_TITLES = {
    403: "Not allowed",
    404: "Not found",
    422: "That did not work",
}


def _refusal(request, status: int, title: str, message: str, *, as_json: bool):
    if as_json:
        return JsonResponse({"detail": message}, status=status)
    context = {"status": status, "title": title, "message": message}
    return render(request, "console/common/error.html", context, status=status)


def error_page(request, error: DomainError, *, as_json: bool = False):
    """The page for a refusal (`{"detail": ...}` with `as_json`). Forbidden was already
    written to the access log by the service that raised it; a 404 says only "not found",
    whatever the reason."""
    status = error.status if error.status in STATUS_TITLES else 400
    message = "Nothing here, or nothing you may see." if status == 404 else error.message
    title = STATUS_TITLES.get(status, "Refused")
    return _refusal(request, status, title, message, as_json=as_json)


def bad_parameters(request, path_values: dict, *, as_json: bool = False):
    """The 400 for parameters no view may read (common/parameters.py), or None."""
    found = parameters.problem(request, path_values)
    if found is None:
        return None
    return _refusal(request, 400, "Bad request", found, as_json=as_json)


def parameters_checked(view):
    """bad_parameters alone, for a view that looks something up to choose which console
    view answers (scopes/views.scope_publish) before any of them runs."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        refused = bad_parameters(request, kwargs)
        return refused if refused is not None else view(request, *args, **kwargs)

    return wrapped


def console_view(view=None, *, invalid=None, json_errors=False):
    """Login required; parameters checked; memory_core refusals become pages.

    Parameters no view may read (common/parameters.py) -> 400 before the view runs.
    Forbidden -> 403 page, NotFound -> 404 page, Invalid -> `invalid(request, error, ...)`
    (a view that re-renders the form with the message, status 422), or a plain 422 page.
    With `json_errors` each of these is `{"detail": ...}` instead (exports: scripts read
    them). Anonymous users are sent to /login/.
    """

    def decorate(func):
        @wraps(func)
        def wrapped(request, *args, **kwargs):
            refused = bad_parameters(request, kwargs, as_json=json_errors)
            if refused is not None:
                return refused
            try:
                return func(request, *args, **kwargs)
            except Invalid as error:
                if invalid is None:
                    return error_page(request, error, as_json=json_errors)
                try:
                    return invalid(request, error, *args, **kwargs)
                except DomainError as again:
                    return error_page(request, again, as_json=json_errors)
            except DomainError as error:
                return error_page(request, error, as_json=json_errors)

        return login_required(wrapped)

    return decorate(view) if view is not None else decorate


# --- Runs and conversations (attribution, runs and thread pages) ----------------------
# A digest, its lines and a thread belong to one actor; they are readable when that
# actor's own scope is (readable_scope_roles). Lists are filtered, and one specific run
# or thread outside the grants is NotFound, like anything else outside them.


def _for_readable_actors(rows, user, actor_path: str):
    roles = readable_scope_roles(user)
    if roles is None:
        return rows
    return rows.filter(**{f"{actor_path}__scope_id__in": list(roles)})


def digests_for_reader(user):
    """Every stored digest (run) of an actor the user may read."""
    return _for_readable_actors(Digest.objects.select_related("actor"), user, "actor")


def digest_for_reader(user, path: str, *, action: str | None = "run.read") -> Digest:
    """The digest at `/runs/<path>/` (`<actor ref>/<run id>`, see links.run_candidates),
    if the user may read that actor."""
    readings = run_candidates(path)
    for actor_ref, run_id in readings:
        digest = digests_for_reader(user).filter(actor__ref=actor_ref, run_id=run_id).first()
        if digest is not None:
            return digest
    # Logged as the first reading that names an actor and a run (as the page's links read).
    named = [(ref, run) for ref, run in readings if is_valid_ref(ref) and _host_id(run)]
    actor_ref, run_id = named[0] if named else (None, None)
    raise not_found(user, action, "run not found", actor_ref=actor_ref, ids={"run_id": run_id})


def digest_lines_for_reader(user):
    """Every stored prompt line of a run the user may read."""
    lines = DigestLine.objects.select_related("digest__actor")
    return _for_readable_actors(lines, user, "digest__actor")


def all_threads_for_reader(user):
    """Every stored conversation of an actor the user may read."""
    return _for_readable_actors(Thread.objects.select_related("actor"), user, "actor")


def threads_for_reader(
    user,
    ref: str,
    actor_ref: str | None = None,
    *,
    limit: int | None = None,
    action: str | None = "thread.read",
) -> list[Thread]:
    """The threads with host id `ref` (of actor `actor_ref` when given) the user may read,
    by actor ref, at most `limit` of them.

    A host's thread id is unique per actor, not globally: two actors may each have a "t1".
    NotFound when none is readable.
    """
    threads = Thread.objects.select_related("actor").filter(ref=ref)
    if actor_ref:
        threads = threads.filter(actor__ref=actor_ref)
    found = list(_for_readable_actors(threads, user, "actor").order_by("actor__ref")[:limit])
    if not found:
        raise not_found(
            user,
            action,
            "conversation not found",
            actor_ref=actor_ref,
            ids={"thread": _host_id(ref)},
        )
    return found


def proposal_for_reader(user, uid: str, *, action: str | None = "garden.read"):
    """Gardening proposal `uid` if the user reads its scope (memory_core.garden.reads)."""
    try:
        return garden_reads.proposal_for_reader(user, uid)
    except NotFound as error:
        ids = {"proposal": _public_id("prop", uid)}
        raise not_found(user, action, error.message, ids=ids) from None


def origin_threads_for_reader(user, pairs) -> dict[tuple[int, str], Thread]:
    """{(actor id, ref): thread} for the memory origins given that are stored and readable.

    For origins a missing thread is no error: pruning may have removed it, and the page
    says "origin no longer resolves". One query for all of them (thread_actor_ref_unique).
    """
    pairs = {(actor_id, ref) for actor_id, ref in pairs if actor_id is not None and ref}
    if not pairs:
        return {}
    threads = Thread.objects.select_related("actor").filter(
        actor_id__in={actor_id for actor_id, _ in pairs}, ref__in={ref for _, ref in pairs}
    )
    found = _for_readable_actors(threads, user, "actor")
    return {(t.actor_id, t.ref): t for t in found if (t.actor_id, t.ref) in pairs}


# --- The ledger and the access log (ledger, access-log and dashboard pages) ------------------


@dataclass(frozen=True)
class AuditReach:
    """What of the ledger and the access log a user may read.

    A ledger event is readable when its scope is. An access-log row is readable when its
    scope is, or when it was made on behalf of an actor whose own scope is readable (turns
    and reach refusals name only the actor). A row with neither is a superuser's only.
    `streams` are the ledger chains that hold the readable scopes' events.
    """

    everything: bool
    scope_ids: frozenset[int] = frozenset()
    tokens: frozenset[str] = frozenset()
    actor_refs: frozenset[str] = frozenset()
    streams: frozenset[str] = frozenset()

    def reads_scope(self, token: str | None) -> bool:
        return self.everything or token in self.tokens


def audit_reach(user) -> AuditReach:
    """readable_scope_roles, plus one query for the tokens, actor refs and streams."""
    roles = readable_scope_roles(user)
    if roles is None:
        return AuditReach(everything=True)
    tokens, refs, streams = set(), set(), set()
    rows = Scope.objects.filter(id__in=list(roles)).values_list("token", "stream", "actor__ref")
    for token, stream, ref in rows:
        tokens.add(token)
        streams.add(stream)
        if ref is not None:
            refs.add(ref)
    return AuditReach(
        everything=False,
        scope_ids=frozenset(roles),
        tokens=frozenset(tokens),
        actor_refs=frozenset(refs),
        streams=frozenset(streams),
    )


def ledger_events_for_reader(user, reach: AuditReach | None = None):
    """The ledger events the user may read (unordered; callers page by id)."""
    reach = reach if reach is not None else audit_reach(user)
    events = LedgerEvent.objects.all()
    if reach.everything:
        return events
    if not reach.tokens:
        return events.none()
    # The streams as well as the scopes: every event sits in its scope's stream, and
    # ledger_stream_idx walks a tenant's stream newest first, where the scopes alone
    # would walk the whole ledger backwards to find an old tenant's newest events.
    return events.filter(stream__in=sorted(reach.streams), scope__in=sorted(reach.tokens))


def access_rows_for_reader(user, reach: AuditReach | None = None):
    """The access-log rows the user may read (unordered; callers page by id)."""
    reach = reach if reach is not None else audit_reach(user)
    rows = AccessLog.objects.all()
    if reach.everything:
        return rows
    if not reach.tokens and not reach.actor_refs:
        return rows.none()
    visible = Q(scope__in=sorted(reach.tokens)) if reach.tokens else Q()
    if reach.actor_refs:
        visible |= Q(actor_ref__in=sorted(reach.actor_refs))
    return rows.filter(visible)
