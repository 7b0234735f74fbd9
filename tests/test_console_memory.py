"""The memory page: who may open it, what it shows, and that it never renders markup."""

import pytest

from memory_core import curation, transcripts, turns, writes
from memory_core.models import AccessLog


@pytest.fixture
def acme_memory(users, org):
    return writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)


def _page(client, user, memory):
    client.force_login(user)
    return client.get(f"/memories/{memory.uid}/")


@pytest.mark.parametrize("who", ["su", "owner", "auditor"])
def test_readers_open_the_memory_page(client, users, acme_memory, who):
    response = _page(client, getattr(users, who), acme_memory)
    assert response.status_code == 200
    assert "starts in October" in response.text


def test_outsider_gets_404_on_a_memory_outside_their_grant(client, users, acme_memory):
    response = _page(client, users.outsider, acme_memory)
    assert response.status_code == 404
    assert "starts in October" not in response.text
    assert "fiscal-year" not in response.text


def test_unknown_memory_is_404(client, users):
    client.force_login(users.su)
    assert client.get("/memories/mem_NOPE/").status_code == 404


def test_anonymous_is_sent_to_login(client, users, acme_memory):
    response = client.get(f"/memories/{acme_memory.uid}/")
    assert response.status_code == 302
    assert response["Location"] == f"/login/?next=/memories/{acme_memory.uid}/"


def test_reading_the_memory_page_writes_an_access_log_row(client, users, acme_memory):
    _page(client, users.auditor, acme_memory)
    row = AccessLog.objects.get(action="memory.read")
    assert row.channel == "console"
    assert row.principal == "user:auditor"
    assert row.memory_ids == [acme_memory.uid]
    assert row.outcome == 200


def test_memory_text_is_escaped_never_rendered_as_markup(client, users, org):
    hostile = writes.remember(
        org.u1, "xss", "<script>alert(1)</script>", principal=org.acme_agent, run_id="r1"
    ).memory
    turns.resolve_turn(org.u1, "r1", principal=org.acme_agent)
    client.force_login(users.owner)
    for path in (f"/memories/{hostile.uid}/", "/scopes/actor:acme/u1/"):
        response = client.get(path)
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in response.text
        assert "<script>alert" not in response.text


def test_page_has_no_inline_script(client, users, acme_memory):
    text = _page(client, users.owner, acme_memory).text
    # htmx and the console's focus script (base.html), both files; nothing inline.
    assert text.count("<script") == text.count('<script src="/static/') == 2
    assert '<script src="/static/vendor/htmx-2.0.11.min.js" defer></script>' in text


def test_page_shows_the_whole_version_chain_with_why_each_was_retired(client, users, org):
    first = writes.publish(org.acme, "k", "version one", principal=users.p_owner)
    second = writes.correct(first, "version two", principal=users.p_owner)
    third = writes.correct(second, "version three", principal=users.p_su)
    curation.invalidate(third, "wrong since the merger", principal=users.p_owner)
    text = _page(client, users.auditor, second).text
    for version in (first, second, third):
        assert version.uid in text
    assert "version one" in text and "version three" in text
    assert "superseded by user:owner" in text
    assert "invalidated by user:owner" in text
    assert "wrong since the merger" in text
    assert f'Superseded by <a href="/memories/{third.uid}/">' in text


def test_page_lists_ledger_events_access_rows_and_runs_that_carried_it(client, users, org):
    learned = writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent).memory
    turns.resolve_turn(org.u1, "run-7", principal=org.acme_agent)
    curation.set_pinned(learned, True, principal=users.p_owner)
    text = _page(client, users.auditor, learned).text
    assert "memory.remembered" in text
    assert "memory.pinned" in text
    assert 'href="/runs/acme/u1/run-7/"' in text
    assert "works in CET" in text
    # The access log section shows the agent's turn that read it, with its principal.
    assert org.acme_key.principal in text


def test_agent_origin_links_to_actor_thread_and_run(client, users, org):
    transcripts.record_message(
        org.u1, "t-1", "user", "remember I work in CET", principal=org.acme_agent, run_id="run-1"
    )
    learned = writes.remember(
        org.u1, "tz", "works in CET", principal=org.acme_agent, run_id="run-1", thread_id="t-1"
    ).memory
    text = _page(client, users.owner, learned).text
    assert 'href="/actors/acme/u1/"' in text
    assert 'href="/threads/t-1/?actor=acme%2Fu1"' in text
    assert 'href="/runs/acme/u1/run-1/"' in text
    assert "origin no longer resolves" not in text


def test_agent_origin_in_a_pruned_thread_no_longer_resolves(client, users, org):
    learned = writes.remember(
        org.u1, "tz", "works in CET", principal=org.acme_agent, thread_id="gone-thread"
    ).memory
    text = _page(client, users.owner, learned).text
    assert "origin no longer resolves" in text
    assert 'href="/threads/gone-thread/"' not in text


def test_auditor_sees_no_action_forms(client, users, acme_memory):
    text = _page(client, users.auditor, acme_memory).text
    for action in ("correct", "republish", "pin", "invalidate", "forget"):
        assert f"/memories/{acme_memory.uid}/{action}/" not in text
    assert "changing it needs an administrator" in text


def test_owner_sees_the_actions_and_the_forget_explanation(client, users, org):
    learned = writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent).memory
    text = _page(client, users.owner, learned).text
    for action in ("correct", "republish", "pin", "invalidate", "forget"):
        assert f'action="/memories/{learned.uid}/{action}/"' in text
    assert "every version" in text and "every prompt line" in text
    # Republish offers the wider scopes of u1's chain that the owner administers, not global.
    assert '<option value="team:acme/ops">' in text
    assert '<option value="tenant:acme">' in text
    assert '<option value="global">' not in text


def test_retired_version_offers_forget_but_not_the_live_only_actions(client, users, org):
    first = writes.publish(org.acme, "k", "version one", principal=users.p_owner)
    writes.correct(first, "version two", principal=users.p_owner)
    text = _page(client, users.owner, first).text
    assert f'action="/memories/{first.uid}/forget/"' in text
    for action in ("correct", "republish", "pin", "invalidate"):
        assert f'action="/memories/{first.uid}/{action}/"' not in text


def test_an_invalidated_pinned_memory_does_not_say_it_is_pinned(client, users, org):
    pinned = writes.publish(org.acme, "k", "a policy", principal=users.p_owner, pinned=True)
    curation.invalidate(pinned, "wrong", principal=users.p_owner)
    text = _page(client, users.owner, pinned).text
    assert "retired · invalidated" in text
    assert "always in the prompt" not in text
    assert '<span class="pin">pinned</span>' not in text
    assert "was pinned — retired, so in no prompt" in text


def test_a_live_pinned_memory_says_it_is_always_in_the_prompt(client, users, org):
    pinned = writes.publish(org.acme, "k", "a policy", principal=users.p_owner, pinned=True)
    text = _page(client, users.owner, pinned).text
    assert '<span class="pin">pinned</span>' in text
    assert "yes — always in the prompt" in text and "was pinned" not in text


def test_the_memory_page_says_which_embedder_embedded_the_version(client, users, acme_memory):
    from memory_core.recall import providers

    body = _page(client, users.owner, acme_memory).content.decode()
    assert f"by <code>{providers.current().identity}</code> (256 dimensions)" in body
    assert "not yet embedded" not in body and "another embedder" not in body


def test_the_memory_page_says_when_a_version_is_pending_or_from_another_embedder(
    client, users, acme_memory
):
    from memory_core.models import Embedding

    row = Embedding.objects.get(memory=acme_memory)
    row.embedder = "old:model@1"
    row.save()
    body = _page(client, users.owner, acme_memory).content.decode()
    assert "<code>old:model@1</code>" in body and "manage.py reembed" in body
    Embedding.objects.filter(memory=acme_memory).update(
        embedder=None, dims=None, vector=None, embedded_at=None
    )
    body = _page(client, users.owner, acme_memory).content.decode()
    assert "not yet embedded" in body and "manage.py embed_pending" in body
