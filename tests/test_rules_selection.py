"""Selection: pinned first, then relevance, then narrowest-and-newest. No database."""

from datetime import UTC, datetime, timedelta

from memory_core.rules.facts import Entry, Record
from memory_core.rules.selection import select

CHAIN = ("actor:u1", "team:ops", "tenant:acme", "global")
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def entry(scope, key, pinned=False, minute=0):
    winner = Record(
        id=f"{scope}/{key}",
        scope=scope,
        key=key,
        text="a fact",
        author="human",
        pinned=pinned,
        created_at=T0 + timedelta(minutes=minute),
    )
    return Entry(winner=winner, overrides=(), pinned=pinned)


def kept(selection):
    return [(e.scope, e.key) for e in selection.kept]


def test_everything_fits_and_nothing_is_partial():
    entries = [entry("global", "a"), entry("actor:u1", "b")]
    selection = select(entries, CHAIN, max_lines=20)
    assert kept(selection) == [("actor:u1", "b"), ("global", "a")]
    s = selection.stats
    assert (s.offered, s.omitted, s.pinned_omitted, s.recalled, s.partial) == (2, 0, 0, 0, False)


def test_pinned_entries_are_kept_before_anything_else():
    entries = [entry("actor:u1", "mine", minute=9), entry("global", "manifest", pinned=True)]
    selection = select(entries, CHAIN, max_lines=1, relevant_keys=["mine"])
    assert kept(selection) == [("global", "manifest")]
    assert selection.stats.omitted == 1
    assert selection.stats.pinned_omitted == 0
    assert selection.stats.recalled == 0
    assert selection.stats.partial


def test_pinned_overflow_keeps_narrowest_then_newest_and_counts_pinned_omitted():
    entries = [
        entry("global", "g-new", pinned=True, minute=50),
        entry("team:ops", "t-old", pinned=True, minute=1),
        entry("team:ops", "t-new", pinned=True, minute=2),
        entry("actor:u1", "a", pinned=True, minute=0),
        entry("actor:u1", "unpinned", minute=99),
    ]
    selection = select(entries, CHAIN, max_lines=2)
    assert kept(selection) == [("actor:u1", "a"), ("team:ops", "t-new")]
    assert selection.stats.pinned_omitted == 2
    assert selection.stats.omitted == 3
    assert selection.stats.partial


def test_relevance_fills_the_room_left_after_pins_and_counts_recalled():
    entries = [
        entry("global", "pin", pinned=True),
        entry("actor:u1", "near", minute=9),
        entry("global", "units"),
        entry("global", "fiscal-year"),
    ]
    selection = select(
        entries, CHAIN, max_lines=3, relevant_keys=["pin", "absent", "fiscal-year", "units"]
    )
    # "pin" is already kept and "absent" is not an entry: neither uses room or counts.
    assert kept(selection) == [("global", "fiscal-year"), ("global", "pin"), ("global", "units")]
    assert selection.stats.recalled == 2
    assert selection.stats.omitted == 1


def test_room_left_after_relevance_is_filled_narrowest_first():
    entries = [entry("global", "units"), entry("global", "wide"), entry("team:ops", "team")]
    selection = select(entries, CHAIN, max_lines=2, relevant_keys=["units"])
    assert kept(selection) == [("team:ops", "team"), ("global", "units")]
    assert selection.stats.recalled == 1


def test_relevance_marks_the_block_partial_even_when_everything_fits():
    entries = [entry("global", "units"), entry("global", "tone")]
    selection = select(entries, CHAIN, max_lines=20, relevant_keys=["units"])
    assert selection.stats.omitted == 0
    assert selection.stats.recalled == 1
    assert selection.stats.partial


def test_without_relevance_the_widest_and_stalest_are_dropped_first():
    entries = [
        entry("global", "g", minute=99),
        entry("team:ops", "t-stale", minute=1),
        entry("team:ops", "t-fresh", minute=5),
        entry("actor:u1", "a", minute=0),
    ]
    selection = select(entries, CHAIN, max_lines=2, relevant_keys=[])
    assert kept(selection) == [("actor:u1", "a"), ("team:ops", "t-fresh")]
    assert selection.stats.recalled == 0
    assert selection.stats.omitted == 2
    assert selection.stats.partial


def test_kept_entries_come_back_in_rendering_order_not_selection_order():
    entries = [entry("global", "b"), entry("global", "a"), entry("actor:u1", "z", pinned=True)]
    selection = select(entries, CHAIN, max_lines=3, relevant_keys=["b"])
    assert kept(selection) == [("actor:u1", "z"), ("global", "a"), ("global", "b")]


def test_a_budget_of_zero_keeps_nothing():
    entries = [entry("global", "pin", pinned=True), entry("global", "x")]
    for budget in (0, -1):
        selection = select(entries, CHAIN, max_lines=budget, relevant_keys=["x"])
        assert selection.kept == ()
        s = selection.stats
        assert (s.offered, s.omitted, s.pinned_omitted, s.recalled, s.partial) == (
            2,
            2,
            1,
            0,
            True,
        )


def test_no_entries_is_an_empty_complete_selection():
    selection = select([], CHAIN, max_lines=20, relevant_keys=["units"])
    assert selection.kept == ()
    assert not selection.stats.partial
