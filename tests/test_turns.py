"""resolve_turn: the worked example, determinism, budget, pins, and what is stored."""

import pytest
from django.test import override_settings

from memory_core import curation, turns, writes
from memory_core.models import AccessLog, Digest, DigestLine
from memory_core.recall import readback, search


@pytest.fixture
def worked_example(org, operator):
    units = writes.publish(org.root, "units", "report distances in kilometres", principal=operator)
    october = writes.publish(
        org.root, "fiscal-year", "the fiscal year starts in October", principal=operator
    )
    calendar = writes.remember(
        org.u1, "fiscal-year", "they report on the calendar year", principal=org.acme_agent
    ).memory
    return units, october, calendar


def test_worked_example_block_has_both_sections_and_the_beaten_policy(org, worked_example):
    units, october, calendar = worked_example
    turn = turns.resolve_turn(org.u1, "run_1", principal=org.acme_agent)
    assert turn.scopes == ["actor:acme/u1", "team:acme/ops", "tenant:acme", "global"]
    lines = turn.block.split("\n")
    assert lines[0] == "<memory>" and lines[-1] == "</memory>"
    human = lines.index(next(ln for ln in lines if ln.startswith("Stated by people.")))
    agent = lines.index(next(ln for ln in lines if ln.startswith("Concluded by you.")))
    assert human < agent
    assert lines[human + 1] == "- [global] units: report distances in kilometres"
    assert lines[agent + 1] == "- [actor:acme/u1] fiscal-year: they report on the calendar year"
    assert lines[agent + 2] == "    ↳ [global] a person stated: the fiscal year starts in October"
    assert turn.lines == [
        {"n": 1, "text": lines[human + 1], "memory_id": units.uid},
        {"n": 2, "text": lines[agent + 1], "memory_id": calendar.uid},
        {"n": 3, "text": lines[agent + 2], "memory_id": october.uid},
    ]
    assert turn.stats == {
        "offered": 2,
        "omitted": 0,
        "pinned_omitted": 0,
        "recalled": 0,
        "prompt_chars": len(turn.block),
        "partial": False,
    }
    fiscal = next(e for e in turn.entries if e["key"] == "fiscal-year")
    assert fiscal["overrides"] == [
        {"id": october.uid, "scope": "global", "text": october.text, "author": "human"}
    ]


def test_a_turn_with_nothing_applicable_renders_nothing(org):
    turn = turns.resolve_turn(org.x9, "run_1", principal=org.globex_agent)
    assert turn.block == "" and turn.lines == [] and turn.stats["offered"] == 0


def test_repeated_turn_returns_the_stored_digest_unchanged(org, worked_example, operator):
    first = turns.resolve_turn(org.u1, "run_1", principal=org.acme_agent)
    writes.publish(org.acme, "tone", "keep answers short", principal=operator)
    writes.remember(org.u1, "fiscal-year", "April to March", principal=org.acme_agent)
    again = turns.resolve_turn(org.u1, "run_1", principal=org.acme_agent, query="anything")
    assert again.replayed
    assert (again.block, again.lines, again.entries, again.stats) == (
        first.block,
        first.lines,
        first.entries,
        first.stats,
    )
    assert Digest.objects.filter(actor=org.u1, run_id="run_1").count() == 1
    fresh = turns.resolve_turn(org.u1, "run_2", principal=org.acme_agent)
    assert "April to March" in fresh.block and "keep answers short" in fresh.block


def test_digest_stores_each_line_with_its_memory_version(org, worked_example):
    turn = turns.resolve_turn(org.u1, "run_1", principal=org.acme_agent, thread_id="thr_1")
    digest = Digest.objects.get(actor=org.u1, run_id="run_1")
    assert digest.thread_ref == "thr_1" and digest.block == turn.block
    stored = list(DigestLine.objects.filter(digest=digest).values_list("n", "memory__uid"))
    assert stored == [(ln["n"], ln["memory_id"]) for ln in turn.lines]
    row = AccessLog.objects.filter(action="turn").get()
    assert row.outcome == 200 and set(row.memory_ids) == {ln["memory_id"] for ln in turn.lines}


@override_settings(MEMORY_MAX_LINES=3)
def test_budget_keeps_pins_first_and_counts_the_pins_that_did_not_fit(org, operator):
    for i in range(5):
        m = writes.publish(org.root, f"policy-{i}", f"policy number {i}", principal=operator)
        curation.set_pinned(m, True, principal=operator)
    writes.remember(org.u1, "note", "an agent note", principal=org.acme_agent)
    turn = turns.resolve_turn(org.u1, "run_1", principal=org.acme_agent)
    assert turn.stats["offered"] == 6 and turn.stats["pinned_omitted"] == 2
    assert turn.stats["omitted"] == 3 and turn.stats["partial"] is True
    assert len(turn.entries) == 3 and all(e["pinned"] for e in turn.entries)
    assert "other" in turn.block.lower() or "others" in turn.block.lower()
    assert Digest.objects.get(run_id="run_1").pinned_omitted == 2


def test_max_memories_lowers_the_budget_and_query_recalls_by_relevance(org, operator):
    writes.publish(org.acme, "shipping", "pallets ship on Tuesdays", principal=operator)
    writes.publish(org.acme, "labels", "print a manifest for every pallet", principal=operator)
    writes.publish(org.acme, "lunch", "the canteen opens at noon", principal=operator)
    turn = turns.resolve_turn(
        org.u1, "run_1", principal=org.acme_agent, query="canteen", max_memories=1
    )
    assert [e["key"] for e in turn.entries] == ["lunch"]
    assert turn.stats["recalled"] == 1 and turn.stats["partial"] is True


def test_a_turn_with_a_query_keeps_the_pins_then_searchs_best_keys_in_its_order(org, operator):
    for key, text in (("badge", "wear the badge on site"), ("escort", "visitors need an escort")):
        writes.publish(org.acme, key, text, principal=operator, pinned=True)
    notes = {
        "manager": "reports to Dana Whitfield",
        "pet": "owns a golden retriever named Biscuit",
        "commute": "cycles to the office along the river",
        "coffee": "drinks oat milk flat whites every morning",
        "editor": "writes code in Neovim",
        "car": "drives a Toyota Corolla hybrid",
    }
    for key, text in notes.items():
        writes.remember(org.u1, key, text, principal=org.acme_agent)
    query = "is Dana their boss, is Biscuit their dog, how do they get to the office?"
    items, tier = search.search_memories(org.u1, query, principal=org.acme_agent, limit=10)
    best = [i["key"] for i in items if not i["pinned"]]
    assert tier == "hybrid" and len(best) >= 3
    # Room for the two pins and two more: the pins, then search's first two, as search
    # ranked them (the search ranking does not depend on the limit it is asked for).
    turn = turns.compose(org.u1, "r", query, 4)
    assert {e["key"] for e in turn.entries} == {"badge", "escort", *best[:2]}
    assert turn.stats["recalled"] == 2
    # Room for one: a pin, and nothing the query found (pins and the budget win).
    turn = turns.compose(org.u1, "r", query, 1)
    assert [e["pinned"] for e in turn.entries] == [True] and turn.stats["recalled"] == 0
    assert turn.stats["pinned_omitted"] == 1


def test_pin_at_a_wide_scope_makes_a_narrow_override_always_on(org, operator):
    policy = writes.publish(org.root, "fiscal-year", "October", principal=operator)
    curation.set_pinned(policy, True, principal=operator)
    writes.remember(org.u1, "fiscal-year", "calendar year", principal=org.acme_agent)
    for i in range(3):
        writes.publish(org.ops, f"other-{i}", f"other fact {i}", principal=operator)
    with override_settings(MEMORY_MAX_LINES=1):
        turn = turns.resolve_turn(org.u1, "run_1", principal=org.acme_agent)
    # The pin is the global record's, but it belongs to the key: the actor's override
    # is the one kept, while each memory shape still reports its own record's flag.
    assert [(e["key"], e["scope"], e["pinned"]) for e in turn.entries] == [
        ("fiscal-year", "actor:acme/u1", False)
    ]
    assert turn.stats["pinned_omitted"] == 0 and turn.stats["omitted"] == 3


def test_preview_composes_the_same_block_without_storing_a_digest(org, worked_example):
    preview = turns.preview_turn(org.u1, principal=org.acme_agent)
    turn = turns.resolve_turn(org.u1, "run_1", principal=org.acme_agent)
    assert (preview.block, preview.lines, preview.stats) == (turn.block, turn.lines, turn.stats)
    assert Digest.objects.count() == 1


def test_read_back_is_not_capped_and_filters_by_thread(org):
    for i in range(25):
        writes.remember(
            org.u1,
            f"k{i:02d}",
            f"fact {i}",
            principal=org.acme_agent,
            thread_id="thr_a" if i % 2 else "thr_b",
        )
    items, count = readback.read_back(org.u1, principal=org.acme_agent, limit=100)
    assert count == 25 and len(items) == 25
    items, count = readback.read_back(org.u1, principal=org.acme_agent, thread_id="thr_a")
    assert count == 12 and {i["origin"]["thread_id"] for i in items} == {"thr_a"}


def test_an_actor_never_sees_another_actors_or_tenants_memories(org):
    writes.remember(org.u2, "secret", "u2 private", principal=org.acme_agent)
    writes.remember(org.x9, "secret", "x9 private", principal=org.globex_agent)
    turn = turns.resolve_turn(org.u1, "run_1", principal=org.acme_agent)
    assert turn.block == ""
    items, count = readback.read_back(org.u1, principal=org.acme_agent)
    assert count == 0
    found, _ = search.search_memories(org.u1, "private", principal=org.acme_agent)
    assert found == []


def test_a_memory_forgotten_between_read_and_write_is_not_stored_and_the_turn_recomposes(
    org, operator, monkeypatch
):
    from memory_core import forgetting

    units = writes.publish(org.acme, "units", "miles", principal=operator)
    writes.publish(org.acme, "tone", "brief", principal=operator)
    composed = []
    real_compose = turns.compose

    def compose_then_forget(*args, **kwargs):
        turn = real_compose(*args, **kwargs)
        if not composed:  # the forget commits after the read, before the write
            forgetting.forget(units, principal=operator)
        composed.append(turn)
        return turn

    monkeypatch.setattr(turns, "compose", compose_then_forget)
    turn = turns.resolve_turn(org.u1, "run-vanish", principal=org.acme_agent)
    assert len(composed) == 2
    assert units.uid in composed[0].memory_ids and units.uid not in turn.memory_ids
    digest = Digest.objects.get(actor=org.u1, run_id="run-vanish")
    assert "miles" not in digest.block and "brief" in digest.block
    assert digest.lines.count() == 1
    logged = AccessLog.objects.filter(action="turn", actor_ref="acme/u1")
    assert [row.memory_ids for row in logged] == [turn.memory_ids]
