"""The vectors of memory versions (models.Embedding): written with each version, filled in
when pending, rebuilt when the embedder changes.

- attach(): every write path that makes a version (writes.supersede: remember, publish,
  correct, promote and republish, import, the demo) gives it its row in the same
  transaction: embedded, or pending when the embedder failed. The write never fails for
  the embedder's sake.
- fill_pending(): pending rows, embedded in batches. Run by `manage.py embed_pending`, and a
  few at a time after any write whose own embedding succeeded (the embedder is back).
- reembed(): every live version whose vector another embedder made (or none did), rebuilt
  with the configured one. Batched, each batch its own transaction, so an interrupted run
  resumes where it stopped (`manage.py reembed`).

Vectors travel as binary `real[]` parameters (Vector, dumped by numpy in a few
microseconds), cast to `vector` in SQL. psycopg's own dumpers cost about half a millisecond
for each list of 256 floats, as text or as a binary float8[], which a search paid on every
query.
"""

import logging
import struct

import numpy
from django.db import connection, transaction
from django.utils import timezone
from psycopg.adapt import Dumper
from psycopg.pq import Format

from memory_core.db import prepared
from memory_core.recall import providers

log = logging.getLogger("memory_core.recall.embeddings")

FLOAT4_OID, FLOAT4_ARRAY_OID = 700, 1021  # fixed in every PostgreSQL
# One element of the binary array: built once (a dtype from a list is parsed on each use).
_ELEMENT = numpy.dtype([("length", ">i4"), ("value", ">f4")])


class Vector:
    """A vector as a query parameter: sent as a binary `real[]` (cast to `vector` in SQL)."""

    __slots__ = ("values",)

    def __init__(self, values):
        self.values = numpy.asarray(values, dtype=">f4")


class VectorDumper(Dumper):
    """PostgreSQL's binary array format: a header (one dimension, no NULLs, element type,
    length, lower bound 1), then each element as its length (4) and a big-endian float4."""

    format = Format.BINARY
    oid = FLOAT4_ARRAY_OID

    def dump(self, obj: Vector) -> bytes:
        count = len(obj.values)
        elements = numpy.empty(count, dtype=_ELEMENT)
        elements["length"] = 4
        elements["value"] = obj.values
        return struct.pack(">iiiii", 1, 0, FLOAT4_OID, count, 1) + elements.tobytes()


class VectorTextDumper(Dumper):
    """The text form, for cursors that bind on the client (Django's own; tests, EXPLAIN)."""

    oid = FLOAT4_ARRAY_OID

    def dump(self, obj: Vector) -> bytes:
        return ("{" + ",".join(repr(float(x)) for x in obj.values) + "}").encode()


def register_dumper() -> None:
    """Teach psycopg to send a Vector (apps.ready: before any connection copies the map).
    The binary dumper is registered last, so it is the one chosen where either may be."""
    import psycopg

    psycopg.adapters.register_dumper(Vector, VectorTextDumper)
    psycopg.adapters.register_dumper(Vector, VectorDumper)


# Pending rows a successful write fills in after it commits.
PENDING_PER_WRITE = 16

INSERT_EMBEDDING = """
    INSERT INTO memory_core_embedding (memory_id, embedder, dims, vector, embedded_at)
    VALUES (%(memory)s, %(embedder)s, %(dims)s, %(vector)s::real[]::vector, %(at)s)
"""

# Rows to (re)embed, locked so that two fillers never embed the same row, and so that a
# forget of one of them waits for its batch to commit (and then deletes the vector with it).
PENDING = """
    SELECT e.memory_id, m.key, m.text
    FROM memory_core_embedding e JOIN memory_core_memory m ON m.id = e.memory_id
    WHERE e.vector IS NULL
    ORDER BY e.memory_id
    LIMIT %(limit)s
    FOR UPDATE OF e SKIP LOCKED
"""
# reembed walks the live versions in id order, a window at a time (WINDOW), and rebuilds
# the stale ones among them: each batch costs the same whether few rows or all are stale.
WINDOW = """
    SELECT id FROM memory_core_memory
    WHERE id > %(after)s AND retired_at IS NULL
    ORDER BY id
    LIMIT %(limit)s
"""
STALE = """
    SELECT e.memory_id, m.key, m.text
    FROM memory_core_embedding e JOIN memory_core_memory m ON m.id = e.memory_id
    WHERE e.memory_id = ANY(%(ids)s)
      AND (e.embedder IS DISTINCT FROM %(embedder)s OR e.dims IS DISTINCT FROM %(dims)s)
    ORDER BY e.memory_id
    FOR UPDATE OF e SKIP LOCKED
"""
COUNT_STALE = """
    SELECT count(*)
    FROM memory_core_embedding e JOIN memory_core_memory m ON m.id = e.memory_id
    WHERE m.retired_at IS NULL
      AND (e.embedder IS DISTINCT FROM %(embedder)s OR e.dims IS DISTINCT FROM %(dims)s)
"""
COUNT_PENDING = "SELECT count(*) FROM memory_core_embedding WHERE vector IS NULL"
# One row's vector; a batch sends it once per row in one pipeline (executemany). Slicing
# rows out of one flat array parameter copied the whole array for every row: 700 rows/s.
FILL = """
    UPDATE memory_core_embedding
    SET embedder = %s, dims = %s, vector = %s::real[]::vector, embedded_at = now()
    WHERE memory_id = %s
"""
# A version without any row (written by something that bypassed attach()): made pending.
MISSING = """
    INSERT INTO memory_core_embedding (memory_id)
    SELECT m.id FROM memory_core_memory m
    WHERE NOT EXISTS (SELECT 1 FROM memory_core_embedding e WHERE e.memory_id = m.id)
"""


def document_vector(key: str, text: str) -> Vector | None:
    """The vector of a memory about to be written (None: it will be left pending), for a
    write that stores it itself (writes.remember); then after_write(). attach() is both."""
    found = providers.embed_documents([(key, text)])
    return Vector(found[1][0]) if found else None


def after_write(embedded: bool) -> None:
    """After a write stored a version's vector row: a pending one makes this process catch
    up later; an embedded one catches up a little once the write commits."""
    if not embedded:
        _catch_up.wanted = True
    elif _catch_up.wanted:
        transaction.on_commit(_fill_some_pending)


def attach(memory) -> bool:
    """The embedding row of a version just inserted, in the write's transaction. True when
    it was embedded, False when it is left pending."""
    found = providers.embed_documents([(memory.key, memory.text)])
    embedder, vector = (found[0], Vector(found[1][0])) if found else (None, None)
    prepared.execute(
        INSERT_EMBEDDING,
        {
            "memory": memory.pk,
            "embedder": embedder.identity if embedder else None,
            "dims": embedder.dims if embedder else None,
            "vector": vector,
            "at": timezone.now() if found else None,
        },
    )
    after_write(found is not None)
    return found is not None


class _CatchUp:
    """Whether this process may have pending rows to fill after its next embedding write.
    True at start (another process, or an earlier run, may have left some) and after this
    process leaves one; False once a fill finds none left. The steady state costs a write
    nothing."""

    wanted = True


_catch_up = _CatchUp()


def _fill_some_pending() -> None:
    """After a write that embedded: the embedder works, so catch up a little. Never raises
    (the write is committed and acknowledged whatever happens here)."""
    try:
        if fill_pending(limit=PENDING_PER_WRITE, batch=PENDING_PER_WRITE) < PENDING_PER_WRITE:
            _catch_up.wanted = False
    except Exception as error:
        log.warning("could not fill pending embeddings: %s", error)


def _store(rows) -> int | None:
    """Embed (memory id, key, text) rows and store their vectors: how many, or None when the
    embedder failed (nothing stored)."""
    found = providers.embed_documents([(key, text) for _, key, text in rows])
    if found is None:
        return None
    embedder, vectors = found
    # Server-side binding: each vector goes as a binary array. Django's own cursor binds on
    # the client, writing 256 floats out as text for every row (~0.6 ms a row).
    with prepared.cursor() as cursor:
        cursor.executemany(
            FILL,
            [
                (embedder.identity, embedder.dims, Vector(vector), row[0])
                for row, vector in zip(rows, vectors, strict=True)
            ],
        )
    return len(rows)


def fill_pending(*, limit: int | None = None, batch: int = 256, progress=None) -> int:
    """Embed pending rows (all of them, or at most `limit`); the number embedded. Stops early
    when the embedder fails (the rows stay pending)."""
    done = 0
    while limit is None or done < limit:
        size = batch if limit is None else min(batch, limit - done)
        with transaction.atomic():  # the rows stay locked until their vectors are stored
            rows = prepared.fetch_all(PENDING, {"limit": size})
            stored = _store(rows) if rows else 0
        if stored is None:
            break
        done += stored
        if progress is not None and stored:
            progress(stored)
        if stored < size:
            break
    return done


def pending_count() -> int:
    return prepared.fetch_one(COUNT_PENDING, {})[0]


def stale_count() -> int:
    embedder = providers.current()
    if embedder is None:
        return 0
    params = {"embedder": embedder.identity, "dims": embedder.dims}
    (count,) = prepared.fetch_one(COUNT_STALE, params)
    return count


def reembed(*, batch: int = 512, progress=None, limit: int | None = None) -> int:
    """Rebuild every live version whose vector the configured embedder did not make (or the
    first `limit` of them: the bench). Raises EmbedderError when the embedder fails (what is
    done so far stays done)."""
    embedder = providers.current()
    if embedder is None:
        return 0
    done, after = 0, 0
    while limit is None or done < limit:
        size = batch if limit is None else min(batch, limit - done)
        ids = [row[0] for row in prepared.fetch_all(WINDOW, {"after": after, "limit": size})]
        if not ids:
            break
        with transaction.atomic():
            params = {"ids": ids, "embedder": embedder.identity, "dims": embedder.dims}
            rows = prepared.fetch_all(STALE, params)
            stored = _store(rows) if rows else 0
        if stored is None:
            raise providers.EmbedderError(f"{embedder.identity} failed; run reembed again")
        done += stored
        after = ids[-1]
        if progress is not None and stored:
            progress(stored)
    return done


def add_missing() -> int:
    """Give any version that has no embedding row a pending one; how many were added."""
    with connection.cursor() as cursor:
        cursor.execute(MISSING)
        return cursor.rowcount
