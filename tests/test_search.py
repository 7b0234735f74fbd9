"""Search: chain first, then hybrid or fts -> trigram -> like, key-complete results plus pins.

The lexical tiers are tested here with no embedder (`lexical_only`: MEMORY_EMBEDDER=none,
where the first tier reports `fts`); the semantic half and the fusion in
tests/test_semantic_recall.py."""

import pytest
from django.db import connection

from memory_core import curation, writes
from memory_core.actors import chain_of
from memory_core.recall import search, stopwords


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


@pytest.mark.parametrize("sql", ["RANKED_CHAIN", "RANKED_SELECTION", "RANKED_SEARCH"])
def test_search_plan_materialises_the_chain_before_ranking(org, facts, sql):
    params = {**search._params(chain_of(org.u1), "x", 5), "room": 5}
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + getattr(search, sql), params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "CTE live" in plan


def test_later_tiers_are_not_computed_when_full_text_finds_something(lexical_only, org, facts):
    params = search._params(chain_of(org.u1), "distances", 5)
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + search.RANKED_CHAIN, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    # The trigram CTE's lines: up to the next line at its own depth (the main query's).
    trigram = plan.split("CTE trigram")[1].split("\n  ->")[0]
    # The similarity scan is gated on an InitPlan over the first tier, which found a row.
    assert "never executed" in trigram


# --- lexical search beyond English (migration 0024_multilingual_search) ------------------


def test_the_stored_words_are_unaccented_and_lower_case_beside_the_english_stems(org, operator):
    memory = writes.publish(
        org.acme, "office", "A Reunião é na Straße em São Paulo", principal=operator
    )
    memory.refresh_from_db()
    assert {"reuniao", "strasse", "sao", "paulo", "office"} <= set(
        word.split(":")[0].strip("'") for word in memory.search_simple.split()
    )


@pytest.mark.parametrize(
    "query, words",
    [
        ("What is the name of their dog?", ["dog", "name"]),
        ("Qual é o nome do cão dela?", ["cao", "nome"]),
        ("¿Cuál es el nombre de su perro?", ["nombre", "perro"]),
        ("Wie lange ist sie schon in der Ehe?", ["ehe", "lange", "schon"]),
        ("Wann hat er Geburtstag?", ["geburtstag"]),
    ],
)
def test_the_stop_words_of_every_language_are_not_looked_for(db, query, words):
    assert search.content_words(query) == words


def test_python_spells_the_stop_words_as_the_text_search_configuration_does(db):
    written = " ".join(" ".join(words.split()) for words in stopwords.LANGUAGES.values())
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tsvector_to_array(to_tsvector('memory_simple_unaccent', %s))", [written]
        )
        (lexemes,) = cursor.fetchone()
    # Every stop word, as the configuration spells it, is one Python spells the same way.
    assert set(lexemes) == stopwords.STOPWORDS
    assert search.content_words(written) == []


@pytest.fixture
def languages(org, operator):
    """One fact in each language, written with their accents, and one without."""
    for key, text in [
        ("cats", "tem dois gatos pretos em casa"),  # pt
        ("padel", "juega al pádel los domingos"),  # es
        ("dogs", "Er hat zwei Hunde und wohnt in der Stadt"),  # de
        ("meetings", "prefers meetings before noon"),  # en
        ("coffee", "cafe sem acucar, sempre"),  # pt, typed without its accents
        ("doctor", "Sie ist Ärztin in der Klinik"),  # de, all but one word stop words
    ]:
        writes.publish(org.acme, key, text, principal=operator)


@pytest.mark.parametrize(
    "query, keys",
    [
        ("Ela tem um gato?", ["cats"]),  # gato finds gatos
        ("¿Juega al padel?", ["padel"]),  # without the accent
        ("¿Juega al pádel?", ["padel"]),  # with it
        ("Hat er einen Hund?", ["dogs"]),  # Hund finds Hunde; hat, er, einen are stop words
        ("when is the meeting?", ["meetings"]),  # the English stem
        ("Ela gosta de café com açúcar?", ["coffee"]),  # accents typed, none stored
        ("Ist sie in der Stadt?", ["dogs"]),  # ist, sie, in, der match nothing
    ],
)
def test_each_language_matches_with_or_without_accents_and_never_on_a_stop_word(
    lexical_only, org, languages, query, keys
):
    assert rank_keys(chain_of(org.u1), query, 5) == (keys, "fts")


def test_a_question_of_stop_words_alone_is_left_to_the_later_tiers(lexical_only, org, languages):
    # "Wer ist sie?": every word is a stop word, so full text looks for nothing; only the
    # trigram tier's likeness of the whole string ("Sie ist ...") can still answer.
    assert search.content_words("Wer ist sie?") == []
    assert rank_keys(chain_of(org.u1), "Wer ist sie?", 5)[1] == "trigram"


# --- the hybrid ranking -------------------------------------------------------------------


def test_with_vectors_to_compare_the_trigram_and_like_tiers_never_answer(org, facts, settings):
    # "metres" is inside "kilometres": lexically, only the trigram tier finds it ...
    settings.MEMORY_EMBEDDER = "none"
    assert rank_keys(chain_of(org.u1), "metres", 5) == (["units"], "trigram")
    # ... but where the chain holds vectors, what meaning finds (or nothing) is the answer.
    settings.MEMORY_EMBEDDER = "wordllama"
    _, tier = rank_keys(chain_of(org.u1), "metres", 5)
    assert tier == "hybrid"
    assert rank_keys(chain_of(org.u1), "quantum chromodynamics", 5) == ([], "hybrid")


def test_the_ranking_does_not_depend_on_the_limit_asked_for(org, facts, operator):
    for key, text in [
        ("pet", "owns a golden retriever named Biscuit"),
        ("commute", "cycles to the office along the river"),
        ("manager", "reports to Dana Whitfield"),
    ]:
        writes.remember(org.u1, key, text, principal=org.acme_agent)
    query = "is Dana their boss, is Biscuit their dog, how far do they ride to the office?"
    keys, _ = rank_keys(chain_of(org.u1), query, 20)
    assert len(keys) >= 3
    for limit in range(1, len(keys) + 1):
        assert rank_keys(chain_of(org.u1), query, limit)[0] == keys[:limit]


def test_a_lexical_match_ranks_with_its_meaning_not_above_it(org, operator):
    # Fused by reciprocal rank: the fact that both matches a word and is closest in meaning
    # comes first, whatever else shares the word.
    writes.remember(org.u1, "manager", "reports to Dana Whitfield", principal=org.acme_agent)
    writes.remember(org.u1, "report", "writes the weekly report", principal=org.acme_agent)
    keys, tier = rank_keys(chain_of(org.u1), "who does she report to, her boss?", 5)
    assert tier == "hybrid" and keys[0] == "manager"


# --- migration 0024: the unaccent extension --------------------------------------------


class _Catalog:
    """What migration 0024 asks a server's catalog, answered as a server without unaccent
    (or without the right to create it) would."""

    def __init__(self, installed, available, may_create):
        self.row = (installed, available, may_create)
        self.settings_dict = {"NAME": "memories"}
        self.executed = []

    def cursor(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def execute(self, sql, params=None):
        self.executed.append(sql)

    def fetchone(self):
        return self.row


@pytest.mark.parametrize(
    "available, may_create, message",
    [
        (False, False, "Install the contrib package"),
        (True, False, "run `CREATE EXTENSION unaccent;`"),
        (True, True, None),
    ],
)
def test_migrate_creates_unaccent_where_it_may_or_says_how(available, may_create, message):
    import importlib
    from types import SimpleNamespace

    from django.core.management.base import CommandError

    migration = importlib.import_module("memory_core.migrations.0024_multilingual_search")
    catalog = _Catalog(False, available, may_create)
    editor = SimpleNamespace(connection=catalog)
    if message is None:
        migration.create_unaccent_extension(None, editor)
        assert catalog.executed[-1] == "CREATE EXTENSION unaccent"
    else:
        with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
            migration.create_unaccent_extension(None, editor)
        assert not any("CREATE EXTENSION" in sql for sql in catalog.executed)
