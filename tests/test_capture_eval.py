"""`capture_eval` runs end to end against a model by URL and leaves nothing behind (here the
scripted model of tests/chat_server.py: the command's plumbing, not a model's quality, which
is measured against a real model by hand, docs/agents/capture.md)."""

import io
import json

from django.core.management import call_command

from memory_core.models import Actor, Extraction, Memory, Message, Scope
from tests.capture.conversations import CASES
from tests.chat_server import ChatServer


def test_capture_eval_scores_each_conversation_and_rolls_everything_back(db, tmp_path):
    before = (Actor.objects.count(), Memory.objects.count(), Scope.objects.count())
    out = io.StringIO()
    with ChatServer() as server:  # one memory per user message, its text as the fact
        call_command(
            "capture_eval",
            "--url",
            server.url,
            "--model",
            "scripted",
            "--json",
            str(tmp_path / "eval.json"),
            stdout=out,
        )
    assert len(server.requests) == len(CASES)
    text = out.getvalue()
    assert "moving               kept 4/4" in text
    # The scripted model copies the user's words: another person's private matters are
    # stored (a real model is asked not to), but a password said in passing is dropped by
    # the rules whatever the model lists.
    assert "NEVER-STORE FOUND: antidepressant, divorce" in text
    document = json.loads((tmp_path / "eval.json").read_text())
    secret = document["cases"]["secret-in-passing"]
    assert (secret["leaks"], secret["dropped"]) == ([], 1)
    assert set(document["cases"]) == {c.name for c in CASES}
    totals = document["totals"]
    assert totals["expected"] == sum(len(c.keep) for c in CASES) and totals["failed"] == 0
    assert (Actor.objects.count(), Memory.objects.count(), Scope.objects.count()) == before
    assert not Message.objects.exists() and not Extraction.objects.exists()


def test_capture_eval_reports_a_model_it_cannot_reach(db):
    with ChatServer(mode="down") as server:
        out = io.StringIO()
        call_command("capture_eval", "--url", server.url, "--model", "m", stdout=out)
    assert f"{len(CASES)} failed extraction(s)" in out.getvalue()
