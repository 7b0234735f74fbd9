"""Settings for Memory Console, read from the environment (see README, "Configuration")."""

import secrets
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from memory_console.database import EMBEDDED, app_role, database_urls, parse_database_url
from memory_console.env import (
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_str,
)
from memory_core.db.privileges import OWNER_ALIAS

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

DEBUG = env_bool("DEBUG", False)


def _secret_key() -> str:
    """SECRET_KEY from the environment, else one generated once into ./var/secret_key.

    A generated key is enough for one machine; several servers must share an explicit one.
    """
    explicit = env_str("SECRET_KEY")
    if explicit is not None:
        if len(explicit) < 32:
            raise ImproperlyConfigured("SECRET_KEY must be at least 32 characters long")
        return explicit
    path = VAR_DIR / "secret_key"
    if not path.exists():
        VAR_DIR.mkdir(exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# The two limits that bound a prompt: lines per turn and characters per fact.
MEMORY_MAX_LINES = env_int("MEMORY_MAX_LINES", 20, minimum=1, maximum=200)
MEMORY_MAX_FACT_CHARS = env_int("MEMORY_MAX_FACT_CHARS", 240, minimum=16, maximum=2000)

# Gardening (memory_core/garden/): N actors for a promotion or a shadowed person, D days
# for stale and unused memories, and the cosine similarity that makes two texts equivalent
# when an embedder is configured.
GARDEN_MIN_ACTORS = env_int("GARDEN_MIN_ACTORS", 3, minimum=2, maximum=10_000)
GARDEN_STALE_DAYS = env_int("GARDEN_STALE_DAYS", 30, minimum=1, maximum=3650)
GARDEN_SIMILARITY = env_float("GARDEN_SIMILARITY", 0.9, minimum=0.5, maximum=1.0)

# Semantic recall (memory_core/recall/providers.py, README "Semantic recall"): which embedder turns
# a memory and a query into a vector. `wordllama` ships its weights in its wheel and never
# downloads; `http` is any OpenAI-compatible /v1/embeddings server; `none` is lexical only.
MEMORY_EMBEDDER = env_choice("MEMORY_EMBEDDER", "wordllama", ("wordllama", "http", "none"))
MEMORY_EMBEDDER_URL = env_str("MEMORY_EMBEDDER_URL", "")
MEMORY_EMBEDDER_MODEL = env_str("MEMORY_EMBEDDER_MODEL", "")
MEMORY_EMBEDDER_KEY = env_str("MEMORY_EMBEDDER_KEY", "")
MEMORY_EMBEDDER_DIMS = env_int("MEMORY_EMBEDDER_DIMS", 0, minimum=0, maximum=16000)
MEMORY_EMBEDDER_VERSION = env_str("MEMORY_EMBEDDER_VERSION", "1")
MEMORY_EMBEDDER_TIMEOUT = env_float("MEMORY_EMBEDDER_TIMEOUT", 2.0, minimum=0.05, maximum=60)
MEMORY_EMBEDDER_RETRIES = env_int("MEMORY_EMBEDDER_RETRIES", 1, minimum=0, maximum=5)
MEMORY_EMBEDDER_COOLDOWN = env_float("MEMORY_EMBEDDER_COOLDOWN", 30.0, minimum=0, maximum=3600)
# Unset: the embedder's own calibrated floor (wordllama 0.2, http 0.3).
MEMORY_EMBEDDER_MIN_SIMILARITY = (
    env_float("MEMORY_EMBEDDER_MIN_SIMILARITY", 0.0, minimum=-1.0, maximum=1.0)
    if env_str("MEMORY_EMBEDDER_MIN_SIMILARITY", "").strip()
    else None
)
if MEMORY_EMBEDDER == "http" and not (
    MEMORY_EMBEDDER_URL and MEMORY_EMBEDDER_MODEL and MEMORY_EMBEDDER_DIMS
):
    raise ImproperlyConfigured(
        "MEMORY_EMBEDDER=http needs MEMORY_EMBEDDER_URL (e.g. http://localhost:11434/v1), "
        "MEMORY_EMBEDDER_MODEL and MEMORY_EMBEDDER_DIMS"
    )

# Capture (memory_core/capture/, docs/agents/capture.md): an OpenAI-compatible chat model
# that reads a thread's new messages and writes what it finds through `remember`. Off unless
# asked for. MEMORY_EXTRACT_EVERY=N queues an extraction after every N new messages of a
# thread (0: only when asked, POST /threads/{id}/extract or import_conversations --extract).
MEMORY_EXTRACTOR = env_choice("MEMORY_EXTRACTOR", "none", ("none", "http"))
MEMORY_EXTRACTOR_URL = env_str("MEMORY_EXTRACTOR_URL", "")
MEMORY_EXTRACTOR_MODEL = env_str("MEMORY_EXTRACTOR_MODEL", "")
MEMORY_EXTRACTOR_KEY = env_str("MEMORY_EXTRACTOR_KEY", "")
MEMORY_EXTRACTOR_TIMEOUT = env_float("MEMORY_EXTRACTOR_TIMEOUT", 60.0, minimum=0.05, maximum=600)
MEMORY_EXTRACTOR_RETRIES = env_int("MEMORY_EXTRACTOR_RETRIES", 1, minimum=0, maximum=5)
MEMORY_EXTRACTOR_COOLDOWN = env_float("MEMORY_EXTRACTOR_COOLDOWN", 30.0, minimum=0, maximum=3600)
MEMORY_EXTRACT_MAX = env_int("MEMORY_EXTRACT_MAX", 10, minimum=1, maximum=100)
MEMORY_EXTRACT_EVERY = env_int("MEMORY_EXTRACT_EVERY", 0, minimum=0, maximum=10_000)
if MEMORY_EXTRACTOR == "http" and not (MEMORY_EXTRACTOR_URL and MEMORY_EXTRACTOR_MODEL):
    raise ImproperlyConfigured(
        "MEMORY_EXTRACTOR=http needs MEMORY_EXTRACTOR_URL (an OpenAI-compatible base URL, "
        "e.g. http://localhost:11434/v1) and MEMORY_EXTRACTOR_MODEL"
    )

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "pgtrigger",
    # Serves the Swagger UI files for /api/v1/docs from the package (no CDN: works offline).
    "ninja",
    "django_htmx",
    "template_partials",
    "memory_core",
    "memory_console",
]

MIDDLEWARE = [
    # Before everything: the request id every log line and the access-log row carry, and the
    # request's timing for /metrics (memory_console/request_ids.py).
    "memory_console.request_ids.RequestIdMiddleware",
    # Outermost: under /api/, whatever error any layer below answers or raises is JSON.
    "memory_console.middleware.ApiErrorsAsJsonMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Both answer before anything reads the body or renders a page (memory_console/middleware.py).
    "memory_console.middleware.ContentSecurityPolicyMiddleware",
    "memory_console.middleware.RequestSizeLimitMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Console reads to a replica, read-your-writes by the session's WAL position (routers.py).
    "memory_console.routers.ReplicaRoutingMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "memory_console.unavailable.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "memory_console.urls"
WSGI_APPLICATION = "memory_console.wsgi.application"
ASGI_APPLICATION = "memory_console.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
            # Link helpers (console/common/links.py) and chips, on every page without a {% load %}.
            "builtins": ["memory_console.templatetags.console"],
        },
    }
]

# Two roles (README, "Database roles"): the server acts as DATABASE_URL's, which owns nothing;
# migrations run as DATABASE_OWNER_URL's (the `owner` alias; `migrate` and `serve` use it).
# With DATABASE_URL unset both are the embedded server's in ./var/pgdata, which nothing here
# starts: the first connection does (memory_console/database.py, db_backend/base.py).
_urls = database_urls(BASE_DIR)
_db = parse_database_url(_urls.app)
_owner = parse_database_url(_urls.owner or _urls.app)
# What post_migrate grants its privileges to (memory_core/db/privileges.py); None: one role.
DATABASE_APP_ROLE = app_role(_db, _owner if _urls.owner else None)
_extra, _owner_extra = _db.pop("EXTRA_OPTIONS"), _owner.pop("EXTRA_OPTIONS")
_embedded = {EMBEDDED: str(_urls.pgdata)} if _urls.pgdata else {}
DATABASES = {
    "default": {
        **_db,
        **_embedded,
        # Connections come from psycopg's pool; CONN_MAX_AGE must stay 0 with a pool.
        "CONN_MAX_AGE": 0,
        # The pool checks a connection before handing it out: after a database restart a
        # request gets a fresh connection, not a dead one (and a 503). The check is
        # memory_console/pool_check.py's, which asks PostgreSQL only when the socket says
        # something happened (db_backend/base.py).
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": {
            **_extra,
            # Django turns psycopg's prepared statements off (None). Its own queries run on
            # client-side-binding cursors, which never prepare, so this enables them only
            # for the statements run through memory_core/db/prepared.py, which ask for it.
            "prepare_threshold": 5,
            # Those statements look rows up by keys and id lists; a plan made for one chain
            # suits every chain, and re-planning each call cost more than executing it.
            # Only prepared statements are affected, so the ORM's queries are untouched.
            "options": " ".join(
                filter(None, [_extra.get("options"), "-c plan_cache_mode=force_generic_plan"])
            ),
            "pool": {
                "min_size": env_int("DB_POOL_MIN", 1, minimum=0),
                "max_size": env_int("DB_POOL_MAX", 10, minimum=1),
                # A worker uses one connection per request thread (serve --threads, 2), far
                # below max_size, so waiting for one only happens while the database is
                # unreachable: fail fast with a 503.
                "timeout": env_int("DB_POOL_TIMEOUT", 3, minimum=1),
                # Give up a failed reconnection after this long; the next request starts a
                # fresh one at once, instead of waiting out an ever longer backoff.
                "reconnect_timeout": env_int("DB_POOL_RECONNECT_TIMEOUT", 10, minimum=1),
            },
        },
        "TEST": {"NAME": env_str("TEST_DATABASE_NAME", f"test_{_db['NAME']}")},
    },
    # Used by migrations only: no pool, one short-lived connection.
    OWNER_ALIAS: {
        **_owner,
        **_embedded,
        "OPTIONS": _owner_extra,
        "CONN_MAX_AGE": 0,
        # Under test it is the test database, which the test runner makes once (as the owner).
        "TEST": {"MIRROR": "default"},
    },
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Scaling past one machine (README "Scaling") -----------------------------------
# Behind a pooler in transaction mode a server connection serves whichever client's
# transaction comes next, so nothing may live in a session: no server-side prepared
# statements (PgBouncer < 1.21 cannot track them; Debian's is 1.18) and no startup `options`
# (PgBouncer refuses the parameter). DATABASE_POOLER=pgbouncer turns both off.
DATABASE_POOLER = env_choice("DATABASE_POOLER", "none", ("none", "pgbouncer"))
if DATABASE_POOLER == "pgbouncer":
    DATABASES["default"]["OPTIONS"]["prepare_threshold"] = None
    DATABASES["default"]["OPTIONS"].pop("options", None)
# Streaming replicas for the console's reads (memory_console/routers.py): one DATABASES
# entry each, `replica1`, `replica2`, ..., as the server's role, with a small pool of its own.
DATABASE_REPLICAS = []
for _n, _url in enumerate(env_list("DATABASE_REPLICA_URLS", []), start=1):
    _replica = parse_database_url(_url)
    _replica_extra = _replica.pop("EXTRA_OPTIONS")
    DATABASES[f"replica{_n}"] = {
        **_replica,
        "CONN_MAX_AGE": 0,
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": {
            **_replica_extra,
            "connect_timeout": 2,
            "pool": {
                "min_size": 0,
                "max_size": env_int("DB_POOL_MAX", 10, minimum=1),
                "timeout": 2,
                "reconnect_timeout": 5,
            },
        },
        # Under test a replica is the test database itself, unless a test starts a real one.
        "TEST": {"MIRROR": "default"},
    }
    DATABASE_REPLICAS.append(f"replica{_n}")
DATABASE_ROUTERS = ["memory_console.routers.ReplicaRouter"]
# A replica further behind than this (seconds of replay) is skipped; so is one that is down,
# for REPLICA_RETRY_SECONDS before it is tried again.
REPLICA_MAX_LAG_SECONDS = env_float("REPLICA_MAX_LAG_SECONDS", 5.0, minimum=0, maximum=3600)
REPLICA_RETRY_SECONDS = env_float("REPLICA_RETRY_SECONDS", 5.0, minimum=0.1, maximum=600)
# Nothing a request needs lives in one process: sessions and login attempts are tables
# already; Django's cache is one too (migration 0015), so any server sees what another put.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "memory_console_cache",
    }
}
# GET /metrics (memory_console/metrics.py): Prometheus text, for a bearer METRICS_TOKEN; or,
# with no token, only for clients at a loopback address (a scraper on the same machine).
METRICS_TOKEN = env_str("METRICS_TOKEN", "") or ""
# Where gunicorn's workers keep their metric files (`serve` empties it at start).
METRICS_DIR = Path(env_str("METRICS_DIR", "") or VAR_DIR / "metrics")
# JSON log lines (one object per line, with the request id) or Django's plain text.
LOG_FORMAT = env_choice("LOG_FORMAT", "json", ("json", "text"))
# --- end of scaling ---------------------------------------------------------------------------

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
# `serve` fills it with collectstatic; it exists from the start so WhiteNoise, which also
# serves from the finders (tests, runserver), does not warn about a missing directory.
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

# Request bodies: no API call or console form comes near 1 MiB (a fact is at most 2000
# characters). RequestSizeLimitMiddleware answers 413 from Content-Length, before the body
# is read; Django's own check (RequestDataTooBig) uses the same figure.
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024

SECURE_COOKIES = env_bool("SECURE_COOKIES", False)
SESSION_COOKIE_SECURE = SECURE_COOKIES
CSRF_COOKIE_SECURE = SECURE_COOKIES
# HTTPS behind the app: redirect plain HTTP, and HSTS (0 = no header). The two HSTS
# directives apply only when SECURE_HSTS_SECONDS > 0; turn them off when the console's host
# name has sibling subdomains that do not all serve HTTPS (`check --deploy` then warns).
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
# A load balancer's plain-HTTP health probe gets its answer, not a redirect.
SECURE_REDIRECT_EXEMPT = [r"^api/v1/health(/live|/ready)?$", r"^health/(live|ready)$"]
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
# Behind a TLS-terminating proxy that sets X-Forwarded-Proto (and strips it from clients).
if env_bool("TRUST_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
# Sent on every response by ContentSecurityPolicyMiddleware. No inline script or style, no
# eval: htmx is told not to inject its indicator <style> (templates/base.html), hx-trigger
# filters are avoided (static/js/live-poll.js), and ninja's Swagger UI loads its settings
# from a JSON <script> and its init from a static file, so /api/v1/docs needs no exception.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
        "form-action 'self'",
    ]
)

# Console login throttling (memory_console/login_throttle.py): after LOGIN_MAX_FAILURES
# failed logins for one username, or LOGIN_MAX_FAILURES_PER_IP from one address (0: off),
# within LOGIN_THROTTLE_MINUTES, further attempts get a 429 without a password check.
LOGIN_MAX_FAILURES = env_int("LOGIN_MAX_FAILURES", 5, minimum=1)
LOGIN_MAX_FAILURES_PER_IP = env_int("LOGIN_MAX_FAILURES_PER_IP", 20, minimum=0)
LOGIN_THROTTLE_MINUTES = env_int("LOGIN_THROTTLE_MINUTES", 15, minimum=1)
# Reverse proxies in front of the server that append to X-Forwarded-For: with N >= 1 the
# client address is the N-th entry from the right; with 0 (no proxy) it is REMOTE_ADDR.
TRUSTED_PROXIES = env_int("TRUSTED_PROXIES", 0, minimum=0, maximum=10)

# --- Evidence (README, "Evidence") ---------------------------------------------------------
# The Ed25519 public key (a .pub file from `ledger_keygen`) the console's "Verify chain"
# checks an uploaded checkpoint against when no key is uploaded with it. The signing key is
# never a setting: `ledger_checkpoint --key FILE`, or the LEDGER_SIGNING_KEY environment
# variable, read only by that command (memory_core/ledger/checkpoints.py).
LEDGER_PUBLIC_KEY = env_str("LEDGER_PUBLIC_KEY", "")
# Where `ledger_checkpoint` writes checkpoints without --out, and where `restore_check`
# looks for the latest one. Copy them somewhere the database's superuser cannot reach.
LEDGER_CHECKPOINT_DIR = env_str("LEDGER_CHECKPOINT_DIR", str(BASE_DIR / "var" / "checkpoints"))
# Where `backup` writes its dumps without --out.
BACKUP_DIR = env_str("BACKUP_DIR", str(BASE_DIR / "var" / "backups"))

# gunicorn's access and error logs under `serve` (named here, as WSGI_APPLICATION is, so the
# core's command names no delivery module): JSON lines, and never a query string's values.
GUNICORN_LOGGER = "memory_console.gunicorn_log.JsonLogger"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # One JSON object per line with the request id (memory_console/request_ids.py), or text.
    "formatters": {
        "json": {"()": "memory_console.request_ids.JsonFormatter"},
        "text": {"format": "%(levelname)s %(name)s [%(request_id)s] %(message)s"},
    },
    "filters": {"request_id": {"()": "memory_console.request_ids.RequestIdFilter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING")},
}
