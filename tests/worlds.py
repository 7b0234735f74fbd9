"""Generated organisations, built through the services, for property tests of the rules
that have a second copy (SQL beside the pure function, tests/test_rule_copies.py).

A world: tenants whose teams nest (a team under the tenant or under an earlier team), actors
with ordered memberships among their tenant's teams (so an actor's own scope often hangs in
one branch while its chain names another), an actor outside every tenant with a team of its
own, memories at every kind of scope by people and by agents (some superseded, pinned,
invalidated, expired or expiring later), and console users holding admin and auditor grants
at any scope, actors' own scopes and `global` included, plus an inactive user and a
superuser.

Names are per tenant (docs/architecture/rules.md, "Names are per tenant"): tenants are named afresh
per example, and inside them
teams and actor refs repeat from tenant to tenant. Each example builds its own data inside
the test's one transaction, so examples accumulate; a property must hold for everything in
the database, or name what it checks.
"""

import uuid
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.utils import timezone
from hypothesis import strategies as st

from memory_core import actors, curation, writes
from memory_core.accounts import keys
from memory_core.accounts.grants import grant
from memory_core.accounts.principals import Principal

MEMORY_KEYS = ["tone", "units", "fiscal-year"]
REFS = ["u1", "u2", "u3"]
# What happens to a note after it is written.
FATES = ["live", "live", "pinned", "invalidated", "expired", "expires-later"]


@st.composite
def worlds(draw, duplicates=False):
    """A generated organisation's spec. duplicates=True: some notes end on a value shared by
    their key, so the same text is held at two scopes of a chain (tests that find a memory
    by its text leave it off)."""
    tenants = []
    for _ in range(draw(st.integers(1, 3))):
        # Team j hangs under the tenant (-1) or under an earlier team of the tenant.
        parents = [draw(st.integers(-1, j - 1)) for j in range(draw(st.integers(0, 3)))]
        people = []
        for ref in draw(st.lists(st.sampled_from(REFS), unique=True, max_size=3)):
            teams = draw(st.permutations(range(len(parents))))
            people.append((ref, list(teams[: draw(st.integers(0, len(teams)))])))
        tenants.append({"teams": parents, "people": people})
    loner = draw(st.booleans())  # an actor outside every tenant, with a team of its own
    holders = [("global",), *[("tenant", t) for t in range(len(tenants))]]
    holders += [("team", t, j) for t, spec in enumerate(tenants) for j in range(len(spec["teams"]))]
    holders += [
        ("actor", t, p) for t, spec in enumerate(tenants) for p in range(len(spec["people"]))
    ]
    if loner:
        holders += [("free",), ("loner",)]
    notes = draw(
        st.lists(
            st.tuples(
                st.sampled_from(holders),
                st.sampled_from(MEMORY_KEYS),
                st.integers(1, 2),  # versions
                st.booleans(),  # by an agent (at an actor's scope only)
                st.sampled_from(FATES),
            ),
            max_size=10,
        )
    )
    users = draw(
        st.lists(
            st.lists(
                st.tuples(st.sampled_from(holders), st.sampled_from(["admin", "auditor"])),
                max_size=3,
            ),
            max_size=3,
        )
    )
    return {
        "tenants": tenants,
        "loner": loner,
        "notes": notes,
        "users": users,
        # Which notes end on the value their key shares (duplicates only).
        "shared": [draw(st.sampled_from([True, True, False])) for _ in notes] if duplicates else [],
    }


class World:
    """The generated organisation, built through the services.

    `actors`: every actor of the world; `scopes`: every scope it made (`global` included);
    `users`: its console users (the last two: an inactive one and a superuser)."""

    def __init__(self, spec, operator):
        self.tag = tag = uuid.uuid4().hex[:10]
        self.operator = operator
        root = actors.global_scope()
        self.scopes = [root]
        self.tenants, self.teams, self.people, self.agents = [], [], [], []
        for t, tenant_spec in enumerate(spec["tenants"]):
            name = f"w{tag}-{t}"
            tenant, _ = actors.ensure_scope(f"tenant:{name}", root, principal=operator)
            teams = []
            for j, parent in enumerate(tenant_spec["teams"]):
                under = tenant if parent < 0 else teams[parent]
                teams.append(actors.ensure_scope(f"team:{name}/t{j}", under, principal=operator)[0])
            key, _ = keys.create_api_key(f"host {t}", tenant, principal=operator)
            agent = Principal.for_api_key(key)
            people = [
                actors.put_actor(ref, "", [f"team:t{j}" for j in teams_of], key, agent)
                for ref, teams_of in tenant_spec["people"]
            ]
            self.tenants.append(tenant)
            self.teams.append(teams)
            self.people.append(people)
            self.agents.append(agent)
            self.scopes += [tenant, *teams, *(p.scope for p in people)]
        self.free = self.loner = None
        if spec["loner"]:
            self.free, _ = actors.ensure_scope(f"team:w{tag}-free", root, principal=operator)
            key, _ = keys.create_api_key("platform", root, principal=operator)
            self.loner_agent = Principal.for_api_key(key)
            self.loner = actors.put_actor(
                f"w{tag}-loner", "", [self.free.token], key, self.loner_agent
            )
            self.scopes += [self.free, self.loner.scope]
        self.actors = [a for people in self.people for a in people]
        if self.loner is not None:
            self.actors.append(self.loner)
        self._sharing, self._shared = spec.get("shared", []), set()
        for n, note in enumerate(spec["notes"]):
            self._note(n, *note)
        self.users = self._users(spec["users"])

    def _holder(self, holder):
        """(scope, the actor whose own scope it is, that actor's agent) for a holder."""
        kind = holder[0]
        if kind == "global":
            return self.scopes[0], None, None
        if kind == "tenant":
            return self.tenants[holder[1]], None, None
        if kind == "team":
            return self.teams[holder[1]][holder[2]], None, None
        if kind == "free":
            return self.free, None, None
        if kind == "loner":
            return self.loner.scope, self.loner, self.loner_agent
        actor = self.people[holder[1]][holder[2]]
        return actor.scope, actor, self.agents[holder[1]]

    def _note(self, n, holder, key, versions, by_agent, fate):
        scope, actor, agent = self._holder(holder)
        now = timezone.now()
        expires = {"expired": now - timedelta(days=1), "expires-later": now + timedelta(days=1)}
        memory = None
        # A sharing note ends on a text shared by its key, so that the same value held at two
        # scopes of a chain (a duplicate, not a conflict) occurs; once per slot, so that no
        # version supersedes its own text.
        sharing = n < len(self._sharing) and self._sharing[n]
        shared = sharing and (scope.pk, key) not in self._shared
        if shared:
            self._shared.add((scope.pk, key))
        for v in range(versions):
            text = f"note {self.tag} {n} v{v}"
            if shared and v == versions - 1:
                text = f"shared {self.tag} {key}"
            if actor is not None and by_agent and fate not in expires:
                memory = writes.remember(actor, key, text, principal=agent).memory
            else:
                memory = writes.publish(
                    scope, key, text, principal=self.operator, expires_at=expires.get(fate)
                )
        if fate == "pinned":
            curation.set_pinned(memory, True, principal=self.operator)
        elif fate == "invalidated":
            curation.invalidate(memory, "generated as wrong", principal=self.operator)

    def _users(self, grants_per_user):
        User = get_user_model()
        users = []
        for u, grants in enumerate(grants_per_user):
            user = User.objects.create_user(f"w{self.tag}-{u}", password=None)
            for holder, role in grants:
                scope, _, _ = self._holder(holder)
                grant(user.username, scope, role, principal=self.operator)
            users.append(user)
        inactive = User.objects.create_user(f"w{self.tag}-gone", password=None, is_active=False)
        grant(inactive.username, self.scopes[0], "admin", principal=self.operator)
        root = User.objects.create_superuser(f"w{self.tag}-root", password=None)
        return [*users, inactive, root]
