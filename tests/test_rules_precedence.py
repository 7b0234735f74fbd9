"""Precedence: narrowest scope wins per key and carries what it beat. No database."""

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from memory_core.rules.facts import Record
from memory_core.rules.precedence import resolve

CHAIN = ("actor:u1", "team:ops", "tenant:acme", "global")
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def rec(id, scope, key, text="a fact", author="human", pinned=False, minute=0, expires_at=None):
    return Record(
        id=id,
        scope=scope,
        key=key,
        text=text,
        author=author,
        pinned=pinned,
        created_at=T0 + timedelta(minutes=minute),
        expires_at=expires_at,
    )


def test_narrower_scope_wins_and_carries_beaten_values_in_chain_order():
    records = [
        rec("g", "global", "fiscal-year", "October"),
        rec("a", "actor:u1", "fiscal-year", "calendar year", author="agent"),
        rec("t", "tenant:acme", "fiscal-year", "April"),
    ]
    [entry] = resolve(records, CHAIN)
    assert entry.id == "a"
    assert entry.key == "fiscal-year"
    assert entry.scope == "actor:u1"
    assert [r.id for r in entry.overrides] == ["t", "g"]


def test_agent_at_actor_scope_beats_human_at_global():
    records = [
        rec("policy", "global", "units", "kilometres", author="human", minute=5),
        rec("note", "actor:u1", "units", "miles", author="agent", minute=0),
    ]
    [entry] = resolve(records, CHAIN)
    assert entry.winner.author == "agent"
    assert entry.overrides[0].author == "human"


def test_records_outside_the_chain_are_ignored():
    records = [
        rec("mine", "global", "units"),
        rec("leak", "tenant:other", "units", minute=9),
        rec("other-actor", "actor:u2", "tone"),
    ]
    [entry] = resolve(records, CHAIN)
    assert entry.id == "mine"
    assert entry.overrides == ()


def test_expired_records_are_ignored_only_when_now_is_given():
    now = T0 + timedelta(days=1)
    records = [
        rec("expired", "actor:u1", "units", expires_at=now),
        rec("later", "team:ops", "units", expires_at=now + timedelta(seconds=1)),
        rec("forever", "global", "units"),
    ]
    [entry] = resolve(records, CHAIN, now=now)
    assert entry.id == "later"
    assert [r.id for r in entry.overrides] == ["forever"]
    assert resolve(records, CHAIN)[0].id == "expired"


def test_pin_on_a_beaten_global_record_makes_the_key_pinned():
    records = [
        rec("g", "global", "fiscal-year", pinned=True),
        rec("a", "actor:u1", "fiscal-year", author="agent"),
        rec("u", "global", "units"),
    ]
    by_key = {e.key: e for e in resolve(records, CHAIN)}
    assert by_key["fiscal-year"].pinned
    assert by_key["fiscal-year"].id == "a"
    assert not by_key["units"].pinned


def test_tie_at_the_same_scope_goes_to_the_newest():
    records = [rec("old", "team:ops", "units", minute=1), rec("new", "team:ops", "units", minute=2)]
    [entry] = resolve(records, CHAIN)
    assert entry.id == "new"
    assert [r.id for r in entry.overrides] == ["old"]


def test_entries_are_sorted_by_winner_scope_then_key():
    records = [
        rec("1", "global", "b"),
        rec("2", "global", "a"),
        rec("3", "team:ops", "z"),
        rec("4", "actor:u1", "m"),
        rec("5", "team:ops", "c"),
    ]
    assert [(e.scope, e.key) for e in resolve(records, CHAIN)] == [
        ("actor:u1", "m"),
        ("team:ops", "c"),
        ("team:ops", "z"),
        ("global", "a"),
        ("global", "b"),
    ]


def test_nothing_in_nothing_out():
    assert resolve([], CHAIN) == []


@given(
    cells=st.sets(st.tuples(st.sampled_from(CHAIN), st.sampled_from("abcd")), max_size=12),
    data=st.data(),
)
def test_resolution_does_not_depend_on_input_order(cells, data):
    records = [
        rec(f"m{i}", scope, key, author=("human", "agent")[i % 2], pinned=i % 3 == 0, minute=i)
        for i, (scope, key) in enumerate(sorted(cells))
    ]
    shuffled = data.draw(st.permutations(records))
    assert resolve(shuffled, CHAIN) == resolve(records, CHAIN)
