"""The conflicts query: every beaten value in some chain, agent-over-human first."""

from memory_core import writes
from memory_core.conflicts import conflicts


def test_conflicts_pair_each_winner_with_the_values_it_beats(org, operator):
    october = writes.publish(org.root, "fiscal-year", "October", principal=operator)
    team = writes.publish(org.ops, "fiscal-year", "January", principal=operator)
    calendar = writes.remember(org.u1, "fiscal-year", "calendar", principal=org.acme_agent).memory
    writes.publish(org.acme, "units", "km", principal=operator)  # answered once: no conflict
    page, total = conflicts()
    pairs = [(c.narrow.pk, c.wide.pk, c.authors) for c in page]
    # u1: calendar beats January and October; u2 (tenant only): October is the winner.
    # team:acme/ops over global is not a winner for anyone (u1's own note wins), so not listed.
    assert pairs == [
        (calendar.pk, team.pk, "agent>human"),
        (calendar.pk, october.pk, "agent>human"),
    ]
    assert total == 2


def test_conflicts_are_limited_to_actors_the_grant_reaches(org, operator):
    writes.publish(org.root, "units", "km", principal=operator)
    writes.remember(org.x9, "units", "miles", principal=org.globex_agent)
    writes.remember(org.u1, "units", "leagues", principal=org.acme_agent)
    acme, _ = conflicts(reach_tokens=["tenant:acme"])
    assert [c.narrow.scope.token for c in acme] == ["actor:acme/u1"]
    everyone, total = conflicts()
    assert total == 2


def test_conflicts_filter_by_scope_and_author_combination(org, operator):
    writes.publish(org.root, "units", "km", principal=operator)
    writes.publish(org.acme, "units", "miles", principal=operator)
    writes.remember(org.u1, "tone", "brief", principal=org.acme_agent)
    writes.publish(org.acme, "tone", "formal", principal=operator)
    human, _ = conflicts(authors="human>human")
    assert [(c.narrow.scope.token, c.wide.scope.token) for c in human] == [
        ("tenant:acme", "global")
    ]
    assert human[0].actors == 2  # u1 and u2 both see tenant:acme over global
    agent, _ = conflicts(authors="agent>human", scope=org.acme)
    assert [c.narrow.key for c in agent] == ["tone"]


def test_the_same_value_at_two_scopes_is_a_duplicate_not_a_conflict(org, users, operator):
    note = writes.remember(org.u1, "units", "miles", principal=org.acme_agent).memory
    # Republished at the tenant without retiring the original: two identical live values.
    copy = writes.promote(note, org.acme, principal=users.p_owner)
    writes.publish(org.root, "units", "km", principal=operator)
    page, total = conflicts()
    assert [(c.narrow.pk, c.wide.text) for c in page] == [(note.pk, "km"), (copy.pk, "km")]
    assert total == 2 and not any(c.duplicate for c in page)
    doubled, total = conflicts(duplicates=True)
    assert [(c.narrow.pk, c.wide.pk, c.authors, c.duplicate) for c in doubled] == [
        (note.pk, copy.pk, "agent>human", True)
    ]
    assert total == 1
    assert [c.wide.text for c in conflicts(authors="agent>human")[0]] == ["km"]
