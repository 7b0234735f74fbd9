"""The OpenAPI document states each input rule exactly as the server holds to it.

The patterns in memory_console/api/patterns.py restate memory_core's rules for the
document; here each is held to its rule (character by character where the rule is about
characters, by generated strings where it is about structure), read both by Python's `re`
and by a JSON Schema validator (jsonschema_rs, ECMA-262, which is what schemathesis and
most generated clients use). Then the refusals the schema made explicit, over HTTP.
"""

import re

import jsonschema_rs
import pytest
from django.test import override_settings
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_console.api import patterns
from memory_core import turns
from memory_core.errors import Invalid
from memory_core.models import Actor, Digest, Memory, Message, Thread
from memory_core.rules.inputs import bad_host_id_char, text_problem
from memory_core.rules.names import is_valid_ref
from memory_core.rules.scopes import fact_problem, is_valid_key, is_valid_scope
from tests.helpers import bearer

# Every character any of the patterns names lies below U+3100; past it, a few of each kind.
CHARACTERS = [chr(c) for c in range(0x3100)] + [
    "\u4e00",  # a letter
    "\ufeff",  # a format character (ECMA calls it white space; Python does not)
    "\uffff",
    "\U0001f600",  # astral: two UTF-16 code units
    "\U000e0001",  # an astral format character
]


def matches(pattern: str, value: str) -> bool:
    """The pattern's verdict, which must be the same in JSON Schema and in Python (applied
    with fullmatch, as memory_core applies its patterns: a bare `$` matches before a
    trailing newline)."""
    python = re.fullmatch(pattern, value) is not None
    ecma = _validator(pattern).is_valid(value)
    assert python == ecma, (pattern, value)
    return python


_validators: dict[str, object] = {}


def _validator(pattern: str):
    if pattern not in _validators:
        _validators[pattern] = jsonschema_rs.validator_for({"type": "string", "pattern": pattern})
    return _validators[pattern]


# --- each pattern is its rule -----------------------------------------------------------


def test_each_character_pattern_agrees_with_its_rule():
    for ch in CHARACTERS:
        assert matches(patterns.HOST_ID, f"r{ch}1") == (bad_host_id_char(f"r{ch}1") is None)
        free = f"a{ch}b"
        assert matches(patterns.TEXT, free) == (text_problem(free, "text", 10) is None)
        # A search needs something besides white space; a fact, that and one line.
        for value in (ch, free):
            searchable = text_problem(value, "q", 10) is None and value.strip() != ""
            assert matches(patterns.SEARCH, value) == searchable, value
            assert matches(patterns.FACT, value) == (fact_problem(value, 10) is None), value


def test_white_space_alone_is_no_fact_and_no_search():
    for value in ("", " ", "\t \u3000", "\xa0\u2009"):
        assert not matches(patterns.FACT, value) and not matches(patterns.SEARCH, value)
    assert matches(patterns.FACT, " a ") and matches(patterns.SEARCH, "\n a \n")


NAMEISH = st.text(alphabet="aZ09._@-/:é ", max_size=12)
KINDISH = st.sampled_from(["actor", "global", "tenant", "team", "Team", ""])


@pytest.mark.slow  # 300 examples, each through two regex engines
@settings(max_examples=300, deadline=None)
@given(st.one_of(NAMEISH, st.from_regex(patterns.REF, fullmatch=True)))
def test_the_ref_pattern_is_the_ref_rule(ref):
    assert matches(patterns.REF, ref) == is_valid_ref(ref)


@pytest.mark.slow  # 300 examples, each through two regex engines
@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.tuples(KINDISH, NAMEISH).map(":".join),
        st.sampled_from(["global", "actor:u1", "global:x", "tenant:a/b", "team:acme/ops"]),
        st.from_regex(patterns.MEMBERSHIP, fullmatch=True),
    )
)
def test_the_membership_pattern_is_a_scope_token_other_than_global_and_actor(token):
    membership = is_valid_scope(token) and token != "global" and not token.startswith("actor:")
    assert matches(patterns.MEMBERSHIP, token) == membership


@pytest.mark.slow  # 300 examples, each through two regex engines
@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(alphabet="az09._-A ", max_size=70), st.from_regex(patterns.KEY)))
def test_the_key_pattern_is_the_key_rule(key):
    assert matches(patterns.KEY, key) == is_valid_key(key)


# --- the document -----------------------------------------------------------------------


def document(client):
    return client.get("/api/v1/openapi.json").json()


def test_the_document_states_the_fact_limit_as_configured(db, client):
    fact = document(client)["components"]["schemas"]["RememberIn"]["properties"]["fact"]
    assert (fact["minLength"], fact["maxLength"], fact["pattern"]) == (1, 240, patterns.FACT)
    with override_settings(MEMORY_MAX_FACT_CHARS=100):
        fact = document(client)["components"]["schemas"]["RememberIn"]["properties"]["fact"]
    assert fact["maxLength"] == 100


def test_the_document_states_refs_keys_memberships_and_the_turn_budget(db, client):
    schemas = document(client)["components"]["schemas"]
    actor = schemas["TurnIn"]["properties"]["actor"]
    assert (actor["pattern"], actor["maxLength"]) == (patterns.REF, 257)
    assert schemas["RememberIn"]["properties"]["key"]["pattern"] == patterns.KEY
    scopes = schemas["ActorIn"]["properties"]["scopes"]
    assert scopes["items"]["pattern"] == patterns.MEMBERSHIP
    assert (scopes["maxItems"], scopes["uniqueItems"]) == (32, True)
    budget = schemas["TurnIn"]["properties"]["max_memories"]
    assert budget["anyOf"] == [{"type": "integer", "minimum": 1}, {"type": "null"}]


# --- max_memories -----------------------------------------------------------------------


def post(client, secret, path, body):
    return client.post(path, body, content_type="application/json", headers=bearer(secret))


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        (True, "max_memories: Input should be a valid integer"),
        ("3", "max_memories: Input should be a valid integer"),
        (2.5, "max_memories: Input should be a valid integer, got a number with a fractional part"),
        (0, "max_memories: Input should be greater than or equal to 1"),
    ],
)
def test_max_memories_that_is_no_positive_integer_is_422_and_stores_no_digest(
    org, client, value, detail
):
    body = {"actor": "u1", "run_id": "run_1", "max_memories": value}
    response = post(client, org.acme_secret, "/api/v1/turns", body)
    assert response.status_code == 422 and response.json() == {"detail": detail}
    assert not Digest.objects.exists()


def test_max_memories_false_is_422(org, client):
    body = {"actor": "u1", "run_id": "run_1", "max_memories": False}
    response = post(client, org.acme_secret, "/api/v1/turns", body)
    assert response.json() == {"detail": "max_memories: Input should be a valid integer"}
    assert response.status_code == 422 and not Digest.objects.exists()


def test_max_memories_as_a_whole_json_number_is_an_integer(org, client):
    # JSON Schema's integer, as the document says: 1.0 is 1.
    body = {"actor": "u1", "run_id": "run_1", "max_memories": 1.0}
    assert post(client, org.acme_secret, "/api/v1/turns", body).status_code == 200
    assert Digest.objects.filter(run_id="run_1").exists()


def test_the_turn_service_refuses_a_budget_of_zero(org):
    with pytest.raises(Invalid, match="max_memories must be 1 or more"):
        turns.resolve_turn(org.u1, "run_1", principal=org.acme_agent, max_memories=0)
    assert not Digest.objects.exists()


# --- line and paragraph separators in the host's ids ------------------------------------

SEPARATORS = {"line": "\u2028", "paragraph": "\u2029"}


def separator_refusal(field: str, ch: str) -> dict:
    return {
        "detail": f"{field}: must not contain control, line-separator or bidirectional "
        f"formatting characters (U+{ord(ch):04X})"
    }


def stored():
    return {
        model.__name__: model.objects.count() for model in (Memory, Digest, Message, Thread, Actor)
    }


@pytest.mark.parametrize("ch", SEPARATORS.values(), ids=SEPARATORS.keys())
@pytest.mark.parametrize(
    ("field", "path", "body"),
    [
        ("run_id", "/api/v1/turns", {"actor": "u1"}),
        ("thread_id", "/api/v1/turns", {"actor": "u1", "run_id": "run_1"}),
        ("run_id", "/api/v1/memories", {"actor": "u1", "key": "k", "fact": "f"}),
        ("thread_id", "/api/v1/memories", {"actor": "u1", "key": "k", "fact": "f"}),
        (
            "tool_call_id",
            "/api/v1/memories",
            {"actor": "u1", "key": "k", "fact": "f", "run_id": "run_1"},
        ),
        ("run_id", "/api/v1/threads/thr_1/messages", {"actor": "u1", "role": "user", "text": "hi"}),
    ],
)
def test_host_ids_with_line_or_paragraph_separators_are_422(org, client, ch, field, path, body):
    before = stored()
    response = post(client, org.acme_secret, path, {**body, field: f"a{ch}b"})
    assert response.status_code == 422
    assert response.json() == separator_refusal(field, ch)
    assert stored() == before


def test_run_id_with_line_separator_is_422(org, client):
    response = post(client, org.acme_secret, "/api/v1/turns", {"actor": "u1", "run_id": "r\u20281"})
    assert response.status_code == 422
    assert response.json() == separator_refusal("run_id", "\u2028")
    assert not Digest.objects.exists()


def test_thread_path_with_a_separator_is_422(org, client):
    before = stored()
    body = {"actor": "u1", "role": "user", "text": "hi"}
    response = post(client, org.acme_secret, "/api/v1/threads/t%E2%80%A91/messages", body)
    assert response.status_code == 422
    assert response.json() == separator_refusal("thread_id", "\u2029")
    assert stored() == before


@pytest.mark.parametrize(
    ("thread_id", "detail"),
    [
        ("t\u20281", separator_refusal("thread_id", "\u2028")["detail"]),
        ("", "thread_id: String should have at least 1 character"),
        ("t" * 129, "thread_id: String should have at most 128 characters"),
    ],
)
def test_read_back_filter_by_a_thread_id_that_cannot_exist_is_422(org, client, thread_id, detail):
    response = client.get(
        "/api/v1/memories", {"actor": "u1", "thread_id": thread_id}, headers=bearer(org.acme_secret)
    )
    assert response.status_code == 422 and response.json() == {"detail": detail}


def test_free_text_keeps_its_newlines_and_separators(org, client):
    text = "first line\nsecond\u2028third\r\n\tend"
    body = {"actor": "u1", "role": "user", "text": text}
    assert post(client, org.acme_secret, "/api/v1/threads/thr_1/messages", body).status_code == 201
    assert Message.objects.get().text == text
    turn = {"actor": "u1", "run_id": "run_1", "query": "calendar\nyear\u2029"}
    assert post(client, org.acme_secret, "/api/v1/turns", turn).status_code == 200


# --- actor refs -------------------------------------------------------------------------


def test_an_actor_ref_longer_than_any_stored_one_is_422(org, client):
    before = stored()
    response = post(client, org.acme_secret, "/api/v1/turns", {"actor": "u" * 258, "run_id": "r"})
    assert response.status_code == 422
    assert response.json() == {"detail": "actor: String should have at most 257 characters"}
    assert stored() == before
