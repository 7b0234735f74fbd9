"""Search: chain first, then hybrid or fts -> trigram -> like, key-complete results plus pins.

The lexical tiers are tested here with no embedder (`lexical_only`: MEMORY_EMBEDDER=none,
where the first tier reports `fts`); the semantic half and the fusion in
tests/test_semantic_recall.py."""

import pytest
from django.db import connection

from memory_core import curation, writes
from memory_core.actors import chain_of
from memory_core.recall import search


def rank_keys(chain, query, limit):
    """The ranked keys and their tier (the chain's records ranked_chain also returns aside)."""
    _, keys, tier = search.ranked_chain(chain, query, limit)
    return keys, tier


@pytest.fixture
def lexical_only(settings):
    settings.MEMORY_EMBEDDER = "none"


@pytest.fixture
def facts(org, operator):
    writes.publish(org.acme, "units", "report distances in kilometres", principal=operator)
    writes.publish(org.root, "fiscal-year", "the fiscal year starts in October", principal=operator)
    writes.remember(
        org.u1, "fiscal-year", "they report on the calendar year", principal=org.acme_agent
    )
    pin = writes.publish(
        org.ops, "manifest", "never dispatch without a manifest", principal=operator
    )
    curation.set_pinned(pin, True, principal=operator)
    # Another tenant's matching fact must never be ranked for u1.
    writes.publish(org.globex, "units", "report distances in kilometres too", principal=operator)


def test_full_text_tier_ranks_keys_in_the_chain(lexical_only, org, facts):
    keys, tier = rank_keys(chain_of(org.u1), "distances", 5)
    assert (keys, tier) == (["units"], "fts")


def test_trigram_tier_catches_a_typo_inside_a_longer_fact(lexical_only, org, facts):
    keys, tier = rank_keys(chain_of(org.u1), "kilometers", 5)
    assert tier == "trigram" and keys == ["units"]


def test_like_tier_is_the_last_resort_and_escapes_wildcards(lexical_only, org, facts, operator):
    writes.publish(org.acme, "discount", "staff pay 50% of list", principal=operator)
    # Neither a word nor a trigram: only a literal substring match can find it.
    keys, tier = rank_keys(chain_of(org.u1), "%", 5)
    assert tier == "like" and keys == ["discount"]
    assert rank_keys(chain_of(org.u1), "_", 5) == ([], "like")


def test_search_returns_the_resolved_entry_with_overrides_plus_pinned_keys(
    lexical_only, org, facts
):
    items, tier = search.search_memories(org.u1, "calendar", principal=org.acme_agent)
    assert tier == "fts"
    assert [(i["key"], i["scope"]) for i in items] == [
        ("fiscal-year", "actor:acme/u1"),
        ("manifest", "team:acme/ops"),
    ]
    assert items[0]["overrides"][0]["scope"] == "global"


def test_search_never_ranks_outside_the_chain(org, facts):
    items, _ = search.search_memories(org.x9, "kilometres", principal=org.globex_agent)
    assert [(i["key"], i["scope"]) for i in items] == [("units", "tenant:globex")]
    # u1's own "calendar year" is not u2's: u2 may be shown the global fiscal year (its
    # meaning is close), never u1's row.
    items, _ = search.search_memories(org.u2, "calendar", principal=org.acme_agent)
    assert {i["scope"] for i in items} <= {"global", "tenant:acme"}
    assert "calendar" not in str(items)


def test_search_never_ranks_outside_the_chain_lexically(lexical_only, org, facts):
    items, _ = search.search_memories(org.u2, "calendar", principal=org.acme_agent)
    assert items == []


def test_search_plan_materialises_the_chain_before_ranking(org, facts):
    sql = search.RANKED_CHAIN
    params = search._params(chain_of(org.u1), "x", 5)
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "CTE chain_rows" in plan


def test_later_tiers_are_not_computed_when_full_text_finds_something(lexical_only, org, facts):
    params = search._params(chain_of(org.u1), "distances", 5)
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + search.RANKED_CHAIN, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    # The trigram CTE's lines: up to the next line at its own depth (the main query's).
    trigram = plan.split("CTE trigram")[1].split("\n  ->")[0]
    # The similarity scan is gated on an InitPlan over the first tier, which found a row.
    assert "never executed" in trigram
