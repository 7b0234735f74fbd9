"""`recall_eval [--split dev|test|both] [--json FILE] [--database NAME]`: how well search
and turns find a fact asked about in other words, on the held-out set of
tests/recall/generalise (eight people, 336 personal facts, 60 wider-scope distractors, and
the everyday notes around them that make each chain about 310 rows).

The world is built through the services a deployment uses (scopes, a key per tenant,
actors registered with it, each personal fact remembered by the agent, each wider-scope
fact published by an operator, some pinned), every version embedded as it is written, and
rolled back at the end: nothing stays behind. Without --database that happens in the
configured database (refused when it already holds memories in the world's chains); with
--database NAME in a scratch database of that name on the same server, made and migrated
when missing (as the bench makes its own), where this command runs again.

Each question is asked of its person's actor as GET /memories/search asks it
(search.search_memories, limit 5) and as POST /turns composes a turn with it as the query
(turns.compose, max_memories 5). Three rankings side by side:

- lexical: the same services with the embedder switched off (MEMORY_EMBEDDER=none), so the
  fts tier answers, then trigram, then like;
- vector: the service has no vector-only mode, so this command ranks the actor's chain's
  live memories by cosine similarity between the query's vector (embedded as search embeds
  a query) and the stored ones: the chain filter and the per-key maximum of search.py's
  semantic rank, without its floor; "vector, floor+cut" is that rank less the keys below the
  embedder's floor or half the best match's similarity, i.e. what the semantic half of
  search may return on its own. The vector rankings' turns are selection.select given
  those keys as the relevant ones, as turns.compose would be;
- fused: the hybrid search as shipped.

Measured: the expected key among the first 3 and first 5 keys the search ranked (the pinned
keys a search appends to every answer are not counted, neither as hits nor as results);
the expected memory among a turn's lines; the tier that answered; for off-topic questions,
how many keys came back. Every person's chain holds six pinned keys, and a turn keeps pins
first, so a turn with max_memories 5 has no room left for anything the query found: the
"turn, 5 after pins" row gives the turn room for five more (max_memories 5 + pins).

TEST is reported as totals only (tests/recall/generalise/__init__.py): never per question,
neither on screen nor in the JSON. DEV's misses print with -v 2.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from django.test import override_settings

from memory_core import actors, turns, writes
from memory_core.accounts import keys
from memory_core.accounts.principals import Principal
from memory_core.actors import chain_of
from memory_core.applied import LIVE_IN_CHAIN, chain_entries
from memory_core.db import prepared
from memory_core.models import Embedding, Memory
from memory_core.recall import embeddings, providers, search
from memory_core.rules.block import render
from memory_core.rules.selection import select
from tests.recall.generalise import split
from tests.recall.generalise.background import PERSONAL_NOTES, SCOPED_NOTES
from tests.recall.generalise.people import FACT_RECORDS, PEOPLE, SCOPED_FACTS, TEAMS, TENANTS

LIMIT = 5  # search's limit and a turn's max_memories
TOPS = (3, 5)
RANKINGS = ("lexical", "vector", "vector_cut", "fused")
LABELS = {
    "lexical": "lexical",
    "vector": "vector",
    "vector_cut": "vector, floor+cut",
    "fused": "fused",
}

# The vector rank of search.py's `scored`/`semantic` CTEs without their floor and cut, so
# over every key of the chain: the actor's chain's live rows, their vectors from the
# query's embedder, the best per key.
VECTOR_RANK = f"""
    WITH chain_rows AS MATERIALIZED (SELECT m.id AS pk, m.key {LIVE_IN_CHAIN})
    SELECT c.key, max(1 - (e.vector <=> %(vector)s::real[]::vector)) AS similarity
    FROM chain_rows c
    JOIN memory_core_embedding e ON e.memory_id = c.pk
    WHERE e.embedder = %(embedder)s AND e.dims = %(dims)s
    GROUP BY c.key
    ORDER BY similarity DESC, c.key
"""
# The query's content words as the lexical rank sees them, and which of them each key
# matched: search.py's own CTEs.
MATCHED_WORDS = (
    search._TIERS
    + """
    SELECT key, array_agg(word ORDER BY word) FROM key_words
    WHERE key = ANY(%(keys)s)
    GROUP BY key
"""
)


class _RollBack(Exception):
    """Raised at the end of a run so that the world is never committed."""


# --- the world ---------------------------------------------------------------------------


@dataclass
class World:
    actors: dict  # person -> Actor
    agents: dict  # tenant -> Principal (the tenant's API key)
    uids: dict  # (person, key) -> uid of the personal fact's version
    pinned: dict  # person -> number of pinned keys in the person's chain
    embedder: str


def check_empty() -> None:
    """Refuse a database whose data would enter the world's chains."""
    tokens = ["global", *(f"tenant:{t}" for t in TENANTS)]
    # A scope's stream is the tenant it lies in (or `global`).
    if Memory.objects.filter(retired_at=None, scope__stream__in=tokens).exists():
        raise CommandError(
            "this database already holds memories in the world's chains (global or the "
            "brightwater/lumen tenants): run with --database NAME for a scratch database"
        )


def build_world() -> World:
    """The people, their scopes and facts of tests/recall/generalise, written through the
    services (call inside a transaction that is rolled back, or a test's)."""
    embedder = providers.current()
    if embedder is None:
        raise CommandError("MEMORY_EMBEDDER is none: the evaluation needs an embedder")
    operator = Principal.system("cli:recall_eval")
    root = actors.global_scope()
    scopes, agents = {}, {}
    for tenant, label in TENANTS.items():
        token = f"tenant:{tenant}"
        scopes[token], _ = actors.ensure_scope(token, root, label, principal=operator)
        key, _secret = keys.create_api_key(
            f"recall eval {tenant}", scopes[token], principal=operator
        )
        agents[tenant] = Principal.for_api_key(key)
    for token, label in TEAMS.items():
        tenant = token.split(":", 1)[1].split("/", 1)[0]
        parent = scopes[f"tenant:{tenant}"]
        scopes[token], _ = actors.ensure_scope(token, parent, label, principal=operator)
    scopes["global"] = root

    world_actors, uids = {}, {}
    for ref, person in PEOPLE.items():
        agent = agents[person.tenant]
        actor = actors.put_actor(ref, person.name, list(person.memberships), agent.api_key, agent)
        if chain_of(actor) != person.chain:
            raise CommandError(f"{ref}: chain {chain_of(actor)} where {person.chain} was meant")
        world_actors[ref] = actor
        for fact in FACT_RECORDS[ref]:
            written = writes.remember(actor, fact.key, fact.text, principal=agent)
            uids[ref, fact.key] = written.memory.uid
        # The rest of what the agent keeps (background.py): the chain's other rows.
        for note in PERSONAL_NOTES[ref]:
            writes.remember(actor, note.key, note.text, principal=agent)
    for fact in SCOPED_FACTS + SCOPED_NOTES:
        writes.publish(
            scopes[fact.scope], fact.key, fact.text, principal=operator, pinned=fact.pinned
        )

    # Every version is embedded as it is written (embeddings.attach); any the embedder
    # failed on are filled in now, and a run with some still missing is refused.
    embeddings.fill_pending()
    pending = Embedding.objects.filter(
        memory__scope__token__in=list(scopes) + [p.actor_scope for p in PEOPLE.values()],
        vector__isnull=True,
    ).count()
    if pending:
        raise CommandError(f"{pending} memories were left without a vector: the embedder failed")

    pinned_keys = {}
    for ref, person in PEOPLE.items():
        pinned_keys[ref] = sum(1 for entry in chain_entries(person.chain) if entry.pinned)
    return World(world_actors, agents, uids, pinned_keys, embedder.identity)


# --- one question --------------------------------------------------------------------------


@dataclass
class Ranked:
    """What one ranking did with one question."""

    keys: list[str]  # the ranked keys, best first (pins a search appends left out)
    tier: str = ""
    turn: bool = False  # the expected memory is among a turn's lines (max_memories 5)
    turn_room: bool = False  # ... with room for 5 after the pins


@dataclass
class Outcome:
    text: str
    person: str
    key: str  # "" for an off-topic question
    lang: str
    fact_lang: str = ""
    kind: str = ""
    shares_word: bool = False
    ranked: dict = field(default_factory=dict)  # ranking -> Ranked
    # The vector rank's view of the expected key (diagnosis).
    similarity: float | None = None
    best_similarity: float | None = None
    vector_place: int | None = None  # 1-based, over every key of the chain
    floor: float = 0.0
    query_words: list[str] = field(default_factory=list)
    matched_words: dict = field(default_factory=dict)  # key -> words it matched lexically

    def hit(self, ranking: str, top: int) -> bool:
        return self.key in self.ranked[ranking].keys[:top]


def _turn_carries(turn_lines, uid: str | None) -> bool:
    return uid is not None and any(line["memory_id"] == uid for line in turn_lines)


def _service_ranking(world: World, person: str, text: str, uid: str | None) -> Ranked:
    """The search and the turns as the API runs them, under the current settings."""
    actor, agent = world.actors[person], world.agents[PEOPLE[person].tenant]
    items, tier = search.search_memories(actor, text, principal=agent, limit=LIMIT)
    # search_memories answers the ranked keys first, then every pinned key it did not
    # rank; ranked_chain is the ranking it ran, so it says how many came from the query.
    _, found, _ = search.ranked_chain(chain_of(actor), text, LIMIT)
    keys_ = [item["key"] for item in items[: len(found)]]
    assert keys_ == found, (keys_, found)
    ranked = Ranked(keys_, tier)
    if uid is not None:
        ranked.turn = _turn_carries(turns.compose(actor, "eval", text, LIMIT).lines, uid)
        room = LIMIT + world.pinned[person]
        ranked.turn_room = _turn_carries(turns.compose(actor, "eval", text, room).lines, uid)
    return ranked


def _vector_rank(chain, text: str) -> list[tuple[str, float]]:
    found = providers.embed_query(text)
    if found is None:
        raise CommandError("the embedder did not answer")
    embedder, (vector,) = found
    params = {
        "chain": list(chain),
        "vector": embeddings.Vector(vector),
        "embedder": embedder.identity,
        "dims": embedder.dims,
    }
    return [(key, float(similarity)) for key, similarity in prepared.fetch_all(VECTOR_RANK, params)]


def _simulated_turn(chain, relevant: list[str], room: int, uid: str) -> bool:
    """A turn as turns.compose selects it, given these keys as the ones the query found."""
    selection = select(chain_entries(chain), chain, room, relevant)
    rendered = render(selection.kept, chain, selection.stats.partial)
    return any(line.memory_id == uid for line in rendered.lines)


def _vector_rankings(world: World, outcome: Outcome, uid: str | None) -> None:
    person = PEOPLE[outcome.person]
    chain = person.chain
    ranked = _vector_rank(chain, outcome.text)
    floor = providers.current().min_similarity
    best = ranked[0][1] if ranked else 0.0
    cut = [(key, s) for key, s in ranked if s >= floor and s >= search.RELATIVE_CUT * best]
    raw_keys = [key for key, _ in ranked[:LIMIT]]
    cut_keys = [key for key, _ in cut[:LIMIT]]
    outcome.ranked["vector"] = Ranked(raw_keys, "vector")
    outcome.ranked["vector_cut"] = Ranked(cut_keys, "vector")
    outcome.floor, outcome.best_similarity = floor, best
    if uid is not None:
        places = {key: (n, s) for n, (key, s) in enumerate(ranked, start=1)}
        outcome.vector_place, outcome.similarity = places.get(outcome.key, (None, None))
        room = LIMIT + world.pinned[outcome.person]
        for name, keys_ in (("vector", raw_keys), ("vector_cut", cut_keys)):
            outcome.ranked[name].turn = _simulated_turn(chain, keys_, LIMIT, uid)
            outcome.ranked[name].turn_room = _simulated_turn(chain, keys_, room, uid)


def _lexical_words(outcome: Outcome) -> None:
    """The query's lexemes, and those each key found by any ranking matched (diagnosis)."""
    params = search._params(PEOPLE[outcome.person].chain, outcome.text, LIMIT)
    outcome.query_words = search.content_words(outcome.text)
    wanted = sorted({k for r in outcome.ranked.values() for k in r.keys} | {outcome.key} - {""})
    rows = prepared.fetch_all(MATCHED_WORDS, {**params, "keys": wanted})
    outcome.matched_words = {key: list(words) for key, words in rows}


def ask(world: World, questions, off_topic) -> tuple[list[Outcome], list[Outcome]]:
    """Every question under every ranking."""
    answered = [
        Outcome(q.text, q.person, q.key, q.lang, q.fact_lang, q.kind, q.shares_word)
        for q in questions
    ]
    stray = [Outcome(o.text, o.person, "", o.lang) for o in off_topic]
    every = answered + stray

    with override_settings(MEMORY_EMBEDDER="none"):
        for outcome in every:
            uid = world.uids.get((outcome.person, outcome.key))
            outcome.ranked["lexical"] = _service_ranking(world, outcome.person, outcome.text, uid)
    for outcome in every:
        uid = world.uids.get((outcome.person, outcome.key))
        outcome.ranked["fused"] = _service_ranking(world, outcome.person, outcome.text, uid)
        _vector_rankings(world, outcome, uid)
        _lexical_words(outcome)
    return answered, stray


# --- figures ---------------------------------------------------------------------------------


def totals(answered: list[Outcome], stray: list[Outcome]) -> dict:
    """The aggregate figures of one split, per ranking."""
    figures = {"questions": len(answered), "off_topic_questions": len(stray), "rankings": {}}
    for name in RANKINGS:
        figures["rankings"][name] = {
            "search_at_3": sum(o.hit(name, 3) for o in answered),
            "search_at_5": sum(o.hit(name, 5) for o in answered),
            "turn_5": sum(o.ranked[name].turn for o in answered),
            "turn_5_after_pins": sum(o.ranked[name].turn_room for o in answered),
            "off_topic_results": sum(len(o.ranked[name].keys) for o in stray),
            "off_topic_with_any": sum(bool(o.ranked[name].keys) for o in stray),
            # The tier the service named; "nothing" when no tier found anything (the service
            # then says `like`).
            "tiers": dict(Counter(_tier(o.ranked[name]) for o in answered)),
            "off_topic_tiers": dict(Counter(_tier(o.ranked[name]) for o in stray)),
        }
    return figures


def _tier(ranked: Ranked) -> str:
    return ranked.tier if ranked.keys else "nothing"


def breakdown(answered: list[Outcome]) -> dict:
    """@5 of each ranking by question language, word sharing and language crossing (DEV)."""
    groups = {
        **{
            f"lang={lang}": [o for o in answered if o.lang == lang]
            for lang in ("en", "pt", "es", "de")
        },
        "shares a word": [o for o in answered if o.shares_word],
        "shares no word": [o for o in answered if not o.shares_word],
        "same language as fact": [o for o in answered if o.lang == o.fact_lang],
        "other language than fact": [o for o in answered if o.lang != o.fact_lang],
    }
    return {
        name: {"n": len(group), **{r: sum(o.hit(r, 5) for o in group) for r in RANKINGS}}
        for name, group in groups.items()
    }


def why_fused_lost(outcome: Outcome, top: int = 5) -> str:
    """For a question the raw vector rank found within `top` and fused did not: which part
    of search.py kept it out."""
    fused = outcome.ranked["fused"]
    if outcome.similarity is None:
        return "no vector"
    if outcome.similarity < outcome.floor:
        if fused.tier in ("trigram", "like"):
            # Nothing passed the floor and no word matched: the later tiers answered (only
            # when the chain held no vector to compare).
            return f"similarity floor, {fused.tier} tier answered" + (
                "" if fused.keys else " (nothing)"
            )
        return "similarity floor"
    if outcome.similarity < search.RELATIVE_CUT * outcome.best_similarity:
        return "half-of-best cut"
    if outcome.key in outcome.ranked["vector_cut"].keys and outcome.key in fused.keys:
        return "fusion: ranked below lexical matches"
    return "fusion: pushed out by lexical matches"


def diagnosis(answered: list[Outcome]) -> dict:
    """DEV only: where fused misses what the raw vector rank finds, and why, at @5 and @3."""
    found = {}
    for top in TOPS:
        lost = [o for o in answered if o.hit("vector", top) and not o.hit("fused", top)]
        gained = [o for o in answered if o.hit("fused", top) and not o.hit("vector", top)]
        found[f"at_{top}"] = {
            "fused_loses": len(lost),
            "fused_gains": len(gained),
            "why": dict(Counter(why_fused_lost(o, top) for o in lost)),
            "lost_by_question_lang": dict(Counter(o.lang for o in lost)),
            "lost_sharing_a_word": sum(o.shares_word for o in lost),
        }
    return found


def _pct(n: int, of: int) -> str:
    return f"{n} ({100 * n / of:.0f}%)" if of else str(n)


def table(name: str, figures: dict) -> str:
    n, off = figures["questions"], figures["off_topic_questions"]
    r = figures["rankings"]
    width = 20
    lines = [
        f"{name}: {n} questions, {off} off-topic",
        f"{'':<30}" + "".join(f"{LABELS[x]:>{width}}" for x in RANKINGS),
    ]
    rows = [
        ("search @3", "search_at_3", n),
        ("search @5", "search_at_5", n),
        ("turn, max_memories 5", "turn_5", n),
        ("turn, 5 after pins", "turn_5_after_pins", n),
        (f"off-topic results (of {LIMIT * off})", "off_topic_results", 0),
        (f"off-topic with any (of {off})", "off_topic_with_any", 0),
    ]
    for label, metric, of in rows:
        lines.append(
            f"{label:<30}" + "".join(f"{_pct(r[x][metric], of):>{width}}" for x in RANKINGS)
        )
    for x in ("lexical", "fused"):
        tiers = ", ".join(f"{t} {c}" for t, c in sorted(r[x]["tiers"].items()))
        lines.append(f"tiers ({x}): {tiers}")
    return "\n".join(lines)


def _describe(o: Outcome) -> str:
    fused = o.ranked["fused"]
    sim = "none" if o.similarity is None else f"{o.similarity:.3f}"
    parts = [
        f"  [{o.person}] {o.text!r} -> {o.key} ({o.lang} asking about {o.fact_lang}, {o.kind}"
        f"{', shares a word' if o.shares_word else ''})",
        f"      fused ({fused.tier}): {fused.keys}",
        f"      vector place {o.vector_place}, similarity {sim}, best {o.best_similarity:.3f}",
        f"      lexical ({o.ranked['lexical'].tier}): {o.ranked['lexical'].keys}",
        f"      query words {o.query_words}; matched "
        + ", ".join(f"{k}: {'/'.join(w)}" for k, w in sorted(o.matched_words.items())),
    ]
    if o.hit("vector", 5):
        parts.append(f"      why fused lost: {why_fused_lost(o)}")
    return "\n".join(parts)


# --- running it ------------------------------------------------------------------------------


def plan_for_a_small_world() -> None:
    """Plan the rest of this transaction for a database holding little but the world.

    The world is never committed. Once autovacuum has seen a table emptied by an earlier
    run's rollback, its statistics say it has no rows, and the planner, taking each table for
    one row, reads a chain by nested loops over nested loops: 0.3-9 s a statement for a
    chain of 300 rows, where 2-4 ms is right. Hash joins are right for a world this size, so
    nested loops are switched off until the transaction ends; the rankings are the same
    statements, planned otherwise. (Not in a database that holds a deployment's data, whose
    statistics are its own.)"""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_nestloop = off")


def evaluate(which: str, *, scratch: bool = False) -> dict:
    """Build the world, ask every question of the chosen splits; the outcomes by split.
    Leaves the world in place: call inside a transaction that is rolled back. `scratch`:
    the database is the command's own (plan_for_a_small_world)."""
    world = build_world()
    if scratch:
        plan_for_a_small_world()
    results = {"embedder": world.embedder, "pinned_keys_per_chain": world.pinned}
    chosen = {"dev": (split.DEV, split.OFF_TOPIC_DEV), "test": (split.TEST, split.OFF_TOPIC_TEST)}
    for name in ("dev", "test"):
        if which in (name, "both"):
            results[name] = ask(world, *chosen[name])
    return results


class Command(BaseCommand):
    help = (
        "Measure search and turns on the held-out recall set (tests/recall/generalise): "
        "lexical, vector and fused rankings, DEV and/or TEST (TEST as totals only)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--split", choices=("dev", "test", "both"), default="both")
        parser.add_argument("--json", type=Path, default=None, help="write the figures here")
        parser.add_argument(
            "--database",
            default=None,
            help="a scratch database on the same server (made and migrated when missing)",
        )
        # Set by the parent run in the scratch database's process: migrate first.
        parser.add_argument("--scratch", action="store_true", help=argparse.SUPPRESS)

    def handle(self, *args, **options):
        which, json_path, verbosity = options["split"], options["json"], options["verbosity"]
        if options["database"]:
            return self._in_scratch_database(options["database"], which, json_path, verbosity)
        if options["scratch"]:
            from django.core.management import call_command

            call_command("migrate", interactive=False, verbosity=0)
        started = time.monotonic()
        check_empty()
        results = {}
        try:
            with transaction.atomic():
                results = evaluate(which, scratch=options["scratch"])
                raise _RollBack
        except _RollBack:
            pass
        elapsed = time.monotonic() - started
        self._report(results, json_path, verbosity, elapsed)

    def _report(self, results, json_path, verbosity, elapsed) -> None:
        out = {
            "embedder": results["embedder"],
            "limit": LIMIT,
            "pinned_keys_per_chain": results["pinned_keys_per_chain"],
            "seconds": round(elapsed, 1),
        }
        self.stdout.write(
            f"embedder {results['embedder']}; search limit {LIMIT}, turn max_memories {LIMIT}"
        )
        if "dev" in results:
            answered, stray = results["dev"]
            out["dev"] = {
                **totals(answered, stray),
                "breakdown_at_5": breakdown(answered),
                "fused_against_vector": diagnosis(answered),
                "questions_detail": [_detail(o) for o in answered + stray],
            }
            self.stdout.write("\n" + table("DEV", out["dev"]))
            self.stdout.write("\nDEV @5 by group (" + ", ".join(LABELS[r] for r in RANKINGS) + ")")
            for group, row in out["dev"]["breakdown_at_5"].items():
                self.stdout.write(
                    f"  {group:<28} n={row['n']:<4}" + "".join(f"{row[r]:>6}" for r in RANKINGS)
                )
            for top, d in out["dev"]["fused_against_vector"].items():
                why = ", ".join(f"{k} {v}" for k, v in sorted(d["why"].items()))
                self.stdout.write(
                    f"DEV {top}: fused misses {d['fused_loses']} that vector finds ({why}); "
                    f"finds {d['fused_gains']} that vector misses"
                )
            if verbosity >= 2:
                misses = [o for o in answered if not o.hit("fused", 5)]
                self.stdout.write(f"\nDEV: fused misses at @5 ({len(misses)})")
                for o in misses:
                    self.stdout.write(_describe(o))
                strays = [o for o in stray if o.ranked["fused"].keys]
                self.stdout.write(f"\nDEV: off-topic questions with fused results ({len(strays)})")
                for o in strays:
                    fused = o.ranked["fused"]
                    self.stdout.write(
                        f"  [{o.person}] {o.text!r}: {fused.tier} {fused.keys} "
                        f"(best similarity {o.best_similarity:.3f})"
                    )
        if "test" in results:
            # Totals only: TEST's individual outcomes are never printed or written.
            out["test"] = totals(*results["test"])
            self.stdout.write("\n" + table("TEST (totals only)", out["test"]))
        self.stdout.write(f"\n{elapsed:.1f} s")
        if json_path is not None:
            json_path.write_text(_json_dumps(out) + "\n")
            self.stdout.write(f"figures written to {json_path}")

    def _in_scratch_database(self, name: str, which: str, json_path, verbosity) -> None:
        """Run again in a process whose database is `name` (made when missing)."""
        import psycopg
        from psycopg import sql

        from memory_console.bench import database as bench_db
        from memory_console.database import create_extension
        from memory_core.db.privileges import OWNER_ALIAS

        with psycopg.connect(bench_db.server_url("postgres", OWNER_ALIAS), autocommit=True) as c:
            if not c.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
                c.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
                self.stderr.write(f"made database {name}")
        create_extension({**settings.DATABASES[OWNER_ALIAS], "NAME": name}, "vector")
        command = [
            sys.executable,
            str(Path(settings.BASE_DIR) / "manage.py"),
            "recall_eval",
            "--scratch",
            "--split",
            which,
            "--verbosity",
            str(verbosity),
        ]
        if json_path is not None:
            command += ["--json", str(json_path.resolve())]
        env = {
            **os.environ,
            "DATABASE_URL": bench_db.server_url(name),
            "DATABASE_OWNER_URL": bench_db.server_url(name, OWNER_ALIAS),
        }
        result = subprocess.run(command, cwd=settings.BASE_DIR, env=env)
        if result.returncode != 0:
            raise CommandError(f"the run in {name} failed (exit {result.returncode})")


def _detail(o: Outcome) -> dict:
    """One DEV question's outcome, for the JSON (never called for TEST)."""
    row = asdict(o)
    row["ranked"] = {name: asdict(r) for name, r in o.ranked.items()}
    return row


def _json_dumps(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)
