"""Post/redirect/get across the console: every plain (non-htmx) POST that changes something
answers with a redirect to a GET page, so reloading what the browser shows next never
repeats the action. (htmx POSTs swap a fragment in place and are not reloaded.)"""

import pytest

from memory_core import curation, writes
from memory_core.models import LedgerEvent


@pytest.fixture
def memories(org, users):
    live = writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_su)
    corrected = writes.correct(live, "starts in April", principal=users.p_su)
    gone = writes.publish(org.acme, "holiday", "in August", principal=users.p_su)
    curation.invalidate(gone, "wrong", principal=users.p_su)
    learned = writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent).memory
    plain = writes.publish(org.ops, "oncall", "Dana", principal=users.p_su)
    return {
        "live": live,
        "corrected": corrected,
        "gone": gone,
        "learned": learned,
        "plain": plain,
    }


def _actions(m, org):
    return [
        ("/scopes/tenant:acme/publish/", {"key": "new-key", "text": "a new fact"}),
        (f"/memories/{m['learned'].uid}/pin/", {}),
        (f"/memories/{m['learned'].uid}/tags/", {"tags": "time"}),
        (f"/memories/{m['gone'].uid}/reinstate/", {}),
        (f"/memories/{m['corrected'].uid}/revert/", {"version": m["live"].uid}),
        (f"/memories/{m['plain'].uid}/correct/", {"text": "Sam"}),
        (f"/memories/{m['learned'].uid}/republish/", {"target": "tenant:acme", "pin": "no"}),
        (f"/memories/{m['learned'].uid}/invalidate/", {"reason": "stale"}),
        ("/memories/bulk/", {"action": "pin", "m": [m["corrected"].uid], "confirm": "1"}),
        ("/keys/create/", {"name": "k", "reach": "tenant:acme"}),
        (f"/keys/{org.acme_key.uid}/pause/", {}),
        ("/users/grants/", {"username": "outsider", "scope": "tenant:acme", "role": "auditor"}),
        ("/ledger/verify/", {}),
        (f"/memories/{m['learned'].uid}/forget/", {"confirm_key": "tz"}),
    ]


def test_every_plain_console_action_answers_with_a_redirect_to_a_get_page(
    client, users, org, memories
):
    client.force_login(users.su)
    for path, data in _actions(memories, org):
        response = client.post(path, data)
        assert response.status_code in (302, 303), (path, response.status_code)
        events = LedgerEvent.objects.count()
        # What the browser shows next is a GET, and reloading it changes nothing.
        for _ in range(2):
            shown = client.get(response["Location"])
            assert shown.status_code == 200, (path, response["Location"], shown.status_code)
        assert LedgerEvent.objects.count() == events, path


def test_a_bulk_action_answers_see_other_and_its_report_reloads_unchanged(client, users, memories):
    client.force_login(users.owner)
    data = {"action": "unpin", "m": [memories["corrected"].uid], "confirm": "1"}
    response = client.post("/memories/bulk/", data)
    assert response.status_code == 303
    first, again = client.get(response["Location"]), client.get(response["Location"])
    assert _outcomes(first) == _outcomes(again) and "Unpin: 1 of 1 done" in first.text


def _outcomes(response) -> str:
    return response.text.split('id="bulk-outcomes"', 1)[1].split("</table>", 1)[0]
