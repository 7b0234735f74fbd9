"""The conversations list (/threads/): threads the user may read, newest first, paged."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory_console.console.common.forms import PAGE_SIZE
from memory_core import transcripts
from memory_core.models import AccessLog, Thread
from tests.helpers import explain, login
from tests.roles import as_owner


@pytest.fixture
def chats(org):
    say = transcripts.record_message
    say(org.u1, "t-old", "user", "hello", principal=org.acme_agent)
    say(org.u1, "t-old", "assistant", "hi", principal=org.acme_agent)
    say(org.u2, "<b>t-new</b>", "user", "later", principal=org.acme_agent)
    say(org.x9, "g-secret", "user", "globex plans", principal=org.globex_agent)


def test_list_shows_readable_threads_newest_first_with_counts(client, users, chats):
    page = login(client, users.auditor).get("/threads/").content.decode()
    assert page.index("&lt;b&gt;t-new&lt;/b&gt;") < page.index("t-old")
    assert "<b>t-new</b>" not in page
    assert 'href="/threads/t-old/?actor=acme%2Fu1"' in page
    assert "g-secret" not in page
    assert '<td class="num">2</td>' in page
    assert AccessLog.objects.filter(action="thread.list", principal="user:auditor").exists()


def test_list_filters_by_actor(client, users, chats):
    page = login(client, users.owner).get("/threads/?actor=acme/u1").content.decode()
    assert "t-old" in page and "t-new" not in page


def test_filter_by_an_actor_outside_the_grants_shows_nothing(client, users, chats):
    page = login(client, users.owner).get("/threads/?actor=globex/x9").content.decode()
    assert "g-secret" not in page and "No conversation of an actor" in page


def test_filter_by_an_actor_that_does_not_exist_shows_nothing(client, users, chats):
    response = login(client, users.owner).get("/threads/?actor=acme/nobody")
    page = response.content.decode()
    assert response.status_code == 200
    assert "t-old" not in page and "No conversation of an actor" in page


def test_htmx_gets_only_the_rows(client, users, chats):
    response = login(client, users.owner).get("/threads/", HTTP_HX_REQUEST="true")
    text = response.content.decode()
    assert 'id="thread-rows"' in text
    assert "<html" not in text


def test_list_pages_by_id_cursor(client, users, org):
    for n in range(PAGE_SIZE + 3):
        transcripts.record_message(org.u1, f"t{n}", "user", "x", principal=org.acme_agent)
    login(client, users.owner)
    first = client.get("/threads/").content.decode()
    assert f"t{PAGE_SIZE + 2}</a>" in first and ">t0</a>" not in first
    oldest = Thread.objects.order_by("id")[2].id
    second = client.get(f"/threads/?before={oldest + 1}").content.decode()
    assert ">t0</a>" in second and "newer" in second


def test_anonymous_is_sent_to_login(client, chats):
    response = client.get("/threads/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_one_actors_list_uses_its_index(client, users, org, chats):
    # Statistics of a table of a realistic shape (many threads, most of other actors), so
    # that the plan is one a deployment gets, not one a four-row table happens to get
    # (which walked every thread newest first, filtering by actor).
    Thread.objects.bulk_create(Thread(actor=org.u2, ref=f"bulk-{n}") for n in range(2000))
    with as_owner(), connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_core_thread")
        cursor.execute("ANALYZE memory_core_message")
    login(client, users.owner)
    with CaptureQueriesContext(connection) as queries:
        client.get("/threads/?actor=acme/u1")
    sql = next(
        q["sql"]
        for q in queries.captured_queries
        if 'FROM "memory_core_thread"' in q["sql"] and "LIMIT" in q["sql"]
    )
    plan = explain(sql)
    # The actor's threads are found by an index on the actor (thread_actor_recent_idx, or
    # the foreign key's, whichever the statistics of the moment favour), never by walking
    # every thread.
    assert "Index Cond: (actor_id = " in plan, plan
    assert "Scan Backward using memory_core_thread_pkey" not in plan, plan
    # The message counts and latest times are subplans over a message index led by the
    # thread, per row (message_thread_recent_idx, capture's message_thread_id_idx, or the
    # foreign key's, as the statistics of the moment favour: earlier tests leave the message
    # table in any state), never a scan.
    assert any(
        index in plan
        for index in (
            "message_thread_recent_idx",
            "message_thread_id_idx",
            "memory_core_message_thread_id_",
        )
    ), plan
    assert "Index Cond: (thread_id = memory_core_thread.id)" in plan, plan
    assert "Seq Scan on memory_core_message" not in plan, plan
