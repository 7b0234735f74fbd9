"""No console or export parameter makes a 500 (memory_console/console/parameters.py).

The reported cases first, each on its own; then a sweep: every address of the console's
URLconf (and the root's own pages, not the API's or MCP's: they answer for themselves),
each with every parameter its view reads, each set to a hostile value. The parameters are
found from the code, twice over: the names a view actually asks its QueryDict for when it
runs (forms included), and the names its module reads by a literal (`GET.get("page")`),
which also covers a read behind a branch the first run did not take. A parameter added
tomorrow is swept without anyone listing it here.
"""

import inspect
import re
import sys
from contextlib import contextmanager
from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from django.http import QueryDict
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from memory_core import actors, transcripts, turns, writes
from memory_core.garden import passes
from memory_core.models import (
    AccessLog,
    ApiKey,
    LedgerEvent,
    Memory,
    Proposal,
    ScopeGrant,
)
from tests.helpers import login

FORM = "application/x-www-form-urlencoded"
BIG = "12345678901234567890"  # 20 digits: past PostgreSQL's bigint
BIGINT_PLUS_ONE = str(2**63)

# Each as it travels in a query string or a urlencoded form. Invalid UTF-8 cannot be a str:
# it is sent percent-encoded, as a browser or a script would send the bytes.
HOSTILE = {
    "nul": "a%00b",
    "20-digits": BIG,
    "bad-utf8": "%ff%fe",
    "10kb": "x" * 10240,
    "dotdot": "..",
}


@pytest.fixture(autouse=True)
def _lexical_only(settings):
    settings.MEMORY_EMBEDDER = "none"  # what is swept is the parameters, not recall


@pytest.fixture
def world(org, users):
    """One of each thing a console address names: a memory with a conflict above it, a run,
    a conversation, a key, a user."""
    agent = org.acme_agent
    transcripts.record_message(org.u1, "t-1", "user", "hello", principal=agent, run_id="run-1")
    note = writes.remember(org.u1, "tone", "brief", principal=agent, run_id="run-1").memory
    wide = writes.publish(org.acme, "tone", "formal", principal=users.p_owner)
    turns.resolve_turn(org.u1, "run-1", principal=agent, thread_id="t-1", query="tone")

    class World:
        pass

    w = World()
    w.note, w.wide, w.org, w.users = note, wide, org, users
    w.proposal = "prop_00000000000000000000000000"  # a real one for the garden's addresses
    return w


# --- the reported cases -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "/scopes/?q=a%00b",
        "/scopes/?open=a%00b",
        "/attribution/?line=a%00b",
        "/attribution/?run=a%00b",
        "/runs/?actor=a%00b",
        "/runs/?before=a%00b",
        "/threads/?actor=a%00b",
        "/users/?q=a%00b",
    ],
)
def test_a_nul_in_a_console_parameter_is_a_400_page(client, world, address):
    response = login(client, world.users.su).get(address)
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    assert "NUL" in response.text


@pytest.mark.parametrize(
    "address",
    [
        "/exports/attribution.jsonl?line=a%00b",
        "/exports/attribution.jsonl?run=a%00b",
        "/exports/ledger.csv?stream=a%00b",
        "/exports/ledger.jsonl?stream=a%00b",
        "/exports/access.csv?actor=a%00b",
        "/exports/ledger.csv/manifest?stream=a%00b",
    ],
)
def test_a_nul_in_an_export_parameter_is_a_json_400_before_any_byte(client, world, address):
    before = AccessLog.objects.filter(action__startswith="export.").count()
    response = login(client, world.users.su).get(address)
    assert response.status_code == 400
    assert not response.streaming
    assert "NUL" in response.json()["detail"]
    assert AccessLog.objects.filter(action__startswith="export.").count() == before


def test_invalid_utf8_in_the_query_is_a_400(client, world):
    response = login(client, world.users.su).get("/scopes/?q=%ff%fe")
    assert response.status_code == 400
    assert "UTF-8" in response.text


def test_an_oversized_value_is_a_400(client, world):
    response = login(client, world.users.su).get("/memories/", {"q": "x" * 10240})
    assert response.status_code == 400


@pytest.mark.parametrize("address", ["/scopes/tenant:acme%00/", "/scopes/acme%00/publish/"])
@pytest.mark.parametrize("logged_in", [True, False])
def test_a_nul_in_the_address_itself_is_a_400(client, world, address, logged_in):
    if logged_in:
        login(client, world.users.su)
    response = client.get(address)
    # Anonymous: the login page first, except where the address decides which page it is.
    expected = 400 if logged_in or address.endswith("/publish/") else 302
    assert response.status_code == expected


@pytest.mark.parametrize("field", ["name", "reach"])
def test_a_nul_in_a_new_keys_form_is_a_400_and_makes_no_key(client, world, field):
    form = {"name": "deploy bot", "reach": "tenant:acme"}
    form[field] = form[field][:3] + "\x00" + form[field][3:]
    keys = ApiKey.objects.count()
    response = login(client, world.users.su).post("/keys/create/", form)
    assert response.status_code == 400
    assert ApiKey.objects.count() == keys


@pytest.mark.parametrize("page", [BIGINT_PLUS_ONE, BIG, "-5", "0", "abc"])
def test_a_page_number_out_of_any_range_shows_a_page(client, world, page):
    response = login(client, world.users.su).get("/conflicts/", {"page": page})
    assert response.status_code == 200
    assert "formal" in response.text  # the last (here the only) page


@pytest.mark.parametrize("name", ["before", "after"])
def test_an_id_cursor_past_bigint_shows_a_page(client, world, name):
    response = login(client, world.users.su).get("/ledger/", {name: BIG})
    assert response.status_code == 200


@pytest.mark.parametrize(
    "query, problem",
    [
        ("since=bad", "since"),
        ("until=2024-13-45", "until"),
        ("window=2h", "window"),
        ("seq_from=abc", "seq_from"),
        (f"seq_to={BIG}", "seq_to"),
        (f"upto={BIG}", "upto"),
        ("at=yesterday", "at"),
    ],
)
@pytest.mark.parametrize("export", ["ledger.csv", "ledger.jsonl", "ledger.jsonl/manifest"])
def test_a_malformed_export_filter_is_a_json_422_not_every_row(
    client, world, export, query, problem
):
    response = login(client, world.users.su).get(f"/exports/{export}?{query}")
    assert response.status_code == 422
    assert not response.streaming
    assert problem in response.json()["detail"]


@pytest.mark.parametrize("query", ["since=bad", "window=2h", "outcome=999", "at=yesterday"])
def test_a_malformed_access_export_filter_is_a_json_422(client, world, query):
    response = login(client, world.users.su).get(f"/exports/access.jsonl?{query}")
    assert response.status_code == 422
    assert response.json()["detail"]


def test_good_export_filters_still_export(client, world):
    client = login(client, world.users.su)
    for query in ("window=24h", "since=2020-01-01T00:00", "stream=tenant:acme&seq_from=1"):
        response = client.get(f"/exports/ledger.jsonl?{query}")
        assert response.status_code == 200, query
        assert b'"manifest"' in b"".join(response.streaming_content)


def test_the_finders_last_day_does_not_overflow(client, world):
    response = login(client, world.users.su).get("/memories/", {"until": "9999-12-31"})
    assert response.status_code == 200


def test_an_export_pinned_at_the_dawn_of_time_is_a_422(client, world):
    response = login(client, world.users.su).get(
        "/exports/ledger.jsonl?window=30d&at=0001-01-01T00:00:00%2B00:00"
    )
    assert response.status_code == 422


# --- the sweep --------------------------------------------------------------------------------


def _patterns(resolver, namespace=""):
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            yield from _patterns(entry, entry.namespace or namespace)
        elif isinstance(entry, URLPattern) and entry.name:
            yield (f"{namespace}:{entry.name}" if namespace else entry.name), entry


def _swept() -> dict:
    """{URL name: its pattern} for the console and the root's own pages."""
    found = {}
    for name, pattern in _patterns(get_resolver()):
        if name.startswith(("mcp", "api")) or name in found:
            continue
        found[name] = pattern
    return found


PATTERNS = _swept()


def _proposal(org) -> str:
    """An open gardening proposal: three of ops' actors hold the same fact."""
    team = [org.u1] + [
        actors.put_actor(r, r, ["team:acme/ops", "tenant:acme"], org.acme_key, org.acme_agent)
        for r in ("u3", "u4")
    ]
    for actor in team:
        writes.remember(actor, "tz", "Works in Berlin", principal=org.acme_agent)
    passes.run_pass()
    return Proposal.objects.filter(kind="promote").order_by("id").first().uid


def _kwargs(name: str, pattern: URLPattern, world) -> dict:
    """A value for each path converter, by its keyword (a `uid` by what the address names)."""
    memory_uids = {"narrow": world.note.uid, "wide": world.wide.uid}
    samples = {
        "token": "tenant:acme",
        "ref": "acme/u1",
        "path": "acme/u1/run-1",
        "thread_id": "t-1",
        "username": "owner",
        **memory_uids,
    }
    kwargs = {}
    for key in pattern.pattern.converters:
        if key == "uid":
            if name.startswith("console:memor"):
                kwargs[key] = world.note.uid
            elif name.startswith("console:key"):
                kwargs[key] = world.org.acme_key.uid
            else:
                kwargs[key] = world.proposal
        else:
            kwargs[key] = samples[key]
    return kwargs


def _address(name: str, world) -> str:
    return reverse(name, kwargs=_kwargs(name, PATTERNS[name], world))


_LITERAL_GET = re.compile(
    r"""(?:\bGET\.get(?:list)?\(|_param\(request,\s*|params\.get\()\s*f?["'](\w+)["']"""
)
_LITERAL_POST = re.compile(
    r"""(?:\bPOST\.get(?:list)?\(|checked\(request\.POST,\s*)\s*["'](\w+)["']"""
)


def _module_literals(name: str, regex) -> set[str]:
    module = sys.modules.get(PATTERNS[name].callback.__module__)
    if module is None or not module.__name__.startswith("memory_console"):
        return set()
    return set(regex.findall(inspect.getsource(module)))


@contextmanager
def _reads():
    """The names asked of any QueryDict while inside (GET or POST, forms included)."""
    names = set()
    methods = ("get", "getlist", "__getitem__", "__contains__")
    originals = {method: getattr(QueryDict, method) for method in methods}

    def recording(method):
        def wrapper(self, key, *args, **kwargs):
            if isinstance(key, str):
                names.add(key)
            return originals[method](self, key, *args, **kwargs)

        return wrapper

    for method in originals:
        setattr(QueryDict, method, recording(method))
    try:
        yield names
    finally:
        for method, original in originals.items():
            setattr(QueryDict, method, original)


def _consume(response) -> None:
    """A streamed answer must stream to its end (a broken stream is a 500 too late)."""
    if response.streaming:
        for _ in response.streaming_content:
            pass


def _state() -> tuple:
    User = get_user_model()
    return (
        LedgerEvent.objects.count(),
        AccessLog.objects.count(),
        sorted(Memory.objects.values_list("uid", "pinned", "retired_at", "tags")),
        sorted(ApiKey.objects.values_list("uid", "name", "revoked_at", "paused_at")),
        sorted(ScopeGrant.objects.values_list("user_id", "scope_id", "role")),
        sorted(User.objects.values_list("username", "password", "is_active")),
        sorted(Proposal.objects.values_list("uid", "state")),
    )


# Plausible values for the fields the action forms read, so a hostile value in one field
# meets a form whose other fields would get it as far as the database.
BENIGN_FORM = {
    "key": "sweep-key",
    "text": "a sweep",
    "tags": "sweep",
    "reason": "a sweep",
    "target": "tenant:acme",
    "reach": "tenant:acme",
    "name": "sweep key",
    "scope": "tenant:acme",
    "username": "owner",
    "role": "auditor",
    "password1": "a-Long-pw-0987",
    "password2": "a-Long-pw-0987",
    "action": "pin",
    "confirm": "1",
    "next": "/",
}


def _sweep_query(client, name: str, address: str) -> None:
    with _reads() as names:
        _consume(client.get(address))
    names |= _module_literals(name, _LITERAL_GET)
    names.add("page")  # every list has one; a view without one ignores it
    for param in sorted(names):
        for label, value in HOSTILE.items():
            response = client.get(f"{address}?{quote(param)}={value}")
            assert response.status_code < 500, (name, param, label)
            _consume(response)


def _sweep_form(client, name: str, address: str) -> None:
    names = _module_literals(name, _LITERAL_POST)
    with _reads() as read:
        client.post(address, {n: BENIGN_FORM.get(n, "x") for n in names})
    # The benign post may have done what it asks (an action reads its form only as far
    # as it gets): each hostile field is then posted against the state it left.
    names |= read - {"csrfmiddlewaretoken"}
    before = _state()
    for field in sorted(names):
        for label in ("nul", "bad-utf8", "10kb"):
            form = {n: quote(BENIGN_FORM.get(n, "x")) for n in names}
            form[field] = HOSTILE[label]
            body = "&".join(f"{quote(k)}={v}" for k, v in form.items())
            response = client.post(address, body, content_type=FORM)
            assert response.status_code < 500, (name, field, label)
            _consume(response)
            assert _state() == before, (name, field, label)


@pytest.mark.slow  # every hostile value at every console address
@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_no_hostile_parameter_is_a_500_nor_changes_anything(client, world, name):
    """Each query parameter the address's view reads, then each field its form posts, set
    to each hostile value in turn (a form's other fields plausible)."""
    if name.startswith("console:garden"):
        world.proposal = _proposal(world.org)
    client = login(client, world.users.su)
    address = _address(name, world)
    _sweep_query(client, name, address)
    _sweep_form(client, name, address)
