"""Host-supplied strings are refused with a clear message, never a database error."""

import pytest

from memory_core import transcripts, turns, writes
from memory_core.errors import Invalid
from memory_core.models import Digest, Memory, Message
from memory_core.rules.inputs import host_id_problem, text_problem
from memory_core.rules.scopes import fact_problem


@pytest.mark.parametrize("value", ["", "x" * 129, "run\x00", "tab\there", "\ud800"])
def test_host_ids_must_be_short_and_printable(value):
    assert host_id_problem(value, "run_id").startswith("run_id")


def test_free_text_allows_layout_but_not_nul_or_surrogates():
    assert text_problem("two\nlines\tok", "text", 100) is None
    assert "cannot be stored" in text_problem("nul\x00", "text", 100)
    assert "cannot be stored" in text_problem("\udfff", "text", 100)
    assert "limit is 5" in text_problem("toolong", "text", 5)


def test_a_lone_surrogate_is_not_a_fact():
    assert fact_problem("bad \ud800 fact", 240) is not None


def test_services_refuse_unstorable_ids_and_change_nothing(org):
    with pytest.raises(Invalid, match="thread_id"):
        writes.remember(org.u1, "k", "fact", principal=org.acme_agent, thread_id="t" * 129)
    with pytest.raises(Invalid, match="query"):
        turns.resolve_turn(org.u1, "run_1", principal=org.acme_agent, query="a\x00b")
    with pytest.raises(Invalid, match="run_id"):
        turns.resolve_turn(org.u1, "", principal=org.acme_agent)
    with pytest.raises(Invalid, match="text"):
        transcripts.record_message(org.u1, "thr", "user", "x\x00", principal=org.acme_agent)
    assert not Memory.objects.exists() and not Digest.objects.exists()
    assert not Message.objects.exists()


@pytest.mark.parametrize("separator", ["\u2028", "\u2029"])
def test_host_ids_refuse_line_and_paragraph_separators(separator):
    assert host_id_problem(f"run{separator}1", "run_id") == (
        "run_id contains a control, line-separator or bidirectional formatting character "
        f"(U+{ord(separator):04X})"
    )


def test_free_text_keeps_line_and_paragraph_separators():
    assert text_problem("one\u2028two\u2029three", "text", 100) is None
