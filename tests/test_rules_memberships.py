"""The membership rule of a PUT (chain.memberships_after_put): pure, no database."""

from memory_core.rules.chain import memberships_after_put


def test_listed_scopes_replace_those_inside_the_reach_where_the_first_one_stood():
    current = ["team:a/sales", "team:a/fin", "team:a/fin-ap", "tenant:a"]
    inside = {"team:a/fin", "team:a/fin-ap"}

    merged = memberships_after_put(current, ["team:a/fin"], inside)

    assert merged == ["team:a/sales", "team:a/fin", "tenant:a"]


def test_memberships_outside_the_reach_keep_their_order():
    current = ["team:a/x", "team:a/fin", "team:a/y", "tenant:a"]

    merged = memberships_after_put(current, ["team:a/fin-new", "team:a/fin"], {"team:a/fin"})

    assert merged == ["team:a/x", "team:a/fin-new", "team:a/fin", "team:a/y", "tenant:a"]


def test_the_actors_tenant_is_never_removed():
    merged = memberships_after_put(
        ["team:a/ops", "tenant:a"], ["team:a/ops"], {"team:a/ops", "tenant:a"}, keep="tenant:a"
    )

    assert merged == ["team:a/ops", "tenant:a"]


def test_a_new_actor_takes_what_is_listed():
    assert memberships_after_put([], ["team:a/ops", "tenant:a"], set(), keep="tenant:a") == [
        "team:a/ops",
        "tenant:a",
    ]


def test_nothing_inside_the_reach_means_nothing_changes():
    current = ["team:a/ops", "tenant:a"]

    assert memberships_after_put(current, [], set(), keep="tenant:a") == current
