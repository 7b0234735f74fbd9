"""The runs, conversation and attribution pages' parameters. Host ids (runs, threads) are read
as typed, bounded to the longest a host may send (HOST_ID_MAX), and actor refs to the
longest a qualified ref can be; a longer value is cut, not refused, like every page filter's
bad value. Actor refs and a pasted line's scope are names as the user types them (relative
to their tenant, common/names.py); the pages show them as stored."""

from django.urls import reverse
from django.utils.http import urlencode

from memory_console.console.common.forms import Bounded, Filter
from memory_console.console.common.names import TypedNames
from memory_core.errors import Invalid
from memory_core.ledger.attribution import MAX_LINE_CHARS, line_forms
from memory_core.rules.inputs import HOST_ID_MAX, host_id_problem
from memory_core.rules.names import is_valid_ref
from memory_core.rules.scopes import REF_MAX_CHARS


class ActorFilter(TypedNames, Filter):
    """`?actor=`: one actor's runs or conversations (the conversations list pages by id)."""

    ACTOR_FIELDS = ("actor",)

    actor = Bounded(REF_MAX_CHARS)


class RunFilter(ActorFilter):
    """`/runs/?actor=&before=`: and the page before a run (its uid)."""

    before = Bounded(HOST_ID_MAX)


class ThreadFilter(ActorFilter):
    """`/threads/<id>/?actor=&run=&before=`: whose thread, the run to highlight, and the page
    before a message (its uid)."""

    run = Bounded(HOST_ID_MAX)
    before = Bounded(HOST_ID_MAX)


class AttributionQuery(TypedNames, Filter):
    """`?line=` (a pasted prompt line, as pasted) or `?run=` (with `?actor=`, since run ids
    are unique per actor only): the attribution page's query, and its export's."""

    ACTOR_FIELDS = ("actor",)
    LINE_FIELDS = ("line",)
    LIMITS = {"line": MAX_LINE_CHARS, "run": HOST_ID_MAX, "actor": REF_MAX_CHARS}

    line = Bounded(MAX_LINE_CHARS, strip=False)
    run = Bounded(HOST_ID_MAX)
    actor = Bounded(REF_MAX_CHARS)

    def query(self) -> tuple[str, str, str]:
        """(pasted line, run id, actor ref); a pasted text that cannot be a prompt line
        counts as none."""
        values = self.values()
        pasted = values["line"]
        return (pasted if line_forms(pasted) else ""), values["run"], values["actor"]

    def strict_query(self) -> tuple[str, str, str]:
        """The query as an export takes it: Invalid unless every value given is usable (a
        cut line or run id, or an ambiguous name, would export something else)."""
        pasted, run_id, actor_ref = self.query()
        problems = [
            f"{name} is longer than {limit} characters"
            for name, limit in self.LIMITS.items()
            if len(self.data.get(name, "")) > limit
        ]
        if self.data.get("line", "").strip() and not pasted:
            problems.append("line: that is not a prompt line")
        run_problem = host_id_problem(run_id, "run") if run_id else None
        if run_problem:
            problems.append(run_problem)
        if actor_ref and not is_valid_ref(actor_ref):
            problems.append(f"actor: {actor_ref!r} is not an actor ref (e.g. acme/u1)")
        problems.extend(self.name_problems)
        if not problems and not (pasted or run_id):
            problems.append("give a prompt line (?line=) or a run id (?run=)")
        if problems:
            raise Invalid("; ".join(problems))
        return pasted, run_id, actor_ref

    def export_offer(self) -> dict:
        """The attribution bundle of this query (every matched line, not only those the page
        shows): its link, or why the export would refuse the query."""
        try:
            pasted, run_id, actor_ref = self.strict_query()
        except Invalid as refused:
            return {"problem": refused.message, "href": None}
        given = (("line", pasted), ("run", run_id), ("actor", actor_ref))
        query = urlencode({name: value for name, value in given if value})
        return {"problem": None, "href": f"{reverse('console:export-attribution')}?{query}"}
