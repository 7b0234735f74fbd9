"""The prompt block: exact shape, sections by author, stable order, scrubbing. No database."""

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.rules.block import (
    AGENT_HEADER,
    CLOSE,
    FORGOTTEN,
    HUMAN_HEADER,
    INTRO,
    OPEN,
    PARTIAL_NOTICE,
    render,
    scrub,
)
from memory_core.rules.facts import Line, Record
from memory_core.rules.precedence import resolve
from memory_core.rules.selection import select

CHAIN = ("actor:u1", "team:ops", "tenant:acme", "global")
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def rec(id, scope, key, text, author="human", pinned=False, minute=0):
    return Record(
        id=id,
        scope=scope,
        key=key,
        text=text,
        author=author,
        pinned=pinned,
        created_at=T0 + timedelta(minutes=minute),
    )


def block_for(records, partial=False):
    return render(resolve(records, CHAIN), CHAIN, partial=partial)


WORKED_EXAMPLE = [
    rec("mem_units", "global", "units", "report distances in kilometres"),
    rec("mem_fy_mine", "actor:u1", "fiscal-year", "they report on the calendar year", "agent"),
    rec("mem_fy_org", "global", "fiscal-year", "the fiscal year starts in October"),
]


def test_worked_example_renders_both_sections_with_the_override_under_its_entry():
    rendered = block_for(WORKED_EXAMPLE)
    assert rendered.block == "\n".join(
        [
            "<memory>",
            INTRO,
            HUMAN_HEADER,
            "- [global] units: report distances in kilometres",
            AGENT_HEADER,
            "- [actor:u1] fiscal-year: they report on the calendar year",
            "    ↳ [global] a person stated: the fiscal year starts in October",
            "</memory>",
        ]
    )
    assert rendered.lines == (
        Line(1, "- [global] units: report distances in kilometres", "mem_units"),
        Line(2, "- [actor:u1] fiscal-year: they report on the calendar year", "mem_fy_mine"),
        Line(3, "    ↳ [global] a person stated: the fiscal year starts in October", "mem_fy_org"),
    )
    assert rendered.prompt_chars == len(rendered.block)


def test_frame_lines_are_single_lines_with_the_required_openings():
    for text in (INTRO, HUMAN_HEADER, AGENT_HEADER, PARTIAL_NOTICE):
        assert "\n" not in text
        assert not text.startswith(("- ", "    ↳ "))
    assert HUMAN_HEADER.startswith("Stated by people. ")
    assert AGENT_HEADER.startswith("Concluded by you. ")
    assert 2 <= INTRO.count(". ") + 1 <= 3
    assert (OPEN, CLOSE) == ("<memory>", "</memory>")


def test_every_line_text_appears_verbatim_in_the_block_in_order():
    rendered = block_for(WORKED_EXAMPLE)
    block_lines = rendered.block.split("\n")
    positions = [block_lines.index(line.text) for line in rendered.lines]
    assert positions == sorted(positions)


def test_agent_authored_beaten_value_reads_instead_has():
    records = [
        rec("mine", "actor:u1", "tone", "keep it brief", "agent"),
        rec("team", "team:ops", "tone", "be thorough", "agent"),
    ]
    rendered = block_for(records)
    assert rendered.lines[1].text == "    ↳ [team:ops] instead has: be thorough"
    assert rendered.lines[1].memory_id == "team"


def test_human_winner_over_agent_value_is_in_the_people_section():
    records = [
        rec("mine", "actor:u1", "units", "miles"),
        rec("tenant", "tenant:acme", "units", "feet", "agent"),
        rec("org", "global", "units", "kilometres"),
    ]
    block = block_for(records).block.split("\n")
    assert AGENT_HEADER not in block
    assert block[2:6] == [
        HUMAN_HEADER,
        "- [actor:u1] units: miles",
        "    ↳ [tenant:acme] instead has: feet",
        "    ↳ [global] a person stated: kilometres",
    ]


def test_section_without_entries_is_not_rendered():
    only_agent = block_for([rec("a", "actor:u1", "units", "miles", "agent")]).block
    assert HUMAN_HEADER not in only_agent
    assert AGENT_HEADER in only_agent
    only_human = block_for([rec("h", "global", "units", "kilometres")]).block
    assert AGENT_HEADER not in only_human
    assert HUMAN_HEADER in only_human


def test_lines_within_a_section_are_ordered_by_scope_then_key_never_recency():
    records = [
        rec("1", "global", "alpha", "newest but widest", minute=99),
        rec("2", "team:ops", "zulu", "team z", minute=1),
        rec("3", "team:ops", "bravo", "team b", minute=50),
        rec("4", "actor:u1", "yankee", "mine", minute=0),
    ]
    texts = [line.text for line in block_for(records).lines]
    assert texts == [
        "- [actor:u1] yankee: mine",
        "- [team:ops] bravo: team b",
        "- [team:ops] zulu: team z",
        "- [global] alpha: newest but widest",
    ]


def test_partial_notice_is_the_last_line_before_the_close_only_when_partial():
    assert PARTIAL_NOTICE not in block_for(WORKED_EXAMPLE).block
    partial = block_for(WORKED_EXAMPLE, partial=True).block.split("\n")
    assert partial[-2:] == [PARTIAL_NOTICE, "</memory>"]


def test_nothing_kept_renders_nothing_at_all():
    for partial in (False, True):
        rendered = render([], CHAIN, partial=partial)
        assert rendered.block == ""
        assert rendered.lines == ()
        assert rendered.prompt_chars == 0


def test_scrub_rewrites_forgotten_lines_by_position_and_keeps_their_markers():
    rendered = block_for(WORKED_EXAMPLE)
    block, lines = scrub(rendered.block, rendered.lines, {"mem_fy_org", "mem_units"})
    assert block.split("\n")[3:7] == [
        "- [forgotten]",
        AGENT_HEADER,
        "- [actor:u1] fiscal-year: they report on the calendar year",
        "    ↳ [forgotten]",
    ]
    assert lines == (
        Line(1, FORGOTTEN, "mem_units"),
        rendered.lines[1],
        Line(3, FORGOTTEN, "mem_fy_org"),
    )
    assert "kilometres" not in block and "October" not in block


def test_scrub_leaves_other_lines_alone_even_when_they_contain_the_same_text():
    records = [
        rec("keep", "actor:u1", "a", "same words"),
        rec("drop", "global", "b", "same words"),
    ]
    rendered = block_for(records)
    block, lines = scrub(rendered.block, rendered.lines, {"drop"})
    assert "- [actor:u1] a: same words" in block.split("\n")
    assert "- [forgotten]" in block.split("\n")
    assert [line.text for line in lines] == ["- [actor:u1] a: same words", FORGOTTEN]


def test_scrub_is_idempotent_and_ignores_unknown_ids():
    rendered = block_for(WORKED_EXAMPLE)
    assert scrub(rendered.block, rendered.lines, {"nope"}) == (rendered.block, rendered.lines)
    once = scrub(rendered.block, rendered.lines, {"mem_fy_mine"})
    assert scrub(*once, {"mem_fy_mine"}) == once


def test_scrub_refuses_lines_that_do_not_match_the_block():
    rendered = block_for(WORKED_EXAMPLE)
    with pytest.raises(ValueError):
        scrub(rendered.block, (*rendered.lines, Line(9, "x", "ghost")), {"ghost"})


RECORDS = [
    rec("r1", "global", "units", "report distances in kilometres", pinned=True, minute=1),
    rec("r2", "actor:u1", "fiscal-year", "they report on the calendar year", "agent", minute=2),
    rec("r3", "global", "fiscal-year", "the fiscal year starts in October", minute=3),
    rec("r4", "tenant:acme", "fiscal-year", "ours starts in April", "agent", minute=4),
    rec("r5", "team:ops", "tone", "keep it brief", minute=5),
    rec("r6", "actor:u1", "tone", "they like detail", "agent", minute=6),
    rec("r7", "team:ops", "oncall", "pager goes to the ops rota", minute=7),
    rec("r8", "tenant:acme", "currency", "invoice in euros", minute=8),
    rec("r9", "actor:u1", "name", "call them Sam", "agent", minute=9),
]


@given(shuffled=st.permutations(RECORDS), budget=st.integers(0, 7))
def test_rendered_block_is_invariant_under_shuffling_the_input_records(shuffled, budget):
    def pipeline(records):
        selection = select(resolve(records, CHAIN), CHAIN, budget, relevant_keys=["currency"])
        return render(selection.kept, CHAIN, selection.stats.partial)

    assert pipeline(shuffled) == pipeline(RECORDS)
