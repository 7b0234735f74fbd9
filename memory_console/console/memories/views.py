"""The memory page (`/memories/<id>/`, page.py renders it), and what a person does to a
memory there. Each action is one POST, read by its form (forms.py), calling ONE
memory_core service (which checks the permission, writes the ledger event and the
access-log row).

A plain POST is answered with a redirect and a flash message; a refusal is a 403 page; a
bad value re-renders the memory page with the message beside the form, status 422.

An htmx POST (the same forms, `hx-post`) is answered with the page's content
(memory.html#memory-content), the result inside it as a notice. Republish and forget lead
elsewhere (the new memory, the scope page): an HX-Redirect, with the flash message waiting
there. Refusals and bad values come back to htmx in that same fragment with status 200
(common/actions.py says why); the status still lives in the access log, where the
service wrote the refusal. The conflicts page's inline decisions have endpoints of their
own (conflicts/views.py).
"""

from django.contrib import messages
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET
from django_htmx.http import HttpResponseClientRedirect, push_url

from memory_console.console.common.access import (
    console_view,
    memory_for_reader,
    memory_in_lineage,
)
from memory_console.console.common.actions import Notice, error_text, htmx_action, safe_next
from memory_console.console.common.rendering import wants_fragment
from memory_console.console.memories.forms import (
    CorrectForm,
    ExpiryForm,
    ForgetForm,
    InvalidateForm,
    RepublishForm,
    RevertForm,
    TagsForm,
)
from memory_console.console.memories.page import render_memory
from memory_core import curation, forgetting, undo, writes
from memory_core.accounts.principals import Principal
from memory_core.errors import DomainError, Invalid, NotFound


@console_view
@require_GET
def memory_detail(request, uid):
    return render_memory(request, memory_for_reader(request.user, uid))


def _action_name(request) -> str:
    return request.resolver_match.url_name.removeprefix("memory-")


# The access-log action of each address, where it differs (the service's own name).
_LOGGED_AS = {"republish": "promote", "tags": "tag"}


def _memory(request, uid):
    """The memory an action is asked of; one the user may not see is NotFound, logged
    under the action, as the API logs a forget of a memory it does not show."""
    action = _action_name(request)
    return memory_for_reader(request.user, uid, action=_LOGGED_AS.get(action, action))


def _with_errors(request, memory, error: Invalid, *, notice=None, status=200):
    """The memory page with the message beside the form that was sent."""
    action = _action_name(request)
    return render_memory(
        request,
        memory,
        errors={action: error.message},
        posted={action: request.POST},
        notice=notice,
        status=status,
    )


def _invalid(request, error, uid):
    return _with_errors(request, memory_for_reader(request.user, uid), error, status=422)


def _back_url(request, memory) -> str:
    return safe_next(request) or reverse("console:memory", kwargs={"uid": memory.uid})


def _done(request, memory, message: str, *, new=None):
    """After the service succeeded: a redirect with a flash, or htmx's fragment.

    `new` is the memory the action wrote (correct); the memory page then shows it, and the
    address bar follows (HX-Push-Url), as the plain redirect would."""
    if not wants_fragment(request):
        messages.success(request, message)
        return redirect(_back_url(request, new or memory))
    # Read again: the service changed the row (pinned, retired) after it was fetched.
    response = render_memory(
        request,
        memory_for_reader(request.user, (new or memory).uid),
        notice=Notice("success", message),
    )
    if new is not None:
        push_url(response, reverse("console:memory", kwargs={"uid": new.uid}))
    return response


def _refused(request, error: DomainError, uid):
    """htmx's answer to a refusal or a bad value: the page's content, message inside."""
    try:
        # The refusal being answered was logged; this only asks what may be shown.
        memory = memory_for_reader(request.user, uid, action=None)
    except NotFound:
        memory = None
    notice = Notice("error", error_text(error, readable=memory is not None))
    if memory is None:
        return render(request, "console/memories/memory.html#memory-gone", {"notice": notice})
    if isinstance(error, Invalid):
        return _with_errors(request, memory, error, notice=notice)
    return render_memory(request, memory, notice=notice)


def _memory_page(uid) -> str:
    return reverse("console:memory", kwargs={"uid": uid})


def memory_action(view=None, *, invalid=None):
    decorate = htmx_action(page=_memory_page, refused=_refused, invalid=invalid)
    return decorate(view) if view is not None else decorate


@memory_action(invalid=_invalid)
def correct(request, uid):
    memory = _memory(request, uid)
    text = CorrectForm(request.POST).cleaned()["text"]
    new = writes.correct(memory, text, principal=Principal.for_user(request.user))
    return _done(
        request, memory, f"Corrected: {new.uid} is the live version; {memory.uid} retired.", new=new
    )


@memory_action(invalid=_invalid)
def republish(request, uid):
    memory = _memory(request, uid)
    form = RepublishForm(request.POST, memory=memory)
    new, message = form.save(Principal.for_user(request.user))
    if not wants_fragment(request):
        messages.success(request, message)
        return redirect(_back_url(request, new))
    # The new memory is another page (another scope, title, history): go there.
    messages.success(request, message)
    return HttpResponseClientRedirect(_back_url(request, new))


def _set_pinned(request, uid, pinned: bool):
    memory = _memory(request, uid)
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
    memory = _memory(request, uid)
    form = InvalidateForm(request.POST, memory=memory)
    return _done(request, memory, form.save(Principal.for_user(request.user)))


@memory_action(invalid=_invalid)
def reinstate(request, uid):
    memory = _memory(request, uid)
    new = undo.reinstate(memory, principal=Principal.for_user(request.user))
    return _done(request, memory, f"Reinstated: {new.uid} is live again with this text.", new=new)


@memory_action(invalid=_invalid)
def revert(request, uid):
    memory = _memory(request, uid)
    earlier = memory_in_lineage(memory, RevertForm(request.POST).cleaned()["version"])
    new = undo.revert(memory, earlier, principal=Principal.for_user(request.user))
    return _done(
        request,
        memory,
        f"Reverted: {new.uid} is the live version, with the text of {earlier.uid}.",
        new=new,
    )


@memory_action(invalid=_invalid)
def tags(request, uid):
    memory = _memory(request, uid)
    tags = TagsForm(request.POST).cleaned()["tags"]
    curation.set_tags(memory, tags, principal=Principal.for_user(request.user))
    return _done(request, memory, "Tags saved.")


@memory_action(invalid=_invalid)
def expiry(request, uid):
    """Set when the memory stops reaching prompts (curation.set_expiry)."""
    memory = memory_for_reader(request.user, uid, action="expiry.set")
    expires_at = ExpiryForm(request.POST).cleaned()["expires_at"]
    live = curation.set_expiry(memory, expires_at, principal=Principal.for_user(request.user))
    when = live.expires_at.strftime("%Y-%m-%d %H:%M")
    return _done(request, memory, f"It expires at {when} UTC: from then on it is in no prompt.")


@memory_action
def expiry_clear(request, uid):
    """The memory never expires (curation.clear_expiry)."""
    memory = memory_for_reader(request.user, uid, action="expiry.clear")
    curation.clear_expiry(memory, principal=Principal.for_user(request.user))
    return _done(request, memory, "Expiry cleared: it never expires.")


@memory_action(invalid=_invalid)
def forget(request, uid):
    memory = _memory(request, uid)
    ForgetForm(request.POST, memory=memory).cleaned()  # the key, typed to confirm
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
