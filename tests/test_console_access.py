"""The console's access-scoped lookups, its permission decorator and the scope tree."""

from types import SimpleNamespace

import pytest

from memory_console.console.common.access import (
    memory_for_reader,
    readable_scope_roles,
    scope_for_reader,
)
from memory_console.console.common.tree import flatten_tree
from memory_core import actors, writes
from memory_core.accounts.permissions import role_for
from memory_core.accounts.principals import Principal
from memory_core.errors import NotFound
from memory_core.models import Scope


def test_scope_for_reader_returns_scopes_inside_the_grant(users, org):
    assert scope_for_reader(users.owner, "team:acme/ops") == org.ops
    assert scope_for_reader(users.auditor, "actor:acme/u1") == org.u1.scope
    assert scope_for_reader(users.su, "tenant:globex") == org.globex


@pytest.mark.parametrize(
    "token", ["tenant:acme", "team:acme/ops", "actor:acme/u1", "global", "nope:x"]
)
def test_scope_for_reader_is_404_outside_the_grant(users, org, token):
    with pytest.raises(NotFound):
        scope_for_reader(users.outsider, token)


def test_scope_for_reader_is_404_for_an_unknown_scope_even_for_a_superuser(users):
    with pytest.raises(NotFound):
        scope_for_reader(users.su, "tenant:nowhere")


def test_memory_for_reader_returns_retired_versions_too(users, org):
    old = writes.publish(org.acme, "k", "first", principal=users.p_owner)
    writes.publish(org.acme, "k", "second", principal=users.p_owner)
    found = memory_for_reader(users.auditor, old.uid)
    assert found == old
    assert found.retired_at is not None


def test_memory_for_reader_is_404_not_403_outside_the_grant(users, org):
    memory = writes.publish(org.acme, "k", "acme only", principal=users.p_owner)
    with pytest.raises(NotFound):
        memory_for_reader(users.outsider, memory.uid)
    with pytest.raises(NotFound):
        memory_for_reader(users.outsider, "mem_DOESNOTEXIST")


def test_readable_scope_roles_agree_with_role_for_on_every_scope(users, org):
    for user in (users.owner, users.auditor, users.outsider):
        readable = readable_scope_roles(user)
        for scope in Scope.objects.all():
            assert readable.get(scope.id) == role_for(user, scope), (user, scope.token)


def test_readable_scope_roles_reach_an_actor_through_a_membership_outside_its_branch(users, org):
    # z1's own scope hangs under team:acme/eng (its narrowest membership), yet its chain
    # holds team:acme/ops, whose administrator therefore reaches it.
    from memory_core.accounts.grants import grant

    platform = Principal.for_api_key(org.global_key)
    z1 = actors.put_actor(
        "acme/z1", "", ["team:acme/eng", "team:acme/ops"], org.global_key, platform
    )
    assert z1.scope.parent.token == "team:acme/eng"
    grant("outsider", org.ops, "admin", principal=Principal.system("cli:test"))
    readable = readable_scope_roles(users.outsider)
    assert readable[z1.scope.id] == "admin" == role_for(users.outsider, z1.scope)


def test_readable_scope_roles_is_none_meaning_everything_for_a_superuser(users):
    assert readable_scope_roles(users.su) is None


def test_readable_scope_roles_keeps_the_strongest_role(users, org):
    from memory_core.accounts.grants import grant

    grant("auditor", org.ops, "admin", principal=Principal.system("cli:test"))
    readable = readable_scope_roles(users.auditor)
    assert readable[org.acme.id] == "auditor"
    assert readable[org.ops.id] == "admin"
    assert readable[org.u1.scope.id] == "admin"
    assert readable[org.u2.scope.id] == "auditor"


def _s(id, parent_id, token):
    return SimpleNamespace(id=id, parent_id=parent_id, token=token)


def test_flatten_tree_orders_depth_first_with_actors_after_other_children():
    items = [
        _s(4, 2, "actor:acme/u1"),
        _s(3, 2, "team:acme/ops"),
        _s(2, 1, "tenant:acme"),
        _s(1, None, "global"),
        _s(5, 3, "actor:acme/u2"),
    ]
    flat = [(n.item.token, n.depth) for n in flatten_tree(items)]
    assert flat == [
        ("global", 0),
        ("tenant:acme", 1),
        ("team:acme/ops", 2),
        ("actor:acme/u2", 3),
        ("actor:acme/u1", 2),
    ]


def test_flatten_tree_makes_a_scope_with_an_unreadable_parent_a_root():
    flat = flatten_tree([_s(3, 2, "team:acme/ops"), _s(4, 3, "actor:acme/u1")])
    assert [(n.item.token, n.depth) for n in flat] == [("team:acme/ops", 0), ("actor:acme/u1", 1)]


def test_flatten_tree_caps_indentation_but_not_depth():
    items = [_s(1, None, "global")] + [_s(i, i - 1, f"team:t{i:02d}") for i in range(2, 14)]
    last = flatten_tree(items)[-1]
    assert last.depth == 12
    assert last.indent == 8
