"""`import_conversations FILE --format chatgpt|claude --actor REF [--extract]`: chat exports
as threads (also inside the export's .zip), once, never half-imported."""

import io
import json
import zipfile

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memory_core import erasure
from memory_core.capture import chat_exports, extractor, queue
from memory_core.models import AccessLog, CaptureJob, LedgerEvent, Memory, Message, Thread
from tests.chat_server import ChatServer
from tests.helpers import use_server


def node(node_id, parent, role=None, parts=None, children=()):
    message = None
    if role is not None:
        message = {
            "id": node_id,
            "author": {"role": role, "name": None},
            "create_time": 1700000000.0,
            "content": {"content_type": "text", "parts": parts or []},
            "metadata": {},
        }
    return {"id": node_id, "message": message, "parent": parent, "children": list(children)}


def chatgpt_conversation(ident="c-111", extra=None):
    """A conversation with a system node, a regenerated answer (a branch left out) and an
    image part, as ChatGPT's conversations.json holds it."""
    mapping = {
        "root": node("root", None, children=["sys"]),
        "sys": node("sys", "root", "system", [""], children=["u1"]),
        "u1": node("u1", "sys", "user", ["I moved to Lisbon last spring"], children=["a1", "a1b"]),
        "a1": node("a1", "u1", "assistant", ["An old answer, regenerated"]),
        "a1b": node("a1b", "u1", "assistant", ["Lisbon is lovely!"], children=["u2"]),
        "u2": node(
            "u2",
            "a1b",
            "user",
            [{"content_type": "image_asset_pointer"}, "Here is my new flat"],
            children=["t1"],
        ),
        "t1": node("t1", "u2", "tool", ["tool output"]),
    }
    conversation = {
        "title": "Moving",
        "create_time": 1700000000.0,
        "update_time": 1700000100.0,
        "mapping": mapping,
        "current_node": "t1",
        "conversation_id": ident,
        "id": ident,
    }
    conversation.update(extra or {})
    return conversation


def claude_conversation(uuid="0b6c-aa", messages=None):
    return {
        "uuid": uuid,
        "name": "Diet",
        "created_at": "2026-01-01T10:00:00Z",
        "updated_at": "2026-01-01T10:05:00Z",
        "account": {"uuid": "acc"},
        "chat_messages": messages
        or [
            {"uuid": "m1", "text": "I stopped eating meat", "sender": "human", "content": []},
            {
                "uuid": "m2",
                "text": "",
                "sender": "assistant",
                "content": [{"type": "text", "text": "Noted: vegetarian."}],
            },
        ],
    }


def write(path, data):
    path.write_text(json.dumps(data))
    return str(path)


def zipped(path, data, inner="conversations.json"):
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(inner, json.dumps(data))
        archive.writestr("user.json", "{}")
    return str(path)


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("import_conversations", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def thread_messages(ref):
    thread = Thread.objects.get(ref=ref)
    return [(m.role, m.text) for m in thread.messages.order_by("id")]


def test_a_chatgpt_export_becomes_threads_following_current_node(org, tmp_path):
    data = [chatgpt_conversation("c-111"), chatgpt_conversation("c-222")]
    out, err = run(
        write(tmp_path / "conversations.json", data), "--format", "chatgpt", "--actor", "acme/u1"
    )
    assert "Imported 6 message(s) into 2 conversation(s) of acme/u1" in out
    assert "conversations: 2/2" in err  # the progress bar's last line
    assert thread_messages("chatgpt-c-111") == [
        ("user", "I moved to Lisbon last spring"),
        ("assistant", "Lisbon is lovely!"),
        ("user", "Here is my new flat"),
    ]
    assert Thread.objects.get(ref="chatgpt-c-222").actor == org.u1
    event = LedgerEvent.objects.get(kind="conversations.imported")
    assert event.payload == {"threads": 2, "messages": 6}
    rows = AccessLog.objects.filter(action="conversation.import")
    assert rows.count() == 2 and {r.count for r in rows} == {3}
    assert "Lisbon" not in json.dumps([r.detail for r in rows])


def test_a_claude_export_inside_its_zip_becomes_threads(org, tmp_path):
    path = zipped(tmp_path / "export.zip", [claude_conversation()], inner="data/conversations.json")
    out, _ = run(path, "--format", "claude", "--actor", "acme/u1")
    assert "Imported 2 message(s) into 1 conversation(s)" in out
    assert thread_messages("claude-0b6c-aa") == [
        ("user", "I stopped eating meat"),
        ("assistant", "Noted: vegetarian."),
    ]


def test_a_chatgpt_zip_is_read_too(org, tmp_path):
    path = zipped(tmp_path / "chatgpt.zip", [chatgpt_conversation()])
    run(path, "--format", "chatgpt", "--actor", "acme/u1")
    assert Thread.objects.filter(ref="chatgpt-c-111").exists()


@pytest.mark.parametrize(
    "fmt,data", [("chatgpt", [chatgpt_conversation()]), ("claude", [claude_conversation()])]
)
def test_importing_the_same_file_twice_adds_nothing(org, tmp_path, fmt, data):
    path = write(tmp_path / "conversations.json", data)
    run(path, "--format", fmt, "--actor", "acme/u1")
    counts = (Thread.objects.count(), Message.objects.count(), LedgerEvent.objects.count())
    out, _ = run(path, "--format", fmt, "--actor", "acme/u1")
    assert "Imported 0 message(s) into 0 conversation(s)" in out and "1 already imported" in out
    assert (Thread.objects.count(), Message.objects.count(), LedgerEvent.objects.count()) == counts
    zipped_path = zipped(tmp_path / "again.zip", data)
    run(zipped_path, "--format", fmt, "--actor", "acme/u1")
    assert Message.objects.count() == counts[1]


def test_a_longer_export_of_an_imported_conversation_adds_only_the_new_messages(org, tmp_path):
    short = claude_conversation(messages=[{"text": "one", "sender": "human"}])
    run(write(tmp_path / "a.json", [short]), "--format", "claude", "--actor", "acme/u1")
    longer = claude_conversation(
        messages=[{"text": "one", "sender": "human"}, {"text": "two", "sender": "assistant"}]
    )
    run(write(tmp_path / "b.json", [longer]), "--format", "claude", "--actor", "acme/u1")
    assert thread_messages("claude-0b6c-aa") == [("user", "one"), ("assistant", "two")]


@pytest.mark.parametrize(
    "fmt,bad,needle",
    [
        (
            "chatgpt",
            {"conversation_id": "c-bad", "current_node": "x", "mapping": {}},
            "conversation 2 (conversation_id 'c-bad'): node 'x' is not in the mapping",
        ),
        ("chatgpt", {"conversation_id": "c-bad", "current_node": None}, "mapping is missing"),
        ("chatgpt", "not a conversation", "conversation 2: not an object"),
        ("chatgpt", {"mapping": {}, "current_node": None}, "conversation_id is missing"),
        (
            "chatgpt",
            chatgpt_conversation(
                "c-bad",
                {
                    "mapping": {
                        "n": node("n", None, children=[])
                        | {"message": {"content": {"parts": ["x"]}}}
                    },
                    "current_node": "n",
                },
            ),
            "author.role is missing",
        ),
        (
            "claude",
            {"uuid": "u-bad", "chat_messages": [{"text": "hi", "sender": "robot"}]},
            "conversation 2 (uuid 'u-bad'): message 1: sender must be human or assistant",
        ),
        ("claude", {"uuid": "u-bad"}, "chat_messages is missing"),
        (
            "claude",
            {"uuid": "u-bad", "chat_messages": [{"text": 7, "sender": "human"}]},
            "text is not a string",
        ),
    ],
)
def test_a_malformed_file_names_the_first_bad_record_and_imports_nothing(
    org, tmp_path, fmt, bad, needle
):
    good = chatgpt_conversation() if fmt == "chatgpt" else claude_conversation()
    path = write(tmp_path / "conversations.json", [good, bad, good])
    with pytest.raises(CommandError) as raised:
        run(path, "--format", fmt, "--actor", "acme/u1")
    assert needle in str(raised.value) and "nothing was imported" in str(raised.value)
    assert not Thread.objects.exists() and not Message.objects.exists()
    assert not LedgerEvent.objects.filter(kind="conversations.imported").exists()


@pytest.mark.parametrize("content", ["{not json", json.dumps({"a": 1})])
def test_a_file_that_is_not_a_list_of_conversations_is_refused(org, tmp_path, content):
    path = tmp_path / "conversations.json"
    path.write_text(content)
    with pytest.raises(CommandError):
        run(str(path), "--format", "claude", "--actor", "acme/u1")
    assert not Thread.objects.exists()


def test_a_zip_without_conversations_is_refused(org, tmp_path):
    path = tmp_path / "x.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("other.json", "[]")
    with pytest.raises(CommandError, match="no conversations.json"):
        run(str(path), "--format", "chatgpt", "--actor", "acme/u1")


def test_an_unknown_or_erased_actor_is_refused(org, users, tmp_path):
    path = write(tmp_path / "c.json", [claude_conversation()])
    with pytest.raises(CommandError, match="no actor"):
        run(path, "--format", "claude", "--actor", "u1")  # unqualified: outside every tenant
    erasure.erase_actor(org.u1, principal=users.p_owner)
    with pytest.raises(CommandError, match="erased"):
        run(path, "--format", "claude", "--actor", "acme/u1")
    assert not Thread.objects.exists()


def test_text_that_cannot_be_stored_is_left_out_not_refused(org, tmp_path):
    text = "before\x00after\x1b[0m " + "x" * 120_000
    data = [claude_conversation(messages=[{"text": text, "sender": "human"}])]
    run(write(tmp_path / "c.json", data), "--format", "claude", "--actor", "acme/u1")
    [(role, stored)] = thread_messages("claude-0b6c-aa")
    assert stored.startswith("beforeafter[0m x") and len(stored) == 100_000


def test_with_extract_each_new_thread_is_queued_and_the_worker_captures_it(org, tmp_path, settings):
    extractor.reset()
    with ChatServer() as server:
        use_server(settings, server)
        path = write(tmp_path / "c.json", [chatgpt_conversation()])
        with pytest.raises(CommandError, match="invalid choice"):
            run(path, "--format", "markdown", "--actor", "acme/u1")
        out, _ = run(str(path), "--format", "chatgpt", "--actor", "acme/u1", "--extract")
        assert "1 queued for extraction" in out
        job = CaptureJob.objects.get()
        assert (job.thread_ref, job.reason) == ("chatgpt-c-111", "import")
        assert queue.drain() == {"done": 1}
        # The scripted model notes each user message; written at u1's own scope.
        assert {m.scope.token for m in Memory.objects.all()} == {"actor:acme/u1"}
        assert Memory.objects.filter(origin_thread="chatgpt-c-111").count() == 2
        out, _ = run(str(path), "--format", "chatgpt", "--actor", "acme/u1", "--extract")
        assert "0 queued" in out and not CaptureJob.objects.exists()


def test_extract_needs_extraction_on(org, tmp_path, settings):
    settings.MEMORY_EXTRACTOR = "none"
    path = write(tmp_path / "c.json", [claude_conversation()])
    with pytest.raises(CommandError, match="MEMORY_EXTRACTOR=http"):
        run(path, "--format", "claude", "--actor", "acme/u1", "--extract")
    assert not Thread.objects.exists()


def test_conversations_reads_each_format_without_the_database():
    [chatgpt] = chat_exports.conversations([chatgpt_conversation()], "chatgpt")
    assert chatgpt.thread_ref == "chatgpt-c-111" and len(chatgpt.messages) == 3
    [claude] = chat_exports.conversations([claude_conversation()], "claude")
    assert claude.messages[1] == ("assistant", "Noted: vegetarian.")
    looping = chatgpt_conversation(extra={"current_node": "a"})
    looping["mapping"] = {"a": node("a", "b"), "b": node("b", "a")}
    with pytest.raises(chat_exports.BadExport, match="loops"):
        chat_exports.conversations([looping], "chatgpt")
