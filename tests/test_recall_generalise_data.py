"""Invariants of the held-out recall data (tests/recall/generalise): counts, keys, languages,
the word-sharing flags and the frozen DEV/TEST split. Pure Python: no database, no Django, and
no search is run; it checks the data, not how well anything answers it."""

from collections import Counter

from tests.recall import cases
from tests.recall.generalise import background, people, questions, split
from tests.recall.generalise.people import (
    FACT_MAX_CHARS,
    FACT_RECORDS,
    FACTS,
    KEY_PATTERN,
    KINDS,
    LANGUAGES,
    PEOPLE,
    POLICY,
    SCOPED_FACTS,
)
from tests.recall.generalise.questions import OFF_TOPIC, QUESTIONS, shares_content_word

ALL_FACTS = [fact for facts in FACT_RECORDS.values() for fact in facts]


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


def _one_line(text: str) -> bool:
    return text == text.strip() and "\n" not in text and "\r" not in text and text != ""


def test_the_world_has_people_in_tenants_some_sharing_a_team():
    assert len(PEOPLE) >= 6
    for ref, person in PEOPLE.items():
        assert person.ref == ref and person.tenant in people.TENANTS
        assert person.pronoun in ("she", "he") and person.language in LANGUAGES
        assert person.chain[0] == f"actor:{person.tenant}/{ref}" and person.chain[-1] == "global"
        assert all(scope in people.TEAMS for scope in person.memberships[:-1])
    members = Counter(scope for person in PEOPLE.values() for scope in person.memberships[:-1])
    assert set(members) == set(people.TEAMS)
    assert sum(count >= 2 for count in members.values()) >= 2
    assert set(FACTS) == set(PEOPLE) == set(FACT_RECORDS)


def test_facts_are_many_keyed_one_line_and_of_every_kind():
    assert len(ALL_FACTS) >= 320
    for person, facts in FACT_RECORDS.items():
        keys = [fact.key for fact in facts]
        assert len(keys) == len(set(keys)), person
        assert FACTS[person] == {fact.key: fact.text for fact in facts}
    for fact in ALL_FACTS:
        assert KEY_PATTERN.match(fact.key), fact.key
        assert _one_line(fact.text) and len(fact.text) <= FACT_MAX_CHARS, fact
        assert fact.kind in KINDS and fact.lang in LANGUAGES, fact
    kinds = Counter(fact.kind for fact in ALL_FACTS)
    assert len(kinds) >= 10 and min(kinds.values()) >= 20, kinds


def test_a_fifth_of_facts_and_questions_are_in_portuguese_spanish_and_german():
    for langs in (Counter(f.lang for f in ALL_FACTS), Counter(q.lang for q in QUESTIONS)):
        assert set(langs) == set(LANGUAGES), langs
        assert langs["pt"] + langs["es"] + langs["de"] >= 0.2 * sum(langs.values())
        assert min(langs.values()) >= 20, langs


def test_accents_appear_both_written_and_left_off():
    text = "\n".join(
        [f.text for f in ALL_FACTS]
        + [s.text for s in SCOPED_FACTS]
        + [q.text for q in QUESTIONS]
        + [p.name for p in PEOPLE.values()]
    )
    for accented, plain in [
        ("São Paulo", "Sao Paulo"),
        ("mañana", "manana"),
        ("Straße", "Strasse"),
        ("Müller", "Muller"),
    ]:
        assert accented in text and plain in text, (accented, plain)
    facts_with_marks = [f for f in ALL_FACTS if f.lang != "en" and not f.text.isascii()]
    assert len(facts_with_marks) >= 50


def test_questions_cover_every_kind_and_cross_languages():
    assert len(QUESTIONS) >= 300
    assert {q.kind for q in QUESTIONS} == set(KINDS)
    english_about_other = [q for q in QUESTIONS if q.lang == "en" and q.fact_lang != "en"]
    other_about_english = [q for q in QUESTIONS if q.lang != "en" and q.fact_lang == "en"]
    assert len(english_about_other) >= 20 and len(other_about_english) >= 20
    assert {q.fact_lang for q in english_about_other} == {"pt", "es", "de"}
    assert {q.lang for q in other_about_english} == {"pt", "es", "de"}


def test_every_expected_key_exists_for_its_person_and_is_asked_once():
    for q in QUESTIONS:
        assert q.person in PEOPLE and q.key in FACTS[q.person], q
        assert q.lang in LANGUAGES and _one_line(q.text), q
    asked = Counter((q.person, q.key) for q in QUESTIONS)
    assert max(asked.values()) == 1


def test_the_shares_word_flags_are_true_and_mostly_false():
    for q in QUESTIONS:
        assert shares_content_word(q.text, q.key, FACTS[q.person][q.key]) == q.shares_word, q
    shared = sum(q.shares_word for q in QUESTIONS)
    assert 0.1 * len(QUESTIONS) <= shared <= 0.4 * len(QUESTIONS)


def test_no_question_repeats_and_nothing_repeats_the_small_evaluation():
    texts = [_normal(q.text) for q in QUESTIONS] + [_normal(o.text) for o in OFF_TOPIC]
    assert len(texts) == len(set(texts))
    old_questions = {_normal(t) for t, _ in cases.PARAPHRASED + cases.SHARED}
    old_questions |= {_normal(t) for t in cases.UNRELATED}
    assert not old_questions & set(texts)
    old_facts = {_normal(t) for t in cases.FACTS.values()}
    assert not old_facts & {_normal(f.text) for f in ALL_FACTS}
    assert not old_facts & {_normal(s.text) for s in SCOPED_FACTS}


def test_off_topic_questions_are_many_and_per_person():
    assert len(OFF_TOPIC) >= 50
    assert {o.person for o in OFF_TOPIC} == set(PEOPLE)
    assert {o.lang for o in OFF_TOPIC} == set(LANGUAGES)
    assert all(_one_line(o.text) for o in OFF_TOPIC)


def test_wider_scope_facts_are_distractors_at_every_level():
    assert 50 <= len(SCOPED_FACTS) <= 70
    scopes = Counter(s.scope for s in SCOPED_FACTS)
    assert set(scopes) == {*people.TEAMS, *(f"tenant:{t}" for t in people.TENANTS), "global"}
    assert len({(s.scope, s.key) for s in SCOPED_FACTS}) == len(SCOPED_FACTS)
    for s in SCOPED_FACTS:
        assert KEY_PATTERN.match(s.key) and _one_line(s.text) and len(s.text) <= FACT_MAX_CHARS
        assert s.kind in (*KINDS, POLICY) and s.lang in LANGUAGES, s
        for ref in s.same_key_as:
            person, key = ref.split("/")
            assert key == s.key and key in FACTS[person], (s, ref)
            assert s.scope in PEOPLE[person].chain, (s, ref)  # precedence decides
        for ref in s.resembles:
            person, key = ref.split("/")
            assert key in FACTS[person], (s, ref)
    pinned = [s for s in SCOPED_FACTS if s.pinned]
    assert {s.scope for s in pinned} >= {f"tenant:{t}" for t in people.TENANTS}
    assert sum(bool(s.same_key_as) for s in SCOPED_FACTS) >= 20
    # Hard distractors: worded like a personal fact of someone else in the scope's reach.
    others = [
        s
        for s in SCOPED_FACTS
        for ref in s.resembles
        if ref.split("/")[1] != s.key or ref not in s.same_key_as
    ]
    assert len(others) >= 15
    assert {s.lang for s in SCOPED_FACTS} == set(LANGUAGES)


def test_every_chain_holds_hundreds_of_rows_the_background_around_the_facts():
    # A real chain holds far more than the facts asked about: background.py's notes.
    for ref, person in PEOPLE.items():
        rows = (
            len(FACT_RECORDS[ref])
            + len(background.PERSONAL_NOTES[ref])
            + sum(1 for s in SCOPED_FACTS + background.SCOPED_NOTES if s.scope in person.chain)
        )
        assert rows >= 300, (ref, rows)
        notes = background.PERSONAL_NOTES[ref]
        keys = [n.key for n in notes]
        assert len(set(keys)) == len(keys) and not set(keys) & set(FACTS[ref]), ref
        langs = Counter(n.lang for n in notes)
        assert langs["en"] and (person.language == "en" or langs[person.language] >= 15), langs
    shared = {(s.scope, s.key) for s in SCOPED_FACTS}
    notes = background.SCOPED_NOTES
    assert len({(s.scope, s.key) for s in notes}) == len(notes)
    assert not {(s.scope, s.key) for s in notes} & shared
    assert {s.scope for s in notes} == {s.scope for s in SCOPED_FACTS}
    every = [n for ns in background.PERSONAL_NOTES.values() for n in ns] + list(notes)
    for note in every:
        assert KEY_PATTERN.match(note.key) and _one_line(note.text), note
        assert len(note.text) <= FACT_MAX_CHARS and note.kind == background.NOTE, note
        assert note.lang in LANGUAGES and not getattr(note, "pinned", False), note
    # No template outweighs the rest: each kind of note is at most a fifth of its level's.
    for level in (notes, [n for ns in background.PERSONAL_NOTES.values() for n in ns]):
        kinds = Counter(n.key.split(".", 1)[0] for n in level)
        assert max(kinds.values()) <= len(level) / 5, kinds
    # Notes speak of work, never of a person's life: no question's expected fact is repeated.
    texts = {_normal(n.text) for n in every}
    assert not texts & {_normal(f.text) for f in ALL_FACTS}


def test_dev_and_test_are_disjoint_halves_stratified_and_frozen():
    assert not {q.text for q in split.DEV} & {q.text for q in split.TEST}
    assert sorted(split.DEV + split.TEST) == sorted(QUESTIONS)
    assert abs(len(split.DEV) - len(split.TEST)) <= 2
    for field in ("kind", "lang"):
        dev = Counter(getattr(q, field) for q in split.DEV)
        test = Counter(getattr(q, field) for q in split.TEST)
        assert set(dev) == set(test)
        assert all(abs(dev[v] - test[v]) <= max(3, 0.15 * (dev[v] + test[v])) for v in dev)
    assert not {o.text for o in split.OFF_TOPIC_DEV} & {o.text for o in split.OFF_TOPIC_TEST}
    assert sorted(split.OFF_TOPIC_DEV + split.OFF_TOPIC_TEST) == sorted(OFF_TOPIC)
    assert min(len(split.OFF_TOPIC_DEV), len(split.OFF_TOPIC_TEST)) >= 25
    # The split was made once; these pin it (see split.py before changing either).
    assert split.fingerprint(split.TEST) == split.TEST_FINGERPRINT
    assert split.fingerprint(split.OFF_TOPIC_TEST) == split.OFF_TOPIC_TEST_FINGERPRINT


def test_question_records_know_their_fact():
    q = QUESTIONS[0]
    assert q.kind == people.fact_record(q.person, q.key).kind
    assert questions.content_words("Wie groß ist die Straße?") == {"gross", "strasse"}
