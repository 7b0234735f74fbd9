"""Every way a memory comes into being: remember (agent), publish, correct, promote (people).

Each is one audited change (changes.audited): it takes the (scope, key) lock, retires the
live row it replaces (reason `superseded`), inserts the new version in the same lineage, and
leaves its ledger event and its access-log row in the same transaction. Memory text is never
edited in place. The agent's remember, the most frequent, makes that same change in one call
from the server (memory_core_remember, writes.sql).
"""

import uuid
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone
from psycopg.types.json import Jsonb

from memory_core.accounts.permissions import may_write, write_verdict
from memory_core.actors import ancestors, chain_of
from memory_core.applied import CHAIN_RECORDS
from memory_core.changes import Change, audited, current_tags, erased_as_gone
from memory_core.db import prepared
from memory_core.db.locks import advisory_xact_lock, lock_id
from memory_core.errors import Forbidden, Invalid, NotFound
from memory_core.ledger import access_log, ledger
from memory_core.models import Actor, Author, Memory, RetiredReason, Scope
from memory_core.recall import embeddings, providers
from memory_core.rules.facts import Record
from memory_core.rules.ids import memory_id
from memory_core.rules.inputs import host_id_problem, require
from memory_core.rules.scopes import fact_problem, key_problem

MAX_TAGS = 16


@dataclass(frozen=True)
class Written:
    memory: Memory
    created: bool  # False when an idempotent repeat returned the stored record
    # remember: the actor's live memories under other keys that hold (nearly) the same
    # fact, each {"id", "key", "scope"} (step 4 of memory_core_remember, writes.sql).
    similar: list[dict] = field(default_factory=list)
    # remember(chain=...): the live values of the memory's key at the chain's scopes wider
    # than its own (None: not read).
    wider: list[Record] | None = None


# Near-duplicates (remember's `similar`): a live memory at the same actor's scope, under
# another key, whose vector is at least the embedder's `same_fact_similarity` from the new
# version's; or, written with nearly the same words (a pg_trgm similarity of the two texts of
# at least SAME_FACT_TRIGRAM), one whose vector is at least SAME_FACT_NEAR from it, or that
# has no vector to compare (no embedder, or it was down). The words are compared only for
# those (and not for what its vector already found): pg_trgm's similarity costs about
# 15 µs a row, the vectors' distance a fraction of that, and an actor may hold hundreds of
# memories. The query is step 4 of memory_core_remember (writes.sql).
# Calibrated on 30 rewordings under another key of tests/recall/cases.py's facts (each
# paired with its original) and on every pair of two different facts of one person in
# tests/recall/generalise and tests/recall/cases (7,668 pairs), with wordllama: 29 of the
# 30 are found and none of the 7,668 pairs is (the closest different facts score 0.58 in
# meaning and 0.39 in words; the rewordings found by their words alone, 0.51 to 0.59 in
# meaning). docs/agents/api.md, "Memories".
SAME_FACT_TRIGRAM = 0.5
SAME_FACT_NEAR = 0.45
MAX_SIMILAR = 5

# An agent's remember, the whole change in one call from the server: memory_core_remember
# (writes.sql) takes the slot's lock, reads its live row, retires it and inserts the new
# version with its vector, finds the near-duplicates, and writes the ledger event and the
# access-log row, each as a statement of its own. As a dozen statements sent from Python it
# waited for a dozen round trips, which cost more than the statements.
#
# Each argument by its name, cast to its type (psycopg sends ints by their size, a vector as
# real[], strings untyped).
_REMEMBER_ARGUMENTS = (
    ("slot_lock", "bigint"),
    ("stream_lock", "bigint"),
    ("scope", "bigint"),
    ("key", "varchar"),
    ("text", "text"),
    ("uid", "varchar"),
    ("lineage", "uuid"),
    ("actor", "bigint"),
    ("thread", "varchar"),
    ("run", "varchar"),
    ("tool_call", "varchar"),
    ("principal", "varchar"),
    ("at", "timestamptz"),
    ("same_fact_unchanged", "boolean"),
    ("embedder", "varchar"),
    ("dims", "smallint"),
    ("vector", "real[]::vector"),
    ("same_vector", "float8"),
    ("same_near", "float8"),
    ("same_trigram", "float8"),
    ("similar_limit", "integer"),
    ("stream", "varchar"),
    ("scope_token", "varchar"),
    ("actor_ref", "varchar"),
    ("tags", "jsonb"),
    ("channel", "varchar"),
    ("request_id", "varchar"),
    ("genesis", "varchar"),
)
_CALL = (
    "memory_core_remember("
    + ", ".join(f"%({name})s::{kind}" for name, kind in _REMEMBER_ARGUMENTS)
    + ")"
)
# The answer's wider values come back from the same statement: the live values of the key
# at the scopes of the actor's chain wider than its own (`wider`, what the API's overrides
# show: visibility.memory_shape_for_actor). A statement of their own cost the round trip
# that made a remember slower than a turn. Read in the statement's snapshot, taken before
# the function ran; the function writes only at the actor's own scope, which is not among
# them.
REMEMBER = f"""
    SELECT r.*, w.*
    FROM {_CALL} AS r
    LEFT JOIN LATERAL ({CHAIN_RECORDS} AND m.key = %(key)s) AS w ON true
"""


def check_key_and_fact(key: str, text: str) -> None:
    problem = key_problem(key)
    if problem:
        raise Invalid(problem, reason="bad_key")
    problem = fact_problem(text, settings.MEMORY_MAX_FACT_CHARS)
    if problem:
        raise Invalid(problem, reason="bad_fact")


def check_tags(tags) -> list[str]:
    tags = list(dict.fromkeys(tags or ()))
    if len(tags) > MAX_TAGS:
        raise Invalid(f"at most {MAX_TAGS} tags")
    for tag in tags:
        if key_problem(tag) or len(tag) > 40:
            raise Invalid(f"tag {tag!r} must look like a key (lowercase slug, 1-40 characters)")
    return tags


# The stored columns of a memory (its generated tsvectors left deferred: no write reads them).
_SLOT_FIELDS = [f for f in Memory._meta.concrete_fields if not f.generated]
# A slot's live row, locked. FOR UPDATE OF the memory alone: Memory's default ordering joins
# the scope table, and locking the scope row too would serialise every writer of the scope
# and deadlock with a concurrent commit's foreign-key check on that row. A prepared
# statement: every write of a memory takes this path, and the ORM's query cost more to build
# than to run.
LIVE_SLOT = f"""
    SELECT {", ".join(f"m.{f.column}" for f in _SLOT_FIELDS)}
    FROM memory_core_memory m
    WHERE m.scope_id = %s AND m.key = %s AND m.retired_at IS NULL
    ORDER BY m.id
    LIMIT 1
    FOR UPDATE OF m
"""


def lock_slot(scope: Scope, key: str) -> Memory | None:
    """Serialise writers of one (scope, key) and return its live row, locked.

    The advisory lock covers the first write, when there is no row to lock yet.
    """
    advisory_xact_lock("memory", scope.id, key)
    row = prepared.fetch_one(LIVE_SLOT, [scope.id, key])
    if row is None:
        return None
    return Memory.from_db(connection.alias, [f.attname for f in _SLOT_FIELDS], row)


RETIRE = """
    UPDATE memory_core_memory
    SET retired_at = %s, retired_reason = %s, retired_by = %s, retired_note = %s
    WHERE id = %s AND retired_at IS NULL
    RETURNING id
"""
# A new version: every stored column but the id, which comes back.
_INSERTED_FIELDS = [f for f in _SLOT_FIELDS if not f.primary_key]
INSERT_VERSION = f"""
    INSERT INTO memory_core_memory ({", ".join(f.column for f in _INSERTED_FIELDS)})
    VALUES ({", ".join(["%s"] * len(_INSERTED_FIELDS))})
    RETURNING id
"""


def retire(memory: Memory, reason: str, principal, note: str = "") -> None:
    """Retire a live row the caller holds locked (lock_slot)."""
    memory.retired_at = timezone.now()
    memory.retired_reason = reason
    memory.retired_by = principal.name
    memory.retired_note = note
    done = prepared.fetch_one(RETIRE, [memory.retired_at, reason, principal.name, note, memory.pk])
    if done is None:  # as the ORM's save(update_fields=...) would say
        raise DatabaseError(f"memory {memory.uid} is not live: nothing was retired")


def _insert_version(fields: dict) -> Memory:
    """Memory.objects.create(**fields), by a prepared statement (every write makes one)."""
    memory = Memory(**fields)
    memory.created_at = timezone.now()  # auto_now_add, as the ORM's pre_save sets it
    values = [f.get_db_prep_save(getattr(memory, f.attname), connection) for f in _INSERTED_FIELDS]
    row = prepared.fetch_one(INSERT_VERSION, values)
    if row is None:  # an INSERT … RETURNING returns its row or raises
        raise DatabaseError("the new version's insert returned no id")
    memory.pk = row[0]
    memory._state.adding = False
    memory._state.db = connection.alias
    return memory


def supersede(live: Memory | None, principal, **fields) -> Memory:
    """Retire the live row (if any) and insert its successor in the same lineage, with its
    embedding (pending when the embedder fails: the write goes on without it).

    The retire comes first: the partial unique index allows one live row per (scope, key).
    """
    if live is not None:
        retire(live, RetiredReason.SUPERSEDED, principal)
        fields["supersedes"] = live
        fields["lineage"] = live.lineage
    memory = _insert_version(fields)
    embeddings.attach(memory)
    return memory


def remember(
    actor: Actor,
    key: str,
    fact: str,
    *,
    principal,
    run_id: str | None = None,
    tool_call_id: str | None = None,
    thread_id: str | None = None,
    same_fact_unchanged: bool = False,
    chain: Sequence[str] | None = None,
) -> Written:
    """The agent's write: always at the actor's own scope, authored `agent`.

    `chain` (the actor's, its own scope first): the answer's wider values of the key are
    read in the same statement (`wider`, for visibility.memory_shape_for_actor).

    `same_fact_unchanged` (capture's items): when the live memory at that key already says
    exactly this fact, nothing is written and the live row comes back (`created` False).
    A write this (actor, run_id, tool_call_id) already made comes back as stored (`created`
    False), with what is similar to it.

    A remember inside a run is held to the chain that run recorded (DESIGN, "Determinism"),
    so that membership edits mid-run cannot widen what it may write. Every chain of the
    actor, recorded or current, starts with the actor's own scope, and that is the only
    scope an agent writes at (the API has no scope parameter): the rule is decided from the
    actor alone, without reading the run's recorded chain.

    The change is the one changes.audited would make (refusal logged; the state, its ledger
    event and its access-log row together or not at all), made by one call of
    memory_core_remember (REMEMBER): outside a transaction that statement is the whole
    transaction; inside one (capture's), it runs in a savepoint.
    """
    with access_log.refusals_logged(principal, "remember", actor_ref=actor.ref):
        check_key_and_fact(key, fact)
        require(
            host_id_problem(run_id, "run_id"),
            host_id_problem(tool_call_id, "tool_call_id"),
            host_id_problem(thread_id, "thread_id"),
        )
        scope = actor.scope
        verdict = write_verdict(principal, scope, actor=actor)
        if not verdict.allowed:
            raise Forbidden("an agent writes only at its actor's own scope", reason=verdict.reason)
        # The vector before any lock: an embedder over HTTP never holds the slot.
        vector = embeddings.document_vector(key, fact)
        arguments = _remember_arguments(
            actor, key, fact, vector, principal, run_id, tool_call_id, thread_id
        )
        arguments["same_fact_unchanged"] = same_fact_unchanged
        arguments["chain"] = list(chain[1:]) if chain is not None else []
        with erased_as_gone(actor.ref), _one_change():
            rows = prepared.fetch_all(REMEMBER, arguments)
        if not rows:  # the function returns its one row or raises
            raise DatabaseError("memory_core_remember returned no row")
        if rows[0][1]:  # created
            embeddings.after_write(vector is not None)
        return _written(rows, actor, arguments, asked_wider=chain is not None)


def _remember_arguments(
    actor: Actor, key: str, fact: str, vector, principal, run_id, tool_call_id, thread_id
) -> dict:
    """memory_core_remember's arguments (_REMEMBER_ARGUMENTS) but same_fact_unchanged, and
    the new version's public id, lineage and time, chosen here."""
    scope = actor.scope
    embedder = providers.current()
    tags = current_tags()
    uid = memory_id()
    ledger.check_payload({"memory": uid, "supersedes": uid, "chars": len(fact), **tags})
    return {
        "slot_lock": lock_id("memory", scope.id, key),
        "stream_lock": ledger.stream_lock(scope.stream),
        "scope": scope.id,
        "key": key,
        "text": fact,
        "uid": uid,
        "lineage": uuid.uuid4(),
        "actor": actor.pk,
        "thread": thread_id or None,
        "run": run_id or None,
        "tool_call": tool_call_id or None,
        "principal": principal.name,
        "at": timezone.now(),
        "embedder": embedder.identity if embedder else None,
        "dims": embedder.dims if embedder else None,
        "vector": vector,
        "same_vector": embedder.same_fact_similarity if embedder else 2.0,
        "same_near": SAME_FACT_NEAR,
        "same_trigram": SAME_FACT_TRIGRAM,
        "similar_limit": MAX_SIMILAR,
        "stream": scope.stream,
        "scope_token": scope.token,
        "actor_ref": actor.ref,
        "tags": Jsonb(tags),
        "channel": principal.channel,
        "request_id": access_log.REQUEST_ID.get(),
        "genesis": ledger.GENESIS,
    }


def _written(rows, actor: Actor, arguments: dict, *, asked_wider: bool) -> Written:
    """What REMEMBER's rows say: the version (built from what was sent when it is new, read
    back when it is a stored one), its near-duplicates and the key's wider values."""
    pk, created, pinned, tags, lineage, supersedes_id, supersedes_uid, uids, keys = rows[0][:9]
    if created:
        memory = Memory(
            pk=pk,
            uid=arguments["uid"],
            scope=actor.scope,
            key=arguments["key"],
            text=arguments["text"],
            pinned=pinned,
            tags=list(tags),
            author=Author.AGENT,
            origin_actor=actor,
            origin_thread=arguments["thread"],
            origin_run=arguments["run"],
            origin_tool_call=arguments["tool_call"],
            lineage=lineage,
            created_at=arguments["at"],
        )
        memory._state.adding = False
        memory._state.db = connection.alias
        if supersedes_id is not None:
            # Only its id and public id are known; anything else loads on first use.
            memory.supersedes = Memory.from_db(
                connection.alias, ["id", "uid"], [supersedes_id, supersedes_uid]
            )
    else:
        memory = Memory.objects.select_related("scope", "origin_actor", "supersedes").get(pk=pk)
    token = memory.scope.token
    similar = [{"id": u, "key": k, "scope": token} for u, k in zip(uids, keys, strict=True)]
    if not asked_wider or (memory.scope_id, memory.key) != (actor.scope_id, arguments["key"]):
        # Not asked, or a repeat stored under another key: its values are read apart.
        return Written(memory, created=created, similar=similar)
    wider = [Record(*row[9:]) for row in rows if row[9] is not None]
    return Written(memory, created=created, similar=similar, wider=wider)


def _one_change():
    """What memory_core_remember's statement runs in: nothing more outside a transaction
    (the statement is one), a savepoint inside one, so that its failure leaves the outer
    transaction as audited() would."""
    return transaction.atomic() if connection.in_atomic_block else nullcontext()


def log_written(change: Change, written: Written) -> Written:
    """The access-log row of a write: 201 for a new version, 200 for a stored repeat. The
    memories named to the writer as `similar` were read: the detail lists their ids (the
    row's memory ids stay the one written, which is what a write's row is found by).
    memory_core_remember (writes.sql) writes a remember's row by the same rule."""
    memory = written.memory
    detail: dict[str, object] = {"chars": len(memory.text), "created": written.created}
    if written.similar:
        detail["similar"] = [s["id"] for s in written.similar]
    change.log(
        201 if written.created else 200,
        scope=memory.scope.token,
        memory_ids=[memory.uid],
        count=1,
        detail=detail,
    )
    return written


def publish(
    scope: Scope,
    key: str,
    text: str,
    *,
    principal,
    pinned: bool = False,
    tags=(),
    expires_at=None,
) -> Memory:
    """A person's statement at a scope they administer; supersedes the live row there."""
    with audited(principal, "publish", scope=scope.token) as change:
        if not principal.is_human:
            raise Forbidden("only a person publishes; agents remember at their own scope")
        if not may_write(principal, scope):
            raise Forbidden(f"you do not administer {scope.token}")
        check_key_and_fact(key, text)
        tags = check_tags(tags)
        live = lock_slot(scope, key)
        memory = supersede(
            live,
            principal,
            scope=scope,
            key=key,
            text=text,
            author=Author.HUMAN,
            origin_user=principal.username,
            pinned=pinned,
            tags=tags,
            expires_at=expires_at,
        )
        change.event(
            "memory.published",
            scope,
            {"memory": memory.uid, "supersedes": live.uid if live else None, "chars": len(text)},
        )
        return log_written(change, Written(memory, created=True)).memory


def correct(memory: Memory, text: str, *, principal) -> Memory:
    """A person replaces a live memory's text: a new human version superseding it."""
    scope = memory.scope
    with audited(principal, "correct", scope=scope.token) as change:
        if not may_write(principal, scope):
            raise Forbidden(f"you do not administer {scope.token}")
        check_key_and_fact(memory.key, text)
        live = lock_slot(scope, memory.key)
        if live is None or live.pk != memory.pk:
            raise NotFound("that version is no longer live; reload to see the current one")
        if text == live.text:
            # A version identical to the one it supersedes would say a person changed the
            # fact when nobody did, and add a ledger event for it.
            raise Invalid("the correction is the same as the current text; nothing was changed")
        new = supersede(
            live,
            principal,
            scope=scope,
            key=live.key,
            text=text,
            author=Author.HUMAN,
            origin_user=principal.username,
            pinned=live.pinned,
            tags=list(live.tags),
            expires_at=live.expires_at,
        )
        change.event(
            "memory.corrected",
            scope,
            {"memory": new.uid, "supersedes": live.uid, "chars": len(text)},
        )
        return log_written(change, Written(new, created=True)).memory


def promotion_targets(memory: Memory) -> list[Scope]:
    """Scopes wider than the memory's where it could be republished, narrowest first.

    For an actor's memory: the wider scopes of that actor's chain. Otherwise: the scopes
    above it in the tree.
    """
    owner = (
        getattr(memory.scope, "actor", None) if memory.scope.token.startswith("actor:") else None
    )
    if owner is not None:
        tokens = chain_of(owner)[1:]
        by_token = {s.token: s for s in Scope.objects.filter(token__in=tokens)}
        return [by_token[t] for t in tokens if t in by_token]
    return ancestors(memory.scope)[1:]


def promote(
    memory: Memory,
    target: Scope,
    *,
    principal,
    text: str | None = None,
    retire_original: bool = False,
    tags=None,
    pinned: bool | None = None,
) -> Memory:
    """Republish a memory at a wider scope: the only way a fact moves wider, and a human act.
    `tags`: the new version's (the memory's own when not given). `pinned`: the new version's
    pin as the person chose it (the console's forms always say); None keeps the rule for
    callers that do not ask (gardening approvals): pinned when the original or the value it
    replaces there is."""
    with audited(principal, "promote", scope=target.token) as change:
        if not principal.is_human:
            raise Forbidden("promotion is a human act")
        if memory.retired_at is not None:
            raise NotFound("only a live memory can be republished")
        if target.pk not in {s.pk for s in promotion_targets(memory)}:
            raise Invalid(f"{target.token} is not a wider scope of {memory.scope.token}")
        if not may_write(principal, target):
            raise Forbidden(f"you do not administer {target.token}")
        if retire_original and not may_write(principal, memory.scope):
            raise Forbidden(f"you do not administer {memory.scope.token}")
        text = memory.text if text is None else text
        check_key_and_fact(memory.key, text)
        tags = list(memory.tags) if tags is None else check_tags(tags)
        # The source slot first (narrower before wider, the one order every writer of two
        # slots uses), and the memory re-read under it: since the caller loaded it, it may
        # have been corrected, superseded, promoted away or forgotten.
        original = lock_slot(memory.scope, memory.key)
        if original is None or original.pk != memory.pk:
            raise NotFound("only a live memory can be republished")
        live = lock_slot(target, memory.key)
        new = supersede(
            live,
            principal,
            scope=target,
            key=memory.key,
            text=text,
            author=Author.HUMAN,
            origin_user=principal.username,
            pinned=(memory.pinned or bool(live and live.pinned)) if pinned is None else pinned,
            tags=tags,
            promoted_from=memory,
        )
        if retire_original:
            retire(original, RetiredReason.PROMOTED, principal)
        change.event(
            "memory.promoted",
            target,
            {
                "memory": new.uid,
                "promoted_from": memory.uid,
                "supersedes": live.uid if live else None,
                "from_scope": memory.scope.token,
                "retired_original": bool(retire_original),
                "pinned": new.pinned,
                "chars": len(text),
            },
        )
        return log_written(change, Written(new, created=True)).memory
