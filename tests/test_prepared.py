"""The prepared statements (memory_core/db/prepared.py runs them; each lives beside the module
it serves) against the ORM queries they replace, the connection settings that make them
prepared, generically planned statements, and the executor's refusal of a model whose
fields need a database converter."""

import datetime

import pytest
from django.db import connection
from django.utils import timezone

from memory_core import actors, applied, curation, writes
from memory_core.accounts import keys
from memory_core.db import prepared
from memory_core.models import Actor, ApiKey, LedgerEvent, Memory, Scope
from memory_core.recall import search
from memory_core.rules.facts import Record
from memory_core.shapes import resolving_threads, shape, shape_row
from memory_core.transcripts import record_message


def orm_records(chain) -> set[Record]:
    rows = Memory.objects.live().in_chain(chain).select_related("scope")
    return {
        Record(m.uid, m.scope.token, m.key, m.text, m.author, m.pinned, m.created_at, m.expires_at)
        for m in rows
    }


def test_chain_records_are_the_live_unexpired_rows_of_the_chain_only(org, operator):
    writes.publish(org.root, "units", "kilometres", principal=operator)
    writes.publish(org.acme, "units", "miles", principal=operator)
    writes.publish(org.acme, "units", "yards", principal=operator)  # retires "miles"
    soon = timezone.now() - datetime.timedelta(seconds=1)
    writes.publish(org.ops, "gone", "expired already", principal=operator, expires_at=soon)
    withdrawn = writes.publish(org.ops, "old", "withdrawn", principal=operator)
    curation.invalidate(withdrawn, "wrong", principal=operator)
    writes.remember(org.u1, "tone", "brief", principal=org.acme_agent)
    writes.remember(org.u2, "tone", "chatty", principal=org.acme_agent)
    writes.publish(org.globex, "units", "furlongs", principal=operator)

    chain = actors.chain_of(org.u1)
    records = applied.chain_records(chain)
    assert set(records) == orm_records(chain)
    assert sorted(r.text for r in records) == ["brief", "kilometres", "yards"]
    # Timestamps arrive as aware datetimes equal to the ORM's, whatever their tzinfo object.
    assert all(r.created_at.utcoffset() == datetime.timedelta(0) for r in records)


def test_shape_rows_give_the_shape_the_model_path_gives(org, operator):
    writes.publish(org.acme, "fiscal-year", "October", principal=operator, tags=["finance"])
    record_message(org.u1, "th-1", "user", "we use the calendar year", principal=org.acme_agent)
    first = writes.remember(
        org.u1, "fiscal-year", "calendar year", principal=org.acme_agent, thread_id="th-1"
    )
    second = writes.remember(
        org.u1,
        "fiscal-year",
        "calendar, since 2020",
        principal=org.acme_agent,
        thread_id="th-gone",
        run_id="r1",
        tool_call_id="c1",
    )
    memories = list(
        Memory.objects.select_related("scope", "origin_actor", "supersedes").filter(
            uid__in=[first.memory.uid, second.memory.uid]
        )
    ) + list(Memory.objects.select_related("scope").filter(key="fiscal-year", scope=org.acme))
    resolving = resolving_threads(memories)
    rows = applied.shape_rows({m.uid for m in memories})
    for memory in memories:
        assert shape(rows[memory.uid]) == shape(shape_row(memory, resolving))
    assert rows[second.memory.uid].supersedes == first.memory.uid
    assert shape(rows[first.memory.uid])["origin"]["resolves"] is True
    assert shape(rows[second.memory.uid])["origin"]["resolves"] is False


def test_actor_lookup_reads_the_actor_its_scope_and_its_chain_at_once(org):
    found = actors.actor_for_key("u1", org.acme_key, org.acme_agent)
    stored = Actor.objects.select_related("scope").get(ref="acme/u1")
    assert (found.pk, found.ref, found.display_name, found.scope_id, found.created_at) == (
        stored.pk,
        stored.ref,
        stored.display_name,
        stored.scope_id,
        stored.created_at,
    )
    assert found.scope.token == "actor:acme/u1" and found.scope.stream == stored.scope.stream
    assert found.membership_tokens == ["team:acme/ops", "tenant:acme"]
    assert actors.chain_of(found) == actors.chain_of(stored)
    assert not found._state.adding  # saved as a loaded instance, not inserted


def test_membership_changes_drop_the_chain_read_with_the_actor(org):
    found = actors.actor_for_key("u1", org.acme_key, org.acme_agent)
    actors._set_memberships(found, [org.acme])
    assert actors.chain_of(found) == ("actor:acme/u1", "tenant:acme", "global")


def test_api_key_lookup_carries_its_reach_and_refuses_revoked_keys(org, operator):
    key = keys.authenticate(org.acme_secret)
    assert key.pk == org.acme_key.pk and key.reach.token == "tenant:acme"
    assert keys.authenticate(org.acme_secret[:-1] + "x") is None
    keys.revoke_api_key(org.acme_key, principal=operator)
    assert keys.authenticate(org.acme_secret) is None


def test_hot_statements_are_prepared_once_and_planned_generically(org):
    chain = actors.chain_of(org.u1)
    applied.chain_records(chain)
    applied.chain_records(chain)
    with connection.cursor() as cursor:
        cursor.execute("SHOW plan_cache_mode")
        assert cursor.fetchone()[0] == "force_generic_plan"
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
            ["%SELECT m.uid, s.token, m.key, m.text, m.author%"],
        )
        assert cursor.fetchone()[0] == 1


def test_the_ranked_statements_are_read_for_placeholders_once_per_process(org, monkeypatch):
    """psycopg keeps its reading of a statement only up to 4,096 bytes; prepared._split keeps
    it for the ranked statements too (13 KB), and they answer as through psycopg's own. This
    also notices a psycopg whose private PostgresQuery no longer lets prepared._KeptQuery
    do that."""
    from psycopg._queries import PostgresQuery

    writes.remember(org.u1, "drink", "black coffee, no sugar", principal=org.acme_agent)
    chain = actors.chain_of(org.u1)
    assert len(search.RANKED_SELECTION.encode()) > 4096
    search.ranked_selection(chain, "coffee", 5)
    before = prepared._split.cache_info()
    kept = [search.ranked_selection(chain, q, 5) for q in ("coffee", "tea")]
    after = prepared._split.cache_info()
    assert after.hits >= before.hits + 2 and after.misses == before.misses
    assert [e.key for e in kept[0][0].kept] == ["drink"]

    monkeypatch.setattr(prepared._PreparedBinaryCursor, "_query_cls", PostgresQuery)
    assert [search.ranked_selection(chain, q, 5) for q in ("coffee", "tea")] == kept
    assert prepared._split.cache_info() == after


def test_prepared_statements_still_show_in_the_query_log(org):
    from django.test.utils import CaptureQueriesContext

    chain = actors.chain_of(org.u1)
    with CaptureQueriesContext(connection) as queries:
        for _ in range(2):
            applied.chain_records(chain)
    assert [q["sql"].split()[:3] for q in queries] == [["SELECT", "m.uid,", "s.token,"]] * 2


def test_instance_loads_only_models_whose_fields_need_no_converter():
    """prepared.instance skips the ORM's from_db_value step; a model that needs it (a
    JSONField's parser, here LedgerEvent.payload) is refused, not loaded half-converted."""
    for model in (Actor, Scope, ApiKey):
        prepared._require_plain_fields(model)  # the three the API loads this way
    with pytest.raises(TypeError, match="payload"):
        prepared.instance(LedgerEvent, [None] * prepared.width(LedgerEvent))
