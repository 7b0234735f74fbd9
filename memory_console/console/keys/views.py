"""The API keys page: list, create (secret shown once), pause, resume, revoke
(docs/administrators/console.md,
"API keys"). A new key may be bound to one actor that exists inside its reach (the same
service and rules as `create_api_key --actor`, except that the console registers nobody).
Each row says whether the key is live, paused, expired or revoked, when it
was last used (to keys.LAST_USED_GRANULARITY) and when it expires; above the list, the
count of live keys per reach.

Who sees what. The list holds every key whose reach one of the user's grants reaches
(superuser: every key). An administrator of a key's reach may revoke it, and may create
keys reaching the scopes they administer; an auditor sees the same list without forms. A
user with no grant at all gets the page with an empty state, as the scope tree does, not a
404: the page's existence is no secret, and it tells them how to get a grant.

The secret. keys.create_api_key hands back the clear secret once. The create POST
redirects (post/redirect/get), so reloading the page never posts the form again and
creates a second key: the secret waits in the user's session for exactly one request,
the redirected GET, which pops it and shows it on a page marked `Cache-Control: no-store`
(neither the browser's cache nor a proxy keeps a copy). A reload after that shows no
secret. It is never put in a URL, logged or flashed, and only a hash is kept with the key.
"""

from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_GET

from memory_console.console.common.access import api_key_for_admin, console_view
from memory_console.console.common.forms import page_number
from memory_console.console.common.methods import post_only
from memory_console.console.common.rendering import render_page, wants_fragment
from memory_console.console.keys import reads
from memory_console.console.keys.forms import KeyCreateForm, KeyFilter
from memory_core.accounts import keys
from memory_core.accounts.principals import Principal
from memory_core.errors import Gone, Invalid, NotFound

# The session entry that carries a new key's secret from the create POST to the one GET
# that shows it.
NEW_KEY = "console.new_api_key"


def _render_keys(
    request, *, created=None, secret=None, error=None, posted=None, fragment=None, status=200
):
    filters = KeyFilter(request.GET).values()
    found = reads.listing(request.user, filters, page_number(request.GET.get("page")))
    context = {
        **found,
        "filters": filters,
        "states": list(reads.STATES),
        "filtering": any(filters.values()),
        "can_create": bool(found["reaches"]),
        "created": created,
        "secret": secret,
        "error": error,
        "posted": posted or {},
    }
    return render_page(request, "console/keys/keys.html", context, fragment=fragment, status=status)


@console_view
@require_GET
def key_list(request):
    if wants_fragment(request):  # a filter or page of rows: the secret waits for the page
        return _render_keys(request, fragment="console/keys/_key_rows.html")
    created = secret = None
    new_key = request.session.pop(NEW_KEY, None)
    if new_key:
        created = reads.visible_key(request.user, new_key["uid"])
        secret = new_key["secret"] if created is not None else None
    response = _render_keys(request, created=created, secret=secret)
    if secret:
        add_never_cache_headers(response)  # Cache-Control: ... no-store ...
    return response


def _create_invalid(request, error):
    return _render_keys(request, error=error.message, posted=request.POST, status=422)


@post_only("console:keys")
@console_view(invalid=_create_invalid)
def key_create(request):
    principal = Principal.for_user(request.user)
    form = KeyCreateForm(request.POST, user=request.user, principal=principal).cleaned()
    try:
        key, secret = keys.create_api_key(
            form["name"],
            form["reach"],
            principal=principal,
            actor_ref=form["actor"],
            register_actor=False,
            expires_at=form["expires"],
        )
    # Only the actor to bind can be missing or erased: a slip in the form, answered beside
    # it (422) as the command answers it; the service logged the refusal.
    except NotFound as error:
        raise Invalid(f"{error.message} within the reach {form['reach'].token}") from error
    except Gone as error:
        raise Invalid(f"{error.message}: no key can be bound to it") from error
    # Post/redirect/get: the next GET of the page shows the secret, once (key_list).
    request.session[NEW_KEY] = {"uid": key.uid, "secret": secret}
    response = redirect(f"{reverse('console:keys')}#new-key")
    response.status_code = 303  # See Other: the browser GETs the page, a reload GETs again
    add_never_cache_headers(response)
    return response


@post_only("console:keys")
@console_view
def key_revoke(request, uid):
    key = api_key_for_admin(request.user, uid)
    if key.revoked_at is not None:
        messages.info(request, f"The key {key.name} was already revoked.")
        return redirect("console:keys")
    keys.revoke_api_key(key, principal=Principal.for_user(request.user))
    messages.success(
        request, f"Revoked the key {key.name} (mc_{key.prefix}…): it is refused from now on."
    )
    return redirect("console:keys")


@post_only("console:keys")
@console_view
def key_pause(request, uid):
    key = api_key_for_admin(request.user, uid, action="api_key.pause")
    if key.revoked_at is not None:
        messages.info(request, f"The key {key.name} is revoked: there is nothing to pause.")
        return redirect("console:keys")
    keys.pause_api_key(key, principal=Principal.for_user(request.user))
    messages.success(
        request, f"Paused the key {key.name} (mc_{key.prefix}…): it is refused until resumed."
    )
    return redirect("console:keys")


@post_only("console:keys")
@console_view
def key_resume(request, uid):
    key = api_key_for_admin(request.user, uid, action="api_key.resume")
    if key.revoked_at is not None:
        messages.info(request, f"The key {key.name} is revoked: revocation cannot be undone.")
        return redirect("console:keys")
    keys.resume_api_key(key, principal=Principal.for_user(request.user))
    messages.success(request, f"Resumed the key {key.name} (mc_{key.prefix}…).")
    return redirect("console:keys")
