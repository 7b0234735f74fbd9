"""Names are per tenant (DESIGN.md §2): how a name someone typed becomes a stored name.

A tenant is a namespace. Every scope below `tenant:T` is named inside it (`team:T/ops`,
`actor:T/u1`), so two tenants may both have a `u1` and an `ops` team, and nothing one tenant
does can reveal or block a name of another. Scopes outside every tenant keep `team:ops` and
`actor:u1`.

A key (or a console user) whose reach lies in tenant T names things relative to T: `u1` is
`T/u1`, `team:ops` is `team:T/ops`; the qualified forms are accepted too. A name qualified
with another tenant is refused by its spelling alone, before anything is looked up, so the
answer cannot depend on whether that name exists. A global reach names things qualified:
a bare `u1` is an actor outside every tenant.

Pure functions over strings: the API, the console and the commands hold to these, and so
do the database's triggers (migration 0007, memory_core_tenant_of()).
"""

from __future__ import annotations

from .scopes import GLOBAL, REF_RE, TENANT_KIND, is_valid_scope


class ForeignName(ValueError):
    """A name qualified with a tenant other than the one it is read in."""


def tenant_of(token: str) -> str | None:
    """The tenant a scope token lies in: `acme` for `tenant:acme`, `team:acme/ops` and
    `actor:acme/u1`; None for `global` and for scopes outside every tenant."""
    if token == GLOBAL or ":" not in token:
        return None
    kind, name = token.split(":", 1)
    if kind == TENANT_KIND:
        return name
    tenant, slash, _ = name.partition("/")
    return tenant if slash else None


def ref_tenant(ref: str) -> str | None:
    """`acme` for the qualified ref `acme/u1`; None for a ref outside every tenant."""
    tenant, slash, _ = ref.partition("/")
    return tenant if slash else None


def is_valid_ref(ref: object) -> bool:
    return isinstance(ref, str) and REF_RE.fullmatch(ref) is not None


def actor_token(ref: str) -> str:
    """The actor's own scope: `actor:acme/u1` for the stored ref `acme/u1`."""
    return f"actor:{ref}"


def ref_of_scope(token: str) -> str | None:
    """The stored ref whose own scope `token` is (`acme/u1` for `actor:acme/u1`), else None."""
    return token.split(":", 1)[1] if token.startswith("actor:") else None


def qualify_ref(ref: str, tenant: str | None) -> str:
    """The stored ref for `ref` as named by someone whose reach lies in `tenant`.

    Raises ForeignName for a ref qualified with another tenant (in a tenant's reach), so
    the caller answers exactly as for a name that does not exist.
    """
    named = ref_tenant(ref)
    if tenant is None:
        return ref
    if named is None:
        return f"{tenant}/{ref}"
    if named != tenant:
        raise ForeignName(ref)
    return ref


def qualify_scope(token: str, tenant: str | None) -> str:
    """The stored token for `token` as named in `tenant`'s reach: `team:ops` → `team:T/ops`.

    `global`, `tenant:…` and already qualified tokens stay as they are, except that a token
    of another tenant raises ForeignName. With no tenant (a global reach) nothing changes.
    """
    if tenant is None or token == GLOBAL or ":" not in token:
        return token
    kind, name = token.split(":", 1)
    if kind == TENANT_KIND:
        if name != tenant:
            raise ForeignName(token)
        return token
    named, slash, _ = name.partition("/")
    if not slash:
        return f"{kind}:{tenant}/{name}"
    if named != tenant:
        raise ForeignName(token)
    return token


def relative_ref(ref: str, tenant: str | None) -> str:
    """How someone whose reach lies in `tenant` is shown the stored ref (`acme/u1` → `u1`)."""
    if tenant is not None and ref_tenant(ref) == tenant:
        return ref.split("/", 1)[1]
    return ref


def placement_problem(token: str, parent: str | None) -> str | None:
    """Whether a scope may hang under `parent` in the tree, or why not.

    A tenant hangs under `global`; a scope named inside tenant T hangs under `tenant:T` or
    another scope of T; a scope outside every tenant hangs outside every tenant.
    """
    if token == GLOBAL:
        return None if parent is None else "global is the root of the tree"
    if parent is None:
        return f"{token} needs a parent scope"
    tenant = tenant_of(token)
    if token.startswith(f"{TENANT_KIND}:"):
        if parent != GLOBAL:
            return f"a tenant hangs directly under global, not under {parent}"
        return None
    if tenant_of(parent) != tenant:
        if tenant is None:
            return (
                f"{token} is named outside every tenant and cannot lie under {parent}; "
                f"name it inside tenant {tenant_of(parent)}"
            )
        return f"{token} is named inside tenant {tenant} and must lie under tenant:{tenant}"
    return None


def membership_problem(ref: str, tokens: list[str]) -> str | None:
    """An actor's memberships lie in its own tenant (or, for an actor outside every
    tenant, outside every tenant), or one tenant's names would reach into another's."""
    tenant = ref_tenant(ref)
    for token in tokens:
        if not is_valid_scope(token):
            return f"not a scope token: {token!r}"
        if token == GLOBAL:
            continue
        if tenant_of(token) != tenant:
            if tenant is None:
                return (
                    f"actor {ref!r} is outside every tenant, so {token} cannot be one of its "
                    f"scopes; name the actor inside tenant {tenant_of(token)}"
                )
            return f"actor {ref!r} lies in tenant {tenant}; {token} is not in that tenant"
    return None
