"""The load-generation tooling lives on the delivery side (memory_console/loadgen/,
memory_console/bench/), so the arrows point down: memory_core never imports memory_console;
and every latency figure it reports uses one percentile definition, nearest rank. No
database.
"""

import ast
import importlib.util
from pathlib import Path

import pytest
from django.core.management import get_commands
from hypothesis import given
from hypothesis import strategies as st

import memory_core
from memory_console.loadgen.percentiles import percentile

CORE = Path(memory_core.__file__).resolve().parent
DELIVERY = "memory_console"
# Calls that import a module named by a string.
DYNAMIC_IMPORTS = {"import_module", "import_string", "__import__"}


def _is_delivery(module: str | None) -> bool:
    return module is not None and (module == DELIVERY or module.startswith(DELIVERY + "."))


def delivery_imports(source: str) -> list[str]:
    """The delivery-side modules a module's source imports, statically or by name."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if _is_delivery(alias.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _is_delivery(node.module):
            found.append(node.module)
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            first = node.args[0]
            if (
                name in DYNAMIC_IMPORTS
                and isinstance(first, ast.Constant)
                and isinstance(first.value, str)
                and _is_delivery(first.value)
            ):
                found.append(first.value)
    return found


def test_memory_core_never_imports_memory_console():
    modules = sorted(CORE.rglob("*.py"))
    assert len(modules) > 30  # the walk found the package
    offenders = {
        str(path.relative_to(CORE.parent)): imports
        for path in modules
        if (imports := delivery_imports(path.read_text()))
    }
    assert offenders == {}


@pytest.mark.parametrize(
    "source",
    [
        "import memory_console.settings",
        "from memory_console.bench import peer",
        "def f():\n    from memory_console import wsgi",
        "importlib.import_module('memory_console.bench.run')",
        "import_string('memory_console.wsgi.application')",
    ],
)
def test_the_import_check_sees_every_form_of_import(source):
    assert delivery_imports(source)


def test_the_import_check_ignores_names_in_strings_and_lookalikes():
    source = 'os.environ["DJANGO_SETTINGS_MODULE"] = "memory_console.settings"\n'
    source += "import memory_consoles"
    assert delivery_imports(source) == []


def test_the_tooling_and_its_command_are_on_the_delivery_side():
    assert importlib.util.find_spec("memory_core.bench") is None
    assert get_commands()["bench"] == "memory_console"


# --- the one percentile --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "p", "expected"),
    [
        ([], 95, 0.0),
        ([7.0], 50, 7.0),
        ([1, 2, 3, 4], 50, 2),  # a measured value, never the midpoint 2.5
        ([4, 1, 3, 2], 50, 2),  # in any order
        ([1, 2, 3, 4], 51, 3),
        (list(range(1, 21)), 95, 19),
        (list(range(1, 101)), 99, 99),
        (list(range(1, 101)), 7, 7),  # 7 / 100 * 100 is 7.000000000000001 in floats
        (list(range(1, 11)), 100, 10),
        (list(range(1, 11)), 0, 1),
    ],
)
def test_percentile_is_nearest_rank(values, p, expected):
    assert percentile(values, p) == expected


@pytest.mark.parametrize("p", [-1, -0.01, 100.5])
def test_percentile_outside_0_to_100_is_refused(p):
    with pytest.raises(ValueError):
        percentile([1.0, 2.0], p)


@given(
    st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=300),
    st.integers(min_value=1, max_value=100),
)
def test_percentile_is_the_smallest_value_with_p_percent_at_or_below_it(values, p):
    """The definition, checked by exact integer arithmetic."""
    result = percentile(values, p)
    assert result in values
    n = len(values)

    def share_at_or_below(v):  # as a count, compared with p % of n without floats
        return 100 * sum(1 for x in values if x <= v)

    assert share_at_or_below(result) >= p * n
    below = [v for v in values if v < result]
    assert not below or share_at_or_below(max(below)) < p * n
    assert sorted(values)[-(-p * n // 100) - 1] == result  # rank ceil(p * n / 100)
