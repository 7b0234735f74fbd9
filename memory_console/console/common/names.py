"""Actor and scope names as people type them into the console's filters.

Names are per tenant (memory_core/rules/names.py), and the console reads a typed name the
way the API reads a key's. A user whose grants all lie in one tenant T names things
relative to T, as a key whose reach lies in T does: `u1` is `T/u1`, `team:ops` is
`team:T/ops`, a prompt line's `[team:ops]` is `[team:T/ops]`; the qualified forms are
accepted too, and another tenant's qualified name is kept as typed, so it finds nothing,
exactly as a name that does not exist. The pages show the stored (qualified) form.

A superuser, or a user whose grants span several tenants or lie outside every tenant,
names things qualified, as a global key does: a bare `u1` is an actor outside every
tenant. When no such actor (or scope) is readable, the bare name was most likely meant
inside some tenant, and which one cannot be told: the page says so, naming the readable
candidates, and an export refuses it (422), rather than either answering "nothing" without
a word.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from django import forms

from memory_core.accounts.permissions import readable_scope_roles
from memory_core.ledger.attribution import line_body
from memory_core.models import Actor, Scope, ScopeGrant
from memory_core.rules.names import (
    ForeignName,
    is_valid_ref,
    qualify_ref,
    qualify_scope,
    ref_tenant,
    tenant_of,
)
from memory_core.rules.scopes import GLOBAL, TENANT_KIND, is_valid_scope

# Candidates named in an "ambiguous" message at most.
MAX_CANDIDATES = 5


@dataclass(frozen=True)
class Resolved:
    """A typed name as stored (or as typed, when it names nothing definite), and why it is
    ambiguous, if it is."""

    value: str
    problem: str | None = None


def single_tenant(tokens: Iterable[str]) -> str | None:
    """The one tenant every granted scope lies in, or None (several tenants, a scope
    outside every tenant, `global`, or no grant at all)."""
    tenants = {tenant_of(token) for token in tokens}
    return tenants.pop() if len(tenants) == 1 else None


def _is_bare(token: str) -> bool:
    """A scope token that a tenant would qualify (`team:ops`, `actor:u1`)."""
    if token == GLOBAL or ":" not in token:
        return False
    kind, name = token.split(":", 1)
    return kind != TENANT_KIND and "/" not in name


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


class Names:
    """How one console user's typed names become stored ones."""

    def __init__(self, user):
        self.user = user

    @cached_property
    def _granted(self) -> list[str]:
        if self.user.is_superuser:
            return []
        return list(
            ScopeGrant.objects.filter(user=self.user).values_list("scope__token", flat=True)
        )

    @cached_property
    def tenant(self) -> str | None:
        """The tenant names are read relative to (None: they are read qualified)."""
        return None if self.user.is_superuser else single_tenant(self._granted)

    @cached_property
    def _roles(self):
        return readable_scope_roles(self.user)

    def _tenants(self) -> list[str]:
        """The tenants whose names the user might have meant: those of the grants, or every
        tenant for a reader of `global` or of a scope outside every tenant."""
        named = {tenant_of(token) for token in self._granted}
        if self.user.is_superuser or None in named:
            tokens = Scope.objects.filter(token__startswith=f"{TENANT_KIND}:").values_list(
                "token", flat=True
            )
            return sorted(token.split(":", 1)[1] for token in tokens)
        return sorted(t for t in named if t is not None)

    def _readable_actors(self, refs: list[str]) -> list[str]:
        found = Actor.objects.filter(ref__in=refs).values_list("ref", "scope_id")
        return sorted(ref for ref, scope in found if self._roles is None or scope in self._roles)

    def _readable_scopes(self, tokens: list[str]) -> list[str]:
        found = Scope.objects.filter(token__in=tokens).values_list("token", "id")
        return sorted(t for t, scope in found if self._roles is None or scope in self._roles)

    def _ambiguous(self, what: str, typed: str, candidates: list[str], example: str) -> str:
        if candidates:
            shown = candidates[:MAX_CANDIDATES]
            more = " (and others)" if len(candidates) > MAX_CANDIDATES else ""
            return (
                f"{typed!r} is ambiguous: {what}s inside a tenant are named with it; "
                f"did you mean {_listed(shown)}{more}?"
            )
        return (
            f"no {what} you may read is named {typed!r}: {what}s inside a tenant are named "
            f"with it, e.g. {example}"
        )

    def actor(self, typed: str) -> Resolved:
        """An actor ref as typed (`u1`, `acme/u1`) -> as stored."""
        if not typed or not is_valid_ref(typed):
            return Resolved(typed)
        if self.tenant is not None:
            try:
                return Resolved(qualify_ref(typed, self.tenant))
            except ForeignName:
                return Resolved(typed)
        if ref_tenant(typed) is not None or self._readable_actors([typed]):
            return Resolved(typed)
        tenants = self._tenants()
        candidates = self._readable_actors([f"{t}/{typed}" for t in tenants])
        example = f"{tenants[0] if tenants else 'tenant'}/{typed}"
        return Resolved(typed, self._ambiguous("actor", typed, candidates, example))

    def scope(self, typed: str) -> Resolved:
        """A scope token as typed (`team:ops`, `team:acme/ops`) -> as stored."""
        if not typed or not is_valid_scope(typed):
            return Resolved(typed)
        if self.tenant is not None:
            try:
                return Resolved(qualify_scope(typed, self.tenant))
            except ForeignName:
                return Resolved(typed)
        if not _is_bare(typed) or self._readable_scopes([typed]):
            return Resolved(typed)
        kind, name = typed.split(":", 1)
        tenants = self._tenants()
        candidates = self._readable_scopes([f"{kind}:{t}/{name}" for t in tenants])
        example = f"{kind}:{tenants[0] if tenants else 'tenant'}/{name}"
        return Resolved(typed, self._ambiguous("scope", typed, candidates, example))

    def line(self, pasted: str) -> Resolved:
        """A pasted prompt line whose `[scope]` is named as typed -> its first line, with the
        scope as stored (the rest, marker included, as pasted)."""
        body = line_body(pasted)
        if not body.startswith("[") or "]" not in body:
            return Resolved(pasted)
        token = body[1 : body.index("]")]
        if not is_valid_scope(token):
            return Resolved(pasted)
        scope = self.scope(token)
        if scope.value == token:
            return Resolved(pasted, scope.problem)
        first = next(ln for ln in pasted.splitlines() if ln.strip()).strip()
        return Resolved(first.replace(f"[{token}]", f"[{scope.value}]", 1), scope.problem)


class TypedNames(forms.Form):
    """A filter form some of whose fields are names as `user` types them: ACTOR_FIELDS
    (refs), SCOPE_FIELDS (tokens) and LINE_FIELDS (pasted prompt lines) are cleaned to the
    stored form. An ambiguous one keeps its typed value, and its message goes to
    `name_problems` (the page shows it; an export refuses it)."""

    ACTOR_FIELDS: tuple[str, ...] = ()
    SCOPE_FIELDS: tuple[str, ...] = ()
    LINE_FIELDS: tuple[str, ...] = ()

    def __init__(self, data=None, *args, user=None, **kwargs):
        super().__init__(data, *args, **kwargs)
        self.names = Names(user) if user is not None else None
        self.name_problems: list[str] = []

    def clean(self):
        cleaned = super().clean()
        if self.names is None:
            return cleaned
        readers = (
            (self.ACTOR_FIELDS, self.names.actor),
            (self.SCOPE_FIELDS, self.names.scope),
            (self.LINE_FIELDS, self.names.line),
        )
        for fields, read in readers:
            for name in fields:
                if cleaned.get(name):
                    resolved = read(cleaned[name])
                    cleaned[name] = resolved.value
                    if resolved.problem:
                        self.name_problems.append(resolved.problem)
        return cleaned
