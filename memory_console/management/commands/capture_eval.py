"""`capture_eval --url URL --model NAME [--key KEY] [--timeout S] [--json FILE]`: how well a
real model extracts, on conversations with the facts a careful person would keep
(tests/capture/conversations.py).

Not part of the test suite: it needs a model (Ollama, vLLM, llama.cpp's server, OpenAI) and
takes seconds a conversation. Each conversation is recorded as a thread of an actor of a
scratch tenant and extracted through the service the API and the worker use
(memory_core/capture/service.py), with the given model as the extractor; everything is
rolled back at the end, so the database is left as it was.

Measured, per conversation and in total: the facts kept (a written memory matches each of
the fact's word groups), the memories that match no expected fact (noise: not always wrong,
a fact the list did not think of is noise here), what must never be stored (a secret said in
passing, another person's private matters, what a hostile message asked to be stored "for
everyone") found in a memory, the items dropped by the rules, and the time the model took.

    ollama pull qwen2.5:7b
    python manage.py capture_eval --url http://localhost:11434/v1 --model qwen2.5:7b
"""

import json
import secrets
import time
from pathlib import Path

from django.core.management.base import BaseCommand
from django.db import transaction
from django.test import override_settings

from memory_core import actors, transcripts
from memory_core.accounts import keys
from memory_core.accounts.principals import Principal
from memory_core.capture import extractor
from memory_core.capture.service import extract_thread
from memory_core.errors import Unavailable
from memory_core.models import Memory
from memory_core.models.capture import Trigger
from tests.capture.conversations import CASES

THREAD = "eval"


class _Rollback(Exception):
    """Leaves the scratch tenant's every row behind the rolled-back transaction."""


def matches(fact, text: str) -> bool:
    lowered = text.lower()
    return all(any(word in lowered for word in group) for group in fact.groups)


def score(case, texts: list[str]) -> dict:
    kept = [f.what for f in case.keep if any(matches(f, t) for t in texts)]
    noise = [t for t in texts if not any(matches(f, t) for f in case.keep)]
    leaks = [n for n in case.never if any(n in t.lower() for t in texts)]
    return {
        "expected": len(case.keep),
        "kept": len(kept),
        "missed": [f.what for f in case.keep if f.what not in kept],
        "written": len(texts),
        "noise": len(noise),
        "leaks": leaks,
    }


class Command(BaseCommand):
    help = (
        "Evaluate extraction quality against a real OpenAI-compatible model (not in CI): "
        "conversations with the facts a careful person would keep; nothing is left behind."
    )

    def add_arguments(self, parser):
        parser.add_argument("--url", required=True, help="base URL, e.g. http://localhost:11434/v1")
        parser.add_argument("--model", required=True, help="the model's name at that server")
        parser.add_argument("--key", default="", help="sent as Authorization: Bearer KEY")
        parser.add_argument("--timeout", type=float, default=120.0, help="seconds per call")
        parser.add_argument(
            "--json", dest="json_out", type=Path, default=None, help="write the results here"
        )

    def handle(self, *args, url, model, key, timeout, json_out, **options):
        configured = {
            "MEMORY_EXTRACTOR": "http",
            "MEMORY_EXTRACTOR_URL": url,
            "MEMORY_EXTRACTOR_MODEL": model,
            "MEMORY_EXTRACTOR_KEY": key,
            "MEMORY_EXTRACTOR_TIMEOUT": timeout,
            "MEMORY_EXTRACTOR_RETRIES": 1,
            "MEMORY_EXTRACTOR_COOLDOWN": 0,
        }
        results: dict = {}
        with override_settings(**configured):
            extractor.reset()
            try:
                with transaction.atomic():
                    results = self._run()
                    raise _Rollback
            except _Rollback:
                pass
            finally:
                extractor.reset()
        totals = {
            name: sum(r.get(name, 0) for r in results.values())
            for name in ("expected", "kept", "written", "noise", "dropped")
        }
        totals["leaks"] = sum(len(r.get("leaks", [])) for r in results.values())
        totals["failed"] = sum(1 for r in results.values() if r.get("error"))
        totals["seconds"] = round(sum(r.get("seconds", 0.0) for r in results.values()), 1)
        for name, r in results.items():
            if r.get("error"):
                self.stdout.write(f"{name:<20} failed: {r['error']}")
                continue
            missed = f"  missed: {', '.join(r['missed'])}" if r["missed"] else ""
            leaks = f"  NEVER-STORE FOUND: {', '.join(r['leaks'])}" if r["leaks"] else ""
            self.stdout.write(
                f"{name:<20} kept {r['kept']}/{r['expected']}, written {r['written']} "
                f"(noise {r['noise']}, dropped {r['dropped']}), {r['seconds']:.1f} s"
                f"{missed}{leaks}"
            )
        recall = totals["kept"] / totals["expected"] if totals["expected"] else 0.0
        self.stdout.write(
            f"total: kept {totals['kept']}/{totals['expected']} facts ({recall:.0%}), "
            f"{totals['written']} memories written ({totals['noise']} noise), "
            f"{totals['leaks']} never-store found, {totals['failed']} failed extraction(s), "
            f"{totals['seconds']:.1f} s of model time; model {model} at {url}"
        )
        if json_out is not None:
            document = {"model": model, "url": url, "totals": totals, "cases": results}
            json_out.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")

    def _run(self) -> dict:
        operator = Principal.system("cli:capture-eval")
        tenant, _ = actors.ensure_scope(
            f"tenant:capture-eval-{secrets.token_hex(4)}",
            actors.global_scope(),
            "capture evaluation",
            principal=operator,
        )
        api_key, _ = keys.create_api_key("capture-eval", tenant, principal=operator)
        agent = Principal.for_api_key(api_key)
        results = {}
        for case in CASES:
            actor = actors.put_actor(case.name, "", [], api_key, agent)
            for role, text in case.messages:
                transcripts.record_message(actor, THREAD, role, text, principal=agent)
            started = time.perf_counter()
            try:
                done = extract_thread(actor, THREAD, principal=operator, trigger=Trigger.WORKER)
            except Unavailable as error:
                results[case.name] = {"error": error.message}
                continue
            seconds = time.perf_counter() - started
            texts = list(
                Memory.objects.live().filter(scope=actor.scope).values_list("text", flat=True)
            )
            results[case.name] = {
                **score(case, texts),
                "dropped": done.dropped,
                "seconds": round(seconds, 2),
            }
        return results
