"""What a person does to a memory. Each action is one POST calling ONE memory_core service
(which checks the permission, writes the ledger event and the access-log row), then a
redirect with a flash message. A refusal is a 403 page; a bad value re-renders the memory
page with the message beside the form, status 422."""

from django.contrib import messages
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from memory_console.console.access import console_view, memory_for_reader
from memory_console.console.forms import checked
from memory_console.console.views.memories import render_memory
from memory_core import curation, forgetting, writes
from memory_core.errors import Invalid
from memory_core.principals import Principal


def _invalid(request, error, uid):
    """Re-render the memory page with the message beside the form that was sent."""
    memory = memory_for_reader(request.user, uid)
    action = request.resolver_match.url_name.removeprefix("memory-")
    return render_memory(
        request,
        memory,
        errors={action: error.message},
        posted={action: request.POST},
        status=422,
    )


def _back(request, memory):
    """To the page the form was on when it posted a safe `next` (the conflicts page does),
    else to the memory. Never to another host: `next` comes from the request."""
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return redirect(target)
    return redirect("console:memory", uid=memory.uid)


@console_view(invalid=_invalid)
@require_POST
def correct(request, uid):
    memory = memory_for_reader(request.user, uid)
    new = writes.correct(
        memory, request.POST.get("text", "").strip(), principal=Principal.for_user(request.user)
    )
    messages.success(request, f"Corrected: {new.uid} is the live version; {memory.uid} retired.")
    return _back(request, new)


@console_view(invalid=_invalid)
@require_POST
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
    messages.success(request, f"Republished at {target.token} as {new.uid}.{note}")
    return _back(request, new)


def _set_pinned(request, uid, pinned: bool):
    memory = memory_for_reader(request.user, uid)
    curation.set_pinned(memory, pinned, principal=Principal.for_user(request.user))
    messages.success(request, "Pinned: always in the prompt." if pinned else "Unpinned.")
    return _back(request, memory)


@console_view
@require_POST
def pin(request, uid):
    return _set_pinned(request, uid, True)


@console_view
@require_POST
def unpin(request, uid):
    return _set_pinned(request, uid, False)


@console_view(invalid=_invalid)
@require_POST
def invalidate(request, uid):
    memory = memory_for_reader(request.user, uid)
    curation.invalidate(
        memory, request.POST.get("reason", ""), principal=Principal.for_user(request.user)
    )
    messages.success(request, "Invalidated: it no longer reaches any prompt.")
    return _back(request, memory)


@console_view(invalid=_invalid)
@require_POST
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
    return redirect("console:scope", token=scope_token)
