"""DEV and TEST: the split of questions.py, made once and frozen.

How: the questions are ordered by (language of the question, kind of the expected fact,
whether it shares a content word with its fact, SHA-256 of the question text) and dealt
alternately to DEV and TEST, so every stratum of language, kind and word sharing is halved
(to within one question) and the whole is 50/50; the off-topic questions likewise by
(language, hash). Nothing random, nothing that depends on how search
scores them.

This split was made once, before any search was run on this set, and must not be changed to
improve numbers: not redrawn, not re-seeded, no question moved between halves. Tune on DEV
only; report TEST as an aggregate and never inspect its individual failures.
TEST_FINGERPRINT pins the TEST half (tests/test_recall_generalise_data.py checks it), so any
edit that moves it shows up as a failing test and has to be a deliberate, stated decision.
"""

import hashlib

from tests.recall.generalise.questions import OFF_TOPIC, QUESTIONS, OffTopic, Question


def stable_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _deal(items: list, stratum) -> tuple[list, list]:
    ordered = sorted(items, key=lambda item: (*stratum(item), stable_hash(item.text)))
    return ordered[0::2], ordered[1::2]


DEV: list[Question]
TEST: list[Question]
DEV, TEST = _deal(QUESTIONS, lambda q: (q.lang, q.kind, q.shares_word))

OFF_TOPIC_DEV: list[OffTopic]
OFF_TOPIC_TEST: list[OffTopic]
OFF_TOPIC_DEV, OFF_TOPIC_TEST = _deal(OFF_TOPIC, lambda q: (q.lang,))


def fingerprint(questions) -> str:
    """SHA-256 over the sorted texts of a list of questions."""
    return stable_hash("\n".join(sorted(q.text for q in questions)))


# Recorded when the split was made; see the module docstring before touching either.
TEST_FINGERPRINT = "8cd24d898f8b678800305c7c62e7a81eb0a3522719e1dc02f806ffdc09b0e295"
OFF_TOPIC_TEST_FINGERPRINT = "7ade7565f44f542fd372ec5f353e016fd0d8585ceed1fb4dd3e01a066b5d578a"
