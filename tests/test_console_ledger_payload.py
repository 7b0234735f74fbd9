"""How a ledger event's payload reads (ledger page, memory page): ids as code, a memory
id linked to its page unless the event erased it, lists as several values, booleans as
yes/no; never a Python repr. And the icon every page asks for."""

import re

from memory_core import curation, forgetting, writes
from memory_core.models import LedgerEvent
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
