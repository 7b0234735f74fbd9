"""A message whose connection fails at its commit (the primary lost mid-commit) is looked up
before it is answered: 201 when it was stored, 503 when it was rolled back, 504 when no
primary answers in time. A 503 must mean "nothing written": a message has no idempotency
key, and its caller retries only after a 503 (docs/operators/high-availability.md)."""

import pytest
from django.db import OperationalError, connection

from memory_core.db import outcome
from memory_core.models import AccessLog, Message
from tests.helpers import bearer
from tests.mcp_wire import envelope, post

MESSAGES = "/api/v1/threads/t-commit/messages"
BODY = {"actor": "u1", "role": "user", "text": "the flight lands at nine"}


def fail_the_next_commit(monkeypatch, *, committed: bool):
    """The next commit commits (or rolls back) and then loses its connection."""
    wrapper = type(connection._connections[connection._alias])
    real_commit = wrapper.commit
    armed = [True]

    def commit(self):
        if not armed[0]:
            return real_commit(self)
        armed[0] = False
        if committed:
            real_commit(self)
        else:
            self.rollback()
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(wrapper, "commit", commit)


def message_logs():
    return AccessLog.objects.filter(action="message", outcome=201).count()


def test_a_message_committed_as_its_connection_failed_is_answered_201_once(
    org, client, transactional_db, monkeypatch
):
    fail_the_next_commit(monkeypatch, committed=True)
    response = client.post(
        MESSAGES, BODY, content_type="application/json", headers=bearer(org.acme_secret)
    )
    assert response.status_code == 201, response.content
    (stored,) = Message.objects.all()
    assert response.json()["id"] == stored.uid
    assert message_logs() == 1  # the access-log row was in the same transaction


def test_a_message_rolled_back_as_its_connection_failed_is_a_503_with_nothing_written(
    org, client, transactional_db, monkeypatch
):
    fail_the_next_commit(monkeypatch, committed=False)
    response = client.post(
        MESSAGES, BODY, content_type="application/json", headers=bearer(org.acme_secret)
    )
    assert response.status_code == 503
    assert response.json() == {"detail": "the database is unavailable; try again shortly"}
    assert not Message.objects.exists() and message_logs() == 0


def no_primary_answers(monkeypatch):
    def down():
        raise OperationalError("connection refused")

    monkeypatch.setattr(outcome, "_on_primary", down)
    monkeypatch.setattr(outcome, "RESOLVE_SECONDS", 0.3)
    monkeypatch.setattr(outcome, "FIRST_WAIT", 0.05)


def test_a_message_no_primary_confirms_in_time_is_a_504_not_an_invitation_to_retry(
    org, client, transactional_db, monkeypatch
):
    fail_the_next_commit(monkeypatch, committed=True)
    no_primary_answers(monkeypatch)
    response = client.post(
        MESSAGES, BODY, content_type="application/json", headers=bearer(org.acme_secret)
    )
    assert response.status_code == 504
    assert "may have been stored" in response.json()["detail"]
    assert "Retry-After" not in response
    assert Message.objects.count() == 1  # stored after all: the caller is told to look


def test_the_mcp_record_message_tool_answers_the_same_504(
    org, client, transactional_db, monkeypatch
):
    fail_the_next_commit(monkeypatch, committed=True)
    no_primary_answers(monkeypatch)
    arguments = {"thread_id": "t-commit", "role": "user", "text": "the flight lands at nine"}
    message = envelope("tools/call", {"name": "record_message", "arguments": arguments})
    response = post(client, "/mcp/actors/u1/", message, org.acme_secret)
    assert response.status_code == 504
    assert "may have been stored" in response.json()["error"]["message"]


def test_the_lookup_waits_for_a_primary_and_then_trusts_its_answer(db, monkeypatch):
    answers = iter([OperationalError("refused"), False, True])

    def on_primary():
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    waits = []
    monkeypatch.setattr(outcome, "_on_primary", on_primary)
    # Refused, then a standby (still in recovery), then the primary: asked only then.
    assert outcome.stored(lambda: True, sleep=waits.append) is True
    assert waits == [outcome.FIRST_WAIT, outcome.FIRST_WAIT * 2]


@pytest.mark.parametrize("found", [True, False])
def test_the_lookup_returns_what_the_primary_holds(transactional_db, found):
    assert outcome.stored(lambda: found, sleep=lambda s: None) is found
