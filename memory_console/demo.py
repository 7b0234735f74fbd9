"""A demo organisation for `serve --demo`, built only through the services real traffic uses.

Two tenants with their teams, a dozen actors registered through API keys, people's
policies at global, tenant and team scope (some pinned), agents' conclusions at actor scope
that contradict wider policies, version chains, a promotion, an invalidation, and the
conversations and turns (digests) where the agents learned what they remember. Because it
goes through the services, the ledger and access log read as if all of it had happened.

Loading is one transaction, detected by the `tenant:acme` scope: a second load is a no-op,
and changes no user (rerun_notice says how to set a new password explicitly). The people
are created through accounts.users, so their creation is ledgered (`user.created`).
"""

import json
import secrets
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import transaction

from memory_core import actors, curation, transcripts, turns, writes
from memory_core.accounts import grants, keys, users
from memory_core.accounts.principals import Principal
from memory_core.management.progress import Progress
from memory_core.models import Actor, Digest, Memory, Scope, Thread

MARKER = "tenant:acme"

TENANTS = {
    "tenant:acme": (
        "Acme Corp",
        {
            "team:acme/finance": "Acme Finance",
            "team:acme/ops": "Acme Operations",
            "team:acme/sales": "Acme Sales",
        },
    ),
    "tenant:globex": (
        "Globex",
        {"team:globex/research": "Globex Research", "team:globex/support": "Globex Support"},
    ),
}

# ref, display name, memberships narrowest first.
ACTORS = [
    ("u1", "Uma Patel", ["team:acme/finance", "tenant:acme"]),
    ("u2", "Ben Okafor", ["team:acme/finance", "tenant:acme"]),
    ("u3", "Carla Mendes", ["team:acme/ops", "tenant:acme"]),
    ("u4", "Dev Sharma", ["team:acme/ops", "tenant:acme"]),
    ("u5", "Erin Walsh", ["team:acme/sales", "tenant:acme"]),
    ("u6", "Farid Haddad", ["team:acme/sales", "team:acme/finance", "tenant:acme"]),
    ("u7", "Grace Lin", ["tenant:acme"]),
    ("g1", "Hana Novak", ["team:globex/research", "tenant:globex"]),
    ("g2", "Ivo Petrov", ["team:globex/research", "tenant:globex"]),
    ("g3", "Jana Müller", ["team:globex/support", "tenant:globex"]),
    ("g4", "Kofi Mensah", ["team:globex/support", "tenant:globex"]),
    ("g5", "Lea Rossi", ["team:globex/support", "team:globex/research", "tenant:globex"]),
]

# scope, key, text, pinned, tags, who publishes it ("admin": the superuser).
POLICIES = [
    ("global", "units", "report distances in kilometres", True, ["policy"], "admin"),
    ("global", "fiscal-year", "the fiscal year starts in October", False, ["finance"], "admin"),
    ("global", "tone", "keep answers short and plain; no marketing language", False, [], "admin"),
    ("global", "date-format", "write dates as YYYY-MM-DD", False, ["style"], "admin"),
    ("global", "privacy", "never repeat a card or account number back", False, [], "admin"),
    ("tenant:acme", "currency", "quote prices in US dollars", False, ["finance"], "alice"),
    (
        "tenant:acme",
        "escalation",
        "escalate outages to the on-call engineer in #acme-incidents",
        True,
        ["ops"],
        "alice",
    ),
    (
        "tenant:acme",
        "support-hours",
        "support is staffed 08:00-17:00 Eastern, Monday to Friday",
        False,
        ["support"],
        "alice",
    ),
    (
        "team:acme/finance",
        "approvals",
        "expenses above $5,000 need a second approver",
        True,
        ["finance"],
        "alice",
    ),
    (
        "team:acme/finance",
        "close-calendar",
        "month-end close runs on the third business day",
        False,
        ["finance"],
        "alice",
    ),
    (
        "team:acme/ops",
        "units",
        "report distances in miles; the fleet's odometers are imperial",
        False,
        ["ops"],
        "alice",
    ),
    (
        "team:acme/ops",
        "maintenance-window",
        "maintenance windows are Sundays 02:00-04:00 UTC",
        False,
        ["ops"],
        "alice",
    ),
    (
        "team:acme/sales",
        "discounts",
        "discounts above 15% need a sales director's sign-off",
        False,
        ["sales"],
        "alice",
    ),
    ("tenant:globex", "currency", "quote prices in euros", False, ["finance"], "admin"),
    ("tenant:globex", "date-format", "write dates as DD.MM.YYYY", False, ["style"], "admin"),
    (
        "tenant:globex",
        "language",
        "answer in the customer's language; default to English",
        False,
        [],
        "admin",
    ),
    (
        "team:globex/research",
        "citations",
        "cite the internal wiki page for every figure you quote",
        False,
        ["research"],
        "admin",
    ),
    (
        "team:globex/support",
        "first-response",
        "answer new tickets within 4 business hours",
        True,
        ["support"],
        "admin",
    ),
]


@dataclass(frozen=True)
class Remember:
    """The agent calls its remember tool: one assistant line, the write, the tool's reply."""

    call: str
    key: str
    fact: str


@dataclass(frozen=True)
class Run:
    run_id: str
    query: str | None
    steps: list = field(default_factory=list)  # (role, text) pairs and Remember calls


# actor ref, thread id, runs. Each run starts with the turn request that stores its digest.
CONVERSATIONS = [
    (
        "u1",
        "th-u1-budget",
        [
            Run(
                "run-u1-1",
                "quarterly numbers for the budget review",
                [
                    ("user", "Can you pull together the Q3 numbers for the budget review?"),
                    (
                        "assistant",
                        "Sure. Our fiscal year starts in October, so fiscal Q3 is April to "
                        "June. Is that the quarter you mean?",
                    ),
                    (
                        "user",
                        "No, July to September. My group reports on the calendar year, "
                        "not the October fiscal year.",
                    ),
                    Remember("call-u1-1", "fiscal-year", "they report on the calendar year"),
                    ("assistant", "Noted. Here are July to September, by cost centre."),
                ],
            ),
            Run(
                "run-u1-2",
                None,
                [
                    ("user", "Thanks. The same for Q4, please."),
                    ("assistant", "Calendar Q4 is October to December; here it is."),
                ],
            ),
        ],
    ),
    (
        "u2",
        "th-u2-trip",
        [
            Run(
                "run-u2-1",
                "mileage claim for the Boston trip",
                [
                    ("user", "How far was the drive from Hartford to Boston for my claim?"),
                    ("assistant", "About 163 kilometres each way."),
                    ("user", "Please give me miles, I always file mileage in miles."),
                    Remember("call-u2-1", "units", "files travel claims in miles"),
                    ("assistant", "About 101 miles each way, 202 for the round trip."),
                ],
            )
        ],
    ),
    (
        "u3",
        "th-u3-oncall",
        [
            Run(
                "run-u3-1",
                None,
                [
                    ("user", "Who is on call this week? The rotation changed on Monday."),
                    ("assistant", "Let me check the schedule."),
                    ("user", "It always flips on Mondays at 09:00, for the whole ops team."),
                    Remember(
                        "call-u3-1",
                        "on-call-rotation",
                        "the ops on-call rotation changes every Monday at 09:00",
                    ),
                    Remember(
                        "call-u3-2", "preferred-contact", "prefers email for non-urgent questions"
                    ),
                    ("assistant", "This week it is Priya; the next handover is Monday 09:00."),
                ],
            ),
            Run(
                "run-u3-2",
                "how to reach Carla",
                [
                    ("user", "If something breaks tonight, call me rather than email."),
                    Remember(
                        "call-u3-3",
                        "preferred-contact",
                        "wants a phone call for anything urgent, email otherwise",
                    ),
                    ("assistant", "Understood: urgent things by phone, the rest by email."),
                ],
            ),
        ],
    ),
    (
        "u3",
        "th-u3-tooling",
        [
            Run(
                "run-u3-3",
                "contact preferences",
                [
                    ("user", "We moved to Slack. DM me there; phone only for real outages."),
                    Remember(
                        "call-u3-4",
                        "preferred-contact",
                        "prefers Slack direct messages; a phone call only for outages",
                    ),
                    ("assistant", "Got it. Slack DMs from now on, phone for outages only."),
                ],
            )
        ],
    ),
    (
        "u4",
        "th-u4-site",
        [
            Run(
                "run-u4-1",
                "maintenance schedule for the Denver site",
                [
                    ("user", "Can we patch the Denver routers this weekend?"),
                    ("assistant", "The standard window is Sunday 02:00-04:00 UTC."),
                    ("user", "Denver is staffed on Saturdays only; book it for Saturday."),
                    Remember(
                        "call-u4-1",
                        "maintenance-window",
                        "their Denver site is patched on Saturdays, when it is staffed",
                    ),
                    ("user", "Also, I still cannot get onto the VPN."),
                    Remember(
                        "call-u4-2", "vpn-access", "is locked out of the VPN until IT resets it"
                    ),
                    ("assistant", "Booked for Saturday, and I have opened a VPN ticket."),
                ],
            )
        ],
    ),
    (
        "u5",
        "th-u5-quote",
        [
            Run(
                "run-u5-1",
                "quote for a customer in Toronto",
                [
                    ("user", "Draft a quote for the Toronto account, 40 seats."),
                    ("assistant", "40 seats at $30 is $1,200 a month."),
                    ("user", "My accounts are all Canadian. Quote in Canadian dollars."),
                    Remember("call-u5-1", "currency", "quotes their Canadian accounts in CAD"),
                    ("assistant", "40 seats at CA$41 is CA$1,640 a month."),
                ],
            )
        ],
    ),
    (
        "u6",
        "th-u6-forecast",
        [
            Run(
                "run-u6-1",
                None,
                [
                    ("user", "Explain the forecast variance to me. Don't skimp on detail."),
                    Remember("call-u6-1", "tone", "likes detailed answers with worked examples"),
                    ("assistant", "Here is the variance, line by line, with an example."),
                ],
            )
        ],
    ),
    (
        "g1",
        "th-g1-lab",
        [
            Run(
                "run-g1-1",
                "date format for lab notebooks",
                [
                    ("user", "Log today's run in the notebook."),
                    ("assistant", "Logged as 14.03.2025."),
                    ("user", "Lab notebooks use ISO dates, please."),
                    Remember("call-g1-1", "date-format", "uses ISO dates in lab notebooks"),
                    ("assistant", "Fixed: 2025-03-14."),
                ],
            )
        ],
    ),
    (
        "g2",
        "th-g2-data",
        [
            Run(
                "run-g2-1",
                "where are the research datasets",
                [
                    ("user", "Where do the shared datasets live now?"),
                    (
                        "assistant",
                        "I do not have that on file. Do you know where they were moved?",
                    ),
                    ("user", "All of research uses the globex-research-data bucket now."),
                    Remember(
                        "call-g2-1",
                        "dataset-location",
                        "the shared research datasets live in the globex-research-data bucket",
                    ),
                    ("assistant", "Thanks, I will point people there."),
                ],
            )
        ],
    ),
    (
        "g3",
        "th-g3-ticket",
        [
            Run(
                "run-g3-1",
                None,
                [
                    ("user", "Können Sie mir bitte auf Deutsch antworten?"),
                    Remember("call-g3-1", "language", "prefers answers in German"),
                    ("assistant", "Natürlich, ab jetzt auf Deutsch."),
                ],
            )
        ],
    ),
    (
        "g4",
        "th-g4-queue",
        [
            Run(
                "run-g4-1",
                "which ticket queue",
                [
                    ("user", "Send escalations to the new help-desk queue, not the mailbox."),
                    Remember(
                        "call-g4-1", "ticket-queue", "escalates through the new help-desk queue"
                    ),
                    ("assistant", "Will do."),
                ],
            )
        ],
    ),
]

# Turns taken after the curation below, so some digests show its results.
LATER_TURNS = [
    ("u1", "run-u1-3", "th-u1-budget", "fiscal year"),
    ("u3", "run-u3-4", None, None),
    ("u7", "run-u7-1", "th-u7-hello", "support hours"),
    ("g2", "run-g2-2", None, "datasets"),
    ("g5", "run-g5-1", None, None),
]

PEOPLE = [
    # username, email, what they are (for the printed logins)
    ("admin", "admin@example.com", "superuser"),
    ("alice", "alice@example.com", "admin of tenant:acme"),
    ("gus", "gus@example.com", "auditor of tenant:globex"),
]


class DemoConflict(Exception):
    """Existing data that the demo would have to overwrite to load."""


def load_demo(stdout=None) -> dict:
    """Load the demo organisation; {"loaded": False} if it is already there.

    Returns the logins (username, password, role) to print, and the API keys' secrets;
    nothing is stored in clear. Progress goes to `stdout` when given.
    """
    if Scope.objects.filter(token=MARKER).exists():
        return {"loaded": False}
    steps = (
        len(PEOPLE)
        + sum(1 + len(teams) for _, teams in TENANTS.values())
        + len(ACTORS)
        + len(POLICIES)
        + sum(len(runs) for _, _, runs in CONVERSATIONS)
        + len(LATER_TURNS)
        + 1  # curation
    )
    with Progress(steps, "demo", stdout, quiet=stdout is None) as progress:
        with transaction.atomic():
            return _Loader(progress).load()


def superuser_name() -> str:
    return next(name for name, _, role in PEOPLE if role == "superuser")


def rerun_notice() -> list[str]:
    """What a `serve --demo` on an already-loaded demo says about its superuser.

    Nothing about an existing user is changed by loading the demo again: not its password
    (shown once, when it was created, and stored nowhere), not its sessions, not anything
    else. A new password is an explicit act, and the notice says which.
    """
    username = superuser_name()
    exists = get_user_model().objects.filter(username=username, is_superuser=True).exists()
    if not exists:
        return [
            f"There is no demo superuser {username!r}: create one with "
            "`python manage.py createsuperuser`."
        ]
    return [
        f"The demo superuser {username!r} exists; its password and sessions are unchanged "
        "(the password was shown when the demo was first loaded, and is not stored).",
        f"To give it a new password: `python manage.py changepassword {username}`, or "
        "'New password…' on the console's Users page as another superuser.",
    ]


class _Loader:
    def __init__(self, progress):
        self.progress = progress
        self.people = {}
        self.logins = []
        self.api_keys = []
        self.agents = {}  # tenant token -> API key principal
        self.actors = {}

    def load(self) -> dict:
        self._people()
        self._scopes_and_keys()
        self._actors()
        self._policies()
        self._conversations()
        self._curation()
        self._later_turns()
        return {
            "loaded": True,
            "logins": self.logins,
            "api_keys": self.api_keys,
            "counts": {
                "actors": len(self.actors),
                "live_memories": Memory.objects.live().count(),
                "threads": Thread.objects.count(),
                "digests": Digest.objects.count(),
            },
        }

    def _as(self, username: str) -> Principal:
        return Principal.for_user(self.people[username])

    def _people(self) -> None:
        User = get_user_model()
        operator = Principal.system("cli:demo")
        for username, email, role in PEOPLE:
            user = User.objects.filter(username=username).first()
            password = None
            if user is None:
                password = secrets.token_urlsafe(12)
                user = users.create_user(
                    username,
                    password,
                    principal=operator,
                    superuser=role == "superuser",
                    email=email,
                )
            elif role == "superuser" and not user.is_superuser:
                raise DemoConflict(f"a user {username!r} exists and is not a superuser")
            # An existing account keeps its password: the demo never resets one.
            self.people[username] = user
            self.logins.append({"username": username, "password": password, "role": role})
            self.progress.advance()

    def _scopes_and_keys(self) -> None:
        root = actors.global_scope()
        admin = self._as("admin")
        for token, (label, teams) in TENANTS.items():
            tenant, _ = actors.ensure_scope(token, root, label, principal=admin)
            for team, team_label in teams.items():
                actors.ensure_scope(team, tenant, team_label, principal=admin)
                self.progress.advance()
            name = f"{label} assistant"
            key, secret = keys.create_api_key(name, tenant, principal=admin)
            self.agents[token] = Principal.for_api_key(key)
            self.api_keys.append({"name": name, "reach": token, "secret": secret})
            self.progress.advance()
        grants.grant("alice", Scope.objects.get(token="tenant:acme"), "admin", principal=admin)
        grants.grant("gus", Scope.objects.get(token="tenant:globex"), "auditor", principal=admin)

    def _agent_for(self, actor: Actor) -> Principal:
        tenant = next(token for token in actors.chain_of(actor) if token in TENANTS)
        return self.agents[tenant]

    def _actors(self) -> None:
        for ref, name, memberships in ACTORS:
            tenant = memberships[-1]
            agent = self.agents[tenant]
            self.actors[ref] = actors.put_actor(ref, name, memberships, agent.api_key, agent)
            self.progress.advance()

    def _policies(self) -> None:
        scopes = {s.token: s for s in Scope.objects.filter(token__in={p[0] for p in POLICIES})}
        for token, key, text, pinned, tags, who in POLICIES:
            writes.publish(
                scopes[token], key, text, principal=self._as(who), pinned=pinned, tags=tags
            )
            self.progress.advance()

    def _conversations(self) -> None:
        for ref, thread, runs in CONVERSATIONS:
            actor = self.actors[ref]
            agent = self._agent_for(actor)
            for run in runs:
                turns.resolve_turn(
                    actor, run.run_id, principal=agent, thread_id=thread, query=run.query
                )
                for step in run.steps:
                    if isinstance(step, Remember):
                        self._remember(actor, agent, thread, run.run_id, step)
                    else:
                        role, text = step
                        transcripts.record_message(
                            actor, thread, role, text, principal=agent, run_id=run.run_id
                        )
                self.progress.advance()

    def _remember(self, actor, agent, thread, run_id, call: Remember) -> None:
        request = {"tool_call_id": call.call, "key": call.key, "fact": call.fact}
        transcripts.record_message(
            actor,
            thread,
            "assistant",
            f"remember {json.dumps(request)}",
            principal=agent,
            run_id=run_id,
        )
        written = writes.remember(
            actor,
            call.key,
            call.fact,
            principal=agent,
            run_id=run_id,
            tool_call_id=call.call,
            thread_id=thread,
        )
        reply = {"id": written.memory.uid, "scope": written.memory.scope.token, "ok": True}
        transcripts.record_message(
            actor, thread, "tool", json.dumps(reply), principal=agent, run_id=run_id
        )

    def _curation(self) -> None:
        admin, alice = self._as("admin"), self._as("alice")
        live = Memory.objects.live().select_related("scope")

        # A third version of a people's policy: a correction, then a republish.
        hours = live.get(scope__token="tenant:acme", key="support-hours")
        hours = writes.correct(
            hours, "support is staffed 08:00-18:00 Eastern, Monday to Friday", principal=alice
        )
        writes.publish(
            hours.scope,
            "support-hours",
            "support is staffed 08:00-18:00 Eastern on weekdays and 09:00-13:00 on Saturdays",
            principal=admin,
            tags=["support"],
        )
        # A pin set after the fact, as an administrator would in the console.
        curation.set_pinned(live.get(scope__token="global", key="privacy"), True, principal=admin)

        # An agent's conclusion that holds for the whole team, republished there by a
        # person; the actor's own copy is retired as promoted.
        rotation = live.get(scope__token="actor:acme/u3", key="on-call-rotation")
        writes.promote(
            rotation,
            Scope.objects.get(token="team:acme/ops"),
            principal=alice,
            retire_original=True,
        )
        # ... and one republished for a team while the actor keeps its own note.
        datasets = live.get(scope__token="actor:globex/g2", key="dataset-location")
        writes.promote(datasets, Scope.objects.get(token="team:globex/research"), principal=admin)

        vpn = live.get(scope__token="actor:acme/u4", key="vpn-access")
        curation.invalidate(vpn, "resolved: IT reset the token on Tuesday", principal=alice)
        self.progress.advance()

    def _later_turns(self) -> None:
        for ref, run_id, thread, query in LATER_TURNS:
            actor = self.actors[ref]
            agent = self._agent_for(actor)
            turns.resolve_turn(actor, run_id, principal=agent, thread_id=thread, query=query)
            if thread is not None and query is not None:
                transcripts.record_message(
                    actor,
                    thread,
                    "user",
                    f"Quick question about {query}.",
                    principal=agent,
                    run_id=run_id,
                )
            self.progress.advance()
