"""The memory page's growing histories (the runs whose prompt carried it, its access-log
rows): paged by id cursors like the ledger, each on its own, with their totals, and read
through the indexes that find one memory's rows."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory_console.console.memories.reads import PAGE_ROWS
from memory_core import turns, writes
from memory_core.models import AccessLog, DigestLine
from tests.helpers import explain, login
from tests.roles import as_owner

RUNS = PAGE_ROWS + 10


@pytest.fixture
def carried(org):
    """A memory of u1 carried by RUNS turns (each also an access-log row naming it)."""
    memory = writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent).memory
    for n in range(RUNS):
        turns.resolve_turn(org.u1, f"run-{n:03}", principal=org.acme_agent)
    return memory


def _section(text: str, name: str) -> str:
    return re.search(rf'<section class="card" id="memory-{name}">(.*?)</section>', text, re.S)[1]


def _runs(text: str) -> list[str]:
    return re.findall(r'href="/runs/acme/u1/(run-\d+)/"', _section(text, "runs"))


def _older(text: str, name: str) -> str:
    href = re.search(r'<a href="([^"]+)"[^>]*rel="next"', _section(text, name))[1]
    return href.replace("&amp;", "&")


def test_runs_that_carried_a_memory_are_paged_with_their_total(client, users, carried):
    text = login(client, users.auditor).get(f"/memories/{carried.uid}/").text
    first = _runs(text)
    assert first == [f"run-{n:03}" for n in range(RUNS - 1, RUNS - 1 - PAGE_ROWS, -1)]
    assert f"{RUNS} prompt lines, {PAGE_ROWS} on this page" in _section(text, "runs")
    older = _older(text, "runs")
    assert older.startswith(f"/memories/{carried.uid}/?runs_before=")
    rest = _runs(client.get(older).text)
    assert rest == [f"run-{n:03}" for n in range(RUNS - 1 - PAGE_ROWS, -1, -1)]
    assert 'rel="prev"' in _section(client.get(older).text, "runs")


def test_access_rows_about_a_memory_are_paged_on_their_own(client, users, carried):
    login(client, users.auditor)
    total = AccessLog.objects.filter(memory_ids__overlap=[carried.uid]).count()
    text = client.get(f"/memories/{carried.uid}/").text
    shown = re.findall(r"<tr", _section(text, "access"))
    assert len(shown) == PAGE_ROWS + 1  # the header row
    # The page's own read is logged after it is rendered: the total is as it was then.
    assert f"{total} rows, {PAGE_ROWS} on this page" in _section(text, "access")
    older = client.get(_older(text, "access")).text
    # Paging the access rows leaves the runs on their first page.
    assert _runs(older) == _runs(text)
    assert 'rel="prev"' in _section(older, "access")


def test_a_short_history_has_no_pager(client, users, org):
    memory = writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent).memory
    turns.resolve_turn(org.u1, "run-1", principal=org.acme_agent)
    text = login(client, users.auditor).get(f"/memories/{memory.uid}/").text
    assert "1 prompt line" in _section(text, "runs") and "on this page" not in text
    assert 'aria-label="Pages"' not in text


def test_the_pager_of_an_action_answer_points_at_the_memory_page(client, users, carried):
    login(client, users.owner)
    text = client.post(f"/memories/{carried.uid}/pin/", headers={"HX-Request": "true"}).text
    assert _older(text, "runs").startswith(f"/memories/{carried.uid}/?runs_before=")


def _bulk_lines(memory_uid: str, count=4000):
    """Other memories' lines in many runs, and this memory's in a few: the table is large,
    this memory's share small."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO memory_core_digestline (digest_id, n, text, memory_uid)
            SELECT d.id, 100 + g, '- bulk', CASE WHEN g %% 400 = 0 THEN %s ELSE 'mem_bulk' || g END
            FROM generate_series(1, %s) AS g, (SELECT min(id) AS id FROM memory_core_digest) d
            """,
            [memory_uid, count],
        )
        cursor.execute(
            """
            INSERT INTO memory_core_accesslog
                (created_at, channel, principal, actor_ref, action, outcome, scope,
                 memory_ids, count, detail)
            SELECT now(), 'api', 'key:bulk', 'bulk', 'bulk.read', 200, 'tenant:bulk',
                   ARRAY['mem_bulk' || g], 1, '{}'::jsonb
            FROM generate_series(1, %s) AS g
            """,
            [count],
        )
        with as_owner():  # ANALYZE is the owner's
            cursor.execute("ANALYZE memory_core_digestline")
            cursor.execute("ANALYZE memory_core_accesslog")


@pytest.mark.parametrize(
    "table, index",
    [
        ("memory_core_digestline", "digestline_memory_uid_idx"),
        ("memory_core_accesslog", "access_memory_ids_gin"),
    ],
)
def test_the_memory_pages_histories_walk_an_index(client, users, carried, table, index):
    # As the superuser: an auditor's runs are also narrowed to the actors they read, which
    # on a fixture this small the planner may start from (no Seq Scan either way).
    _bulk_lines(carried.uid)
    with CaptureQueriesContext(connection) as queries:
        response = login(client, users.su).get(f"/memories/{carried.uid}/")
    assert response.status_code == 200
    reads = [q["sql"] for q in queries if f'FROM "{table}"' in q["sql"]]
    paged = [sql for sql in reads if f"LIMIT {PAGE_ROWS + 1}" in sql]
    counted = [sql for sql in reads if "COUNT(*)" in sql]
    assert paged and counted
    for sql in paged + counted:
        plan = explain(sql)
        print(f"EXPLAIN {table}:\n{plan}")
        assert index in plan and "Seq Scan" not in plan
    assert DigestLine.objects.filter(memory_uid=carried.uid).count() == RUNS + 10


def test_totals_stop_at_the_cap_and_say_more_than(client, users, carried, monkeypatch):
    from memory_console.console.memories import reads as memory_page

    monkeypatch.setattr(memory_page, "TOTAL_CAP", RUNS - 5)
    text = login(client, users.auditor).get(f"/memories/{carried.uid}/").text
    assert f"more than {RUNS - 5} prompt lines, {PAGE_ROWS} on this page" in _section(text, "runs")
    assert f"more than {RUNS - 5} rows, {PAGE_ROWS} on this page" in _section(text, "access")
    # The pager is unchanged: the older page holds the rest of the runs.
    assert len(_runs(client.get(_older(text, "runs")).text)) == RUNS - PAGE_ROWS


def test_the_runs_table_reads_no_digests_block_or_entries(client, users, carried):
    """The table shows each run's time, actor and id: the 11 KB a digest stores of its
    prompt (block, entries) is neither read nor parsed, fifty runs a page."""
    login(client, users.su)
    with CaptureQueriesContext(connection) as queries:
        text = client.get(f"/memories/{carried.uid}/").text
    assert len(_runs(text)) == PAGE_ROWS
    lines = [q["sql"] for q in queries if 'FROM "memory_core_digestline"' in q["sql"]]
    assert lines
    for sql in lines:
        assert '"memory_core_digest"."block"' not in sql
        assert '"memory_core_digest"."entries"' not in sql
