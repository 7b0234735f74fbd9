"""Scope tokens, keys, facts and the chain resolver: pure rules, no database."""

import pytest

from memory_core.rules.chain import resolve_chain
from memory_core.rules.scopes import (
    actor_scope,
    fact_problem,
    is_valid_key,
    is_valid_scope,
    key_problem,
)


@pytest.mark.parametrize(
    "token",
    [
        "global",
        "actor:u1",
        "team:ops",
        "tenant:acme",
        "actor:a.b@example.com",
        "x:" + "a" * 128,
        "k" + "a" * 31 + ":x",
        "depot_2-b:B-7",
    ],
)
def test_valid_scope_tokens(token):
    assert is_valid_scope(token)


@pytest.mark.parametrize(
    "token",
    [
        "",
        "Global",
        "global:x",
        "team",
        "team:",
        ":ops",
        "Team:ops",
        "1team:ops",
        "team:-ops",
        "team:o ps",
        "team:ops\n",
        "x:" + "a" * 129,
        "k" + "a" * 32 + ":x",
        "team:ops:extra",
        None,
        7,
    ],
)
def test_invalid_scope_tokens(token):
    assert not is_valid_scope(token)


def test_actor_scope_prefixes_the_ref_and_refuses_bad_refs():
    assert actor_scope("u1") == "actor:u1"
    with pytest.raises(ValueError):
        actor_scope("")
    with pytest.raises(ValueError):
        actor_scope("u 1")


@pytest.mark.parametrize("key", ["units", "fiscal-year", "a", "0", "a.b_c-d", "k" * 64])
def test_valid_keys(key):
    assert is_valid_key(key)
    assert key_problem(key) is None


@pytest.mark.parametrize(
    "key",
    ["", "Units", "-units", ".units", "_units", "fiscal year", "units\n", "k" * 65, "ünits", None],
)
def test_invalid_keys(key):
    assert not is_valid_key(key)


def test_key_problem_explains_each_failure():
    assert key_problem("") == "key is empty"
    assert key_problem("k" * 65) == "key is 65 characters; the limit is 64 characters"
    assert "lowercase" in key_problem("Fiscal-Year")


def test_fact_problem_accepts_an_ordinary_one_line_fact():
    assert fact_problem("report distances in kilometres", 240) is None
    assert fact_problem("x" * 240, 240) is None
    assert fact_problem("prefers “curly quotes” and émigré café names", 240) is None


def test_fact_problem_over_long_message_names_the_length_and_the_limit():
    assert fact_problem("x" * 301, 240) == "fact is 301 characters; the limit is 240 characters"


@pytest.mark.parametrize("text", ["", "   ", "\t \t"])
def test_fact_problem_refuses_empty_or_whitespace_only(text):
    assert fact_problem(text, 240) == "fact is empty"


@pytest.mark.parametrize(
    "text", ["one\ntwo", "one\rtwo", "one\r\ntwo", "trailing\n", "one\u2028two"]
)
def test_fact_problem_refuses_more_than_one_line(text):
    assert "single line" in fact_problem(text, 240)


@pytest.mark.parametrize("ch", ["\x00", "\x07", "\t", "\x1b", "\x7f", "\x85"])
def test_fact_problem_refuses_control_characters(ch):
    assert "control character" in fact_problem(f"a{ch}b", 240)


@pytest.mark.parametrize(
    "code", [0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069]
)
def test_fact_problem_refuses_bidi_overrides_and_isolates(code):
    problem = fact_problem(f"pay {chr(code)}evil", 240)
    assert "bidirectional" in problem
    assert f"U+{code:04X}" in problem


def test_chain_is_actor_then_memberships_in_order_then_global():
    assert resolve_chain("u1", ["team:ops", "tenant:acme"]) == (
        "actor:u1",
        "team:ops",
        "tenant:acme",
        "global",
    )


def test_chain_drops_duplicates_other_actors_and_misplaced_global():
    chain = resolve_chain(
        "u1", ["global", "team:ops", "actor:u2", "team:ops", "actor:u1", "tenant:acme"]
    )
    assert chain == ("actor:u1", "team:ops", "tenant:acme", "global")


def test_chain_without_memberships_is_own_scope_then_global():
    assert resolve_chain("u1", []) == ("actor:u1", "global")


def test_chain_refuses_a_malformed_membership():
    with pytest.raises(ValueError):
        resolve_chain("u1", ["Team Ops"])
