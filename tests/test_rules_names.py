"""Names are per tenant: how a typed name becomes a stored one (memory_core/rules/names.py).

Pure functions: no database.
"""

import pytest

from memory_core.rules.names import (
    ForeignName,
    membership_problem,
    placement_problem,
    qualify_ref,
    qualify_scope,
    ref_tenant,
    relative_ref,
    tenant_of,
)
from memory_core.rules.scopes import is_valid_scope


@pytest.mark.parametrize(
    "token, tenant",
    [
        ("global", None),
        ("tenant:acme", "acme"),
        ("team:acme/ops", "acme"),
        ("actor:acme/u1", "acme"),
        ("team:ops", None),
        ("actor:u1", None),
        ("project:acme/x", "acme"),
    ],
)
def test_tenant_of_reads_the_namespace_from_the_token(token, tenant):
    assert tenant_of(token) == tenant


def test_a_ref_is_qualified_by_the_tenant_of_whoever_names_it():
    assert qualify_ref("u1", "acme") == "acme/u1"
    assert qualify_ref("acme/u1", "acme") == "acme/u1"
    assert qualify_ref("u1", None) == "u1"
    assert qualify_ref("acme/u1", None) == "acme/u1"
    assert ref_tenant("acme/u1") == "acme" and ref_tenant("u1") is None


def test_a_ref_qualified_with_another_tenant_is_foreign_by_its_spelling_alone():
    with pytest.raises(ForeignName):
        qualify_ref("globex/u1", "acme")


def test_scope_tokens_are_qualified_inside_the_tenant_and_foreign_ones_refused():
    assert qualify_scope("team:ops", "acme") == "team:acme/ops"
    assert qualify_scope("team:acme/ops", "acme") == "team:acme/ops"
    assert qualify_scope("tenant:acme", "acme") == "tenant:acme"
    assert qualify_scope("global", "acme") == "global"
    assert qualify_scope("team:ops", None) == "team:ops"
    for foreign in ("team:globex/ops", "tenant:globex"):
        with pytest.raises(ForeignName):
            qualify_scope(foreign, "acme")


def test_relative_ref_shows_a_tenants_own_names_short():
    assert relative_ref("acme/u1", "acme") == "u1"
    assert relative_ref("globex/u1", "acme") == "globex/u1"
    assert relative_ref("acme/u1", None) == "acme/u1"


def test_qualified_tokens_are_valid_scopes_but_a_tenant_is_one_name():
    assert is_valid_scope("team:acme/ops") and is_valid_scope("actor:acme/jane.doe@example.com")
    assert not is_valid_scope("tenant:acme/ops")
    assert not is_valid_scope("team:acme/ops/x")
    assert not is_valid_scope("team:/ops") and not is_valid_scope("team:acme/")


@pytest.mark.parametrize(
    "token, parent, ok",
    [
        ("tenant:acme", "global", True),
        ("tenant:acme", "team:ops", False),
        ("team:acme/ops", "tenant:acme", True),
        ("team:acme/ops", "team:acme/eng", True),
        ("team:acme/ops", "global", False),
        ("team:acme/ops", "tenant:globex", False),
        ("team:ops", "tenant:acme", False),
        ("team:ops", "global", True),
        ("actor:acme/u1", "team:acme/ops", True),
        ("actor:u1", "team:acme/ops", False),
    ],
)
def test_a_scope_hangs_only_inside_its_own_tenant(token, parent, ok):
    assert (placement_problem(token, parent) is None) is ok


def test_an_actors_memberships_lie_in_its_own_tenant():
    assert membership_problem("acme/u1", ["team:acme/ops", "tenant:acme"]) is None
    assert membership_problem("u1", ["team:ops"]) is None
    assert "tenant globex" not in membership_problem("acme/u1", ["tenant:globex"])
    assert "acme" in membership_problem("acme/u1", ["tenant:globex"])
    assert "outside every tenant" in membership_problem("u1", ["tenant:acme"])
