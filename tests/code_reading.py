"""What the code can write, read from its source: the ledger event kinds and the access-log
outcomes every call site passes. Tests hold the lists the console offers (its event
suggestions, its outcome filter) to these, so a kind or a status added to a service shows
up in the console, and one the code no longer writes leaves it."""

import ast
import re
from pathlib import Path

import memory_core.errors as errors

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("memory_core", "memory_console")


def _modules(packages=SOURCES):
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path, ast.parse(path.read_text(), filename=str(path))


def _functions(tree):
    """Each function of the module (and the module itself), for resolving names locally."""
    yield tree
    yield from (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))


def _values(node, scope) -> set:
    """The constants an argument can be: a constant, either branch of a conditional, or a
    local name assigned constants (or conditionals of them) in the same function."""
    if isinstance(node, ast.Constant):
        return {node.value}
    if isinstance(node, ast.IfExp):
        return _values(node.body, scope) | _values(node.orelse, scope)
    if isinstance(node, ast.Name):
        found = set()
        for assign in ast.walk(scope):
            if isinstance(assign, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == node.id for t in assign.targets
            ):
                found |= _values(assign.value, scope)
        return found
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        error = getattr(errors, node.value.id, None)  # NotFound.status
        if isinstance(error, type) and node.attr == "status":
            return {error.status}
    return set()


def _calls(names: set[tuple[str, str]]):
    """(call, its innermost function) for each `owner.method(...)` call in `names`."""
    for path, tree in _modules():
        for function in _functions(tree):
            for node in ast.walk(function):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                    and (node.func.value.id, node.func.attr) in names
                ):
                    yield path, node, function


# A ledger append made by SQL (memory_core/writes.sql): memory_core_ledger_append(lock,
# stream, '<kind>', ...), its kind a literal.
_SQL_APPEND = re.compile(r"memory_core_ledger_append\(\s*[^,()]+,\s*[^,()]+,\s*'([^']+)'")


def written_event_kinds() -> dict[str, str]:
    """{kind: where} for every ledger event kind passed to change.event / ledger.append, or
    to memory_core_ledger_append by a function of the SQL files."""
    kinds = {}
    for path, call, function in _calls({("change", "event"), ("ledger", "append")}):
        if call.args:
            for kind in _values(call.args[0], function):
                if isinstance(kind, str):
                    kinds.setdefault(kind, f"{path.relative_to(ROOT)}:{call.lineno}")
    for path in sorted((ROOT / "memory_core").rglob("*.sql")):
        text = path.read_text()
        for found in _SQL_APPEND.finditer(text):
            line = text.count("\n", 0, found.start()) + 1
            kinds.setdefault(found[1], f"{path.relative_to(ROOT)}:{line}")
    return kinds


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def logged_outcomes() -> set[int]:
    """Every outcome an access-log row can hold: the statuses passed to access_log.record
    and change.log, and those of the refusals logged as they are raised (every DomainError
    but the abstract base, which nothing raises itself)."""
    outcomes = {sub.status for sub in _subclasses(errors.DomainError)}
    for _, call, function in _calls({("access_log", "record")}):
        if len(call.args) >= 3:
            outcomes |= {v for v in _values(call.args[2], function) if isinstance(v, int)}
    for _, call, function in _calls({("change", "log")}):
        if call.args:
            outcomes |= {v for v in _values(call.args[0], function) if isinstance(v, int)}
    return outcomes


def raises_base_domain_error() -> bool:
    for _, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "DomainError":
                return True
    return False
