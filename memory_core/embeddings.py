"""The vectors of memory versions (models.Embedding): written with each version, filled in
when pending, rebuilt when the embedder changes.

- attach(): every write path that makes a version (writes._supersede: remember, publish,
  correct, promote and republish, import, the demo) gives it its row in the same
  transaction: embedded, or pending when the embedder failed. The write never fails for
  the embedder's sake.
- fill_pending(): pending rows, embedded in batches. Run by `manage.py embed_pending`, and a
  few at a time after any write whose own embedding succeeded (the embedder is back).
- reembed(): every live version whose vector another embedder made (or none did), rebuilt
  with the configured one. Batched, each batch its own transaction, so an interrupted run
  resumes where it stopped (`manage.py reembed`).

Vectors travel as binary float8 arrays, cast to `vector` in SQL: formatting 256 floats as
pgvector's text form cost half a millisecond a vector in Python.
"""

import logging

from django.db import connection, transaction
from django.utils import timezone

from memory_core import embedders, prepared

log = logging.getLogger("memory_core.embeddings")

# Pending rows a successful write fills in after it commits.
PENDING_PER_WRITE = 16

INSERT_EMBEDDING = """
    INSERT INTO memory_core_embedding (memory_id, embedder, dims, vector, embedded_at)
    VALUES (%(memory)s, %(embedder)s, %(dims)s, %(vector)s::float8[]::vector, %(at)s)
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
STALE = """
    SELECT e.memory_id, m.key, m.text
    FROM memory_core_embedding e JOIN memory_core_memory m ON m.id = e.memory_id
    WHERE m.retired_at IS NULL AND e.memory_id > %(after)s
      AND (e.embedder IS DISTINCT FROM %(embedder)s OR e.dims IS DISTINCT FROM %(dims)s)
    ORDER BY e.memory_id
    LIMIT %(limit)s
    FOR UPDATE OF e SKIP LOCKED
"""
COUNT_STALE = """
    SELECT count(*)
    FROM memory_core_embedding e JOIN memory_core_memory m ON m.id = e.memory_id
    WHERE m.retired_at IS NULL
      AND (e.embedder IS DISTINCT FROM %(embedder)s OR e.dims IS DISTINCT FROM %(dims)s)
"""
COUNT_PENDING = "SELECT count(*) FROM memory_core_embedding WHERE vector IS NULL"
# The batch's vectors as one flat array, each row taking its slice of `dims` values.
FILL = """
    UPDATE memory_core_embedding e
    SET embedder = %(embedder)s, dims = %(dims)s, embedded_at = now(),
        vector = (%(flat)s::float8[])[(v.n - 1) * %(dims)s + 1 : v.n * %(dims)s]::vector
    FROM unnest(%(ids)s::bigint[]) WITH ORDINALITY AS v(id, n)
    WHERE e.memory_id = v.id
"""
# A version without any row (written by something that bypassed attach()): made pending.
MISSING = """
    INSERT INTO memory_core_embedding (memory_id)
    SELECT m.id FROM memory_core_memory m
    WHERE NOT EXISTS (SELECT 1 FROM memory_core_embedding e WHERE e.memory_id = m.id)
"""


def attach(memory) -> bool:
    """The embedding row of a version just inserted, in the write's transaction. True when
    it was embedded, False when it is left pending."""
    found = embedders.embed_documents([(memory.key, memory.text)])
    embedder, vector = (found[0], found[1][0]) if found else (None, None)
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
    if not found:
        _catch_up.wanted = True
    elif _catch_up.wanted:
        transaction.on_commit(_fill_some_pending)
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


def _embed_rows(select_sql: str, params: dict) -> tuple[int, int | None, bool]:
    """One batch in one transaction: lock rows, embed them, store the vectors. Returns
    (rows embedded, the last memory id seen or None when there was none, embedder ok)."""
    with transaction.atomic():
        rows = prepared.fetch_all(select_sql, params)
        if not rows:
            return 0, None, True
        found = embedders.embed_documents([(key, text) for _, key, text in rows])
        if found is None:
            return 0, rows[-1][0], False
        embedder, vectors = found
        with connection.cursor() as cursor:
            cursor.execute(
                FILL,
                {
                    "embedder": embedder.identity,
                    "dims": embedder.dims,
                    "ids": [row[0] for row in rows],
                    "flat": [x for vector in vectors for x in vector],
                },
            )
        return len(rows), rows[-1][0], True


def fill_pending(*, limit: int | None = None, batch: int = 256, progress=None) -> int:
    """Embed pending rows (all of them, or at most `limit`); the number embedded. Stops early
    when the embedder fails (the rows stay pending)."""
    done = 0
    while limit is None or done < limit:
        size = batch if limit is None else min(batch, limit - done)
        count, last, ok = _embed_rows(PENDING, {"limit": size})
        done += count
        if progress is not None and count:
            progress(count)
        if last is None or not ok or count < size:
            break
    return done


def pending_count() -> int:
    return prepared.fetch_one(COUNT_PENDING, {})[0]


def stale_count() -> int:
    embedder = embedders.current()
    if embedder is None:
        return 0
    params = {"embedder": embedder.identity, "dims": embedder.dims}
    (count,) = prepared.fetch_one(COUNT_STALE, params)
    return count


def reembed(*, batch: int = 512, progress=None, limit: int | None = None) -> int:
    """Rebuild every live version whose vector the configured embedder did not make (or the
    first `limit` of them: the bench). Raises EmbedderError when the embedder fails (what is
    done so far stays done)."""
    embedder = embedders.current()
    if embedder is None:
        return 0
    done, after = 0, 0
    while limit is None or done < limit:
        size = batch if limit is None else min(batch, limit - done)
        params = {"embedder": embedder.identity, "dims": embedder.dims, "after": after}
        count, last, ok = _embed_rows(STALE, {**params, "limit": size})
        if not ok:
            raise embedders.EmbedderError(f"{embedder.identity} failed; run reembed again")
        if last is None:
            return done
        done += count
        after = last
        if progress is not None and count:
            progress(count)
    return done


def add_missing() -> int:
    """Give any version that has no embedding row a pending one; how many were added."""
    with connection.cursor() as cursor:
        cursor.execute(MISSING)
        return cursor.rowcount
