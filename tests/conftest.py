"""Shared fixtures: an organisation with an owner, a member and an outsider.

About the append-only tables: `transactional_db` and `live_server` tests end with Django's
flush, which TRUNCATEs every table, and the database refuses TRUNCATE of the ledger, the
access log, memories and the ledger-checkpoint records. Rather than weaken that protection
for tests, the flush command runs inside `pgtrigger.ignore(...)` naming exactly those
triggers: the same sanctioned escape hatch the forget service uses, scoped to the test
session by a fixture (nothing is patched at import). The flush also removes the `global`
scope the first migration created, so it is put back afterwards.

About database roles: the test database is built (and flushed) as the owner of the tables,
and everything else runs as the server's own role, which may not change or remove a ledger
or access-log row at all (tests/roles.py).
"""

import pgtrigger
import pytest
from django.contrib.auth import get_user_model
from django.core.management.commands import flush
from django.test import override_settings

from memory_core import actors
from memory_core.accounts import keys
from memory_core.accounts.principals import Principal
from memory_core.models import Scope
from tests import roles

# The browser fixtures (Playwright + Debian's Chromium) live in tests/browser.py.
pytest_plugins = ["tests.browser"]

# Every test in it is slow, and schemathesis builds its cases while the module is collected
# (several seconds): a run that leaves slow tests out does not collect it at all.
SLOW_TO_COLLECT = {"test_api_schemathesis.py"}

TRUNCATE_TRIGGERS = (
    "memory_core.LedgerEvent:ledger_no_truncate",
    "memory_core.AccessLog:access_no_truncate",
    "memory_core.Memory:memory_no_truncate",
    "memory_core.LedgerCheckpoint:checkpoint_no_truncate",
)


def pytest_ignore_collect(collection_path, config):
    if collection_path.name in SLOW_TO_COLLECT and _leaves_out_slow(config):
        return True
    return None


def _leaves_out_slow(config) -> bool:
    """Whether `-m` deselects a test marked `slow` and nothing else."""
    expression = config.getoption("markexpr")
    if not expression:
        return False
    try:
        from _pytest.mark.expression import Expression  # pytest's own parser of `-m`

        return not Expression.compile(expression).evaluate(lambda name, **kw: name == "slow")
    except Exception:  # a pytest without it, or an expression it refuses: collect as usual
        return False


@pytest.fixture(scope="session", autouse=True)
def _flush_past_truncate_guards():
    """For the whole session, Django's flush (the end of every `transactional_db` and
    `live_server` test) runs as the owner inside pgtrigger.ignore of the TRUNCATE guards,
    and puts `global` back; the command is restored when the session ends."""
    original = flush.Command.handle

    def handle(self, *args, **options):
        database = options.get("database", "default")
        with roles.as_owner(database), pgtrigger.ignore(*TRUNCATE_TRIGGERS):
            result = original(self, *args, **options)
        # The flush also empties what migrations put there; `global` must always exist.
        Scope.objects.using(database).get_or_create(
            token="global", defaults={"label": "Everyone", "stream": "global"}
        )
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(flush.Command, "handle", handle)
        yield


@pytest.fixture(scope="session", autouse=True)
def _static_files_found_per_request():
    """WhiteNoise indexes every static file each time a middleware chain is built, and the
    test client builds one for each test: a few hundred files a test, a tenth of the fast
    loop's time. In its autorefresh mode it finds the same files when they are asked for."""
    with override_settings(WHITENOISE_AUTOREFRESH=True):
        yield


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix):
    roles.build_as_owner()


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        roles.act_as_app_role()
    yield
    with django_db_blocker.unblock():
        roles.stop_acting()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Tests create users by the dozen; PBKDF2's deliberate slowness buys nothing here."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def fresh_extractor():
    """Capture's extractor is built from settings once per process: built again around a
    test that points it at a scripted model (tests/chat_server.py)."""
    from memory_core.capture import extractor

    extractor.reset()
    yield
    extractor.reset()


@pytest.fixture
def operator():
    """An operator at the command line: acts as the system."""
    return Principal.system("cli:test")


@pytest.fixture
def org(db, operator):
    """tenant:acme (team:acme/ops under it) with actors acme/u1 and acme/u2; tenant:globex
    with actor globex/x9. Names are per tenant: acme's key calls them `u1`, `u2`, `team:ops`."""
    root = actors.global_scope()
    acme, _ = actors.ensure_scope("tenant:acme", root, "Acme", principal=operator)
    ops, _ = actors.ensure_scope("team:acme/ops", acme, "Ops", principal=operator)
    globex, _ = actors.ensure_scope("tenant:globex", root, "Globex", principal=operator)
    acme_key, acme_secret = keys.create_api_key("acme host", acme, principal=operator)
    globex_key, globex_secret = keys.create_api_key("globex host", globex, principal=operator)
    global_key, global_secret = keys.create_api_key("platform", root, principal=operator)
    acme_agent = Principal.for_api_key(acme_key)
    globex_agent = Principal.for_api_key(globex_key)
    u1 = actors.put_actor("u1", "User One", ["team:acme/ops", "tenant:acme"], acme_key, acme_agent)
    u2 = actors.put_actor("u2", "User Two", ["tenant:acme"], acme_key, acme_agent)
    x9 = actors.put_actor("x9", "Outsider", ["tenant:globex"], globex_key, globex_agent)

    class Org:
        pass

    o = Org()
    o.root, o.acme, o.ops, o.globex = root, acme, ops, globex
    o.acme_key, o.acme_secret, o.acme_agent = acme_key, acme_secret, acme_agent
    o.globex_key, o.globex_secret, o.globex_agent = globex_key, globex_secret, globex_agent
    o.global_key, o.global_secret = global_key, global_secret
    o.u1, o.u2, o.x9 = u1, u2, x9
    return o


@pytest.fixture
def users(db, org):
    """A superuser, an admin of tenant:acme, an auditor of tenant:acme, an admin of globex."""
    from memory_core.accounts.grants import grant

    User = get_user_model()
    su = User.objects.create_superuser("root", "root@example.com", "pw-root-123")
    owner = User.objects.create_user("owner", "o@example.com", "pw-owner-123")
    auditor = User.objects.create_user("auditor", "a@example.com", "pw-audit-123")
    outsider = User.objects.create_user("outsider", "x@example.com", "pw-out-123")
    system = Principal.system("cli:test")
    grant("owner", org.acme, "admin", principal=system)
    grant("auditor", org.acme, "auditor", principal=system)
    grant("outsider", org.globex, "admin", principal=system)

    class Users:
        pass

    u = Users()
    u.su, u.owner, u.auditor, u.outsider = su, owner, auditor, outsider
    u.p_su = Principal.for_user(su)
    u.p_owner = Principal.for_user(owner)
    u.p_auditor = Principal.for_user(auditor)
    u.p_outsider = Principal.for_user(outsider)
    return u
