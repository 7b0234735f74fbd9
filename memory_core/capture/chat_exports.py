"""Reading chat exports: ChatGPT's and Claude's `conversations.json`, alone or inside the
export's `.zip`, as conversations of (role, text) messages in order. Nothing here writes.

ChatGPT: a list of conversations, each a `mapping` of nodes (`parent`, `children`,
`message`) and a `current_node`: the conversation as the person last saw it is the path from
`current_node` back to the root (edited and regenerated branches are left out). A node's
message counts when `author.role` is `user` or `assistant` and `content.parts` holds text
(parts that are not text, such as images, are skipped; a message with no text left is too).
The thread is `chatgpt-<conversation id>`.

Claude: a list of conversations, each with its `uuid` and `chat_messages` in order, each
message with `sender` (`human` or `assistant`) and `text` (or, when empty, the text blocks
of its `content`). The thread is `claude-<uuid>`.

Every record is checked before anything is imported: the first one that cannot be read
stops the import with an error that names it (its position, and its id when it has one).
"""

import json
import unicodedata
import zipfile
from dataclasses import dataclass
from pathlib import PurePosixPath

from memory_core.rules.inputs import host_id_problem, text_problem
from memory_core.transcripts import MAX_MESSAGE_CHARS

FORMATS = ("chatgpt", "claude")
# A conversations.json inside a zip is read whole; past this it is refused, not unpacked.
MAX_JSON_BYTES = 2 * 1024**3
ROLES = {"chatgpt": {"user": "user", "assistant": "assistant"}}
CLAUDE_SENDERS = {"human": "user", "assistant": "assistant"}


def bad_text_char(ch: str) -> bool:
    category = unicodedata.category(ch)
    return category == "Cs" or (category == "Cc" and ch not in "\n\r\t")


class BadExport(ValueError):
    """The file cannot be imported; the message names the first bad record."""


@dataclass(frozen=True)
class Conversation:
    thread_ref: str
    messages: tuple[tuple[str, str], ...]  # (role, text), in order


def load(path: str) -> object:
    """The parsed conversations.json at `path`, or inside the zip at `path`."""
    try:
        if zipfile.is_zipfile(path):
            return json.loads(_from_zip(path))
        with open(path, "rb") as handle:
            return json.load(handle)
    except BadExport:
        raise
    except OSError as error:
        raise BadExport(f"cannot read {path}: {error.strerror or error}") from error
    except (ValueError, RecursionError) as error:
        raise BadExport(f"{path} is not JSON: {error}") from None


def _from_zip(path: str) -> bytes:
    with zipfile.ZipFile(path) as archive:
        names = [n for n in archive.namelist() if PurePosixPath(n).name == "conversations.json"]
        if not names:
            raise BadExport(f"{path}: the zip holds no conversations.json")
        name = min(names, key=lambda n: (n.count("/"), n))  # the one nearest the top
        if archive.getinfo(name).file_size > MAX_JSON_BYTES:
            raise BadExport(f"{path}: {name} is larger than 2 GiB")
        with archive.open(name) as member:
            return member.read()


def conversations(data: object, fmt: str) -> list[Conversation]:
    """Every conversation of the export, checked; BadExport names the first bad record."""
    if fmt not in FORMATS:
        raise BadExport(f"unknown format {fmt!r} (one of {', '.join(FORMATS)})")
    if not isinstance(data, list):
        raise BadExport("the file is not a list of conversations")
    read = _chatgpt if fmt == "chatgpt" else _claude
    found = []
    for n, record in enumerate(data, start=1):
        try:
            found.append(read(record))
        except BadExport as error:
            raise BadExport(f"conversation {n}{_named(record)}: {error}") from None
    return found


def _named(record: object) -> str:
    if isinstance(record, dict):
        for field in ("conversation_id", "id", "uuid"):
            value = record.get(field)
            if isinstance(value, str) and value:
                return f" ({field} {value[:80]!r})"
    return ""


def _thread(prefix: str, ident: object, field: str) -> str:
    if not isinstance(ident, str) or not ident:
        raise BadExport(f"{field} is missing or not a string")
    ref = f"{prefix}-{ident}"
    problem = host_id_problem(ref, "thread id")
    if problem:
        raise BadExport(f"{field}: {problem}")
    return ref


def _message(role: str, text: str) -> tuple[str, str]:
    """A message as a transcript may hold it: what text cannot store (NUL, lone surrogates,
    control characters other than line breaks and tabs) left out, and clipped to
    MAX_MESSAGE_CHARS (a pasted document can be longer): a conversation's text is not
    malformed for holding them."""
    if text_problem(text, "text", MAX_MESSAGE_CHARS):
        text = "".join(ch for ch in text if not bad_text_char(ch))[:MAX_MESSAGE_CHARS]
    return role, text


def _chatgpt(record: object) -> Conversation:
    if not isinstance(record, dict):
        raise BadExport("not an object")
    ident = record.get("conversation_id") or record.get("id")
    ref = _thread("chatgpt", ident, "conversation_id")
    mapping = record.get("mapping")
    if not isinstance(mapping, dict):
        raise BadExport("mapping is missing or not an object")
    node_id = record.get("current_node")
    if node_id is None:
        return Conversation(ref, ())
    path = []
    seen = set()
    while node_id is not None:
        if not isinstance(node_id, str) or node_id not in mapping or node_id in seen:
            raise BadExport(f"node {str(node_id)[:80]!r} is not in the mapping (or loops)")
        seen.add(node_id)
        node = mapping[node_id]
        if not isinstance(node, dict):
            raise BadExport(f"node {node_id[:80]!r} is not an object")
        path.append((node_id, node))
        node_id = node.get("parent")
    messages = []
    for node_id, node in reversed(path):
        message = node.get("message")
        if message is None:
            continue
        where = f"node {node_id[:80]!r}"
        if not isinstance(message, dict):
            raise BadExport(f"{where}: message is not an object")
        author = message.get("author")
        role = author.get("role") if isinstance(author, dict) else None
        if not isinstance(role, str):
            raise BadExport(f"{where}: author.role is missing")
        if role not in ROLES["chatgpt"]:
            continue  # system and tool messages are not the conversation
        content = message.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        if parts is None:
            continue  # no text parts (a code run, a browsing result)
        if not isinstance(parts, list):
            raise BadExport(f"{where}: content.parts is not a list")
        text = "\n".join(p for p in parts if isinstance(p, str)).strip()
        if text:
            messages.append(_message(ROLES["chatgpt"][role], text))
    return Conversation(ref, tuple(messages))


def _claude(record: object) -> Conversation:
    if not isinstance(record, dict):
        raise BadExport("not an object")
    ref = _thread("claude", record.get("uuid"), "uuid")
    chat = record.get("chat_messages")
    if not isinstance(chat, list):
        raise BadExport("chat_messages is missing or not a list")
    messages = []
    for n, message in enumerate(chat, start=1):
        where = f"message {n}"
        if not isinstance(message, dict):
            raise BadExport(f"{where}: not an object")
        sender = message.get("sender")
        if sender not in CLAUDE_SENDERS:
            raise BadExport(f"{where}: sender must be human or assistant")
        text = message.get("text")
        if text is None or text == "":
            blocks = message.get("content")
            if isinstance(blocks, list):
                text = "\n".join(_text_blocks(blocks))
        if not isinstance(text, str):
            raise BadExport(f"{where}: text is not a string")
        text = text.strip()
        if text:
            messages.append(_message(CLAUDE_SENDERS[sender], text))
    return Conversation(ref, tuple(messages))


def _text_blocks(blocks: list) -> list[str]:
    return [
        b["text"]
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
