"""Production settings: `manage.py check --deploy` is clean under a production environment,
and the security settings follow the environment variables that drive them."""

import json
import os
import secrets
import string
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import override_settings

ROOT = Path(__file__).resolve().parent.parent

PRODUCTION = {
    "DEBUG": "0",
    "ALLOWED_HOSTS": "memory.example.com",
    "SECURE_COOKIES": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_SSL_REDIRECT": "1",
}
# Every variable these tests set, removed from the inherited environment first, so a
# developer's own shell cannot make them pass (or fail).
OURS = [
    *PRODUCTION,
    "SECRET_KEY",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "TRUST_X_FORWARDED_PROTO",
    "TRUSTED_PROXIES",
    "LOGIN_MAX_FAILURES",
    "LOGIN_MAX_FAILURES_PER_IP",
    "MEMORY_EMBEDDER",
    "MEMORY_EMBEDDER_URL",
    "MEMORY_EMBEDDER_MODEL",
    "MEMORY_EMBEDDER_DIMS",
    "MEMORY_EMBEDDER_TIMEOUT",
    "MEMORY_EMBEDDER_RETRIES",
    "MEMORY_EMBEDDER_MIN_SIMILARITY",
    "LOGIN_THROTTLE_MINUTES",
    # Set by the browser fixtures for Playwright's event loop; never in a deployment.
    "DJANGO_ALLOW_ASYNC_UNSAFE",
]


def random_secret_key() -> str:
    alphabet = string.ascii_letters + string.digits + "!@#%^&*(-_=+)"
    return "".join(secrets.choice(alphabet) for _ in range(50))


def environment(**overrides) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in OURS}
    env.update(overrides)
    return env


def manage(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def settings_in(env: dict, *names: str) -> dict:
    code = (
        "import json, django; django.setup(); from django.conf import settings; "
        f"print(json.dumps({{n: getattr(settings, n, None) for n in {list(names)!r}}}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "memory_console.settings"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # Django set up in a fresh interpreter
def test_check_deploy_is_clean_under_production_settings():
    result = manage(environment(**PRODUCTION, SECRET_KEY=random_secret_key()), "check", "--deploy")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "System check identified no issues" in output, output
    assert "WARNING" not in output and "ERROR" not in output, output


@pytest.mark.slow  # Django set up in a fresh interpreter
def test_check_deploy_warns_without_the_https_settings():
    """The same check with SECURE_* left out: the warnings the variables exist to silence."""
    env = environment(DEBUG="0", ALLOWED_HOSTS="memory.example.com", SECRET_KEY=random_secret_key())
    output = manage(env, "check", "--deploy").stderr
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in output, output


@pytest.mark.slow  # Django set up in a fresh interpreter
def test_production_variables_reach_the_settings():
    got = settings_in(
        environment(**PRODUCTION, SECRET_KEY=random_secret_key(), TRUST_X_FORWARDED_PROTO="1"),
        "DEBUG",
        "ALLOWED_HOSTS",
        "SESSION_COOKIE_SECURE",
        "CSRF_COOKIE_SECURE",
        "SESSION_COOKIE_HTTPONLY",
        "SESSION_COOKIE_SAMESITE",
        "SECURE_SSL_REDIRECT",
        "SECURE_HSTS_SECONDS",
        "SECURE_HSTS_INCLUDE_SUBDOMAINS",
        "SECURE_HSTS_PRELOAD",
        "SECURE_PROXY_SSL_HEADER",
        "X_FRAME_OPTIONS",
    )
    assert got == {
        "DEBUG": False,
        "ALLOWED_HOSTS": ["memory.example.com"],
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "SECURE_SSL_REDIRECT": True,
        "SECURE_HSTS_SECONDS": 31536000,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
        "SECURE_HSTS_PRELOAD": True,
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
        "X_FRAME_OPTIONS": "DENY",
    }


@pytest.mark.slow  # Django set up in a fresh interpreter
def test_the_defaults_are_for_one_machine_over_plain_http():
    got = settings_in(
        environment(SECRET_KEY=random_secret_key()),
        "SESSION_COOKIE_SECURE",
        "CSRF_COOKIE_SECURE",
        "SECURE_SSL_REDIRECT",
        "SECURE_HSTS_SECONDS",
        "SECURE_PROXY_SSL_HEADER",
        "TRUSTED_PROXIES",
        "LOGIN_MAX_FAILURES",
        "LOGIN_MAX_FAILURES_PER_IP",
        "LOGIN_THROTTLE_MINUTES",
        "DATA_UPLOAD_MAX_MEMORY_SIZE",
    )
    assert got == {
        "SESSION_COOKIE_SECURE": False,
        "CSRF_COOKIE_SECURE": False,
        "SECURE_SSL_REDIRECT": False,
        "SECURE_HSTS_SECONDS": 0,
        "SECURE_PROXY_SSL_HEADER": None,
        "TRUSTED_PROXIES": 0,
        "LOGIN_MAX_FAILURES": 5,
        "LOGIN_MAX_FAILURES_PER_IP": 20,
        "LOGIN_THROTTLE_MINUTES": 15,
        "DATA_UPLOAD_MAX_MEMORY_SIZE": 1024 * 1024,
    }


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SECURE_HSTS_SECONDS", "a year"),
        ("SECURE_HSTS_SECONDS", "-1"),
        ("SECURE_SSL_REDIRECT", "maybe"),
        ("SECURE_COOKIES", "sometimes"),
        ("TRUSTED_PROXIES", "-1"),
        ("LOGIN_MAX_FAILURES", "0"),
        ("SECRET_KEY", "too-short"),
        ("MEMORY_EMBEDDER", "openai"),
        ("MEMORY_EMBEDDER_TIMEOUT", "soon"),
        ("MEMORY_EMBEDDER_TIMEOUT", "nan"),
        ("MEMORY_EMBEDDER_MIN_SIMILARITY", "2"),
        ("MEMORY_EMBEDDER_RETRIES", "9"),
    ],
)
def test_a_bad_value_stops_the_server_naming_the_variable(name, value):
    env = environment(SECRET_KEY=random_secret_key())
    env[name] = value
    result = manage(env, "check")
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and name in result.stderr


@override_settings(SECURE_SSL_REDIRECT=True, SECURE_HSTS_SECONDS=31536000)
def test_with_ssl_redirect_plain_http_is_sent_to_https_but_health_answers(client, db):
    response = client.get("/login/")
    assert response.status_code == 301
    assert response["Location"] == "https://testserver/login/"
    assert client.get("/api/v1/health").status_code == 200
    secure = client.get("/login/", secure=True)
    assert secure.status_code == 200
    assert secure["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"


@pytest.mark.slow  # Django set up in a fresh interpreter
def test_the_http_embedder_without_its_url_model_and_width_stops_the_server():
    env = environment(SECRET_KEY=random_secret_key(), MEMORY_EMBEDDER="http")
    result = manage(env, "check")
    assert result.returncode != 0
    assert "MEMORY_EMBEDDER=http needs MEMORY_EMBEDDER_URL" in result.stderr
    env.update(
        MEMORY_EMBEDDER_URL="http://127.0.0.1:9/v1",
        MEMORY_EMBEDDER_MODEL="nomic-embed-text",
        MEMORY_EMBEDDER_DIMS="768",
    )
    assert manage(env, "check").returncode == 0
