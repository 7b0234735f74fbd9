"""Accessibility of every console page, checked by axe-core in the browser: no violation of
impact "serious" or "critical" (contrast, names and labels, landmarks, duplicate ids ...),
for the superuser on every page and for a tenant's administrator and auditor on the pages
they see differently. axe is vendored (tests/vendor/) and run with page.evaluate, which the
console's Content-Security-Policy does not apply to (a <script> tag would be refused)."""

from pathlib import Path

import pytest

from tests.console_tour import UNKNOWN_PATH, log_in, open_bulk_confirm, seed

pytestmark = pytest.mark.browser

AXE = (Path(__file__).parent / "vendor" / "axe.min.js").read_text(encoding="utf-8")
SERIOUS = ("serious", "critical")

RUN = """
async (impacts) => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations
    .filter((v) => impacts.includes(v.impact))
    .map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.slice(0, 4).map((n) => n.target.join(" ")),
    }));
}
"""


def axe_problems(page, where: str) -> list[str]:
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE)
    found = page.evaluate(RUN, list(SERIOUS))
    return [f"{where}: {v['impact']} {v['id']} ({v['help']}) at {v['nodes']}" for v in found]


def test_no_console_page_has_a_serious_accessibility_violation(
    browser, live_server, org, users, settings
):
    tour = seed(org, users, settings)
    problems: list[str] = []

    def context_for(who: str | None):
        context = browser.new_context(
            base_url=live_server.url, viewport={"width": 1280, "height": 900}
        )
        page = context.new_page()
        page.set_default_timeout(15_000)
        if who:
            log_in(page, who)
        return context, page

    def visit(page, who: str, name: str, path: str) -> None:
        page.goto(path)
        problems.extend(axe_problems(page, f"{who} {name} ({path})"))

    context, page = context_for(None)
    visit(page, "anonymous", "login", "/login/")
    visit(page, "anonymous", "unknown page", UNKNOWN_PATH)
    context.close()

    context, page = context_for("root")
    for name, path in tour.pages.items():
        visit(page, "root", name, path)
    open_bulk_confirm(page)
    problems.extend(axe_problems(page, "root bulk confirm"))
    context.close()

    # What a tenant's administrator and auditor see differently: their menus, the actions
    # offered or withheld, and the refusal page.
    seen_by = {
        "owner": ("dashboard", "scope", "memory", "conflicts", "proposal"),
        "auditor": ("memory", "actor", "ledger", "access", "keys"),
    }
    for who, names in seen_by.items():
        context, page = context_for(who)
        for name in names:
            visit(page, who, name, tour.pages[name])
        visit(page, who, "refused", "/users/")
        context.close()

    assert not problems, "\n".join(problems)
