"""Who may write (from the own scope and elevation) and forget (from the chain). No database."""

import pytest

from memory_core.rules.facts import Verdict
from memory_core.rules.verdicts import forget_verdict, write_verdict

CHAIN = ("actor:u1", "team:ops", "tenant:acme", "global")
OWN = CHAIN[0]


@pytest.mark.parametrize("human", [True, False])
@pytest.mark.parametrize("elevated", [True, False])
def test_own_scope_is_always_writable(human, elevated):
    assert write_verdict(OWN, OWN, human=human, elevated=elevated) == Verdict(True, "own_scope")


@pytest.mark.parametrize("scope", ["team:ops", "tenant:acme", "global", "actor:u2", "tenant:x"])
@pytest.mark.parametrize("own", [OWN, None])
def test_elevated_human_may_write_where_their_grant_reaches(scope, own):
    assert write_verdict(scope, own, human=True, elevated=True) == Verdict(True, "elevated")


@pytest.mark.parametrize("own", [OWN, None])
def test_human_without_elevation_may_not_write_beyond_the_own_scope(own):
    assert write_verdict("tenant:acme", own, human=True, elevated=False) == Verdict(
        False, "needs_elevation"
    )


@pytest.mark.parametrize("scope", ["team:ops", "global", "actor:u2", "tenant:other"])
@pytest.mark.parametrize("elevated", [True, False])
def test_agent_never_writes_beyond_its_actors_scope_even_if_elevated(scope, elevated):
    assert write_verdict(scope, OWN, human=False, elevated=elevated) == Verdict(
        False, "agent_above_own_scope"
    )


def test_an_agent_writing_for_nobody_writes_nowhere():
    assert write_verdict(OWN, None, human=False, elevated=True) == Verdict(
        False, "agent_above_own_scope"
    )


def test_empty_chain_forgets_nothing():
    assert forget_verdict("actor:u1", ()) == "not_found"


def test_forget_of_own_scope_memory_is_allowed():
    assert forget_verdict("actor:u1", CHAIN) == "allow"


@pytest.mark.parametrize("scope", ["team:ops", "tenant:acme", "global"])
def test_forget_of_a_visible_wider_scope_is_forbidden(scope):
    assert forget_verdict(scope, CHAIN) == "forbidden"


@pytest.mark.parametrize("scope", ["actor:u2", "tenant:other", "team:elsewhere"])
def test_forget_of_a_memory_outside_the_chain_is_not_found(scope):
    assert forget_verdict(scope, CHAIN) == "not_found"
