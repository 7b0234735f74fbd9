"""Seeding the bench database with COPY: scopes, actors, memberships, memories (with some
multi-version chains and 5 % pinned policies) and a ledger whose hash chains verify.

One transaction: the secondary indexes of the memory and ledger tables are dropped first and
built again at the end (one sort each instead of a million index insertions), and the
completeness marker is written last, so an interrupted seed leaves no marker and is redone.
COPY is INSERT to the append-only triggers, which allow it, and to the triggers that keep
the live counts and conflicts (models/maintained.py): they run once per COPY statement, set-wise
over its rows, so the seeded database holds them as the services would have left them.
"""

import json
import random
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import numpy
import psycopg
from pgvector.psycopg import register_vector

from memory_console.bench import words
from memory_console.bench.database import MARKER_DDL, marker
from memory_console.bench.sizes import Size
from memory_core.ledger.ledger import GENESIS, event_hash
from memory_core.management.progress import Progress
from memory_core.recall import providers
from memory_core.rules.ids import new_id

SEED_KEY_PRINCIPAL = "key:benchseed0"
ADMIN = "bench-admin"
VERSION_ODDS = ((0.01, 3), (0.06, 2))  # 1 % of memories have 3 versions, 5 % have 2
PINNED_SHARE = 0.05
OVERRIDE_SHARE = 0.10  # an agent note at actor scope answering a wider scope's key

MEMORY_COLUMNS = (
    "id, uid, scope_id, key, text, pinned, tags, author, origin_actor_id, origin_thread, "
    "origin_run, origin_tool_call, origin_user, lineage, created_at, expires_at, retired_at, "
    "retired_reason, retired_note, retired_by, supersedes_id, promoted_from_id"
)
LEDGER_COLUMNS = (
    "stream, seq, kind, scope, principal, actor_ref, payload, created_at, prev_hash, hash"
)
# What the seed's COPYs fill (the organisation's tree first), and the summaries their
# triggers keep.
ANALYZED_AS_IT_GROWS = (
    "memory_core_scope",
    "memory_core_actor",
    "memory_core_membership",
    "memory_core_memory",
    "memory_core_embedding",
    "memory_core_ledgerevent",
    "memory_core_scopecount",
    "memory_core_chainconflict",
    "memory_core_conflictpair",
)
SEQUENCED = (
    "memory_core_scope",
    "memory_core_actor",
    "memory_core_membership",
    "memory_core_memory",
)


def tenant_token(t: int) -> str:
    return f"tenant:t{t:03d}"


def team_token(t: int, k: int) -> str:
    # Names are per tenant (memory_core/rules/names.py): a team is named inside its tenant ...
    return f"team:t{t:03d}/{k}"


def actor_ref(t: int, a: int) -> str:
    # ... and so is an actor, by its qualified ref (the bench's global key sends it so).
    return f"t{t:03d}/u{a:03d}"


class Seeder:
    def __init__(self, conn: psycopg.Connection, size: Size, progress: Progress):
        self.conn, self.size, self.progress = conn, size, progress
        self.rng = random.Random(f"memory-console-bench-{size.name}")
        self.keys = words.all_keys()
        self.now = datetime.now(UTC)
        self.start = self.now - timedelta(days=365)
        self.next_id = {t: self._max_id(t) + 1 for t in SEQUENCED}
        self.memories = 0
        self.events = 0
        self.embed_seconds = 0.0
        self.analyzed_at = 0

    def _max_id(self, table: str) -> int:
        return self.conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0]

    def _take(self, table: str) -> int:
        value = self.next_id[table]
        self.next_id[table] = value + 1
        return value

    def _moment(self) -> datetime:
        return self.start + timedelta(seconds=self.rng.uniform(0, 364 * 86400))

    # --- the tree ---------------------------------------------------------------------

    def tree(self) -> dict:
        """Scopes, actors and memberships; returns what the memory pass needs."""
        size = self.size
        global_id = self.conn.execute(
            "SELECT id FROM memory_core_scope WHERE token = 'global'"
        ).fetchone()[0]
        scopes, actors, memberships, tenants = [], [], [], []
        created = self.start - timedelta(days=1)
        for t in range(1, size.tenants + 1):
            tenant = {"token": tenant_token(t), "id": self._take("memory_core_scope")}
            scopes.append(
                (tenant["id"], tenant["token"], f"Tenant {t}", global_id, tenant["token"])
            )
            tenant["teams"] = []
            for k in range(1, size.teams_per_tenant + 1):
                team = {"token": team_token(t, k), "id": self._take("memory_core_scope")}
                scopes.append(
                    (team["id"], team["token"], f"Team {k}", tenant["id"], tenant["token"])
                )
                tenant["teams"].append(team)
            tenant["actors"] = []
            for a in range(1, size.actors_per_tenant + 1):
                team = tenant["teams"][(a - 1) % size.teams_per_tenant]
                ref = actor_ref(t, a)
                own = {"token": f"actor:{ref}", "id": self._take("memory_core_scope")}
                scopes.append((own["id"], own["token"], "", team["id"], tenant["token"]))
                actor_id = self._take("memory_core_actor")
                actors.append((actor_id, ref, f"User {ref}", own["id"], created))
                memberships.append((self._take("memory_core_membership"), actor_id, team["id"], 0))
                memberships.append(
                    (self._take("memory_core_membership"), actor_id, tenant["id"], 1)
                )
                chain = [own["token"], team["token"], tenant["token"], "global"]
                tenant["actors"].append(
                    {"ref": ref, "id": actor_id, "scope": own, "team": team, "chain": chain}
                )
            tenants.append(tenant)
        cur = self.conn.cursor()
        with cur.copy(
            "COPY memory_core_scope (id, token, label, parent_id, stream, created_at) FROM STDIN"
        ) as copy:
            for row in scopes:
                copy.write_row((*row, created))
        with cur.copy(
            "COPY memory_core_actor (id, ref, display_name, scope_id, created_at) FROM STDIN"
        ) as copy:
            for row in actors:
                copy.write_row(row)
        with cur.copy(
            "COPY memory_core_membership (id, actor_id, scope_id, rank) FROM STDIN"
        ) as copy:
            for row in memberships:
                copy.write_row(row)
        return {"global_id": global_id, "tenants": tenants}

    # --- memories and their ledger events -----------------------------------------------

    def versions(self, scope: dict, key: str, *, agent: dict | None, pinned: bool, out, events):
        """One memory's version chain: retired versions superseded by the next, one live."""
        roll, count = self.rng.random(), 1
        for odds, n in VERSION_ODDS:
            if roll < odds:
                count = n
                break
        moments = sorted(self._moment() for _ in range(count))
        lineage = uuid.uuid4()
        previous = None
        for i, moment in enumerate(moments):
            row_id, uid, text = (
                self._take("memory_core_memory"),
                new_id("mem"),
                words.fact(self.rng),
            )
            live = i == count - 1
            principal = SEED_KEY_PRINCIPAL if agent else f"user:{ADMIN}"
            out.append(
                (
                    row_id,
                    uid,
                    scope["id"],
                    key,
                    text,
                    pinned,
                    "{}",
                    "agent" if agent else "human",
                    agent["id"] if agent else None,
                    f"thr-{agent['ref']}-{row_id % 7}" if agent else None,
                    f"seed-run-{row_id}" if agent else None,
                    "call-1" if agent else None,
                    None if agent else ADMIN,
                    lineage,
                    moment,
                    None,
                    None if live else moments[i + 1],
                    "" if live else "superseded",
                    "",
                    "" if live else principal,
                    previous[0] if previous else None,
                    None,
                )
            )
            events.append(
                (
                    moment,
                    "memory.remembered" if agent else "memory.published",
                    scope["token"],
                    principal,
                    agent["ref"] if agent else None,
                    {
                        "memory": uid,
                        "supersedes": previous[1] if previous else None,
                        "chars": len(text),
                    },
                )
            )
            previous = (row_id, uid)
        return count

    def policies(self, scope: dict, keys: list[str], out, events) -> int:
        rows = 0
        for key in keys:
            pinned = self.rng.random() < PINNED_SHARE
            rows += self.versions(scope, key, agent=None, pinned=pinned, out=out, events=events)
        return rows

    def write(self, memories: list, events: list, stream: str) -> None:
        """COPY one stream's memories, then its events in time order, hash-chained."""
        cur = self.conn.cursor()
        with cur.copy(f"COPY memory_core_memory ({MEMORY_COLUMNS}) FROM STDIN") as copy:
            for row in memories:
                copy.write_row(row)
        self.embed(cur, memories)
        events.sort(key=lambda e: e[0])
        prev_hash = GENESIS
        with cur.copy(f"COPY memory_core_ledgerevent ({LEDGER_COLUMNS}) FROM STDIN") as copy:
            for seq, (moment, kind, scope, principal, actor, payload) in enumerate(events, 1):
                event = SimpleNamespace(
                    stream=stream,
                    seq=seq,
                    kind=kind,
                    scope=scope,
                    principal=principal,
                    actor_ref=actor,
                    payload=payload,
                    created_at=moment,
                    prev_hash=prev_hash,
                )
                digest = event_hash(event)
                copy.write_row(
                    (
                        stream,
                        seq,
                        kind,
                        scope,
                        principal,
                        actor,
                        json.dumps(payload),
                        moment,
                        prev_hash,
                        digest,
                    )
                )
                prev_hash = digest
        self.memories += len(memories)
        self.events += len(events)
        self.analyze_as_it_grows()
        self.progress(len(memories))

    def analyze_as_it_grows(self) -> None:
        """ANALYZE the tables the seed fills each time its memories double (from 1,000).
        The seed is one transaction, so autovacuum never sees its rows, and the summaries'
        triggers went on planning for the tables as the migration left them, empty. With a
        chain estimated at ~150 scopes, the conflict rebuild's check for a key held twice
        in a chain (maintained.sql) became a skip scan of the live index over every scope for
        each key (PostgreSQL 18): 21 s per tenant by 5 % of a 1m seed, hours for the whole.
        ANALYZE in the transaction samples its own rows, and the cached plans are made
        again: 1m is seeded in minutes."""
        if self.memories < max(1000, 2 * self.analyzed_at):
            return
        self.conn.execute(f"ANALYZE {', '.join(ANALYZED_AS_IT_GROWS)}")
        self.analyzed_at = self.memories

    def embed(self, cur, memories: list) -> None:
        """Each version's vector, as the write paths store it (memory_core/recall/embeddings.py):
        with the configured embedder, or pending when there is none. Binary COPY: the
        vectors go as pgvector's binary form, not as text."""
        started = time.perf_counter()
        embedder = providers.current()
        columns = "memory_id, embedder, dims, vector, embedded_at"
        with cur.copy(f"COPY memory_core_embedding ({columns}) FROM STDIN WITH BINARY") as copy:
            copy.set_types(["bigint", "varchar", "int2", "vector", "timestamptz"])
            if embedder is None:
                for row in memories:
                    copy.write_row((row[0], None, None, None, None))
            else:
                texts = [embedder.document(row[3], row[4]) for row in memories]
                vectors = numpy.asarray(embedder.embed(texts), dtype=numpy.float32)
                if not numpy.isfinite(vectors).all():
                    raise RuntimeError(f"{embedder.identity} gave a NaN or infinite vector")
                for row, vector in zip(memories, vectors, strict=True):
                    copy.write_row((row[0], embedder.identity, embedder.dims, vector, self.now))
        self.embed_seconds += time.perf_counter() - started

    def run(self) -> None:
        size = self.size
        tree = self.tree()
        g_keys = self.keys[: size.global_policies]
        tenant_own = self.keys[size.global_policies : size.global_policies + 150]
        team_own = self.keys[350:390]
        actor_own = self.keys[390:]
        out, events = [], []
        human = self.policies({"id": tree["global_id"], "token": "global"}, g_keys, out, events)
        self.write(out, events, "global")

        per_tenant_human = 1.08 * (
            size.tenant_policies + size.teams_per_tenant * size.team_policies
        )
        agent_budget = size.memories - human - per_tenant_human * size.tenants
        actors_left = size.actors
        for tenant in tree["tenants"]:
            out, events = [], []
            created = self.start - timedelta(days=1)
            events.append(
                (created, "scope.created", tenant["token"], "cli", None, {"target": "global"})
            )
            n_over = size.tenant_policies // 4
            t_keys = self.rng.sample(g_keys, min(n_over, len(g_keys)))
            t_keys += tenant_own[: size.tenant_policies - len(t_keys)]
            rows = self.policies(tenant, t_keys, out, events)
            team_keys = {}
            for i, team in enumerate(tenant["teams"]):
                events.append(
                    (
                        created + timedelta(microseconds=i + 1),
                        "scope.created",
                        team["token"],
                        "cli",
                        None,
                        {"target": tenant["token"]},
                    )
                )
                n_over = size.team_policies // 5
                keys = self.rng.sample(t_keys, min(n_over, len(t_keys)))
                keys += team_own[: size.team_policies - len(keys)]
                team_keys[team["token"]] = keys
                rows += self.policies(team, keys, out, events)
            agent_budget += per_tenant_human - rows
            for i, actor in enumerate(tenant["actors"]):
                events.append(
                    (
                        created + timedelta(milliseconds=1, microseconds=i),
                        "actor.registered",
                        actor["scope"]["token"],
                        SEED_KEY_PRINCIPAL,
                        actor["ref"],
                        {"scopes": actor["chain"]},
                    )
                )
                quota = round(agent_budget / actors_left)
                wider = team_keys[actor["team"]["token"]] + t_keys + g_keys
                own = iter(self.rng.sample(actor_own, len(actor_own)))
                used, written = set(), 0
                while written < quota:
                    key = self.rng.choice(wider) if self.rng.random() < OVERRIDE_SHARE else None
                    key = key if key and key not in used else next(own, None)
                    if key is None:
                        break
                    used.add(key)
                    written += self.versions(
                        actor["scope"], key, agent=actor, pinned=False, out=out, events=events
                    )
                agent_budget -= written
                actors_left -= 1
            self.write(out, events, tenant["token"])

    def finish(self) -> None:
        for table in SEQUENCED:
            self.conn.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                f"(SELECT coalesce(max(id), 1) FROM {table}))"
            )


def _secondary_indexes(conn, tables) -> list[tuple[str, str]]:
    return conn.execute(
        """
        SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
        FROM pg_index i
        WHERE i.indrelid = ANY(%s::regclass[]) AND NOT i.indisunique AND NOT i.indisprimary
        """,
        [list(tables)],
    ).fetchall()


def seed(url: str, size: Size, stream=None) -> dict:
    """Seed an empty, migrated bench database; returns the counts written."""
    stream = stream or sys.stderr
    with psycopg.connect(url) as conn:
        register_vector(conn)
        conn.execute("SET maintenance_work_mem = '512MB'")
        indexes = _secondary_indexes(conn, ["memory_core_memory", "memory_core_ledgerevent"])
        for name, _ in indexes:
            conn.execute(f"DROP INDEX {name}")
        with Progress(size.memories, f"Seeding {size.name} memories", stream) as progress:
            seeder = Seeder(conn, size, progress)
            seeder.run()
        # Django's foreign keys are DEFERRABLE INITIALLY DEFERRED: check them now, since an
        # index cannot be built on a table with pending trigger events.
        conn.execute("SET CONSTRAINTS ALL IMMEDIATE")
        stream.write(f"Building {len(indexes)} indexes ...\n")
        stream.flush()
        for _, definition in indexes:
            conn.execute(definition)
        seeder.finish()
        conn.execute(MARKER_DDL)
        conn.execute(
            "INSERT INTO bench_seed (size, memories, ledger_events) VALUES (%s, %s, %s)",
            [marker(size.name), seeder.memories, seeder.events],
        )
    return {
        "memories": seeder.memories,
        "ledger_events": seeder.events,
        "embed_seconds": round(seeder.embed_seconds, 1),
    }


def analyze(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ANALYZE")
