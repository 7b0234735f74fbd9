"""Floor B (the whole turn by hand, over psycopg with no Django) and core_read (our own
in-process read: chain rows, precedence, selection, through memory_core.applied).

Both are given the actor's chain, as the peer is: what is timed is the work on its rows.
"""

import json

import psycopg
from django.conf import settings
from django.utils import timezone

from memory_core.applied import chain_entries
from memory_core.rules.block import render
from memory_core.rules.facts import Record
from memory_core.rules.ids import digest_id
from memory_core.rules.precedence import resolve
from memory_core.rules.selection import select

# The chain's live rows by one query; memory_one_live_per_scope_key, a partial unique
# index on (scope_id, key) WHERE retired_at IS NULL, serves it.
CHAIN_ROWS = """
    SELECT m.id, m.uid, s.token, m.key, m.text, m.author, m.pinned, m.created_at, m.expires_at
    FROM memory_core_scope s
    JOIN memory_core_memory m ON m.scope_id = s.id
    WHERE s.token = ANY(%s) AND m.retired_at IS NULL
      AND (m.expires_at IS NULL OR m.expires_at > now())
"""
INSERT_DIGEST = """
    INSERT INTO memory_core_digest
        (uid, actor_id, run_id, thread_ref, query, chain, block, entries, stats,
         pinned_omitted, created_at)
    VALUES (%s, %s, %s, NULL, NULL, %s, %s, %s, %s, %s, now())
    RETURNING id
"""
INSERT_LINES = """
    INSERT INTO memory_core_digestline (digest_id, n, text, memory_id, memory_uid)
    SELECT %s, * FROM unnest(%s::int[], %s::text[], %s::bigint[], %s::text[])
"""
INSERT_ACCESS = """
    INSERT INTO memory_core_accesslog
        (created_at, channel, principal, actor_ref, action, outcome, scope, memory_ids,
         count, detail)
    VALUES (now(), 'api', 'key:benchfloor', %s, 'turn', 200, NULL, %s, %s, %s)
"""


class FloorB:
    def __init__(self, url: str):
        self.conn = psycopg.connect(url)

    def close(self):
        self.conn.close()

    def turn(self, actor_id: int, ref: str, chain: list[str], run_id: str) -> None:
        cur = self.conn.cursor()
        rows = cur.execute(CHAIN_ROWS, [chain]).fetchall()
        pk_by_uid = {row[1]: row[0] for row in rows}
        records = [
            Record(
                id=r[1],
                scope=r[2],
                key=r[3],
                text=r[4],
                author=r[5],
                pinned=r[6],
                created_at=r[7],
                expires_at=r[8],
            )
            for r in rows
        ]
        entries = resolve(records, chain, now=timezone.now())
        selection = select(entries, chain, settings.MEMORY_MAX_LINES)
        rendered = render(selection.kept, chain, selection.stats.partial)
        stats = selection.stats
        stats_json = {
            "offered": stats.offered,
            "omitted": stats.omitted,
            "pinned_omitted": stats.pinned_omitted,
            "recalled": stats.recalled,
            "prompt_chars": rendered.prompt_chars,
            "partial": stats.partial,
        }
        shapes = [
            {
                "id": e.id,
                "key": e.key,
                "text": e.winner.text,
                "scope": e.scope,
                "pinned": e.pinned,
                "author": e.winner.author,
            }
            for e in selection.kept
        ]
        digest = cur.execute(
            INSERT_DIGEST,
            [
                digest_id(),
                actor_id,
                run_id,
                chain,
                rendered.block,
                json.dumps(shapes),
                json.dumps(stats_json),
                stats.pinned_omitted,
            ],
        ).fetchone()[0]
        lines = rendered.lines
        cur.execute(
            INSERT_LINES,
            [
                digest,
                [ln.n for ln in lines],
                [ln.text for ln in lines],
                [pk_by_uid.get(ln.memory_id) for ln in lines],
                [ln.memory_id for ln in lines],
            ],
        )
        ids = sorted({ln.memory_id for ln in lines})
        cur.execute(
            INSERT_ACCESS,
            [
                ref,
                ids,
                len(shapes),
                json.dumps({"replayed": False, "prompt_chars": rendered.prompt_chars}),
            ],
        )
        self.conn.commit()


def core_read(chain: list[str]):
    """Our chain read + precedence + selection, in-process, as compose() does them."""
    return select(chain_entries(chain), chain, settings.MEMORY_MAX_LINES)
