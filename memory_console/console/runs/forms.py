"""The runs, conversation and attribution pages' parameters. Host ids (runs, threads) and
actor refs are read as typed, bounded to the longest a host may send (HOST_ID_MAX); a
longer value is cut, not refused, like every page filter's bad value."""

from memory_console.console.common.forms import Bounded, Filter
from memory_core.ledger.attribution import MAX_LINE_CHARS, line_forms
from memory_core.rules.inputs import HOST_ID_MAX


class ActorFilter(Filter):
    """`?actor=`: one actor's runs or conversations (the conversations list pages by id)."""

    actor = Bounded(HOST_ID_MAX)


class RunFilter(ActorFilter):
    """`/runs/?actor=&before=`: and the page before a run (its uid)."""

    before = Bounded(HOST_ID_MAX)


class ThreadFilter(ActorFilter):
    """`/threads/<id>/?actor=&run=&before=`: whose thread, the run to highlight, and the page
    before a message (its uid)."""

    run = Bounded(HOST_ID_MAX)
    before = Bounded(HOST_ID_MAX)


class AttributionQuery(Filter):
    """`?line=` (a pasted prompt line, as pasted) or `?run=` (with `?actor=`, since run ids
    are unique per actor only): the attribution page's query, and its export's."""

    line = Bounded(MAX_LINE_CHARS, strip=False)
    run = Bounded(HOST_ID_MAX)
    actor = Bounded(HOST_ID_MAX)

    def query(self) -> tuple[str, str, str]:
        """(pasted line, run id, actor ref); a pasted text that cannot be a prompt line
        counts as none."""
        values = self.values()
        pasted = values["line"]
        return (pasted if line_forms(pasted) else ""), values["run"], values["actor"]
