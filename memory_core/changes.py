"""The one shape of a state change (docs/architecture/decisions.md).

Every service that changes state is written as

    with audited(principal, "pin", scope=memory.scope.token) as change:
        check(...)                  # a refusal (DomainError) is logged, nothing is changed
        live = lock(...)            # one transaction: its locks,
        live.save(...)              # the write,
        change.event("memory.pinned", live.scope, {"memory": live.uid, "pinned": True})
        change.log(200, memory_ids=[live.uid], count=1)

and `audited` does the rest, in this order: a DomainError raised in the body rolls the
transaction back and is then written to the access log as a refused attempt (outside the
transaction, so the refusal row survives the rollback); a body that ends normally (a
`return` included) has its ledger events appended and then its access-log row written,
inside the transaction, so they commit with the change or not at all. A worker killed at
any point leaves the whole change on record (state, ledger event, access-log row) or
none of it (tests/reliability/test_worker_kill.py).

The ledger events wait until the body is done, so a stream's append lock is held only for
the last statements before COMMIT. A body that ends without saying what its access-log
row records (`log`), or that it found nothing to change (`unchanged`), fails and is
rolled back: no change goes unlogged by oversight.

Three paths fit the shape without using it, because they write everything in one
statement: the turn (turns.STORE_TURN writes the digest, its lines and its access-log row
at once), an agent's remember (writes.REMEMBER: one call of a function that makes the whole
change, ledger event and access-log row last, as this shape orders them), and a read, which
changes nothing but its own access-log row.
"""

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import psycopg
from django.db import DatabaseError, transaction

from memory_core.errors import Gone
from memory_core.ledger import access_log, ledger
from memory_core.models.guards import ERASED_SQLSTATE

_AS_GIVEN = object()  # log(): keep the actor_ref / scope given to audited()

# What a change runs inside, written into every ledger event's payload and the access-log
# row's detail, so each memory's own change says what it was part of: `bulk`, the bulk action
# (memory_core/bulk.py); `proposal`, the gardening proposal whose approval runs it
# (memory_core/garden/); `extraction`, the capture that wrote it (memory_core/capture/).
_TAGS: ContextVar[tuple[tuple[str, str], ...]] = ContextVar("change_tags", default=())


@contextmanager
def _tagged(name: str, value: str):
    token = _TAGS.set((*_TAGS.get(), (name, value)))
    try:
        yield
    finally:
        _TAGS.reset(token)


def in_bulk(bulk_id: str):
    """Every change made inside is tagged `bulk: <bulk_id>` (ledger payload, access log)."""
    return _tagged("bulk", bulk_id)


def for_proposal(proposal_uid: str):
    """Every change made inside is tagged `proposal: <uid>` (ledger payload, access log)."""
    return _tagged("proposal", proposal_uid)


def in_extraction(extraction_uid: str):
    """Every change made inside is tagged `extraction: <uid>` (ledger payload, access log):
    each memory capture writes says which extraction wrote it (memory_core/capture/)."""
    return _tagged("extraction", extraction_uid)


def current_tags() -> dict:
    """The tags of the change being made (in_bulk, for_proposal, in_extraction)."""
    return dict(_TAGS.get())


@dataclass
class Change:
    """What one change leaves on record: its ledger events and its access-log row."""

    principal: object
    action: str
    actor_ref: str | None = None
    scope: str | None = None
    events: list[tuple] = field(default_factory=list)
    row: dict | None = None
    found_made: bool = False  # unchanged(): nothing to record

    def event(self, kind: str, scope, payload: dict, actor_ref: str | None = None) -> None:
        """A ledger event for the stream of `scope` (a Scope), appended when the body ends."""
        self.events.append((kind, scope, payload, actor_ref))

    def log(
        self,
        outcome: int,
        *,
        actor_ref=_AS_GIVEN,
        scope=_AS_GIVEN,
        memory_ids=(),
        count: int = 0,
        detail: dict | None = None,
    ) -> None:
        """The access-log row of the change (actor and scope default to audited()'s)."""
        self.row = {
            "outcome": outcome,
            "actor_ref": self.actor_ref if actor_ref is _AS_GIVEN else actor_ref,
            "scope": self.scope if scope is _AS_GIVEN else scope,
            "memory_ids": memory_ids,
            "count": count,
            "detail": detail,
        }

    def unchanged(self) -> None:
        """The body found its change already made (by a concurrent request, which logged
        it): nothing to record. Any event or row asked for so far is dropped."""
        self.events.clear()
        self.row = None
        self.found_made = True

    def _seal(self) -> None:
        if self.found_made:
            return
        if self.row is None:
            raise RuntimeError(f"the change {self.action!r} did not say what it logs")
        tags = current_tags()
        for kind, scope, payload, actor_ref in self.events:
            ledger.append(kind, scope, self.principal, {**payload, **tags}, actor_ref=actor_ref)
        row = dict(self.row)
        if tags:
            row["detail"] = {**(row["detail"] or {}), **tags}
        access_log.record(self.principal, self.action, row.pop("outcome"), **row)


@contextmanager
def audited(principal, action: str, *, actor_ref: str | None = None, scope: str | None = None):
    """Refusal logged, one transaction, the body, its ledger events, its access-log row."""
    change = Change(principal, action, actor_ref, scope)
    with access_log.refusals_logged(principal, action, actor_ref=actor_ref, scope=scope):
        with erased_as_gone(actor_ref), transaction.atomic():
            yield change
            change._seal()


@contextmanager
def erased_as_gone(actor_ref: str | None):
    """The database's refusal of a row naming an erased actor (models/guards.py), which
    only a write already past the services' check meets, answered as the services would."""
    try:
        yield
    except (DatabaseError, psycopg.Error) as error:
        # Django wraps psycopg's error; a prepared statement (prepared.py) raises it bare.
        state = getattr(error, "sqlstate", None) or getattr(error.__cause__, "sqlstate", None)
        if state == ERASED_SQLSTATE:
            raise Gone(f"actor {actor_ref!r} was erased") from error
        raise
