"""The turns per hour the database keeps (TenantTurnHour and ActorTurnHour, kept by the
triggers of models/maintained.py with the functions of models/turn_hours.sql) equal a
recount of the stored turns, whatever statements write, move, rescore, scrub or remove
them: generated sequences of them over several tenants, an actor outside every tenant,
and times on and around hour and day boundaries.

The oracle is Python's: each turn's tenant from its actor's ref (names.ref_tenant) and its
hour truncated in UTC, counted with a Counter, so the SQL copy of neither is trusted.
"""

import importlib
import itertools
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import actors, erasure, turns
from memory_core.accounts.principals import Principal
from memory_core.models import Actor, ActorTurnHour, Digest, TenantTurnHour
from memory_core.rules.names import ref_tenant
from memory_core.turn_counts import TurnReach, hours_since, turn_reach
from tests.roles import as_owner

EXAMPLES = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
_numbers = itertools.count()


@pytest.fixture
def loner(org, operator):
    """An actor outside every tenant (registered through a key of global reach)."""
    return actors.put_actor("loner", "Loner", [], org.global_key, Principal.system("cli:t"))


@pytest.fixture
def actors_all(org, loner):
    return [org.u1, org.u2, org.x9, loner]


def _base() -> datetime:
    """An hour two days ago, UTC: the moments below lie around its hours and days."""
    return timezone.now().astimezone(UTC).replace(minute=0, second=0, microsecond=0) - timedelta(
        days=2
    )


# Around hour and day boundaries: an hour's first and last microsecond and its neighbours'.
OFFSETS = [
    timedelta(0),
    timedelta(microseconds=1),
    timedelta(microseconds=-1),
    timedelta(minutes=30),
    timedelta(hours=1) - timedelta(microseconds=1),
    timedelta(hours=1),
    timedelta(hours=23, minutes=59, seconds=59, microseconds=999_999),
    timedelta(days=1),
    timedelta(days=-1, hours=5),
    timedelta(days=1, hours=2, microseconds=-1),
]


def insert_turns(rows) -> list[int]:
    """One INSERT statement of stored turns [(actor, created_at, pinned_omitted)], as the
    server's role writes them (the test's connection)."""
    numbers = [next(_numbers) for _ in rows]
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO memory_core_digest
                (uid, actor_id, run_id, chain, block, entries, stats, pinned_omitted,
                 created_at)
            SELECT 'dig_th' || r.n, r.actor_id, 'th-' || r.n, ARRAY['x']::varchar[], 'block',
                   '[]'::jsonb, '{}'::jsonb, r.p, r.at
            FROM unnest(%s::bigint[], %s::timestamptz[], %s::int[], %s::int[])
                AS r(actor_id, at, p, n)
            RETURNING id
            """,
            [[a.id for a, _, _ in rows], [t for _, t, _ in rows], [p for _, _, p in rows], numbers],
        )
        return [row[0] for row in cursor.fetchall()]


def recount() -> tuple[Counter, Counter]:
    """(tenant, hour) -> (turns, alerts) and (actor id, hour) -> (turns, alerts), from the
    stored turns themselves."""
    tenants, by_actor = Counter(), Counter()
    rows = Digest.objects.values_list("actor_id", "actor__ref", "created_at", "pinned_omitted")
    for actor_id, ref, created_at, pinned_omitted in rows:
        hour = created_at.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
        alert = int(pinned_omitted > 0)
        tenant = ref_tenant(ref) or ""
        tenants[(tenant, hour, "turns")] += 1
        tenants[(tenant, hour, "alerts")] += alert
        by_actor[(actor_id, hour, "turns")] += 1
        by_actor[(actor_id, hour, "alerts")] += alert
    return +tenants, +by_actor


def kept() -> tuple[Counter, Counter]:
    tenants, by_actor = Counter(), Counter()
    for tenant, hour, n, a in TenantTurnHour.objects.values_list(
        "tenant", "hour", "turns", "alerts"
    ):
        tenants[(tenant, hour, "turns")] += n
        tenants[(tenant, hour, "alerts")] += a
    for actor_id, hour, n, a in ActorTurnHour.objects.values_list(
        "actor_id", "hour", "turns", "alerts"
    ):
        by_actor[(actor_id, hour, "turns")] += n
        by_actor[(actor_id, hour, "alerts")] += a
    return +tenants, +by_actor


def assert_kept_equals_recount():
    assert kept() == recount()
    # A row is an hour with turns: one brought to nothing is gone.
    assert not TenantTurnHour.objects.filter(turns__lte=0).exists()
    assert not ActorTurnHour.objects.filter(turns__lte=0).exists()


# --- generated statements ------------------------------------------------------------------

_moment = st.tuples(st.integers(0, 30), st.sampled_from(OFFSETS))
_turn = st.tuples(st.integers(0, 3), _moment, st.sampled_from([0, 0, 1, 3]))
_pick = st.integers(0, 10_000)
STATEMENTS = st.one_of(
    st.tuples(st.just("insert"), st.lists(_turn, min_size=1, max_size=6)),
    st.tuples(st.just("move"), _pick, _moment),
    st.tuples(st.just("reassign"), _pick, st.integers(0, 3)),
    st.tuples(st.just("rescore"), _pick, st.sampled_from([0, 2])),
    st.tuples(st.just("scrub"), _pick),
    st.tuples(st.just("delete"), st.lists(_pick, min_size=1, max_size=3)),
    st.tuples(st.just("move-all"), _moment),
)


def _at(base, moment) -> datetime:
    hours, offset = moment
    return base + timedelta(hours=hours) + offset


def _run(statement, base, everyone) -> None:
    kind = statement[0]
    ids = sorted(Digest.objects.values_list("id", flat=True))
    if kind == "insert":
        insert_turns([(everyone[a], _at(base, m), p) for a, m, p in statement[1]])
        return
    if not ids:
        return
    if kind == "delete":  # the server's role may not: the owner's act, as a prune would be
        chosen = sorted({ids[pick % len(ids)] for pick in statement[1]})
        with as_owner():
            Digest.objects.filter(id__in=chosen).delete()
        return
    if kind == "move-all":  # one statement moving every turn, across hours and tenants' rows
        Digest.objects.update(created_at=_at(base, statement[1]))
        return
    one = Digest.objects.filter(id=ids[statement[1] % len(ids)])
    if kind == "move":
        one.update(created_at=_at(base, statement[2]))
    elif kind == "reassign":
        one.update(actor=everyone[statement[2]])
    elif kind == "rescore":
        one.update(pinned_omitted=statement[2])
    elif kind == "scrub":  # what forget and erasure do to a stored turn: its text only
        one.update(block="", query=None, entries=[])


@EXAMPLES
@given(statements=st.lists(STATEMENTS, min_size=1, max_size=12))
def test_kept_turn_hours_equal_a_recount_after_any_statements(actors_all, statements):
    base = _base()
    for statement in statements:
        _run(statement, base, actors_all)
        assert_kept_equals_recount()


# --- each path once, on a fixed organisation -------------------------------------------------


def test_a_turn_through_the_service_counts_in_its_actors_and_its_tenants_hour(org):
    before = timezone.now()
    turns.resolve_turn(org.u1, "run-1", principal=org.acme_agent)
    turns.resolve_turn(org.u1, "run-1", principal=org.acme_agent)  # a repeat writes nothing
    turns.resolve_turn(org.x9, "run-9", principal=org.globex_agent)
    assert_kept_equals_recount()
    hour = before.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    rows = TenantTurnHour.objects.filter(hour__gte=hour - timedelta(hours=1))
    assert sorted(rows.values_list("tenant", "turns")) == [("acme", 1), ("globex", 1)]
    assert ActorTurnHour.objects.get(actor=org.u1).turns == 1


def test_turns_either_side_of_an_hour_boundary_count_in_their_own_hours(org):
    hour = _base()
    insert_turns([(org.u1, hour - timedelta(microseconds=1), 0), (org.u1, hour, 2)])
    insert_turns([(org.u1, hour + timedelta(hours=1) - timedelta(microseconds=1), 1)])
    kept_rows = sorted(TenantTurnHour.objects.values_list("hour", "turns", "alerts"))
    assert kept_rows == [(hour - timedelta(hours=1), 1, 0), (hour, 2, 2)]
    assert_kept_equals_recount()


def test_hours_are_utcs_whatever_the_writers_time_zone(org):
    hour = _base()
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL TIME ZONE 'Asia/Kolkata'")  # +05:30: its hours are not UTC's
    insert_turns([(org.u1, hour + timedelta(minutes=10), 0)])
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL TIME ZONE 'UTC'")
    assert list(TenantTurnHour.objects.values_list("hour", flat=True)) == [hour]


def test_erasing_an_actor_scrubs_its_turns_and_keeps_their_counts(org, operator):
    for n in range(3):
        turns.resolve_turn(org.u1, f"run-{n}", principal=org.acme_agent)
    counted = kept()
    result = erasure.erase_actor(org.u1, principal=operator)
    assert result.digests == 3
    assert Digest.objects.filter(actor=org.u1, stats__erased=True).count() == 3
    assert kept() == counted
    assert_kept_equals_recount()


def test_the_server_role_may_read_the_kept_hours_but_never_write_them(org):
    from tests import roles

    if not roles.app_role():
        pytest.skip("the tests run as one role")
    insert_turns([(org.u1, _base(), 1)])
    statements = [
        "UPDATE memory_core_tenantturnhour SET turns = turns + 1",
        "DELETE FROM memory_core_tenantturnhour",
        "INSERT INTO memory_core_tenantturnhour (tenant, hour, turns, alerts)"
        " VALUES ('x', now(), 1, 0)",
        "UPDATE memory_core_actorturnhour SET alerts = 0",
        "DELETE FROM memory_core_actorturnhour",
        "SELECT memory_core_count_turns(ARRAY[1]::bigint[], ARRAY[now()], ARRAY[1], ARRAY[0])",
        "DELETE FROM memory_core_digest",
    ]
    for statement in statements:
        with pytest.raises(DatabaseError, match="permission denied"):
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(statement)
    assert_kept_equals_recount()


def test_the_migration_backfills_the_turns_already_stored(actors_all):
    base = _base()
    insert_turns(
        [(a, base + timedelta(hours=h, minutes=7 * h), h % 2) for h in range(9) for a in actors_all]
    )
    expected = recount()
    backfill = importlib.import_module("memory_core.migrations.0026_dashboard_turn_hours").BACKFILL
    with as_owner(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM memory_core_tenantturnhour")
        cursor.execute("DELETE FROM memory_core_actorturnhour")
        cursor.execute(backfill)
    assert kept() == expected


# --- the reach: whole tenants, single actors --------------------------------------------------


def test_a_reader_of_a_tenant_reads_it_whole_and_other_actors_one_by_one():
    reach = turn_reach(
        {"tenant:acme", "team:acme/ops", "actor:acme/u1", "actor:globex/x9", "actor:loner"},
        {"acme/u1", "globex/x9", "loner"},
    )
    assert reach == TurnReach(
        everything=False,
        tenants=frozenset({"acme"}),
        actor_refs=frozenset({"globex/x9", "loner"}),
    )
    assert turn_reach({"global", "tenant:acme"}, {"loner"}).everything
    assert turn_reach(set(), set()) == TurnReach(everything=False)


def test_hours_since_adds_whole_tenants_and_single_actors(org, loner):
    base = _base()
    insert_turns(
        [
            (org.u1, base, 1),
            (org.u2, base, 0),
            (org.u2, base + timedelta(hours=3), 0),
            (org.x9, base, 1),
            (loner, base + timedelta(hours=3), 0),
            (org.u1, base - timedelta(microseconds=1), 0),  # before `since`
        ]
    )
    later = base + timedelta(hours=3)
    assert hours_since(base, TurnReach(everything=True)) == [(base, 3, 2), (later, 2, 0)]
    acme = TurnReach(everything=False, tenants=frozenset({"acme"}))
    assert hours_since(base, acme) == [(base, 2, 1), (later, 1, 0)]
    some = TurnReach(everything=False, actor_refs=frozenset({"acme/u1", "loner"}))
    assert hours_since(base, some) == [(base, 1, 1), (later, 1, 0)]
    both = TurnReach(everything=False, tenants=frozenset({"globex"}), actor_refs=some.actor_refs)
    assert hours_since(base, both) == [(base, 2, 2), (later, 1, 0)]
    assert hours_since(base, TurnReach(everything=False)) == []
    assert Actor.objects.filter(ref="loner").exists()
