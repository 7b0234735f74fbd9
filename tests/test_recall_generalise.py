"""The held-out recall set (tests/recall/generalise) measured as `manage.py recall_eval`
measures it, held to the baseline recorded in docs/agents/recall.md ("Measured on questions
nobody tuned on"), less a small margin: a change that loses recall, or brings back more for
questions nothing answers, fails here.

DEV and TEST are both held, TEST by its totals alone: nothing here prints or compares a TEST
question on its own (tests/recall/generalise/__init__.py). A change that moves the numbers
up should lower nothing here; record the new baseline (the command prints it) with it.

Slow (the world is 396 memories and each of 392 questions is asked several ways): about half
a minute.
"""

import pytest

from memory_console.management.commands.recall_eval import ask, build_world, totals
from tests.recall.generalise import split

# Questions that may be lost before this fails, and off-topic results that may be added.
MARGIN = 2
OFF_TOPIC_MARGIN = 4

# Measured with wordllama (l2_supercat_256, floor 0.15, half-of-best cut), search limit 5,
# turn max_memories 5: (search @3, search @5, turn with max_memories 5, turn with 5 after the
# pins, off-topic results). The vector ranks are the command's own (it says how); the others
# are the services'. Before multilingual lexical search and the fusion over every key
# (docs/agents/recall.md), fused was (68, 76, 9, 84, 65) on DEV and (76, 87, 7, 90, 94) on
# TEST, lexical (41, 45, 9, 62, 45) and (54, 56, 7, 66, 65).
BASELINE = {
    "dev": {
        "lexical": (45, 48, 9, 70, 14),
        "vector": (83, 94, 9, 98, None),  # the raw nearest keys: always 5 per question
        "vector_cut": (80, 88, 9, 99, 72),
        "fused": (85, 97, 9, 103, 74),
    },
    "test": {
        "lexical": (51, 53, 7, 65, 13),
        "vector": (86, 96, 7, 99, None),
        "vector_cut": (82, 90, 7, 93, 97),
        "fused": (88, 98, 7, 100, 99),
    },
}
METRICS = ("search_at_3", "search_at_5", "turn_5", "turn_5_after_pins", "off_topic_results")


@pytest.fixture
def world(db, settings):
    settings.MEMORY_EMBEDDER = "wordllama"
    settings.MEMORY_EMBEDDER_MIN_SIMILARITY = None
    return build_world()


def held_to_baseline(name: str, figures: dict) -> list[str]:
    """What fell below the baseline (totals only, so a TEST failure names no question)."""
    problems = []
    for ranking, baseline in BASELINE[name].items():
        measured = figures["rankings"][ranking]
        for metric, expected in zip(METRICS, baseline, strict=True):
            if expected is None:
                continue
            got = measured[metric]
            if metric == "off_topic_results":
                if got > expected + OFF_TOPIC_MARGIN:
                    problems.append(f"{name} {ranking} {metric}: {got}, baseline {expected}")
            elif got < expected - MARGIN:
                problems.append(f"{name} {ranking} {metric}: {got}, baseline {expected}")
    return problems


@pytest.mark.slow
def test_recall_on_the_held_out_set_stays_at_its_baseline(world):
    dev = totals(*ask(world, split.DEV, split.OFF_TOPIC_DEV))
    test = totals(*ask(world, split.TEST, split.OFF_TOPIC_TEST))
    assert dev["questions"] == test["questions"] == 168
    assert dev["off_topic_questions"] == test["off_topic_questions"] == 28
    problems = held_to_baseline("dev", dev) + held_to_baseline("test", test)
    assert not problems, "; ".join(problems)
    # The ranking is never worse than its parts on the split it was tuned on.
    fused = dev["rankings"]["fused"]
    for part in ("lexical", "vector"):
        for metric in ("search_at_3", "search_at_5"):
            assert fused[metric] >= dev["rankings"][part][metric], (part, metric)
    # The raw vector rank always answers with the nearest keys, even off-topic.
    assert dev["rankings"]["vector"]["off_topic_results"] == 5 * 28
