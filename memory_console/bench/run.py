"""The measuring process: `python -m memory_console.bench.run --size S --out F`.

Started by `manage.py bench` with DATABASE_URL (the server's role) and DATABASE_OWNER_URL
pointing at the bench database, so Django's databases here *are* the bench database: it
migrates and seeds it as the owner (when the marker says it is not complete), serves the app
from it, drives the HTTP clients, runs floor B, core_read and the peer alternating, times the
ledger check, runs the recall evaluation in a scratch database of its own (bench/recall.py;
never in this one), and writes the report.
"""

import argparse
import os
import random
import secrets
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import quote


def parse(argv):
    from memory_console.bench.sizes import SIZES

    parser = argparse.ArgumentParser(prog="python -m memory_console.bench.run")
    parser.add_argument("--size", choices=sorted(SIZES), required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--requests", type=int, default=None)
    parser.add_argument("--warmup", type=int, default=None)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-peer", action="store_true")
    # The recall evaluation's scratch database (bench/recall.py); --no-recall skips it.
    parser.add_argument("--recall-database", default=None)
    parser.add_argument("--no-recall", action="store_true")
    return parser.parse_args(argv)


def credentials():
    """A fresh API key (reach global) and a superuser with a fresh password, made directly
    in the bench database: the bench is its own operator."""
    from django.contrib.auth import get_user_model

    from memory_core.accounts.keys import new_secret
    from memory_core.actors import global_scope
    from memory_core.models import ApiKey

    secret, prefix, secret_hash = new_secret()
    ApiKey.objects.create(
        name="bench",
        prefix=prefix,
        secret_hash=secret_hash,
        reach=global_scope(),
        created_by="bench",
    )
    User = get_user_model()
    password = secrets.token_urlsafe(18)
    user = User.objects.filter(username="bench").first()
    if user is None:
        User.objects.create_superuser("bench", "", password)
    else:
        user.set_password(password)
        user.is_superuser = user.is_staff = user.is_active = True
        user.save()
    return secret, password


def sample_actors(rng, count: int) -> list[dict]:
    from memory_core.actors import chain_of
    from memory_core.models import Actor

    ids = list(Actor.objects.filter(ref__startswith="t").values_list("id", flat=True))
    chosen = rng.sample(ids, min(count, len(ids)))
    actors = Actor.objects.filter(id__in=chosen).prefetch_related("memberships__scope")
    return [{"id": a.id, "ref": a.ref, "chain": list(chain_of(a))} for a in actors]


# Clients per worker for the throughput figure: enough that each of a worker's threads
# (serve's two) always has the next request waiting (with one client per thread, a thread
# idles while its client reads the answer and sends the next request).
SATURATING_CLIENTS_PER_WORKER = 4


def turn_request(rng, actors) -> tuple:
    """A first turn of a new run for a random sampled actor."""
    return _first_turn(rng.choice(actors)["ref"])


def _first_turn(ref: str) -> tuple:
    return ("POST", "/api/v1/turns", {"actor": ref, "run_id": f"bench-{uuid.uuid4().hex}"}, (200,))


# The API's REST ops the bench measures over HTTP (bench_ab compares two servers on them).
REST_OPS = ("turn", "turn_query", "search", "remember", "readback")


def rest_plans(rng, pick) -> dict:
    """Each REST op's next request, (method, path, body, expected statuses), for the actor
    whose ref `pick()` returns: a first turn of a new run, the same with a two-word query
    (one in five with a typo), a remember of one of 20 keys, the read-back, a search."""
    from memory_console.bench import words

    return {
        "turn": lambda: _first_turn(pick()),
        "turn_query": lambda: (
            "POST",
            "/api/v1/turns",
            {
                "actor": pick(),
                "run_id": f"bench-{uuid.uuid4().hex}",
                "query": words.query(rng, typo=rng.random() < 0.2),
            },
            (200,),
        ),
        "remember": lambda: (
            "POST",
            "/api/v1/memories",
            {"actor": pick(), "key": f"bench-note-{rng.randrange(20)}", "fact": words.fact(rng)},
            (200, 201),
        ),
        "readback": lambda: ("GET", f"/api/v1/memories?actor={pick()}&limit=50", None, (200,)),
        "search": lambda: (
            "GET",
            f"/api/v1/memories/search?actor={pick()}"
            f"&q={quote(words.query(rng, typo=rng.random() < 0.2))}",
            None,
            (200,),
        ),
    }


def mcp_request(ref: str, tool: str, arguments: dict) -> tuple:
    from memory_console.loadgen import mcp

    return ("POST", f"/mcp/actors/{ref}/", mcp.tool_call(tool, arguments), (200,))


def mcp_headers(port: int, secret: str, sample: tuple) -> dict:
    """The op's headers, once one call of it (`sample`) has succeeded: an MCP tool error is
    an HTTP 200, and a benchmark of refusals would measure nothing."""
    from memory_console.loadgen import client, mcp

    method, path, body, _ = sample
    tool = body["params"]["name"]
    headers = mcp.headers(secret, tool)
    problem = mcp.tool_error(client.request(port, method, path, body=body, headers=headers))
    if problem:
        raise RuntimeError(f"{tool} over MCP fails: {problem}")
    return headers


def http_ops(port, secret, password, actors, console, args, rng) -> dict:
    """The API's ops, then every console page (console_pages.py); `console` is
    (the tenant administrator's password, the pages' fixtures by role)."""
    from memory_console.bench import console_pages, load, words
    from memory_console.bench.report import summary

    api = {"Authorization": f"Bearer {secret}"}
    total = args.warmup + args.requests

    def pick():
        return rng.choice(actors)["ref"]

    plans = {
        **rest_plans(rng, pick),
        # The same turn and remember as MCP tool calls (2026-07-28, the actor in the URL).
        "mcp_context": lambda: mcp_request(
            pick(), "memory_context", {"run_id": f"bench-{uuid.uuid4().hex}"}
        ),
        "mcp_remember": lambda: mcp_request(
            pick(),
            "remember",
            {"key": f"bench-note-{rng.randrange(20)}", "fact": words.fact(rng)},
        ),
    }
    headers = {name: api for name in plans}
    for name in MCP_TWINS:
        headers[name] = mcp_headers(port, secret, plans[name]())
    measured = {}
    for name, plan in plans.items():
        if name in ROUND_OPS:
            continue  # measured in the alternating rounds, below
        requests = [plan() for _ in range(total)]
        latencies, wall = load.drive(
            port, api, lambda i, r=requests: r[i], args.clients, args.warmup, args.requests
        )
        measured[name] = summary(latencies, wall)
        _say(f"  {name}: p50 {measured[name]['p50_ms']:.2f} ms, {measured[name]['rps']:.0f} rps")
    _say(f"  {', '.join(ROUND_OPS)}: {min(ROUNDS, args.requests)} alternating rounds ...")
    rounds = interleaved_ops(port, headers, plans, ROUND_OPS, args)
    for name, op in rounds.items():
        _say(f"  {name}: p50 {op['p50_ms']:.2f} ms, {op['rps']:.0f} rps")
    measured.update(rounds)
    ops = {name: measured[name] for name in plans}
    tenant_password, fixtures = console
    sessions = console_pages.sessions(port, password, tenant_password)
    ops.update(console_pages.measure(port, sessions, fixtures, args, rng))
    return ops


# Each MCP op and the REST op it wraps: their difference is what the MCP figures are read for.
MCP_TWINS = {"mcp_context": "turn", "mcp_remember": "remember"}
# The ops measured in alternating rounds, in the order a round runs them: the plain turn and
# the three recall ops read as multiples of it (report.RECALL_TARGETS), each MCP op right
# after its REST twin. On a shared machine the load drifts between one op's block of
# requests and the next by more than the differences these figures are read for, so every
# round takes a block of each op and the drift falls on all of them alike.
ROUND_OPS = ("turn", "mcp_context", "turn_query", "search", "remember", "mcp_remember")
ROUNDS = 10


def interleaved_ops(port, headers: dict, plans: dict, names, args, *, ports=None, rng=None):
    """The ops `names` measured in alternating rounds: args.requests split as evenly as
    they go into ROUNDS rounds (fewer when there are fewer requests), each round a block of
    each op in turn; an op's warm-up runs before its block of the first round only.
    headers[name] and plans[name]() are an op's headers and its next request; the summaries
    come back by name, each of args.requests measured requests. `ports[name]`, when given,
    is the op's server (bench_ab's two); `rng`, when given, shuffles each round's order."""
    from memory_console.bench import load
    from memory_console.bench.report import summary

    latencies: dict = {name: [] for name in names}
    walls = dict.fromkeys(names, 0.0)
    share, extra = divmod(args.requests, ROUNDS)
    counts = [share + (1 if n < extra else 0) for n in range(ROUNDS)]
    order = list(names)
    for n, count in enumerate(c for c in counts if c):
        warmup = args.warmup if n == 0 else 0
        if rng is not None:
            rng.shuffle(order)
        for name in order:
            requests = [plans[name]() for _ in range(warmup + count)]
            measured, wall = load.drive(
                ports[name] if ports else port,
                headers[name],
                lambda i, r=requests: r[i],
                args.clients,
                warmup,
                count,
            )
            latencies[name] += measured
            walls[name] += wall
    return {name: summary(latencies[name], walls[name]) for name in names}


def saturated_turns(
    port, secret, actors, args, rng, keep_alive: bool = True, *, processes=None
) -> dict:
    """Turns per second the workers can serve: the same turns, driven by more clients than
    the workers have threads, so that no thread waits for a request. The latency figures
    of `turn` are taken with one client per worker; these include queueing and are not.

    Each client keeps its connection alive (`keep_alive`), as an agent's HTTP client does;
    with a fresh connection per request, accepting and closing it is part of each turn.

    `processes()`, when given, names the processes serving the load (cpu.groups); the
    report's `cpu` then says what a measured turn cost each of them (bench/cpu.py)."""
    from memory_console.bench import cpu, load
    from memory_console.bench.report import summary

    clients = SATURATING_CLIENTS_PER_WORKER * args.workers
    total = args.warmup + args.requests
    requests = [turn_request(rng, actors) for _ in range(total)]
    api = {"Authorization": f"Bearer {secret}"}
    meter: list[cpu.CpuSplit] = []
    latencies, wall = load.drive(
        port,
        api,
        lambda i: requests[i],
        clients,
        args.warmup,
        args.requests,
        keep_alive=keep_alive,
        # After the warm-up: by then every pooled connection's backend exists.
        measured=(lambda: meter.append(cpu.CpuSplit(processes()))) if processes else None,
    )
    result = {
        "op": "turn",
        "clients": clients,
        "workers": args.workers,
        "connections": "kept alive" if keep_alive else "fresh",
    }
    result.update(summary(latencies, wall))
    if meter:
        result["cpu"] = meter[0].per_turn(len(latencies))
    _say(f"  turn, {clients} clients, {result['connections']} connections: {result['rps']:.0f} rps")
    return result


def in_process_ops(url, owner_url, actors, args, rng, peer_on: bool) -> dict:
    """core_read, floor_b, peer_read and peer_put, alternating request by request."""
    from memory_console.bench import floor, peer, words
    from memory_console.bench.report import summary

    floor_b = floor.FloorB(url)
    timings = {"core_read": [], "floor_b": [], "peer_read": [], "peer_put": []}
    store_cm = peer.open_store(owner_url) if peer_on else None
    store = store_cm.__enter__() if store_cm else None
    try:
        for i in range(args.warmup + args.requests):
            actor = rng.choice(actors)
            chain = actor["chain"]
            steps = [
                ("core_read", lambda c=chain: floor.core_read(c)),
                (
                    "floor_b",
                    lambda a=actor: floor_b.turn(
                        a["id"], a["ref"], a["chain"], f"floor-{uuid.uuid4().hex}"
                    ),
                ),
            ]
            if store is not None:
                fact = words.fact(rng)
                key = f"bench-note-{rng.randrange(20)}"
                steps += [
                    ("peer_read", lambda c=chain: peer.chain_read(store, c)),
                    ("peer_put", lambda c=chain, k=key, f=fact: peer.put(store, c[0], k, f)),
                ]
            for name, step in steps:
                started = time.perf_counter()
                step()
                elapsed = time.perf_counter() - started
                if i >= args.warmup:
                    timings[name].append(elapsed)
    finally:
        floor_b.close()
        if store_cm is not None:
            store_cm.__exit__(None, None, None)
    return {name: summary(values) for name, values in timings.items() if values}


# Live versions whose vectors the reembed measurement rebuilds (fewer at small sizes).
REEMBED_ROWS = 20_000
MARK_STALE = """
    UPDATE memory_core_embedding SET embedder = 'bench:stale'
    WHERE memory_id IN (
        SELECT m.id FROM memory_core_memory m
        WHERE m.retired_at IS NULL ORDER BY m.id LIMIT %s
    )
"""


def embedding_timing(rng, args) -> dict:
    """`embed`: one memory's text through the configured embedder, as a write embeds it;
    `reembed`: rows per second of `manage.py reembed`'s path (select, embed, store), over
    the first REEMBED_ROWS live versions after marking their vectors another embedder's."""
    from django.db import connection

    from memory_console.bench import words
    from memory_console.bench.report import summary
    from memory_core.recall import embeddings, providers

    if providers.current() is None:
        return {}
    timings = []
    for i in range(args.warmup + args.requests):
        pair = (f"bench-note-{rng.randrange(20)}", words.fact(rng))
        started = time.perf_counter()
        if providers.embed_documents([pair]) is None:
            raise RuntimeError("the embedder failed during the bench")
        if i >= args.warmup:
            timings.append(time.perf_counter() - started)
    with connection.cursor() as cursor:
        cursor.execute(MARK_STALE, [REEMBED_ROWS])
        rows = cursor.rowcount
    started = time.perf_counter()
    done = embeddings.reembed(limit=rows)
    seconds = time.perf_counter() - started
    return {
        "embed": summary(timings),
        "reembed": {
            "rows": done,
            "seconds": round(seconds, 2),
            "rows_per_s": round(done / seconds),
        },
    }


def verify_timing() -> dict:
    from memory_core.ledger import ledger

    started = time.perf_counter()
    result = ledger.verify()
    elapsed = time.perf_counter() - started
    if not result.ok:
        raise RuntimeError(f"the bench ledger does not verify: {result.problem}")
    return {"events": result.count, "events_per_s": round(result.count / elapsed, 1)}


def _say(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def main(argv=None) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_console.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    from memory_console.bench import checkpoint, console_pages, cpu, peer, report, seed
    from memory_console.bench.database import seed_state
    from memory_console.bench.sizes import SIZES
    from memory_console.loadgen.server import AppServer

    args = parse(argv if argv is not None else sys.argv[1:])
    size = SIZES[args.size]
    args.requests = args.requests or size.requests
    args.warmup = size.warmup if args.warmup is None else args.warmup
    url = os.environ["DATABASE_URL"]
    # Seeding, ANALYZE and the peer's own tables are the owner's work; the served app and
    # floor B (its turn by hand) run with the server's role.
    owner_url = os.environ.get("DATABASE_OWNER_URL") or url
    dbname = settings.DATABASES["default"]["NAME"]
    rng = random.Random()

    call_command("migrate", interactive=False, verbosity=0)
    seeded = None
    if seed_state(dbname, size.name) != "complete":
        started = time.perf_counter()
        counts = seed.seed(owner_url, size)
        seeded = {**counts, "seconds": round(time.perf_counter() - started, 1)}
        _say(
            f"Seeded {counts['memories']} memories and {counts['ledger_events']} ledger "
            f"events in {seeded['seconds']:.0f} s (embedding: {counts['embed_seconds']:.0f} s)."
        )
    else:
        _say(f"Reusing the seeded database {dbname}.")
    peer_on = peer.available() and not args.no_peer
    if peer_on:
        peer.ensure_seeded(owner_url, size.name, sys.stderr)
    else:
        _say("The peer (langgraph-checkpoint-postgres, the `bench` extra) is not measured.")
    _say("ANALYZE ...")
    seed.analyze(owner_url)

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        pg_version = f"PostgreSQL {cursor.fetchone()[0]} (embedded)"
    machine = report.machine(pg_version, args.clients, args.workers)
    secret, password = credentials()
    actors = sample_actors(rng, 500)
    # The console pages' second role and their material (made once per bench database).
    tenant = seed.tenant_token(1)
    console = (console_pages.tenant_user(tenant), console_pages.fixtures(tenant, actors, rng))

    _say(f"Serving with gunicorn ({args.workers} workers) and driving {args.clients} clients ...")
    log = Path(settings.BASE_DIR) / "var" / "bench" / f"server-{size.name}.log"
    # gunicorn, DEBUG off, with DATABASE_URL and DATABASE_OWNER_URL pointing at the bench
    # database; its access log is written (as in production) but not kept.
    postgres = cpu.postgres_root(connection)
    with AppServer(url, owner_url, log_path=log, workers=args.workers, access_log=False) as app:
        ops = http_ops(app.port, secret, password, actors, console, args, rng)

        def processes():
            return cpu.groups(app.proc.pid, postgres)

        throughput = saturated_turns(app.port, secret, actors, args, rng, processes=processes)
        throughput_fresh = saturated_turns(
            app.port, secret, actors, args, rng, keep_alive=False, processes=processes
        )
        _say("Capture: messages/s with the scripted model, then turn and remember beside it ...")
        from memory_console.bench import capture

        captured = capture.measure(app, secret, actors, args, rng, log.parent)
    _say("Turns without prepared statements, then through PgBouncer (transaction mode) ...")
    from memory_console.bench.pooled import pooled_throughput

    pooled = pooled_throughput(
        url, owner_url, secret, actors, args, rng, log.parent, saturated_turns, postgres
    )
    connection.close()
    _say("In process: core_read, floor_b" + (", peer_read, peer_put" if peer_on else "") + " ...")
    ops.update(in_process_ops(url, owner_url, actors, args, rng, peer_on))
    _say("Embedding: one text per call, then reembed ...")
    embedding = embedding_timing(rng, args)
    if embedding:
        ops["embed"] = embedding["embed"]
    _say("Verifying the ledger ...")
    verify = verify_timing()
    _say("Verifying the ledger against a signed checkpoint ...")
    verify_checkpoint = checkpoint.verify_checkpoint_timing()
    _say("Gardening pass ...")
    from memory_console.bench import garden

    gardened = garden.timing()
    recalled = None
    if not args.no_recall:
        # Last, so its half minute of CPU falls on no measurement.
        from memory_console.bench import recall

        recalled = recall.measure(args.recall_database or recall.DATABASE, _say)

    result = {
        "size": size.name,
        "machine": machine,
        "ops": ops,
        "verify_ledger": verify,
        "verify_checkpoint": verify_checkpoint,
        "throughput": throughput,
        "throughput_fresh": throughput_fresh,
        "garden": gardened,
        "capture": captured,
        # turn_query, search and remember as multiples of the turn, from the same rounds.
        "recall_speed": report.recall_speed(ops),
    }
    if recalled is not None:
        result["recall"] = recalled
    if pooled is not None:
        result["throughput_pooled"] = pooled
    if embedding:
        result["embed_ms"] = embedding["embed"]["p50_ms"]
        result["reembed"] = embedding["reembed"]
    if seeded is not None:
        result["seed"] = seeded
    report.write(args.out, result)
    print(report.table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
