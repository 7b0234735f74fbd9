"""The semantic-recall evaluation (tests/recall/cases.py): recall@3 of search and of turns,
lexical only (MEMORY_EMBEDDER=none) against hybrid (the default embedder), for questions in
other words than their fact and for questions that share a word with it.

The README's "Semantic recall" section reports these figures; run with `-s` to print them.
"""

import pytest

from memory_core import turns, writes
from memory_core.recall import search
from tests.recall.cases import FACTS, PARAPHRASED, SHARED, UNRELATED

# slow: embeds and searches the whole evaluation set, twice.
pytestmark = pytest.mark.slow

TOP = 3


def search_hits(actor, principal, questions, misses=None) -> int:
    hits = 0
    for question, key in questions:
        items, _ = search.search_memories(actor, question, principal=principal, limit=TOP)
        found = key in [item["key"] for item in items[:TOP]]
        hits += found
        if not found and misses is not None:
            misses.append(question)
    return hits


def unrelated_results(actor, principal) -> int:
    """Memories that off-topic questions bring back, in all."""
    return sum(
        len(search.search_memories(actor, q, principal=principal, limit=TOP)[0]) for q in UNRELATED
    )


def turn_hits(actor, questions) -> int:
    """A turn with the question as its query and room for TOP memories carries the fact."""
    hits = 0
    for question, key in questions:
        turn = turns.compose(actor, "eval", question, TOP)
        hits += key in [entry["key"] for entry in turn.entries]
    return hits


@pytest.fixture
def person(org):
    for key, fact in FACTS.items():
        writes.remember(org.u1, key, fact, principal=org.acme_agent)
    return org.u1


def measure(actor, principal, misses=None) -> dict:
    return {
        "search_paraphrased": search_hits(actor, principal, PARAPHRASED, misses),
        "search_shared": search_hits(actor, principal, SHARED),
        "turn_paraphrased": turn_hits(actor, PARAPHRASED),
        "turn_shared": turn_hits(actor, SHARED),
        "unrelated_results": unrelated_results(actor, principal),
    }


def test_hybrid_recall_beats_lexical_on_paraphrases_and_never_loses_on_shared_words(
    org, person, settings
):
    settings.MEMORY_EMBEDDER = "none"
    lexical = measure(person, org.acme_agent)
    settings.MEMORY_EMBEDDER = "wordllama"
    misses = []
    hybrid = measure(person, org.acme_agent, misses)
    print(f"\nrecall@{TOP} of {len(PARAPHRASED)} paraphrased / {len(SHARED)} shared questions")
    for name in lexical:
        print(f"  {name:<20} lexical {lexical[name]:>3}   hybrid {hybrid[name]:>3}")
    print("  hybrid search missed:", "; ".join(misses))

    # Questions in other words: lexical search has little to go on (a word such as "work"
    # or "time" that the fact happens to share), meaning a lot.
    assert hybrid["search_paraphrased"] >= max(32, lexical["search_paraphrased"] + 20)
    assert hybrid["turn_paraphrased"] >= 32
    # Questions sharing a word with their fact: hybrid does no worse.
    assert hybrid["search_shared"] >= lexical["search_shared"]
    assert hybrid["turn_shared"] >= lexical["turn_shared"]
    assert hybrid["search_shared"] == len(SHARED)
    # Off-topic questions: about one memory a question (9 of 24), not the nearest
    # neighbours. The floor is 0.15, calibrated on the held-out set's DEV half
    # (docs/agents/recall.md); 0.2, chosen on this set, let in 2 here but lost right answers
    # there that scored 0.1 to 0.19.
    assert hybrid["unrelated_results"] <= 10
