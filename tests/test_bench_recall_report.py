"""The bench's recall figures: the recall ops' speed as multiples of the plain turn's from
the same alternating rounds, and recall_eval's held-out totals in the report and its table.

No database and no app server: the rounds are driven against a stub HTTP server, and the
evaluation's subprocess is replaced where its failure or its figures are the point (the
smoke test, tests/test_bench_smoke.py, runs the whole bench).
"""

import json
import threading
from argparse import Namespace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import groupby
from subprocess import CompletedProcess

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from memory_console.bench import recall, report, run


def op(p50: float) -> dict:
    return {"p50_ms": p50, "p95_ms": p50 * 2, "p99_ms": p50 * 3, "rps": 10.0, "n": 300}


def bench_report(ops: dict, **extra) -> dict:
    return {
        "size": "tiny",
        "machine": "m",
        "ops": ops,
        "verify_ledger": {"events": 1, "events_per_s": 1.0},
        **extra,
    }


RECALL_OPS = {
    "turn": op(10.0),
    "turn_query": op(13.4),
    "search": op(12.7),
    "remember": op(10.0),
}


def test_recall_speed_is_each_recall_op_p50_over_the_turns_with_its_target():
    speed = report.recall_speed(RECALL_OPS)

    assert speed == {
        "turn_p50_ms": 10.0,
        "turn_query_p50_ms": 13.4,
        "search_p50_ms": 12.7,
        "remember_p50_ms": 10.0,
        "ratios": {"search": 1.27, "turn_query": 1.34, "remember": 1.0},
        "targets": {"search": 1.5, "turn_query": 1.3, "remember": 1.0},
        # A ratio equal to its target meets it.
        "met": {"search": True, "turn_query": False, "remember": True},
    }


def test_recall_speed_is_left_out_when_an_op_was_not_measured():
    ops = {name: figures for name, figures in RECALL_OPS.items() if name != "search"}
    assert report.recall_speed(ops) is None
    assert report.recall_speed({**RECALL_OPS, "turn": op(0.0)}) is None


def test_the_table_prints_each_ratio_with_its_target_and_whether_it_is_met():
    table = report.table(bench_report(RECALL_OPS, recall_speed=report.recall_speed(RECALL_OPS)))

    lines = table.splitlines()
    assert "search / turn (p50): 1.27x (target <= 1.5x: met)" in lines
    assert "turn_query / turn (p50): 1.34x (target <= 1.3x: not met)" in lines
    assert "remember / turn (p50): 1.00x (target <= 1.0x: met)" in lines


def test_the_table_has_no_ratio_lines_without_the_recall_speed():
    table = report.table(bench_report({"turn": op(10.0)}))
    assert "/ turn (p50)" not in table and "target" not in table


def rankings(*rows) -> dict:
    """rankings as recall_eval's totals() writes them, from one tuple per ranking:
    (search @3, search @5, turn 5 after pins, off-topic results)."""
    return {
        name: {
            "search_at_3": at_3,
            "search_at_5": at_5,
            "turn_5": 7,
            "turn_5_after_pins": after_pins,
            "off_topic_results": off_topic,
            "off_topic_with_any": 3,
            "tiers": {"hybrid": 160, "nothing": 8},
            "off_topic_tiers": {"hybrid": 20, "nothing": 8},
        }
        for name, (at_3, at_5, after_pins, off_topic) in zip(
            ("lexical", "vector", "vector_cut", "fused"), rows, strict=True
        )
    }


# recall_eval --split both --json: each split's totals, and DEV's detail beside them.
RECALL_EVAL_JSON = {
    "embedder": "wordllama:test",
    "limit": 5,
    "pinned_keys_per_chain": {"marta": 6},
    "seconds": 22.1,
    "dev": {
        "questions": 168,
        "off_topic_questions": 28,
        "rankings": rankings(
            (45, 48, 70, 14), (83, 94, 98, 140), (80, 88, 99, 72), (85, 98, 103, 74)
        ),
        "breakdown_at_5": {"lang=en": {"n": 75, "fused": 54}},
        "fused_against_vector": {"at_5": {"fused_loses": 8}},
        "questions_detail": [{"text": "where does marta live?", "key": "home"}],
    },
    "test": {
        "questions": 168,
        "off_topic_questions": 28,
        "rankings": rankings(
            (51, 53, 65, 13), (86, 96, 99, 140), (82, 90, 93, 97), (88, 99, 101, 99)
        ),
    },
}


def test_the_report_keeps_each_splits_totals_and_no_question_of_its_own():
    kept = recall.summarise(RECALL_EVAL_JSON)

    assert kept == {
        "embedder": "wordllama:test",
        "limit": 5,
        "seconds": 22.1,
        "dev": {
            key: RECALL_EVAL_JSON["dev"][key]
            for key in ("questions", "off_topic_questions", "rankings")
        },
        "test": RECALL_EVAL_JSON["test"],
    }
    assert "where does marta live" not in json.dumps(kept)


def test_the_table_prints_the_recall_totals_test_first():
    figures = {"database": "memory_bench_recall", **recall.summarise(RECALL_EVAL_JSON)}
    lines = report.table(bench_report({}, recall=figures)).splitlines()

    start = lines.index(
        "recall on the held-out set (wordllama:test; search limit and turn max_memories 5; 22 s):"
    )
    assert lines[start + 1 :] == [
        "recall TEST search @3: lexical 51, vector 86, vector floor+cut 82, fused 88 of 168",
        "recall TEST search @5: lexical 53, vector 96, vector floor+cut 90, fused 99 of 168",
        "recall TEST turn, 5 after pins: lexical 65, vector 99, vector floor+cut 93, "
        "fused 101 of 168",
        "recall TEST off-topic results: lexical 13, vector 140, vector floor+cut 97, "
        "fused 99 of 140",
        "recall DEV search @3: lexical 45, vector 83, vector floor+cut 80, fused 85 of 168",
        "recall DEV search @5: lexical 48, vector 94, vector floor+cut 88, fused 98 of 168",
        "recall DEV turn, 5 after pins: lexical 70, vector 98, vector floor+cut 99, "
        "fused 103 of 168",
        "recall DEV off-topic results: lexical 14, vector 140, vector floor+cut 72, "
        "fused 74 of 140",
    ]


class FakeRun:
    """subprocess.run for recall.evaluate: records the command, writes `figures` where
    --json says (when given) and exits with `code`."""

    def __init__(self, code: int = 0, figures=None, output: str = ""):
        self.code, self.figures, self.output = code, figures, output
        self.commands: list[list[str]] = []

    def __call__(self, command, **kwargs):
        self.commands.append(command)
        if self.figures is not None:
            path = command[command.index("--json") + 1]
            with open(path, "w") as out:
                out.write(json.dumps(self.figures))
        return CompletedProcess(command, self.code, stdout=self.output, stderr="")


def test_the_evaluation_runs_both_splits_in_the_scratch_database_and_reports_totals():
    fake = FakeRun(figures=RECALL_EVAL_JSON)

    figures = recall.evaluate("scratch_recall", run=fake)

    (command,) = fake.commands
    assert command[2:7] == ["recall_eval", "--split", "both", "--database", "scratch_recall"]
    assert figures == {"database": "scratch_recall", **recall.summarise(RECALL_EVAL_JSON)}


def test_a_failed_evaluation_is_reported_with_the_end_of_its_output():
    output = "\n".join(f"line {n}" for n in range(30)) + "\nCommandError: the embedder failed"

    figures = recall.evaluate("scratch_recall", run=FakeRun(code=1, output=output))

    assert figures["database"] == "scratch_recall"
    assert figures["error"] == "recall_eval exited with 1"
    said = figures["output"].splitlines()
    assert len(said) == recall.ERROR_LINES and said[-1] == "CommandError: the embedder failed"
    table = report.table(bench_report({}, recall=figures))
    assert "recall: not measured, the evaluation failed: recall_eval exited with 1" in table


def test_an_evaluation_that_writes_no_figures_is_reported_as_failed():
    figures = recall.evaluate("scratch_recall", run=FakeRun(code=0))
    assert figures["error"].startswith("unreadable figures")


def test_the_evaluation_never_runs_in_the_bench_database():
    fake = FakeRun(figures=RECALL_EVAL_JSON)

    # In the measuring process, Django's database is the bench database.
    figures = recall.evaluate(settings.DATABASES["default"]["NAME"], run=fake)

    assert fake.commands == []
    assert figures["error"] == "the evaluation never runs in the bench database"


def test_the_bench_refuses_a_recall_database_that_is_the_bench_database(tmp_path):
    with pytest.raises(CommandError, match="database of its own"):
        call_command(
            "bench",
            size="tiny",
            out=tmp_path / "tiny.json",
            database="some_bench",
            recall_database="some_bench",
        )


# --- the alternating rounds ------------------------------------------------------------------


class _Stub(BaseHTTPRequestHandler):
    """Answers every request 200 and records its path, in the order they arrive."""

    protocol_version = "HTTP/1.1"
    received: list[str] = []
    lock = threading.Lock()

    def do_GET(self):
        with self.lock:
            self.received.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


@pytest.fixture
def stub_port():
    _Stub.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("requests", [25, 6, 40])
def test_the_rounds_give_each_op_the_requested_measured_requests_in_alternation(
    stub_port, requests
):
    names = ("turn", "turn_query", "search", "remember")
    plans = {name: (lambda n=name: ("GET", f"/{n}", None, (200,))) for name in names}
    headers = dict.fromkeys(names, {})
    args = Namespace(requests=requests, warmup=2, clients=2)

    ops = run.interleaved_ops(stub_port, headers, plans, names, args)

    assert list(ops) == list(names)
    assert all(ops[name]["n"] == requests for name in names)
    # Every request reached the server, each op's warm-up once.
    sent = [path.lstrip("/") for path in _Stub.received]
    assert all(sent.count(name) == requests + 2 for name in names)
    # One block of each op per round, in the same order every round.
    blocks = [name for name, _ in groupby(sent)]
    rounds = min(requests, run.ROUNDS)
    assert blocks == list(names) * rounds
    # The requests split as evenly as they go: the first round carries the warm-up.
    sizes = [len(list(block)) for _, block in groupby(sent)][:: len(names)]
    share, extra = divmod(requests, run.ROUNDS)
    assert sizes[0] == 2 + share + (1 if extra else 0)
    assert max(sizes[1:], default=share) - min(sizes[1:], default=share) <= 1


def test_the_turn_and_the_recall_ops_are_measured_in_the_same_rounds():
    assert set(report.RECALL_TARGETS) | {"turn"} <= set(run.ROUND_OPS)
    # Each MCP op runs right after the REST op it wraps.
    for mcp_name, rest_name in run.MCP_TWINS.items():
        assert run.ROUND_OPS.index(mcp_name) == run.ROUND_OPS.index(rest_name) + 1
