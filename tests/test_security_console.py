"""Console hardening: the Content-Security-Policy and framing headers, no inline script or
style in any page, the session cookie's flags, and CSRF on every console POST."""

import http.client
import re
from http.cookies import SimpleCookie
from urllib.parse import urlencode, urlparse

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from django.urls import URLPattern, reverse

from memory_console.console import urls as console_urls
from memory_core import transcripts, turns, writes
from memory_core.models import Actor, ApiKey, LedgerEvent, Memory, ScopeGrant

# --- headers ------------------------------------------------------------------------------


def directives(policy: str) -> dict[str, list[str]]:
    parsed = {}
    for part in policy.split(";"):
        words = part.split()
        if words:
            parsed[words[0]] = words[1:]
    return parsed


def test_the_policy_forbids_inline_script_inline_style_eval_plugins_and_framing():
    policy = directives(django_settings.CONTENT_SECURITY_POLICY)
    assert policy["default-src"] == ["'self'"]
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"]
    assert policy["base-uri"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert policy["form-action"] == ["'self'"]
    assert "'unsafe-inline'" not in django_settings.CONTENT_SECURITY_POLICY
    assert "'unsafe-eval'" not in django_settings.CONTENT_SECURITY_POLICY


@pytest.mark.parametrize(
    ("path", "login"),
    [
        ("/login/", False),
        ("/", True),
        ("/scopes/tenant:acme/", True),
        ("/no-such-page/", True),
        ("/api/v1/docs", False),
        ("/api/v1/health", False),
        ("/api/v1/turns", False),  # 401 JSON
    ],
)
def test_every_response_carries_the_policy_and_refuses_framing(client, users, path, login):
    if login:
        client.force_login(users.owner)
    response = client.get(path)
    assert response["Content-Security-Policy"] == django_settings.CONTENT_SECURITY_POLICY
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"


def test_a_413_and_a_csrf_refusal_carry_the_policy_too(client, users):
    too_big = client.generic(
        "POST", "/login/", b"", CONTENT_LENGTH=str(2 * django_settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
    )
    assert too_big.status_code == 413
    strict = Client(enforce_csrf_checks=True)
    refused = strict.post("/login/", {"username": "owner", "password": "pw-owner-123"})
    assert refused.status_code == 403
    for response in (too_big, refused):
        assert response["Content-Security-Policy"] == django_settings.CONTENT_SECURITY_POLICY


INLINE = [
    (
        "inline <script>",
        re.compile(r"<script\b(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", re.I),
    ),
    ("<style> element", re.compile(r"<style\b", re.I)),
    ("style attribute", re.compile(r"<[a-z][^>]*\sstyle\s*=", re.I)),
    ("event handler attribute", re.compile(r"<[a-z][^>]*\son[a-z]+\s*=", re.I)),
    ("javascript: URL", re.compile(r"(href|src|action)\s*=\s*[\"']?\s*javascript:", re.I)),
    ("htmx inline handler", re.compile(r"\shx-on[:-]", re.I)),
]


@pytest.fixture
def content(org, users, operator):
    """Something on every page: memories at several scopes, a run, a thread, a conflict."""
    writes.publish(org.acme, "units", "report distances in kilometres", principal=users.p_owner)
    note = writes.remember(
        org.u1, "units", "they prefer miles", principal=org.acme_agent, thread_id="t1"
    ).memory
    transcripts.record_message(org.u1, "t1", "user", "I like miles", principal=org.acme_agent)
    turns.resolve_turn(org.u1, "run-1", principal=org.acme_agent, thread_id="t1")
    return note


def _sample_kwargs(pattern: URLPattern, memory_uid: str, key_uid: str) -> dict:
    samples = {
        "token": "tenant:acme",
        "ref": "acme/u1",
        "path": "acme/u1/run-1",
        "run_id": "run-1",
        "thread_id": "t1",
        "uid": key_uid if pattern.name.startswith("key-") else memory_uid,
        "narrow": memory_uid,
        "wide": memory_uid,
        "username": "owner",
    }
    return {name: samples[name] for name in pattern.pattern.converters}


def console_urls_with_samples(memory_uid: str, key_uid: str) -> dict[str, str]:
    """{pattern name: a URL of it naming real objects}, for every console URL pattern."""
    found = {}
    for pattern in console_urls.urlpatterns:
        assert isinstance(pattern, URLPattern), pattern  # no nested include to walk
        kwargs = _sample_kwargs(pattern, memory_uid, key_uid)
        found[pattern.name] = reverse(f"console:{pattern.name}", kwargs=kwargs)
    return found


def _assert_no_inline(name: str, html: str) -> None:
    for what, pattern in INLINE:
        match = pattern.search(html)
        assert match is None, (name, what, html[max(0, match.start() - 80) : match.end() + 80])


def test_no_console_page_holds_inline_script_style_or_handlers(client, users, content):
    _assert_no_inline("login", client.get("/login/").content.decode())
    client.force_login(users.su)
    urls = console_urls_with_samples(content.uid, ApiKey.objects.first().uid)
    urls["error"] = "/memories/mem_00000000000000000000000000/"
    checked = set()
    for name, url in urls.items():
        response = client.get(url)
        if response.status_code not in {200, 404} or "text/html" not in response["Content-Type"]:
            continue  # POST-only views (405), the ledger poll without its cursor (422)
        _assert_no_inline(name, response.content.decode())
        checked.add(name)
    assert checked >= {"home", "scopes", "scope", "memory", "actor", "conflicts", "ledger"}
    assert checked >= {"access", "attribution", "runs", "run", "thread", "keys", "users", "error"}


# --- cookies ------------------------------------------------------------------------------


def _session_cookie(response):
    cookie = response.cookies[django_settings.SESSION_COOKIE_NAME]
    assert cookie.value
    return cookie


def test_the_session_cookie_after_login_is_httponly_and_samesite_lax(client, users):
    response = client.post("/login/", {"username": "owner", "password": "pw-owner-123"})
    assert response.status_code == 302
    cookie = _session_cookie(response)
    assert cookie["httponly"] is True
    assert cookie["samesite"] == "Lax"
    assert not cookie["secure"]  # SECURE_COOKIES is off in tests
    assert response.cookies["csrftoken"]["samesite"] == "Lax"


@override_settings(SESSION_COOKIE_SECURE=True, CSRF_COOKIE_SECURE=True)
def test_with_secure_cookies_both_cookies_are_secure(client, users):
    client.get("/login/")
    assert client.cookies["csrftoken"]["secure"] is True
    response = client.post("/login/", {"username": "owner", "password": "pw-owner-123"})
    cookie = _session_cookie(response)
    assert cookie["secure"] is True and cookie["httponly"] is True
    assert cookie["samesite"] == "Lax"


def _raw_login(base_url: str, username: str, password: str) -> list[str]:
    """Log in over a real socket; the raw Set-Cookie headers of the login's answer."""
    address = urlparse(base_url)
    conn = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
    conn.request("GET", "/login/")
    page = conn.getresponse()
    body = page.read().decode()
    jar = SimpleCookie()
    for header in page.headers.get_all("Set-Cookie") or []:
        jar.load(header)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', body).group(1)
    form = urlencode({"username": username, "password": password, "csrfmiddlewaretoken": token})
    conn.request(
        "POST",
        "/login/",
        body=form,
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Cookie": f"csrftoken={jar['csrftoken'].value}",
            "Referer": f"{base_url}/login/",
        },
    )
    answer = conn.getresponse()
    answer.read()
    conn.close()
    assert answer.status == 302, answer.status
    return answer.headers.get_all("Set-Cookie") or []


def _attributes(header: str) -> tuple[str, set[str], dict[str, str]]:
    name = header.split("=", 1)[0]
    flags, values = set(), {}
    for part in header.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if value:
            values[key.lower()] = value
        else:
            flags.add(key.lower())
    return name, flags, values


@pytest.mark.parametrize("secure", [False, True], ids=["plain", "SECURE_COOKIES"])
def test_the_real_set_cookie_header_after_login(live_server, users, secure):
    with override_settings(SESSION_COOKIE_SECURE=secure, CSRF_COOKIE_SECURE=secure):
        headers = _raw_login(live_server.url, "owner", "pw-owner-123")
    sessions = [h for h in headers if h.startswith(f"{django_settings.SESSION_COOKIE_NAME}=")]
    assert len(sessions) == 1, headers
    _, flags, values = _attributes(sessions[0])
    assert "httponly" in flags
    assert values["samesite"] == "Lax"
    assert ("secure" in flags) is secure


# --- CSRF ---------------------------------------------------------------------------------

# Console views known to take a POST; the enumeration below must find at least these.
KNOWN_POST_VIEWS = {
    "login",
    "logout",
    "scope-publish",
    "memory-correct",
    "memory-republish",
    "memory-pin",
    "memory-unpin",
    "memory-invalidate",
    "memory-forget",
    "ledger-verify",
    "key-create",
    "key-revoke",
    "user-create",
    "user-grant",
    "user-grant-revoke",
}
FORM = {
    "key": "units",
    "text": "miles",
    "name": "probe",
    "reach": "tenant:acme",
    "username": "owner",
    "password": "pw-owner-123",
    "password1": "a-long-pass-phrase-1",
    "password2": "a-long-pass-phrase-1",
    "scope": "tenant:acme",
    "role": "admin",
    "confirm": "units",
}


def state():
    return (
        Memory.objects.count(),
        LedgerEvent.objects.count(),
        ApiKey.objects.filter(revoked_at__isnull=True).count(),
        ScopeGrant.objects.count(),
        Actor.objects.count(),
        get_user_model().objects.count(),
    )


def _csrf_refused(response) -> bool:
    return response.status_code == 403 and b"CSRF verification failed" in response.content


@pytest.mark.slow  # a POST to every console address
def test_every_console_url_refuses_a_post_without_a_csrf_token(users, content):
    urls = console_urls_with_samples(content.uid, ApiKey.objects.first().uid)
    assert set(urls) >= KNOWN_POST_VIEWS
    for pattern in console_urls.urlpatterns:
        assert not getattr(pattern.callback, "csrf_exempt", False), pattern.name

    accepting_post = set()
    for name, url in urls.items():
        # Without a token: refused before the view runs, whatever the view does with POST.
        strict = Client(enforce_csrf_checks=True)
        strict.force_login(users.su)
        before = state()
        response = strict.post(url, FORM)
        assert _csrf_refused(response), (name, url, response.status_code)
        assert state() == before, name
        assert strict.get("/").status_code == 200, name  # still logged in (logout refused)

        # With the token (a control, run in a separate session): no CSRF refusal, so the
        # 403 above came from the CSRF check; a 405 marks a view that takes no POST.
        control = Client(enforce_csrf_checks=True)
        control.force_login(users.su)
        control.get("/")
        token = control.cookies["csrftoken"].value
        answered = control.post(url, FORM, headers={"X-CSRFToken": token})
        assert not _csrf_refused(answered), (name, url)
        if answered.status_code != 405:
            accepting_post.add(name)
    assert accepting_post >= KNOWN_POST_VIEWS
