"""Who may write and forget, from the chain alone. No database."""

import pytest

from memory_core.facts import Verdict
from memory_core.verdicts import forget_verdict, write_verdict

CHAIN = ("actor:u1", "team:ops", "tenant:acme", "global")


@pytest.mark.parametrize("human", [True, False])
@pytest.mark.parametrize("elevated", [True, False])
def test_own_scope_is_always_writable(human, elevated):
    assert write_verdict("actor:u1", CHAIN, human=human, elevated=elevated) == Verdict(
        True, "own_scope"
    )


@pytest.mark.parametrize("human", [True, False])
@pytest.mark.parametrize("elevated", [True, False])
def test_scope_outside_the_chain_is_refused_for_everyone(human, elevated):
    for scope in ("actor:u2", "tenant:other"):
        assert write_verdict(scope, CHAIN, human=human, elevated=elevated) == Verdict(
            False, "not_in_chain"
        )


@pytest.mark.parametrize("scope", ["team:ops", "tenant:acme", "global"])
def test_elevated_human_may_write_a_wider_scope(scope):
    assert write_verdict(scope, CHAIN, human=True, elevated=True) == Verdict(True, "elevated")


def test_human_without_elevation_may_not_write_a_wider_scope():
    assert write_verdict("tenant:acme", CHAIN, human=True, elevated=False) == Verdict(
        False, "needs_elevation"
    )


@pytest.mark.parametrize("elevated", [True, False])
def test_agent_never_writes_above_its_actors_scope_even_if_elevated(elevated):
    assert write_verdict("team:ops", CHAIN, human=False, elevated=elevated) == Verdict(
        False, "agent_above_own_scope"
    )


def test_empty_chain_refuses_everything():
    assert write_verdict("actor:u1", (), human=True, elevated=True) == Verdict(
        False, "not_in_chain"
    )
    assert forget_verdict("actor:u1", ()) == "not_found"


def test_forget_of_own_scope_memory_is_allowed():
    assert forget_verdict("actor:u1", CHAIN) == "allow"


@pytest.mark.parametrize("scope", ["team:ops", "tenant:acme", "global"])
def test_forget_of_a_visible_wider_scope_is_forbidden(scope):
    assert forget_verdict(scope, CHAIN) == "forbidden"


@pytest.mark.parametrize("scope", ["actor:u2", "tenant:other", "team:elsewhere"])
def test_forget_of_a_memory_outside_the_chain_is_not_found(scope):
    assert forget_verdict(scope, CHAIN) == "not_found"
