"""Capture's pure rules (memory_core/rules/capture.py: the answer's shape, which items may be
written, the prompt, the slices), its settings, and `serve`'s worker. No database."""

import json

import pytest

from memory_console import capture_process
from memory_console.loadgen.chat_model import completion, memories
from memory_core.rules import capture
from tests.test_security_deploy import environment, manage, random_secret_key


def test_the_answer_is_read_from_the_first_choices_content():
    assert capture.memories_in(memories([{"key": "a", "fact": "b"}])) == [{"key": "a", "fact": "b"}]
    assert capture.memories_in(memories([])) == []


@pytest.mark.parametrize(
    "response",
    [
        {},
        {"choices": []},
        {"choices": [{"message": {"content": None}}]},
        completion("not json"),
        completion("[]"),
        completion(json.dumps({"facts": []})),
        completion(json.dumps({"memories": [], "scope": "global"})),
        completion(json.dumps({"memories": {"key": "a", "fact": "b"}})),
        completion("```json\n" + json.dumps({"memories": []}) + "\n```"),
        "just a string",
    ],
)
def test_anything_else_is_a_failed_extraction(response):
    with pytest.raises(capture.AnswerProblem):
        capture.memories_in(response)


def test_only_well_formed_items_within_the_limit_are_selected():
    items = [
        {"key": "diet", "fact": "vegan"},
        {"key": "diet", "fact": "vegetarian"},  # the key again
        {"key": "home", "fact": "Lisbon", "scope": "global"},  # a field beyond key and fact
        {"key": "Bad Key", "fact": "x"},
        {"key": "multi", "fact": "one\ntwo"},
        {"key": "long", "fact": "x" * 241},
        {"key": "wifi", "fact": "their wifi password is hunter2"},
        {"key": "token", "fact": "uses the key sk-proj-abcdefghijklmnop1234"},
        ["diet", "vegan"],
        {"key": "pets", "fact": "two cats"},
        {"key": "past-the-limit", "fact": "never considered"},
    ]
    chosen = capture.select_items(items, max_items=10, max_fact_chars=240)
    assert chosen.items == (("diet", "vegan"), ("pets", "two cats"))
    assert chosen.dropped == {
        "duplicate_key": 1,
        "shape": 2,
        "bad_key": 1,
        "bad_fact": 2,
        "secret": 2,
        "over_max": 1,
    }
    assert chosen.dropped_count == 9


def test_secrets_are_recognised_and_ordinary_facts_are_not():
    for text in (
        "PIN: 4921",
        "api key = abcd1234",
        "-----BEGIN RSA PRIVATE KEY-----",
        "ghp_abcdefghijklmnopqrstuvwxyz0123",
        "AKIAABCDEFGHIJKLMNOP",
    ):
        assert capture.secret_problem(text), text
    for text in ("keeps their passwords in a manager", "the secret to their bread is time"):
        assert capture.secret_problem(text) is None, text


def test_the_request_asks_for_json_and_carries_the_known_memories_and_messages():
    body = capture.chat_request(
        "m",
        capture.system_prompt(10, 240),
        capture.user_prompt([("diet", "vegan")], [("user", "hi"), ("assistant", "hello")]),
        max_items=10,
    )
    assert body["response_format"] == {"type": "json_object"} and body["model"] == "m"
    system, user = body["messages"]
    assert "At most 10 items" in system["content"] and "240 characters" in system["content"]
    assert user["content"].endswith("New messages:\n[user] hi\n[assistant] hello")
    assert "- diet: vegan" in user["content"]


def test_a_slice_is_bounded_by_messages_and_characters_and_holds_one_at_least():
    assert capture.slice_end([10] * 100, max_messages=50, max_chars=10_000) == 50
    assert capture.slice_end([4000] * 10, max_messages=50, max_chars=10_000) == 2
    assert capture.slice_end([50_000, 10], max_messages=50, max_chars=10_000) == 1
    assert capture.slice_end([5, 5], max_messages=50, max_chars=10_000) == 2


def test_serve_starts_a_worker_only_with_extraction_on(settings, monkeypatch):
    started = []

    class Popen:
        def __init__(self, command, **kwargs):
            started.append(command)
            self.pid = 4242

        def poll(self):
            return None

        def terminate(self):
            started.append("terminated")

        def wait(self, timeout=None):
            return 0

    monkeypatch.setattr(capture_process.subprocess, "Popen", Popen)
    settings.MEMORY_EXTRACTOR = "none"
    assert capture_process.start(_Out()) is None and not started
    settings.MEMORY_EXTRACTOR, settings.MEMORY_EXTRACTOR_MODEL = "http", "m"
    worker = capture_process.start(_Out())
    command = started[0]
    assert command[2:4] == ["capture_worker", "--parent"] and command[-1].isdigit()
    capture_process.stop(worker)
    assert started[-1] == "terminated"


class _Out:
    def write(self, text):
        pass


@pytest.mark.slow  # Django set up in a fresh interpreter
def test_the_http_extractor_without_its_url_and_model_stops_the_server():
    env = environment(SECRET_KEY=random_secret_key(), MEMORY_EXTRACTOR="http")
    result = manage(env, "check")
    assert result.returncode != 0
    assert "MEMORY_EXTRACTOR=http needs MEMORY_EXTRACTOR_URL" in result.stderr
    env["MEMORY_EXTRACT_MAX"] = "0"
    env.update(MEMORY_EXTRACTOR_URL="http://127.0.0.1:9/v1", MEMORY_EXTRACTOR_MODEL="m")
    result = manage(env, "check")
    assert result.returncode != 0 and "MEMORY_EXTRACT_MAX" in result.stderr
    env["MEMORY_EXTRACT_MAX"] = "10"
    assert manage(env, "check").returncode == 0
