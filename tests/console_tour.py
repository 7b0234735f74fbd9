"""Every console page, with something on it: a world for the layout and accessibility tests
(tests/test_browser_layout.py, tests/test_browser_a11y.py).

The world is written to overflow a narrow page: a fact, a tag, a run id and a thread id
that are long unbroken strings, a conflict, a gardening proposal and a conversation.
"""

from dataclasses import dataclass, field

from memory_core import actors, transcripts, turns, writes
from memory_core.garden import passes
from memory_core.models import Proposal

PASSWORDS = {"root": "pw-root-123", "owner": "pw-owner-123", "auditor": "pw-audit-123"}

# No spaces for a browser to break at: only overflow-wrap can keep these on the page.
LONG_FACT = (
    "the report: https://reports.example.com/"
    + "quarterly-numbers-for-the-budget-review-" * 3
    + " sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
)
LONG_RUN = "run-" + "0123456789abcdef" * 7
LONG_THREAD = "thread-" + "fedcba9876543210" * 7
# An unknown address whose text would be markup if it were not escaped.
UNKNOWN_PATH = "/no-such-page/%3Cb%3Ebold%3C/b%3E/"


@dataclass
class Tour:
    """The seeded world's addresses, in the order a visitor would meet them."""

    pages: dict[str, str] = field(default_factory=dict)
    fact: object = None
    proposal: object = None


def seed(org, users, settings) -> Tour:
    settings.GARDEN_MIN_ACTORS = 3
    settings.MEMORY_EMBEDDER = "none"
    agent = org.acme_agent
    fact = writes.publish(
        org.acme, "report-location", LONG_FACT, principal=users.p_owner, tags=["reports"]
    )
    writes.publish(org.acme, "tone", "formal", principal=users.p_owner)
    writes.remember(org.u1, "tone", "brief", principal=agent)
    # Three actors of team ops conclude the same: the gardener proposes it for the team.
    team = [org.u1] + [
        actors.put_actor(r, r, ["team:acme/ops", "tenant:acme"], org.acme_key, agent)
        for r in ("u3", "u4")
    ]
    for actor in team:
        writes.remember(actor, "tz", "Works in the Berlin time zone", principal=agent)
    passes.run_pass()
    proposal = Proposal.objects.filter(kind="promote").first()

    say = transcripts.record_message
    asked = "Where is the quarterly report?"
    say(org.u1, LONG_THREAD, "user", asked, principal=agent, run_id=LONG_RUN)
    turns.resolve_turn(
        org.u1, LONG_RUN, principal=agent, thread_id=LONG_THREAD, query="quarterly report"
    )
    say(org.u1, LONG_THREAD, "assistant", LONG_FACT, principal=agent, run_id=LONG_RUN)

    tour = Tour(fact=fact, proposal=proposal)
    tour.pages = {
        "dashboard": "/",
        "scopes": "/scopes/",
        "scope": "/scopes/tenant:acme/",
        "actors": "/actors/",
        "actor": "/actors/acme/u1/",
        "memory": f"/memories/{fact.uid}/",
        "finder": "/memories/",
        "conflicts": "/conflicts/",
        "garden": "/garden/",
        "proposal": f"/garden/{proposal.uid}/",
        "ledger": "/ledger/",
        "access": "/access/",
        "attribution": f"/attribution/?run={LONG_RUN}",
        "runs": "/runs/",
        "run": f"/runs/acme/u1/{LONG_RUN}/",
        "threads": "/threads/",
        "thread": f"/threads/{LONG_THREAD}/",
        "keys": "/keys/",
        "users": "/users/",
        "unknown page": UNKNOWN_PATH,
        "unknown memory": "/memories/mem_00000000000000000000000000/",
        "bad request": "/ledger/?kind=%00",
    }
    return tour


def log_in(page, username: str) -> None:
    page.goto("/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORDS[username])
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/login/" not in url)


def open_bulk_confirm(page) -> None:
    """The finder's bulk action, up to its confirmation page (a POST's answer)."""
    page.goto("/memories/")
    page.locator("#finder-rows input[name=m]").first.check()
    page.select_option("#bulk-form select[name=action]", "pin")
    page.click("#bulk-form button[type=submit]")
    page.wait_for_selector("#bulk-confirm")
