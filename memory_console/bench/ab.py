"""`manage.py bench_ab`: two servers side by side, over HTTP, in the bench's alternating rounds.

A change to the per-turn path is worth what it changes over HTTP, where the bench's ratios
are read, and one bench run's ratios are good to about ±0.1: too coarse to tell a
0.3 ms change from the drift of a shared machine. Here side A and side B are each a
`manage.py serve` (gunicorn, the bench's workers and clients), each on its own database or
both on one, each with its own environment and, if asked, its own checkout of the code.
Every round runs one block of requests per (side, op) in a fresh random order, so the drift
falls on both sides alike, and the same actors are asked the same kinds of requests on both
(run.rest_plans). Two databases must hold the same actors: B a copy of A
(`CREATE DATABASE b TEMPLATE a`) with the change made in it, say.

Each side gets an API key of its own (reach global), written straight into its database as
the bench's is (run.credentials) and revoked when the comparison ends. Nothing else is
written but what the requests themselves write (turns, remembers and their records).
"""

from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import psycopg

from memory_console.loadgen.server import PROJECT, AppServer
from memory_core.accounts.keys import new_secret
from memory_core.rules.ids import api_key_id
from memory_core.rules.scopes import GLOBAL

# How many actors the requests are spread over (the bench's own sample).
ACTORS = 500


@dataclass
class Side:
    name: str
    url: str  # served as the server's role
    owner_url: str  # the key is written as the owner
    env: dict = field(default_factory=dict)
    project: Path = PROJECT


def issue_key(owner_url: str) -> tuple[str, int]:
    """A fresh API key of global reach in that database: its secret and its row's id."""
    secret, prefix, secret_hash = new_secret()
    with psycopg.connect(owner_url, autocommit=True) as conn:
        (key_id,) = conn.execute(
            """
            INSERT INTO memory_core_apikey (uid, name, prefix, secret_hash, reach_id,
                                            created_by, created_at)
            SELECT %s, 'bench_ab', %s, %s, s.id, 'bench', now()
            FROM memory_core_scope s WHERE s.token = %s
            RETURNING id
            """,
            (api_key_id(), prefix, secret_hash, GLOBAL),
        ).fetchone()
    return secret, key_id


def revoke_key(owner_url: str, key_id: int) -> None:
    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute("UPDATE memory_core_apikey SET revoked_at = now() WHERE id = %s", (key_id,))


def sample_refs(url: str, rng, count: int = ACTORS) -> list[str]:
    """Up to `count` actors' refs (stored qualified, as the API takes them), at random; an
    erased actor's writes are refused, so none of those."""
    with psycopg.connect(url) as conn:
        refs = [
            ref
            for (ref,) in conn.execute(
                "SELECT ref FROM memory_core_actor WHERE erased_at IS NULL ORDER BY ref"
            )
        ]
    return rng.sample(refs, min(count, len(refs)))


def missing_refs(url: str, refs: list[str]) -> list[str]:
    """The refs among `refs` that this database has no actor for."""
    with psycopg.connect(url) as conn:
        present = {
            ref
            for (ref,) in conn.execute(
                "SELECT ref FROM memory_core_actor WHERE ref = ANY(%s)", (refs,)
            )
        }
    return sorted(set(refs) - present)


def block_name(side: str, op: str) -> str:
    return f"{side} {op}"


def compare(sides: list[Side], ops, refs, *, requests, warmup, clients, workers, rng, log_dir):
    """Each op measured on each side in alternating rounds (run.interleaved_ops, in random
    order): {side: {op: summary}}, each of `requests` measured requests."""
    from memory_console.bench.run import interleaved_ops, rest_plans

    def pick():
        return rng.choice(refs)

    plans, headers, ports = {}, {}, {}
    with ExitStack() as stack:
        for side in sides:
            secret, key_id = issue_key(side.owner_url)
            stack.callback(revoke_key, side.owner_url, key_id)
            server = stack.enter_context(
                AppServer(
                    side.url,
                    side.owner_url,
                    log_path=Path(log_dir) / f"server-{side.name}.log",
                    workers=workers,
                    access_log=False,
                    env=side.env,
                    project=side.project,
                )
            )
            side_plans = rest_plans(rng, pick)
            for op in ops:
                name = block_name(side.name, op)
                plans[name] = side_plans[op]
                headers[name] = {"Authorization": f"Bearer {secret}"}
                ports[name] = server.port
        args = SimpleNamespace(requests=requests, warmup=warmup, clients=clients)
        measured = interleaved_ops(None, headers, plans, list(plans), args, ports=ports, rng=rng)
    return {side.name: {op: measured[block_name(side.name, op)] for op in ops} for side in sides}


def table(result: dict, ops) -> str:
    """p50 of each op on each side, B less A, and each op as a multiple of the turn's."""
    a, b = result["A"], result["B"]
    lines = [f"{'p50 ms':24s}{'A':>9s}{'B':>9s}{'B - A':>9s}"]
    for op in ops:
        pa, pb = a[op]["p50_ms"], b[op]["p50_ms"]
        lines.append(f"{op:24s}{pa:9.2f}{pb:9.2f}{pb - pa:+9.2f}")
    if "turn" in ops:
        for op in ops:
            if op != "turn":
                ra = a[op]["p50_ms"] / a["turn"]["p50_ms"]
                rb = b[op]["p50_ms"] / b["turn"]["p50_ms"]
                lines.append(f"{op + ' × turn':24s}{ra:9.2f}{rb:9.2f}{rb - ra:+9.2f}")
    return "\n".join(lines)
