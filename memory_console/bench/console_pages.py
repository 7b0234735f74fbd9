"""Every console page in the bench: `console_<page>` as the superuser and
`console_<page>_tenant` as an administrator of one tenant.

Run by the measuring process (run.py) against the served app. Each op reports latency
percentiles and the size of the HTML answered (`bytes_p50`, `bytes_max`).

What the pages need beyond the seeded organisation (a conversation, runs whose digests
carry lines for attribution, a tenant administrator) is made here through the services,
once per bench database: the fixture thread's existence marks it done, so a reused database
is not written again and the seed (and its format) stays as it was.

Console pages cost tens to thousands of milliseconds where the API's ops cost ten, so each
console op takes fewer requests: at most CONSOLE_REQUESTS, and fewer for a page slow enough
that they would take more than CONSOLE_BUDGET_S seconds (never fewer than
CONSOLE_MIN_REQUESTS). `n` in the report says how many were measured.
"""

import secrets
import sys
from dataclasses import dataclass, field
from urllib.parse import quote, urlencode

from memory_console.bench.report import CONSOLE_PAGES, CONSOLE_ROLES, summary

TENANT_USER = "bench-tenant"
FIXTURE_THREAD = "bench-console"
FIXTURE_RUNS = 6
CONSOLE_REQUESTS = 200
CONSOLE_WARMUP = 10
CONSOLE_MIN_REQUESTS = 20
CONSOLE_BUDGET_S = 30.0


def _say(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


@dataclass
class Fixture:
    """What the plans draw from, for one role."""

    scopes: list[str]
    actors: list[str]
    memories: list[str]
    lines: list[str]
    runs: list[str]  # console paths of runs
    run_ids: list[str]
    conversation: str
    extra: dict = field(default_factory=dict)


def tenant_user(tenant: str) -> str:
    """The tenant administrator (made once, password fresh each run) and its grant."""
    from django.contrib.auth import get_user_model

    from memory_core.accounts import grants
    from memory_core.accounts.principals import Principal
    from memory_core.models import Scope, ScopeGrant

    User = get_user_model()
    password = secrets.token_urlsafe(18)
    user = User.objects.filter(username=TENANT_USER).first()
    if user is None:
        user = User.objects.create_user(TENANT_USER, "", password)
    else:
        user.set_password(password)
        user.is_active = True
        user.is_superuser = user.is_staff = False
        user.save()
    scope = Scope.objects.get(token=tenant)
    held = ScopeGrant.objects.filter(user=user, scope=scope, role="admin").exists()
    if not held:
        grants.grant(TENANT_USER, scope, "admin", principal=Principal.system("bench"))
    return password


def _conversation_fixture(actor, rng) -> None:
    """FIXTURE_RUNS runs of one thread, each a user message, a turn (its digest) and the
    agent's answer: the conversation, run and attribution pages' material."""
    from memory_console.bench import words
    from memory_core import transcripts, turns
    from memory_core.accounts.principals import Principal

    principal = Principal.system("bench")
    for i in range(FIXTURE_RUNS):
        run_id = f"bench-console-{i}"
        query = words.query(rng)
        transcripts.record_message(
            actor, FIXTURE_THREAD, "user", f"{query}?", principal=principal, run_id=run_id
        )
        turns.resolve_turn(
            actor, run_id, principal=principal, thread_id=FIXTURE_THREAD, query=query
        )
        transcripts.record_message(
            actor, FIXTURE_THREAD, "assistant", words.fact(rng), principal=principal, run_id=run_id
        )


def fixtures(tenant: str, sampled_actors: list[dict], rng) -> dict[str, Fixture]:
    """{"": the superuser's fixture, "_tenant": the tenant administrator's}."""
    from memory_console.console.common.links import run_path, scope_path, thread_path
    from memory_core.models import Actor, Digest, DigestLine, Memory, Scope, Thread

    name = tenant.split(":", 1)[1]
    tenant_actors = list(
        Actor.objects.filter(ref__startswith=f"{name}/")
        .order_by("ref")
        .values_list("ref", flat=True)
    )
    actor = Actor.objects.get(ref=tenant_actors[0])
    if not Thread.objects.filter(actor=actor, ref=FIXTURE_THREAD).exists():
        _say(f"  Console fixture: a conversation of {FIXTURE_RUNS} runs for {actor.ref} ...")
        _conversation_fixture(actor, rng)
    digests = list(Digest.objects.filter(actor=actor, thread_ref=FIXTURE_THREAD).order_by("run_id"))
    lines = list(DigestLine.objects.filter(digest__in=digests).values_list("text", "memory_uid"))
    uids = {uid for _, uid in lines}
    streams = dict(Memory.objects.filter(uid__in=uids).values_list("uid", "scope__stream"))
    in_tenant = sorted(uid for uid, stream in streams.items() if stream == tenant)
    texts = [text for text, _ in lines]
    tenant_texts = [text for text, uid in lines if streams.get(uid) == tenant]
    team_tokens = list(
        Scope.objects.filter(stream=tenant)
        .exclude(token__startswith="actor:")
        .values_list("token", flat=True)
    )
    runs = [run_path(actor.ref, d.run_id) for d in digests]
    run_ids = [d.run_id for d in digests]
    conversation = thread_path(FIXTURE_THREAD, actor.ref)
    every = Fixture(
        scopes=[scope_path(a["chain"][2]) for a in sampled_actors],
        actors=[a["ref"] for a in sampled_actors],
        memories=sorted(streams),
        lines=texts,
        runs=runs,
        run_ids=run_ids,
        conversation=conversation,
    )
    own = Fixture(
        scopes=[scope_path(t) for t in team_tokens],
        actors=tenant_actors,
        memories=in_tenant or sorted(streams),
        lines=tenant_texts or texts,
        runs=runs,
        run_ids=run_ids,
        conversation=conversation,
    )
    return {"": every, "_tenant": own}


def _finder_path(rng) -> str:
    from memory_console.bench import words

    # A tenant's scopes by kind, newest first; a word search; the live pinned ones.
    return rng.choice(
        [
            "/memories/?kind=team&sort=new",
            f"/memories/?q={quote(words.query(rng))}",
            "/memories/?state=live&pinned=yes",
        ]
    )


def garden_resolves() -> bool:
    from django.urls import Resolver404, resolve

    try:
        resolve("/garden/")
    except Resolver404:
        return False
    return True


def plans(fixture: Fixture, rng, *, superuser: bool) -> dict:
    """{page: a function giving (method, path, body, expected statuses)}."""
    from memory_console.console.common.links import actor_path

    def get(path, statuses=(200,)):
        return ("GET", path, None, statuses)

    pages = {
        "dashboard": lambda: get("/"),
        "scopes": lambda: get("/scopes/"),
        "scope": lambda: get(rng.choice(fixture.scopes)),
        "actor": lambda: get(actor_path(rng.choice(fixture.actors))),
        "memory": lambda: get(f"/memories/{rng.choice(fixture.memories)}/"),
        "conflicts": lambda: get("/conflicts/"),
        "ledger": lambda: get("/ledger/"),
        "access": lambda: get("/access/"),
        "attribution_line": lambda: get(
            "/attribution/?" + urlencode({"line": rng.choice(fixture.lines)})
        ),
        "attribution_run": lambda: get(
            "/attribution/?" + urlencode({"run": rng.choice(fixture.run_ids)})
        ),
        "runs": lambda: get("/runs/"),
        "run": lambda: get(rng.choice(fixture.runs)),
        "conversation": lambda: get(fixture.conversation),
        "keys": lambda: get("/keys/"),
        # The Users page is the superusers' (docs/administrators/console.md): an administrator
        # of a tenant is answered a 403 page, which is what is measured for that role.
        "users": lambda: get("/users/", (200,) if superuser else (403,)),
        "finder": lambda: get(_finder_path(rng)),
    }
    if garden_resolves():
        pages["garden"] = lambda: get("/garden/")
    return pages


def measure(port: int, sessions: dict, fixtures_by_role: dict, args, rng) -> dict:
    """Every console op; `sessions` maps "" and "_tenant" to a logged-in ConsoleSession."""
    from memory_console.bench import load
    from memory_console.loadgen.client import request

    ops = {}
    # The pages in report order (report.CONSOLE_PAGES): each measured for both roles.
    for page in CONSOLE_PAGES:
        for role in CONSOLE_ROLES:
            pages = plans(fixtures_by_role[role], rng, superuser=role == "")
            if page not in pages:
                continue
            name = f"console_{page}{role}"
            headers = sessions[role].headers()
            plan = pages[page]
            # One probe, unmeasured, sets how many requests fit the op's budget.
            method, path, body, expect = plan()
            probe = request(port, method, path, body=body, headers=headers, timeout=600)
            if probe.status not in expect:
                raise load.BadStatus(f"{method} {path} -> {probe.status} ({name})")
            fit = int(CONSOLE_BUDGET_S * args.clients / max(probe.elapsed, 1e-3))
            count = min(args.requests, CONSOLE_REQUESTS, max(CONSOLE_MIN_REQUESTS, fit))
            warmup = min(args.warmup, CONSOLE_WARMUP, max(1, count // 10))
            requests = [plan() for _ in range(warmup + count)]
            sizes: list[int] = []
            latencies, wall = load.drive(
                port,
                headers,
                lambda i, r=requests: r[i],
                args.clients,
                warmup,
                count,
                sizes=sizes,
            )
            ops[name] = {**summary(latencies, wall), **size_summary(sizes)}
            o = ops[name]
            _say(
                f"  {name}: p50 {o['p50_ms']:.1f} ms, p99 {o['p99_ms']:.1f} ms, "
                f"{o['bytes_max'] / 1024:.0f} KiB max, n {o['n']}"
            )
    return ops


def size_summary(sizes: list[int]) -> dict:
    from memory_console.loadgen.percentiles import percentile

    values = sorted(sizes)
    return {"bytes_p50": int(percentile(values, 50)), "bytes_max": int(values[-1])}


def sessions(port: int, superuser_password: str, tenant_password: str) -> dict:
    from memory_console.loadgen.client import ConsoleSession

    result = {}
    for role, (username, password) in {
        "": ("bench", superuser_password),
        "_tenant": (TENANT_USER, tenant_password),
    }.items():
        session = ConsoleSession(port)
        session.login(username, password)
        result[role] = session
    return result
