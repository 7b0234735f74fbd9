"""The attribution page: from a pasted prompt line (or a run id) back to the memory version,
its version chain, and the conversation that taught it."""

import re
from urllib.parse import urlencode

import pytest
from django.db import connection, transaction

from memory_core import forgetting, transcripts, turns, writes
from memory_core.ledger.attribution import line_body, line_forms, lines_showing
from memory_core.models import AccessLog, DigestLine

LINE = "- [actor:acme/u1] tz: works in CET"


@pytest.fixture
def taught(org):
    """u1's agent learns a fact in run-1 of thread t-1; a later turn (run-2) carries it."""
    agent = org.acme_agent
    transcripts.record_message(
        org.u1,
        "t-1",
        "user",
        "I moved to Berlin, my hours are CET",
        principal=agent,
        run_id="run-1",
    )
    transcripts.record_message(
        org.u1, "t-1", "assistant", "Noted, I will use CET.", principal=agent, run_id="run-1"
    )
    memory = writes.remember(
        org.u1,
        "tz",
        "works in CET",
        principal=agent,
        run_id="run-1",
        thread_id="t-1",
        tool_call_id="call-1",
    ).memory
    transcripts.record_message(
        org.u1, "t-1", "user", "What time is the stand-up?", principal=agent, run_id="run-2"
    )
    turns.resolve_turn(org.u1, "run-2", principal=agent, thread_id="t-1", query="stand-up time")
    return memory


def _get(client, user, **params):
    if user is not None:
        client.force_login(user)
    return client.get("/attribution/?" + urlencode(params))


def _carried(text: str) -> str:
    """The page's table of runs whose prompt carried the line."""
    match = re.search(r'<table class="data carried">.*?</table>', text, flags=re.S)
    return match.group(0) if match else ""


def _highlighted(text: str) -> str:
    """The highlighted run groups of the page, concatenated."""
    groups = re.findall(r'<li class="run-group highlighted".*?</li>', text, flags=re.S)
    return "\n".join(groups)


# --- matching the pasted line (pure, no database) ------------------------------------------


@pytest.mark.parametrize(
    "pasted",
    [
        "- [actor:acme/u1] tz: works in CET",
        "[actor:acme/u1] tz: works in CET",
        "   -   [actor:acme/u1] tz: works in CET   ",
        "\t- [actor:acme/u1] tz: works in CET\r\n",
        "    ↳ [actor:acme/u1] tz: works in CET",
        "↳[actor:acme/u1] tz: works in CET",
        "\n\n- [actor:acme/u1] tz: works in CET\nand a second line",
    ],
)
def test_pasted_forms_reduce_to_the_same_body(pasted):
    assert line_body(pasted) == "[actor:acme/u1] tz: works in CET"
    assert line_forms(pasted) == [
        "- [actor:acme/u1] tz: works in CET",
        "    ↳ [actor:acme/u1] tz: works in CET",
        "[actor:acme/u1] tz: works in CET",
    ]


@pytest.mark.parametrize("pasted", ["", "   ", "-", " ↳ ", "\n\n"])
def test_an_empty_paste_has_no_forms(pasted):
    assert line_forms(pasted) == []


def test_the_text_inside_the_line_is_kept_exactly():
    assert (
        line_body("- [global] a:  two  spaces - and a dash")
        == "[global] a:  two  spaces - and a dash"
    )


# --- who may look --------------------------------------------------------------------------


def test_anonymous_is_sent_to_login(client, users, taught):
    response = _get(client, None, line=LINE)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=/attribution/")


@pytest.mark.parametrize("who", ["su", "owner", "auditor"])
def test_readers_of_the_actor_trace_the_line(client, users, taught, who):
    response = _get(client, getattr(users, who), line=LINE)
    assert response.status_code == 200
    assert taught.uid in response.text
    assert 'href="/runs/acme/u1/run-2/"' in response.text


def test_outsider_finds_nothing_of_another_tenant(client, users, taught):
    response = _get(client, users.outsider, line=LINE)
    assert response.status_code == 200
    assert taught.uid not in response.text
    assert "I moved to Berlin" not in response.text
    assert "No stored prompt line of a run you may read matches" in response.text
    # A run id of another tenant is no better.
    response = _get(client, users.outsider, run="run-2")
    assert taught.uid not in response.text and "/runs/acme/u1/" not in response.text


def test_auditor_of_acme_sees_nothing_of_globex(client, users, org):
    writes.remember(org.x9, "tz", "works in PST", principal=org.globex_agent)
    turns.resolve_turn(org.x9, "g-run", principal=org.globex_agent)
    response = _get(client, users.auditor, line="- [actor:globex/x9] tz: works in PST")
    assert "/runs/globex/x9/" not in response.text
    assert "No stored prompt line" in response.text
    assert (
        "/runs/globex/x9/g-run/"
        in _get(client, users.outsider, line="- [actor:globex/x9] tz: works in PST").text
    )


def test_the_empty_form_invites_a_paste_and_logs_nothing(client, users):
    response = _get(client, users.auditor)
    assert response.status_code == 200
    assert 'name="line"' in response.text and 'name="run"' in response.text
    assert not AccessLog.objects.filter(action="attribution.read").exists()


# --- the trace, end to end ------------------------------------------------------------------


@pytest.mark.parametrize(
    "pasted",
    [LINE, "[actor:acme/u1] tz: works in CET", "   -  [actor:acme/u1] tz: works in CET \n"],
    ids=["as-given", "without-marker", "extra-whitespace"],
)
def test_pasting_the_line_names_the_version_origin_and_highlights_the_run(
    client, users, taught, pasted
):
    text = _get(client, users.auditor, line=pasted).text
    assert f'id="trace-{taught.uid}"' in text
    assert f'href="/memories/{taught.uid}/"' in text
    # The origin: actor, thread, run and tool call.
    assert 'href="/actors/acme/u1/"' in text
    assert "<code>t-1</code>" in text and "<code>call-1</code>" in text
    # The conversation, with the originating run's messages highlighted and the later
    # run's message shown beside them, not highlighted.
    highlighted = _highlighted(text)
    assert "I moved to Berlin, my hours are CET" in highlighted
    assert "Noted, I will use CET." in highlighted
    assert "originating run" in highlighted
    assert "What time is the stand-up?" in text
    assert "What time is the stand-up?" not in highlighted
    assert "origin no longer resolves" not in text
    assert 'href="/threads/t-1/?actor=acme%2Fu1&amp;run=run-1"' in text
    assert 'href="/runs/acme/u1/run-1/"' not in text  # run-1 stored no digest: it has no page


def test_the_originating_run_links_to_its_page_when_it_stored_a_digest(client, users, org):
    agent = org.acme_agent
    turns.resolve_turn(org.u1, "run-a", principal=agent, thread_id="t-a")
    transcripts.record_message(
        org.u1, "t-a", "user", "call me Sam", principal=agent, run_id="run-a"
    )
    writes.remember(org.u1, "name", "Sam", principal=agent, run_id="run-a", thread_id="t-a")
    turns.resolve_turn(org.u1, "run-b", principal=agent, thread_id="t-a")
    text = _get(client, users.auditor, line="- [actor:acme/u1] name: Sam").text
    assert 'run <a href="/runs/acme/u1/run-a/"><code>run-a</code></a>' in text


def test_the_whole_version_chain_is_shown(client, users, org, taught):
    newer = writes.remember(
        org.u1, "tz", "works in CET, mornings only", principal=org.acme_agent, run_id="run-3"
    ).memory
    turns.resolve_turn(org.u1, "run-4", principal=org.acme_agent)
    text = _get(
        client, users.auditor, line="- [actor:acme/u1] tz: works in CET, mornings only"
    ).text
    assert f'id="trace-{newer.uid}"' in text
    assert taught.uid in text  # the earlier version, in the chain
    assert "superseded by key:" in text
    # The older line still leads to the older version, carried by run-2.
    older = _get(client, users.auditor, line=LINE).text
    assert f'id="trace-{taught.uid}"' in older and 'href="/runs/acme/u1/run-2/"' in older
    assert 'href="/runs/acme/u1/run-4/"' not in _carried(older)


def test_an_override_line_is_traced_to_the_beaten_version(client, users, org, taught):
    policy = writes.publish(org.acme, "tz", "office hours are CET", principal=users.p_owner)
    turns.resolve_turn(org.u1, "run-5", principal=org.acme_agent)
    pasted = "↳ [tenant:acme] a person stated: office hours are CET"
    text = _get(client, users.auditor, line=pasted).text
    assert f'id="trace-{policy.uid}"' in text
    assert "stated by a person, <strong>owner</strong>" in text
    assert 'href="/runs/acme/u1/run-5/"' in text


def test_a_pruned_conversation_no_longer_resolves_and_the_rest_stays(
    client, users, operator, taught
):
    transcripts.prune_history(0, principal=operator)
    text = _get(client, users.auditor, line=LINE).text
    assert "origin no longer resolves" in text
    assert "I moved to Berlin" not in text
    assert f'id="trace-{taught.uid}"' in text
    assert 'href="/runs/acme/u1/run-2/"' in _carried(text)
    assert "works in CET" in text  # the version chain still shows the memory


def test_a_partly_pruned_conversation_says_the_run_is_gone(client, users, operator, taught):
    transcripts.prune_history(1, principal=operator)  # keeps run-2's one message
    text = _get(client, users.auditor, line=LINE).text
    assert "the originating run's messages have been pruned" in text
    assert "I moved to Berlin" not in text


def test_a_forgotten_memory_shows_when_and_by_whom_and_no_text(client, users, taught):
    forgetting.forget(taught, principal=users.p_owner)
    for params in (
        {"run": "run-2"},
        {"run": "run-2", "actor": "acme/u1"},
        {"line": "- [forgotten]"},
    ):
        text = _get(client, users.auditor, **params).text
        assert f'id="trace-{taught.uid}"' in text, params
        assert "Forgotten <time" in text
        assert "by <strong>user:owner</strong>" in text
        assert "works in CET" not in text
        assert "tz:" not in text
        assert "I moved to Berlin" not in text


def test_the_old_wording_of_a_forgotten_line_matches_nothing(client, users, taught):
    forgetting.forget(taught, principal=users.p_owner)
    text = _get(client, users.auditor, line=LINE).text
    assert "No stored prompt line" in text
    assert taught.uid not in text
    assert "paste the line as the prompt shows it now" in text


def test_forgotten_through_the_api_names_the_key_and_actor(client, users, org, taught):
    from memory_core.actors import chain_of

    forgetting.forget_for_actor(taught, org.u1, chain_of(org.u1), principal=org.acme_agent)
    text = _get(client, users.auditor, run="run-2").text
    assert f"by <strong>{org.acme_key.principal}</strong>" in text
    assert "for actor acme/u1" in text


def test_run_lookup_traces_every_line_of_the_run(client, users, org, taught):
    policy = writes.publish(org.acme, "units", "kilometres", principal=users.p_owner)
    turns.resolve_turn(org.u1, "run-6", principal=org.acme_agent)
    text = _get(client, users.auditor, run="run-6").text
    assert f'id="trace-{policy.uid}"' in text
    assert f'id="trace-{taught.uid}"' in text
    assert "I moved to Berlin" in _highlighted(text)
    carried = _carried(text)
    assert 'href="/runs/acme/u1/run-6/"' in carried
    assert 'href="/runs/acme/u1/run-2/"' not in carried  # only run-6's lines


def test_a_line_and_a_run_together_narrow_to_that_run(client, users, org, taught):
    turns.resolve_turn(org.u1, "run-7", principal=org.acme_agent)
    text = _get(client, users.auditor, line=LINE, run="run-7").text
    carried = _carried(text)
    assert 'href="/runs/acme/u1/run-7/"' in carried
    assert 'href="/runs/acme/u1/run-2/"' not in carried


def test_a_memory_held_outside_the_grants_shows_the_line_but_not_its_history(client, users, org):
    policy = writes.publish(org.root, "units", "report in kilometres", principal=users.p_su)
    turns.resolve_turn(org.u1, "run-g", principal=org.acme_agent)
    text = _get(client, users.auditor, line="- [global] units: report in kilometres").text
    assert 'href="/runs/acme/u1/run-g/"' in text
    assert "outside your grants" in text
    assert f'href="/memories/{policy.uid}/"' not in text
    # The superuser sees the whole trace.
    assert (
        f'href="/memories/{policy.uid}/"'
        in _get(client, users.su, line="- [global] units: report in kilometres").text
    )


def test_a_human_memory_names_its_author(client, users, org):
    policy = writes.publish(org.acme, "units", "kilometres", principal=users.p_owner)
    turns.resolve_turn(org.u1, "run-h", principal=org.acme_agent)
    text = _get(client, users.auditor, line="- [tenant:acme] units: kilometres").text
    assert f'id="trace-{policy.uid}"' in text
    assert "stated by a person, <strong>owner</strong>" in text
    assert "The conversation that taught it" not in text


# --- escaping, logging, the query ------------------------------------------------------------


def test_hostile_text_is_escaped(client, users, org):
    agent = org.acme_agent
    transcripts.record_message(
        org.u1, "t-x", "user", "<img src=x onerror=alert(1)>", principal=agent, run_id="r-x"
    )
    writes.remember(
        org.u1, "xss", "<script>alert(1)</script>", principal=agent, run_id="r-x", thread_id="t-x"
    )
    turns.resolve_turn(org.u1, "r-y", principal=agent)
    text = _get(client, users.auditor, line="- [actor:acme/u1] xss: <script>alert(1)</script>").text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text
    assert "<script>alert" not in text and "<img src=x" not in text


def test_reading_writes_an_access_log_row_with_ids_only(client, users, org, taught):
    writes.remember(org.u1, "tz", "works in CET, mornings", principal=org.acme_agent)
    _get(client, users.auditor, line=LINE)
    row = AccessLog.objects.get(action="attribution.read")
    assert row.channel == "console" and row.principal == "user:auditor"
    assert row.outcome == 200 and row.actor_ref == "acme/u1"
    assert row.memory_ids[0] == taught.uid
    assert len(row.memory_ids) == 2  # the line's version and its successor in the chain
    assert row.count == 1
    assert "CET" not in repr(row.detail) and "tz" not in repr(row.detail)


def test_a_search_that_finds_nothing_is_logged_too(client, users, taught):
    _get(client, users.outsider, line=LINE)
    row = AccessLog.objects.get(action="attribution.read")
    assert row.principal == "user:outsider" and row.count == 0 and row.memory_ids == []


def test_the_line_is_matched_by_equality_not_a_scan(client, users, taught):
    from django.test.utils import CaptureQueriesContext

    client.force_login(users.auditor)
    with CaptureQueriesContext(connection) as queries:
        client.get("/attribution/?" + urlencode({"line": LINE}))
    sql = [q["sql"] for q in queries if "memory_core_digestline" in q["sql"]]
    assert sql and all("LIKE" not in s.upper() for s in sql)
    assert any('"memory_core_digestline"."text" IN (' in s for s in sql)
    assert any('hashtextextended("memory_core_digestline"."text", 0) IN (' in s for s in sql)


def test_the_text_lookup_can_use_an_index(taught):
    """With sequential scans priced out, the planner reaches the lines through the index on
    the hash of DigestLine.text (digestline_text_hash, a btree on hashtextextended(text, 0)):
    the attribution query has one to use, and still finds the line."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'memory_core_digestline'"
            " AND indexdef LIKE '%%hashtextextended(text%%'"
        )
        on_text = [name for (name,) in cursor.fetchall()]
    assert on_text == ["digestline_text_hash"], "DigestLine needs an index on text's hash"
    lines = lines_showing(DigestLine.objects.all(), LINE).order_by()
    assert lines.exists()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        plan = lines.explain()
    assert "digestline_text_hash" in plan, plan


def test_a_line_is_found_only_by_its_exact_text(taught):
    """The hash narrows, the text decides: another line's text, or the line with a
    character changed, finds nothing."""
    assert lines_showing(DigestLine.objects.all(), LINE).exists()
    assert not lines_showing(DigestLine.objects.all(), LINE + "x").exists()
    assert not lines_showing(DigestLine.objects.all(), LINE.upper()).exists()


def test_the_planner_is_told_a_lines_hash_and_text_agree(db):
    """The lookup tests a line's hash and its text, which always agree; the statistics of
    migration 0019 tell the planner so. Without them it multiplies the two selectivities
    and expects a common line to be rare (at 1m, 675 rows for 75,866 matches), sorting all
    its matches where walking the newest digests stops at the first page (0.6 s against
    3 ms). ANALYZE, which fills them, is the owner's: the server's role cannot run it."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_get_statisticsobjdef(oid) FROM pg_statistic_ext WHERE stxname = %s",
            ["digestline_text_hash_dep"],
        )
        (definition,) = cursor.fetchone()
    assert definition == (
        "CREATE STATISTICS public.digestline_text_hash_dep (dependencies) ON text,"
        " hashtextextended(text, 0::bigint) FROM memory_core_digestline"
    )


def test_htmx_gets_the_results_fragment(client, users, taught):
    client.force_login(users.auditor)
    response = client.get(
        "/attribution/?" + urlencode({"line": LINE}), headers={"HX-Request": "true"}
    )
    assert '<section id="attribution-results"' in response.text
    assert "<html" not in response.text
    assert response["Vary"].find("HX-Request") >= 0
