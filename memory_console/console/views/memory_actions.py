"""What a person does to a memory. Each action is one POST calling ONE memory_core service
(which checks the permission, writes the ledger event and the access-log row).

A plain POST is answered with a redirect and a flash message; a refusal is a 403 page; a
bad value re-renders the memory page with the message beside the form, status 422.

An htmx POST (the same forms, `hx-post`) is answered with the fragment it swaps in, the
result inside it as a notice:
- from the memory page, the page's content (memory.html#memory-content);
- from a row of the conflicts page (HX-Target is the row's id, `conflict-…`), a result row
  in its place (_conflict_done.html).
Republish and forget lead elsewhere (the new memory, the scope page): an HX-Redirect, with
the flash message waiting there, except that a conflicts row gets its result row.

Refusals and bad values come back to htmx in those same fragments with status 200: htmx
swaps no 4xx answer by default, and widening htmx's responseHandling (a meta tag in
base.html) would change it for every fragment of the console. The status still lives in
the access log, where the service wrote the refusal.
"""

import re
from functools import wraps
from typing import NamedTuple

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect, push_url

from memory_console.console.access import STATUS_TITLES, console_view, memory_for_reader
from memory_console.console.forms import checked
from memory_console.console.rendering import wants_fragment
from memory_console.console.views.memories import render_memory
from memory_core import curation, forgetting, writes
from memory_core.errors import DomainError, Invalid, NotFound
from memory_core.principals import Principal


class Notice(NamedTuple):
    """An action's result shown inside the swapped fragment (_action_notice.html)."""

    level: str  # "success" or "error", as the flash message classes
    text: str


# A conflicts-page row: conflict-<narrow uid>-<wide uid> (_conflict_rows.html). It comes
# back from the request into the result row's id, so only that shape is accepted.
_ROW_ID = re.compile(r"conflict-[A-Za-z0-9_-]{1,100}")


def _action_name(request) -> str:
    return request.resolver_match.url_name.removeprefix("memory-")


def _invalid(request, error, uid):
    """Re-render the memory page with the message beside the form that was sent."""
    memory = memory_for_reader(request.user, uid)
    action = _action_name(request)
    return render_memory(
        request,
        memory,
        errors={action: error.message},
        posted={action: request.POST},
        status=422,
    )


def _safe_next(request) -> str | None:
    """The `next` the form posted (the conflicts page sends its own address), if it stays on
    this host: `next` comes from the request."""
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return None


def _back_url(request, memory) -> str:
    return _safe_next(request) or reverse("console:memory", kwargs={"uid": memory.uid})


def _row_id(request) -> str | None:
    """The conflicts-page row an htmx form will swap, if that is where it was sent from."""
    target = request.htmx.target or ""
    return target if _ROW_ID.fullmatch(target) else None


def _result_row(request, row_id, memory, notice, *, new=None):
    context = {
        "row_id": row_id,
        "notice": notice,
        "memory": memory,
        "new": new,
        "back": _safe_next(request) or reverse("console:conflicts"),
    }
    return render(request, "console/_conflict_done.html", context)


def _done(request, memory, message: str, *, new=None):
    """After the service succeeded: a redirect with a flash, or htmx's fragment.

    `new` is the memory the action wrote (correct); the memory page then shows it, and the
    address bar follows (HX-Push-Url), as the plain redirect would."""
    if not wants_fragment(request):
        messages.success(request, message)
        return redirect(_back_url(request, new or memory))
    notice = Notice("success", message)
    row_id = _row_id(request)
    if row_id:
        return _result_row(request, row_id, memory, notice, new=new)
    # Read again: the service changed the row (pinned, retired) after it was fetched.
    response = render_memory(
        request, memory_for_reader(request.user, (new or memory).uid), notice=notice
    )
    if new is not None:
        push_url(response, reverse("console:memory", kwargs={"uid": new.uid}))
    return response


def _error_text(error: DomainError, *, readable: bool) -> str:
    status = error.status if error.status in STATUS_TITLES else 400
    title = STATUS_TITLES.get(status, "Refused")
    if status == 404 and not readable:
        # Beyond the grants, or forgotten meanwhile: say no more than the 404 page does.
        return f"{title}: nothing here, or nothing you may see."
    text = f"{title}: {error.message}"
    if status == 403:
        text = text.rstrip(".") + ". This attempt has been recorded in the access log."
    return text


def _refused(request, uid, error: DomainError):
    """htmx's answer to a refusal or a bad value: the fragment it swaps, message inside."""
    try:
        memory = memory_for_reader(request.user, uid)
    except NotFound:
        memory = None
    notice = Notice("error", _error_text(error, readable=memory is not None))
    row_id = _row_id(request)
    if row_id:
        return _result_row(request, row_id, memory, notice)
    if memory is None:
        return render(request, "console/memory.html#memory-gone", {"notice": notice})
    if isinstance(error, Invalid):
        action = _action_name(request)
        return render_memory(
            request,
            memory,
            errors={action: error.message},
            posted={action: request.POST},
            notice=notice,
        )
    return render_memory(request, memory, notice=notice)


def memory_action(view=None, *, invalid=None):
    """console_view (login, refusals as pages) for a POST-only action, plus htmx's answers.

    Inside it, a DomainError of an htmx request becomes a fragment (status 200, see the
    module's docstring); a plain POST's goes on to console_view unchanged. Outside it, an
    htmx request whose session has ended is sent to the login page with HX-Redirect, back
    to the page it was sent from: login_required's 302 would be followed by the browser and
    the login page swapped into the fragment's place.
    """

    def decorate(func):
        @wraps(func)
        def fragments(request, uid):
            try:
                return func(request, uid)
            except DomainError as error:
                if not wants_fragment(request):
                    raise
                return _refused(request, uid, error)

        guarded = console_view(require_POST(fragments), invalid=invalid)

        @wraps(func)
        def wrapped(request, uid):
            if wants_fragment(request) and not request.user.is_authenticated:
                page = request.htmx.current_url_abs_path or request.path
                return HttpResponseClientRedirect(redirect_to_login(page).url)
            return guarded(request, uid)

        return wrapped

    return decorate(view) if view is not None else decorate


@memory_action(invalid=_invalid)
def correct(request, uid):
    memory = memory_for_reader(request.user, uid)
    new = writes.correct(
        memory, request.POST.get("text", "").strip(), principal=Principal.for_user(request.user)
    )
    return _done(
        request, memory, f"Corrected: {new.uid} is the live version; {memory.uid} retired.", new=new
    )


@memory_action(invalid=_invalid)
def republish(request, uid):
    memory = memory_for_reader(request.user, uid)
    targets = {scope.token: scope for scope in writes.promotion_targets(memory)}
    target = targets.get(request.POST.get("target", ""))
    if target is None:
        raise Invalid("choose one of the wider scopes offered")
    text = request.POST.get("text", "").strip() or None
    retire_original = checked(request.POST, "retire_original")
    new = writes.promote(
        memory,
        target,
        principal=Principal.for_user(request.user),
        text=text,
        retire_original=retire_original,
    )
    note = " The original is retired." if retire_original else ""
    message = f"Republished at {target.token} as {new.uid}.{note}"
    if not wants_fragment(request):
        messages.success(request, message)
        return redirect(_back_url(request, new))
    row_id = _row_id(request)
    if row_id:
        return _result_row(request, row_id, memory, Notice("success", message), new=new)
    # The new memory is another page (another scope, title, history): go there.
    messages.success(request, message)
    return HttpResponseClientRedirect(_back_url(request, new))


def _set_pinned(request, uid, pinned: bool):
    memory = memory_for_reader(request.user, uid)
    curation.set_pinned(memory, pinned, principal=Principal.for_user(request.user))
    return _done(request, memory, "Pinned: always in the prompt." if pinned else "Unpinned.")


@memory_action
def pin(request, uid):
    return _set_pinned(request, uid, True)


@memory_action
def unpin(request, uid):
    return _set_pinned(request, uid, False)


@memory_action(invalid=_invalid)
def invalidate(request, uid):
    memory = memory_for_reader(request.user, uid)
    curation.invalidate(
        memory, request.POST.get("reason", ""), principal=Principal.for_user(request.user)
    )
    return _done(request, memory, "Invalidated: it no longer reaches any prompt.")


@memory_action(invalid=_invalid)
def forget(request, uid):
    memory = memory_for_reader(request.user, uid)
    # Typing the key is the console's confirmation that the person means this memory;
    # a wrong key changes nothing.
    if request.POST.get("confirm_key", "").strip() != memory.key:
        raise Invalid("type the memory's key exactly to confirm; nothing was forgotten")
    scope_token = memory.scope.token
    result = forgetting.forget(memory, principal=Principal.for_user(request.user))
    versions = len(result.memory_ids)
    messages.success(
        request,
        f"Forgotten: {versions} version{'s' if versions != 1 else ''} erased, and the text "
        f"replaced by [forgotten] in {result.lines} prompt line"
        f"{'s' if result.lines != 1 else ''} of {result.digests} stored "
        f"run{'s' if result.digests != 1 else ''}.",
    )
    # The memory is gone, its page a 404: htmx goes to the scope page like the redirect.
    if wants_fragment(request):
        return HttpResponseClientRedirect(reverse("console:scope", kwargs={"token": scope_token}))
    return redirect("console:scope", token=scope_token)
