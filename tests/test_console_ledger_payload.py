"""How a ledger event's payload reads (ledger page, memory page, dashboard): ids as code, a
memory id linked to its page only when the reader may open it, lists as several values and
an empty one as "none", booleans as yes/no; never a Python repr. And the icon every page
asks for."""

import re

from memory_core import actors, curation, forgetting, writes
from memory_core.garden import decisions, passes
from memory_core.models import LedgerEvent, Proposal
from tests.helpers import login


def _row(text: str, event: LedgerEvent) -> str:
    return re.search(rf'<tr id="event-{event.id}".*?</tr>', text, re.S)[0]


def test_a_forget_event_lists_its_ids_without_a_python_repr(client, users, org):
    first = writes.publish(org.acme, "k", "one", principal=users.p_owner)
    second = writes.correct(first, "two", principal=users.p_owner)
    forgetting.forget(second, principal=users.p_owner)
    event = LedgerEvent.objects.get(kind="memory.forgotten")
    row = _row(login(client, users.su).get("/ledger/?kind=memory.forgotten").text, event)
    assert "[" not in row and "&#x27;" not in row and "'" not in row
    ids = sorted([first.uid, second.uid])
    assert f'<code class="id">{ids[0]}</code>, <code class="id">{ids[1]}</code>' in row
    assert "/memories/" not in row  # erased: their pages are 404s


def test_memory_ids_link_to_their_pages_and_booleans_read_yes_or_no(client, users, org):
    memory = writes.publish(org.acme, "k", "one", principal=users.p_owner)
    curation.set_pinned(memory, True, principal=users.p_owner)
    event = LedgerEvent.objects.get(kind="memory.pinned")
    row = _row(login(client, users.su).get("/ledger/?kind=memory.pinned").text, event)
    assert f'<a href="/memories/{memory.uid}/"><code class="id">{memory.uid}</code></a>' in row
    assert '<span class="k">pinned</span> yes' in row and "True" not in row


def test_an_actors_scopes_read_as_a_list_of_tokens(client, users, org):
    event = LedgerEvent.objects.get(kind="actor.registered", actor_ref="acme/u1")
    row = _row(login(client, users.su).get("/ledger/?kind=actor.registered").text, event)
    assert "[" not in row
    assert '<a href="/scopes/tenant:acme/"><code class="id">tenant:acme</code></a>' in row


def test_the_memory_pages_ledger_events_read_the_same(client, users, org):
    first = writes.publish(org.acme, "k", "one", principal=users.p_owner)
    second = writes.correct(first, "two", principal=users.p_owner)
    text = login(client, users.owner).get(f"/memories/{second.uid}/").text
    assert f'<span class="k">supersedes</span> <a href="/memories/{first.uid}/">' in text


def test_the_favicon_is_served_and_linked(client, users):
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"] == "/static/img/favicon.svg"
    assert '<link rel="icon" href="/static/img/favicon.svg"' in client.get("/login/").text


# --- empty lists, gardening's ids, and links only where the reader may follow -------------


def _approved_promotion(org, users):
    """Three of ops' actors hold the same fact; the promotion is approved without retiring
    their copies: `created` names the new team memory, `retired` is empty."""
    team = [org.u1] + [
        actors.put_actor(r, r, ["team:acme/ops", "tenant:acme"], org.acme_key, org.acme_agent)
        for r in ("u3", "u4")
    ]
    for actor in team:
        writes.remember(actor, "tz", "Works in Berlin", principal=org.acme_agent)
    passes.run_pass()
    proposal = Proposal.objects.get(kind="promote")
    decided = decisions.approve(proposal, principal=users.p_owner)
    return LedgerEvent.objects.get(kind="proposal.approved"), decided.created[0]


def test_an_empty_list_reads_none_and_created_ids_link_to_their_pages(client, users, org):
    event, created = _approved_promotion(org, users)
    assert event.payload["retired"] == []
    row = _row(login(client, users.auditor).get("/ledger/?kind=proposal.approved").text, event)
    assert '<span class="k">retired</span> <span class="muted">none</span>' in row
    assert (
        f'<span class="k">created</span> <a href="/memories/{created.uid}/">'
        f'<code class="id">{created.uid}</code></a>'
    ) in row
    for uid in event.payload["memories"]:
        assert f'<a href="/memories/{uid}/"><code class="id">{uid}</code></a>' in row
    # The list after an empty one is not read as its value.
    assert '<span class="k">retired</span> <span class="k">' not in row


def test_a_memory_forgotten_since_is_named_not_linked(client, users, org):
    memory = writes.publish(org.acme, "k", "one", principal=users.p_owner)
    forgetting.forget(memory, principal=users.p_owner)
    event = LedgerEvent.objects.get(kind="memory.published", payload__memory=memory.uid)
    row = _row(login(client, users.su).get("/ledger/?kind=memory.published").text, event)
    assert f'<code class="id">{memory.uid}</code>' in row
    assert f"/memories/{memory.uid}/" not in row  # its page is a 404 now


def _promotion(text: str) -> str:
    """The memory page's ledger row of the promotion: its payload cell."""
    cells = re.findall(r'<td class="payload">(.*?)</td>', text, re.S)
    return next(cell for cell in cells if "promoted_from" in cell)


def test_a_memory_outside_the_readers_grants_is_named_not_linked(client, users, org):
    from django.contrib.auth import get_user_model

    from memory_core.accounts.grants import grant

    lead = get_user_model().objects.create_user("lead", "l@example.com", "pw-lead-123")
    grant("lead", org.ops, "admin", principal=users.p_su)
    note = writes.publish(org.ops, "oncall", "rotates on Mondays", principal=users.p_owner)
    wider = writes.promote(note, org.acme, principal=users.p_owner)
    # The team's administrator opens the team memory: the promotion names the tenant's copy,
    # which lies outside their grants.
    row = _promotion(login(client, lead).get(f"/memories/{note.uid}/").text)
    assert f'<code class="id">{wider.uid}</code>' in row
    assert f"/memories/{wider.uid}/" not in row
    assert f'<a href="/memories/{note.uid}/"><code class="id">{note.uid}</code></a>' in row
    # The tenant's auditor may open both.
    row = _promotion(login(client, users.auditor).get(f"/memories/{note.uid}/").text)
    assert f'<a href="/memories/{wider.uid}/"><code class="id">{wider.uid}</code></a>' in row


def test_the_dashboards_recent_events_link_only_what_the_reader_may_open(client, users, org):
    memory = writes.publish(org.acme, "k", "one", principal=users.p_owner)
    text = login(client, users.auditor).get("/").text
    assert f'<a href="/memories/{memory.uid}/"><code class="id">{memory.uid}</code></a>' in text
    forgetting.forget(memory, principal=users.p_owner)
    text = client.get("/").text
    assert f"/memories/{memory.uid}/" not in text


def test_live_rows_link_as_the_page_does(client, users, org):
    first = writes.publish(org.acme, "k", "one", principal=users.p_owner)
    top = LedgerEvent.objects.order_by("-id").first().id
    second = writes.correct(first, "two", principal=users.p_owner)
    response = login(client, users.auditor).get(f"/ledger/new/?after={top}")
    assert f'<a href="/memories/{second.uid}/"><code class="id">{second.uid}</code></a>' in (
        response.text
    )
