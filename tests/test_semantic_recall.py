"""Semantic recall: an embedding per memory version, hybrid search over the actor's chain,
embedders that fail without failing a write, and switching embedders without ever comparing
one model's vectors with another's."""

import json
import math

import pgtrigger
import pytest
from django.core.management import call_command
from django.db import DataError, IntegrityError, connection, transaction

from memory_console.demo import load_demo
from memory_core import turns, writes
from memory_core.actors import chain_of
from memory_core.models import AccessLog, Embedding, LedgerEvent, Memory
from memory_core.recall import embeddings, providers, search
from memory_core.recall.providers import document_text, vector_problem, without_stopwords
from tests.embedding_server import EmbeddingServer
from tests.helpers import bearer, use_server
from tests.roles import as_owner

MEMORIES = "/api/v1/memories"
WORDLLAMA = providers.WordLlama()


def remember(client, secret, **body):
    return client.post(MEMORIES, body, content_type="application/json", headers=bearer(secret))


def search_api(client, secret, **params):
    return client.get(f"{MEMORIES}/search", params, headers=bearer(secret))


def embedding_of(uid: str) -> Embedding:
    return Embedding.objects.get(memory__uid=uid)


@pytest.fixture
def boss(org, client):
    response = remember(
        client, org.acme_secret, actor="u1", key="manager", fact="reports to Dana Whitfield"
    )
    assert response.status_code == 201
    return response.json()


@pytest.fixture
def dog(org, client):
    response = remember(
        client,
        org.acme_secret,
        actor="u1",
        key="pet",
        fact="owns a golden retriever named Biscuit",
    )
    return response.json()


# --- the pure parts ---------------------------------------------------------------------


def test_document_text_puts_the_key_in_words_before_the_fact():
    assert document_text("favorite_food", "sardines") == "favorite food: sardines"
    assert document_text("home.city-name", "Lisbon") == "home city name: Lisbon"
    assert WORDLLAMA.document("pet", "a dog") == "pet pet: a dog"


def test_stop_words_are_dropped_unless_nothing_else_is_left():
    assert without_stopwords("Who is their boss?") == "boss"
    assert without_stopwords("who is it") == "who is it"


@pytest.mark.parametrize(
    "vector, problem",
    [
        ([1.0, 0.0], None),
        ([1.0], "1 dimensions where 2 were expected"),
        ([float("nan"), 1.0], "a component is NaN or infinite"),
        ([math.inf, 1.0], "a component is NaN or infinite"),
        ([0.0, 0.0], "the zero vector has no direction"),
        (["1", 0.0], "not a list of numbers"),
        ([True, 0.0], "not a list of numbers"),
        ("[1,0]", "not a list of numbers"),
    ],
)
def test_vector_problem_names_what_is_wrong(vector, problem):
    assert vector_problem(vector, 2) == problem


def test_the_default_embedder_loads_from_its_own_package_and_never_downloads(monkeypatch):
    # No network here anyway; this makes any attempt fail loudly instead of hanging.
    import huggingface_hub

    def refuse(*args, **kwargs):
        raise AssertionError("the embedder tried to download")

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", refuse)
    embedder = providers.WordLlama()
    (vector,) = embedder.embed(["reports to Dana Whitfield"]).tolist()
    assert len(vector) == embedder.dims == 256 and vector_problem(vector, 256) is None
    assert embedder.identity.startswith("wordllama:l2_supercat_256@0.4")


@pytest.mark.parametrize(
    "text",
    [
        "reports to Dana Whitfield",
        "Qual é a comida favorita dela? Feijoada à moda do Porto",
        "Wie heißt ihr Hund? Der Hund heißt Bruno und ist 7 Jahre alt",
        "¿Dónde vive? En Málaga, cerca de la playa",
        "allergic to penicillin 💊 since 2019-04-03",
        "x",
        "the",
        "retrospective " * 300,
    ],
)
def test_one_text_is_embedded_bit_for_bit_as_wordllamas_own_embed(text):
    """WordLlama._one, the path of a query or one remember, against the library's embed."""
    model = WORDLLAMA._loaded()
    expected = model.embed([without_stopwords(text)], norm=True, batch_size=256)
    got = WORDLLAMA.embed([text])
    assert got.shape == (1, 256) and got.dtype == expected.dtype
    assert (got == expected).all()
    # and as the same text's row of a batch, which goes through the library
    assert (WORDLLAMA.embed([text, "an unrelated second text"])[0] == got[0]).all()


# --- every write path embeds ------------------------------------------------------------


def test_a_remembered_version_is_embedded_with_the_embedders_name_version_and_width(boss):
    row = embedding_of(boss["id"])
    assert (row.embedder, row.dims) == (WORDLLAMA.identity, 256)
    assert len(row.vector) == 256 and row.embedded_at is not None
    expected = WORDLLAMA.embed([WORDLLAMA.document("manager", "reports to Dana Whitfield")])[0]
    assert max(abs(a - b) for a, b in zip(row.vector, expected, strict=True)) < 1e-6


def test_publish_correct_and_promote_embed_their_new_versions(org, operator, boss):
    published = writes.publish(org.acme, "tone", "formal, no emoji", principal=operator)
    corrected = writes.correct(published, "formal, emoji allowed", principal=operator)
    learned = Memory.objects.get(uid=boss["id"])
    promoted = writes.promote(learned, org.acme, principal=operator)
    for memory in (published, corrected, promoted):
        assert embedding_of(memory.uid).embedder == WORDLLAMA.identity


def test_import_and_the_demo_embed_what_they_write(tmp_path, db):
    load_demo()
    lines = tmp_path / "in.jsonl"
    lines.write_text(json.dumps({"scope": "global", "key": "units", "text": "kilometres"}) + "\n")
    call_command("import_memories", str(lines), verbosity=0)
    assert Memory.objects.filter(key="units").exists()
    assert not Embedding.objects.filter(vector__isnull=True).exists()
    assert Embedding.objects.count() == Memory.objects.count()


# --- the database refuses bad vectors ---------------------------------------------------


@pytest.mark.parametrize(
    "assignment, error",
    [
        ("vector = '[1,2,3]'", IntegrityError),  # 3 dimensions stored as 256
        ("vector = array_fill(0, ARRAY[256])::vector", IntegrityError),  # zero vector
        ("vector = NULL", IntegrityError),  # a maker without a vector
        ("embedder = NULL", IntegrityError),  # a vector without its maker
        ("vector = '[NaN,1]', dims = 2", DataError),  # pgvector refuses NaN itself
        ("vector = '[Infinity,1]', dims = 2", DataError),
    ],
)
def test_raw_sql_cannot_store_a_bad_vector(boss, assignment, error):
    pk = Memory.objects.get(uid=boss["id"]).pk
    with pytest.raises(error), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"UPDATE memory_core_embedding SET {assignment} WHERE memory_id = %s", [pk])
    assert embedding_of(boss["id"]).dims == 256


def test_a_vector_cannot_belong_to_no_memory(boss):
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("INSERT INTO memory_core_embedding (memory_id) VALUES (-1)")


# --- forget removes the vectors ---------------------------------------------------------


def test_forget_removes_the_vector_of_every_version(org, client, boss):
    second = remember(
        client, org.acme_secret, actor="u1", key="manager", fact="reports to Sam Okafor"
    ).json()
    pks = list(Memory.objects.filter(uid__in=[boss["id"], second["id"]]).values_list("pk"))
    assert Embedding.objects.filter(memory__in=[pk for (pk,) in pks]).count() == 2
    gone = client.delete(f"{MEMORIES}/{second['id']}?actor=u1", headers=bearer(org.acme_secret))
    assert gone.status_code == 204
    assert not Embedding.objects.filter(memory_id__in=[pk for (pk,) in pks]).exists()
    # Nor is any vector the forgotten texts would embed to stored anywhere.
    for key, text in [
        ("manager", "reports to Dana Whitfield"),
        ("manager", "reports to Sam Okafor"),
    ]:
        vector = WORDLLAMA.embed([WORDLLAMA.document(key, text)])[0].tolist()
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM memory_core_embedding"
                " WHERE vector <=> %s::float8[]::vector < 1e-6",
                [vector],
            )
            assert cursor.fetchone()[0] == 0


def test_a_vector_goes_with_its_version_even_under_raw_sql(boss):
    pk = Memory.objects.get(uid=boss["id"]).pk
    with as_owner(), pgtrigger.ignore("memory_core.Memory:memory_delete_only_by_forget"):
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM memory_core_memory WHERE id = %s", [pk])
    assert not Embedding.objects.filter(memory_id=pk).exists()


# --- hybrid search and turns ------------------------------------------------------------


def test_a_question_in_other_words_finds_the_fact(org, client, boss, dog):
    body = search_api(client, org.acme_secret, actor="u1", q="who is their boss?").json()
    assert body["tier"] == "hybrid"
    assert [i["key"] for i in body["items"]][:1] == ["manager"]
    body = search_api(client, org.acme_secret, actor="u1", q="do they have a dog?").json()
    assert [i["key"] for i in body["items"]][:1] == ["pet"]


def test_any_meaningful_word_matches_lexically_ranked_by_how_many_and_how_rare(
    org, operator, settings
):
    settings.MEMORY_EMBEDDER = "none"
    writes.publish(org.acme, "office", "the office is in Porto", principal=operator)
    writes.publish(org.acme, "parking", "parking at the Porto office is free", principal=operator)
    writes.publish(org.acme, "lunch", "lunch is served at noon", principal=operator)
    # One word the facts do not have ("tell") does not lose the match; both words beat one.
    _, keys, tier = search.ranked_chain(["tenant:acme"], "tell me about parking in Porto", 5)
    assert tier == "fts" and keys == ["parking", "office"]
    # A rarer word weighs more: "lunch" is in one key, "porto" in two.
    _, keys, _ = search.ranked_chain(["tenant:acme"], "porto lunch", 5)
    assert keys[0] == "lunch"


def _fused_by_the_documented_rule(chain, query: str) -> list[str]:
    """The fusion as docs/agents/recall.md states it, computed apart from search.py's SQL:
    the lexical places are the `fts` tier's order (no embedder), the semantic places those
    of recall_eval's vector rank cut at the floor and half the best match (its own copy of
    that rule), each key scoring the sum of 1 / (RRF_K + place) over the ranks that placed
    it, ties by key."""
    from fractions import Fraction

    from django.test import override_settings

    from memory_console.management.commands.recall_eval import _vector_rank

    with override_settings(MEMORY_EMBEDDER="none"):
        providers.reset()
        _, lexical, tier = search.ranked_chain(chain, query, 100)
    providers.reset()
    lexical = lexical if tier == "fts" else []
    ranked = _vector_rank(chain, query)
    best = ranked[0][1] if ranked else 0.0
    floor = providers.current().min_similarity
    semantic = [k for k, s in ranked if s >= floor and s >= search.RELATIVE_CUT * best]
    score: dict[str, Fraction] = {}
    for places in (lexical, semantic):
        for place, key in enumerate(places, start=1):
            score[key] = score.get(key, Fraction(0)) + Fraction(1, search.RRF_K + place)
    return sorted(score, key=lambda key: (-score[key], key))


def test_the_fused_rank_is_the_documented_rule_over_its_two_parts(org, operator, settings):
    # Word matches that miss the semantic cut, close meanings that share no word, and both.
    settings.MEMORY_EMBEDDER = "wordllama"
    providers.reset()
    for key, text in [
        ("manager", "reports to Dana Whitfield"),
        ("report", "writes the weekly report on Fridays"),
        ("pet", "owns a golden retriever named Biscuit"),
        ("commute", "cycles to the office along the river"),
        ("lunch", "eats lunch at the office canteen at noon"),
        ("allergy", "allergic to peanuts and shellfish"),
        ("language", "speaks Portuguese at home and English at work"),
        ("editor", "writes code in Neovim with a dark theme"),
    ]:
        writes.remember(org.u1, key, text, principal=org.acme_agent)
    writes.publish(org.acme, "office", "the office is in Porto", principal=operator)
    writes.publish(org.ops, "report-format", "reports are written in Markdown", principal=operator)
    chain = chain_of(org.u1)
    for query in [
        "who does she report to?",
        "does she have a dog at home?",
        "what food should we avoid ordering for her?",
        "how does she get to the office, and where does she eat?",
        "which tools and languages does she write with?",
    ]:
        _, keys, tier = search.ranked_chain(chain, query, 100)
        assert tier == "hybrid"
        assert keys == _fused_by_the_documented_rule(chain, query), query


def test_an_unrelated_query_finds_nothing(org, client, boss, dog):
    body = search_api(client, org.acme_secret, actor="u1", q="quantum chromodynamics").json()
    assert body["items"] == []


def test_a_turn_with_a_query_recalls_by_meaning(org, client, boss, dog, operator):
    for n in range(6):
        writes.publish(org.acme, f"policy-{n}", f"internal rule number {n}", principal=operator)
    response = client.post(
        "/api/v1/turns",
        {"actor": "u1", "run_id": "r1", "query": "who is their boss?", "max_memories": 1},
        content_type="application/json",
        headers=bearer(org.acme_secret),
    )
    body = response.json()
    assert response.status_code == 200 and body["stats"]["recalled"] == 1
    assert [e["key"] for e in body["entries"]] == ["manager"]


def test_the_console_preview_uses_the_same_rank(org, boss, dog, operator, settings):
    settings.MEMORY_MAX_LINES = 1
    turn = turns.preview_turn(org.u1, principal=operator, query="do they have a dog?")
    assert [e["key"] for e in turn.entries] == ["pet"] and turn.stats["recalled"] == 1


def test_search_ranks_only_the_actors_chain_even_for_another_tenants_exact_words(
    org, client, operator
):
    secret = "the vault code is 4921, kept by Marta"
    writes.publish(org.globex, "vault", secret, principal=operator)
    body = search_api(client, org.acme_secret, actor="u1", q=secret).json()
    assert body["items"] == [] and "4921" not in str(body)
    turn = client.post(
        "/api/v1/turns",
        {"actor": "u1", "run_id": "r-vault", "query": secret},
        content_type="application/json",
        headers=bearer(org.acme_secret),
    ).json()
    assert "4921" not in str(turn)


# --- the embedder fails: writes go on, lexical answers, pending rows fill in -------------


def test_writes_succeed_while_the_embedder_is_down_and_embed_pending_fills_them_in(
    org, client, settings
):
    with EmbeddingServer(mode="down") as server:
        use_server(settings, server)
        response = remember(
            client, org.acme_secret, actor="u1", key="manager", fact="reports to Dana Whitfield"
        )
        assert response.status_code == 201
        row = embedding_of(response.json()["id"])
        assert row.vector is None and row.embedder is None  # pending
        assert LedgerEvent.objects.filter(kind="memory.remembered").count() == 1
        assert AccessLog.objects.get(action="remember").outcome == 201
        # Searches and turns answer from the lexical tiers, and say so.
        body = search_api(client, org.acme_secret, actor="u1", q="Dana").json()
        assert body["tier"] == "fts" and [i["key"] for i in body["items"]] == ["manager"]
        turn = client.post(
            "/api/v1/turns",
            {"actor": "u1", "run_id": "r1", "query": "Whitfield"},
            content_type="application/json",
            headers=bearer(org.acme_secret),
        )
        assert turn.status_code == 200 and turn.json()["stats"]["recalled"] == 1

        server.mode = "ok"
        call_command("embed_pending", verbosity=0)
        row.refresh_from_db()
        assert (row.embedder, row.dims) == ("http:fake-embed@1", 8)
        body = search_api(client, org.acme_secret, actor="u1", q="Dana").json()
        assert body["tier"] == "hybrid"


def test_the_next_write_that_embeds_fills_in_pending_ones(
    org, client, settings, django_capture_on_commit_callbacks
):
    with EmbeddingServer(mode="down") as server:
        use_server(settings, server)
        first = remember(client, org.acme_secret, actor="u1", key="a", fact="first fact").json()
        assert embedding_of(first["id"]).vector is None
        server.mode = "ok"
        with django_capture_on_commit_callbacks(execute=True):
            second = remember(client, org.acme_secret, actor="u1", key="b", fact="second").json()
        assert embedding_of(second["id"]).vector is not None
        assert embedding_of(first["id"]).vector is not None


@pytest.mark.parametrize(
    "mode", ["down", "bad_request", "slow", "wrong_dims", "nan", "zero", "garbage"]
)
def test_a_failing_embedder_leaves_the_version_pending_and_the_write_acknowledged(
    org, client, settings, mode
):
    with EmbeddingServer(mode=mode) as server:
        use_server(settings, server)
        response = remember(client, org.acme_secret, actor="u1", key="k", fact="a fact")
        assert response.status_code == 201
        assert embedding_of(response.json()["id"]).vector is None
        search = search_api(client, org.acme_secret, actor="u1", q="fact")
        assert search.status_code == 200 and search.json()["tier"] == "fts"


def test_the_http_embedder_speaks_the_openai_protocol_with_bounded_retries(settings):
    with EmbeddingServer(mode="down") as server:
        use_server(settings, server, MEMORY_EMBEDDER_RETRIES=2)
        assert providers.embed(["one", "two"]) is None
        assert len(server.requests) == 3  # the first try and two retries
        request = server.requests[0]
        assert request["path"] == "/v1/embeddings"
        assert request["body"] == {"model": "fake-embed", "input": ["one", "two"]}
        assert request["headers"]["Authorization"] == "Bearer sk-test"

        providers.reset()
        server.mode, server.requests = "bad_request", []
        assert providers.embed(["one"]) is None
        assert len(server.requests) == 1  # a 4xx is not retried

        providers.reset()
        server.mode = "ok"
        texts = ["alpha beta", "gamma"]
        embedder, vectors = providers.embed(texts)
        # The server answers out of order; the client puts them back by index.
        asked = [server.respond("/v1/embeddings", {"input": [t], "model": "m"}) for t in texts]
        assert vectors == [answer["data"][0]["embedding"] for _, answer in asked]


def test_after_a_failure_the_embedder_is_left_alone_for_the_cooldown(org, client, settings):
    with EmbeddingServer(mode="down") as server:
        use_server(settings, server, MEMORY_EMBEDDER_COOLDOWN=60)
        remember(client, org.acme_secret, actor="u1", key="a", fact="one")
        tried = len(server.requests)
        server.mode = "ok"
        response = remember(client, org.acme_secret, actor="u1", key="b", fact="two")
        assert response.status_code == 201 and len(server.requests) == tried
        assert embedding_of(response.json()["id"]).vector is None


# --- switching embedders ----------------------------------------------------------------


def test_after_a_switch_old_vectors_are_never_compared_until_reembed_rebuilds_them(
    org, client, settings
):
    with EmbeddingServer(mode="same") as server:
        use_server(settings, server)
        boss = remember(
            client, org.acme_secret, actor="u1", key="manager", fact="reports to Dana Whitfield"
        ).json()
        # Model "same" puts every text in one direction: any query would "match" by vector.
        assert search_api(client, org.acme_secret, actor="u1", q="xylophone").json()["items"]
        # Another model of the same width: the stored vectors are not its own, so they are
        # not compared (were they, the query would match at similarity 1).
        settings.MEMORY_EMBEDDER_MODEL = "other-model"
        assert search_api(client, org.acme_secret, actor="u1", q="xylophone").json() == {
            "items": [],
            "tier": "like",
        }
    # Another width altogether (256, the default): nothing breaks, lexical still answers.
    settings.MEMORY_EMBEDDER, settings.MEMORY_EMBEDDER_MIN_SIMILARITY = "wordllama", None
    body = search_api(client, org.acme_secret, actor="u1", q="who is their boss?").json()
    assert body["items"] == []
    call_command("reembed", verbosity=0)
    assert embedding_of(boss["id"]).embedder == WORDLLAMA.identity
    body = search_api(client, org.acme_secret, actor="u1", q="who is their boss?").json()
    assert [i["key"] for i in body["items"]] == ["manager"]


def test_reembed_is_resumable_and_touches_only_stale_live_versions(org, operator, settings):
    for n in range(5):
        writes.publish(org.acme, f"k{n}", f"fact number {n}", principal=operator)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memory_core_embedding SET embedder = 'old:model@1'")
    assert embeddings.stale_count() == 5
    assert embeddings.reembed(batch=2, limit=3) == 3  # interrupted after three
    assert embeddings.stale_count() == 2
    assert embeddings.reembed(batch=2) == 2
    assert embeddings.stale_count() == 0
    assert set(Embedding.objects.values_list("embedder", flat=True)) == {WORDLLAMA.identity}


def test_reembed_with_a_failing_embedder_exits_1_and_keeps_what_it_did(
    org, operator, settings, capsys
):
    writes.publish(org.acme, "k", "a fact", principal=operator)
    with EmbeddingServer(mode="down") as server:
        use_server(settings, server)
        with pytest.raises(SystemExit) as exit_:
            call_command("reembed")
        assert exit_.value.code == 1
        assert "1 left to rebuild" in capsys.readouterr().err


def test_embed_pending_and_reembed_with_no_embedder_do_nothing(settings, capsys, db):
    settings.MEMORY_EMBEDDER = "none"
    call_command("embed_pending")
    call_command("reembed")
    assert capsys.readouterr().out.count("nothing to do") == 2


# --- pgvector on a server that is not the embedded one ----------------------------------


class _Catalog:
    """What migration 0008 asks a server's catalog, answered as a server without pgvector
    (or without the right to create it) would. No PostgreSQL here lacks it, so the stop
    message is checked against these answers."""

    def __init__(self, installed, available, superuser, settings_dict):
        self.row = (installed, available, superuser)
        self.settings_dict = settings_dict
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


def _migration_0008():
    import importlib

    return importlib.import_module("memory_core.migrations.0008_semantic_recall")


@pytest.mark.parametrize(
    "available, message",
    [
        (False, "apt-get install postgresql-<major>-pgvector"),
        (True, "ask one to run `CREATE EXTENSION vector;` in that database"),
    ],
)
def test_migrate_stops_saying_how_to_get_pgvector_on_another_server(available, message):
    from types import SimpleNamespace

    from django.core.management.base import CommandError

    catalog = _Catalog(False, available, False, {"NAME": "memories"})
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        _migration_0008().create_vector_extension(None, SimpleNamespace(connection=catalog))
    assert not any("CREATE EXTENSION" in sql for sql in catalog.executed)


def test_migrate_creates_pgvector_itself_where_it_may(db):
    from types import SimpleNamespace

    catalog = _Catalog(False, True, True, {"NAME": "memories"})
    _migration_0008().create_vector_extension(None, SimpleNamespace(connection=catalog))
    assert catalog.executed[-1] == "CREATE EXTENSION vector"
    # Where it is installed already (here: the embedded server made it), nothing is asked.
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        assert cursor.fetchone()[0].startswith("0.")


def test_the_similarity_floor_setting_overrides_the_embedders_own_and_unsets_cleanly(settings):
    settings.MEMORY_EMBEDDER_MIN_SIMILARITY = 0.5
    assert providers.current().min_similarity == 0.5
    settings.MEMORY_EMBEDDER_MIN_SIMILARITY = None
    assert providers.current().min_similarity == providers.WordLlama.min_similarity == 0.15
