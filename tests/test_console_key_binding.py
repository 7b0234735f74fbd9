"""Binding a new key to one actor from the console's keys page: the same service and rules as
`create_api_key --actor` (the actor named relative to the reach's tenant or qualified, and
inside the reach), except that the console registers nobody. A refusal is the form again
with the message (422), and nothing is created."""

import pytest

from memory_core import erasure
from memory_core.accounts import keys
from memory_core.models import AccessLog, Actor, ApiKey, LedgerEvent
from tests.helpers import login


def _create(client, user, reach, actor, name="desk"):
    login(client, user)
    return client.post("/keys/create/", {"name": name, "reach": reach, "actor": actor})


@pytest.mark.parametrize("named", ["u1", "acme/u1"])
def test_owner_binds_a_new_key_to_an_actor_named_relative_or_qualified(client, users, org, named):
    response = _create(client, users.owner, "tenant:acme", named)
    assert response.status_code == 303
    key = ApiKey.objects.get(name="desk")
    assert key.actor == org.u1 and key.reach == org.acme
    page = client.get("/keys/").text
    assert "acts for the actor <strong>acme/u1</strong> alone" in page
    secret = page.split('class="secret" readonly value="', 1)[1].split('"', 1)[0]
    assert keys.authenticate(secret).bound_ref == "acme/u1"
    # Ledgered as the command ledgers it: the event names the actor, never the secret.
    event = LedgerEvent.objects.get(kind="api_key.created", payload__api_key=key.uid)
    assert event.actor_ref == "acme/u1" and event.principal == "user:owner"
    assert event.payload == {"api_key": key.uid, "reach": "tenant:acme"}
    row = AccessLog.objects.get(action="api_key.create", detail__api_key=key.uid)
    assert (row.outcome, row.actor_ref, row.channel) == (201, "acme/u1", "console")


def test_the_key_list_shows_the_binding(client, users, org):
    _create(client, users.owner, "tenant:acme", "u1")
    key = ApiKey.objects.get(name="desk")
    row = client.get("/keys/").text.split(f'id="key-{key.uid}"', 1)[1].split("</tr>", 1)[0]
    assert 'bound to <a href="/actors/acme/u1/">acme/u1</a>' in row


def test_superuser_binds_a_global_key_to_a_qualified_ref(client, users, org):
    assert _create(client, users.su, "global", "globex/x9").status_code == 303
    assert ApiKey.objects.get(name="desk").actor == org.x9


def test_without_an_actor_the_key_is_unbound(client, users, org):
    assert _create(client, users.owner, "tenant:acme", "  ").status_code == 303
    assert ApiKey.objects.get(name="desk").actor is None


@pytest.mark.parametrize(
    "user, reach, named",
    [
        ("owner", "tenant:acme", "u7"),  # exists nowhere: the console registers nobody
        ("owner", "tenant:acme", "globex/x9"),  # another tenant's actor, named qualified
        ("owner", "team:acme/ops", "u2"),  # in acme, but not in team ops
        ("owner", "team:acme/ops", "acme/u2"),
        ("outsider", "tenant:globex", "acme/u1"),  # globex's admin naming an acme actor
    ],
)
def test_an_actor_outside_the_reach_is_422_and_nothing_is_made(
    client, users, org, user, reach, named
):
    counts = (ApiKey.objects.count(), Actor.objects.count(), LedgerEvent.objects.count())
    response = _create(client, getattr(users, user), reach, named)
    assert response.status_code == 422
    assert f"actor &#x27;{named}&#x27; not found within the reach {reach}" in response.text
    # The form is shown again as it was sent.
    assert f'name="actor" maxlength="257" value="{named}"' in response.text
    assert (ApiKey.objects.count(), Actor.objects.count(), LedgerEvent.objects.count()) == counts
    assert not AccessLog.objects.filter(action="actor.register").exists()
    refusal = AccessLog.objects.get(action="api_key.create", outcome=404)
    assert refusal.channel == "console" and refusal.principal == f"user:{user}"


def test_an_unknown_actor_is_refused_alike_whether_or_not_another_tenant_has_it(client, users, org):
    absent = _create(client, users.owner, "tenant:acme", "globex/nobody")
    present = _create(client, users.owner, "tenant:acme", "globex/x9")
    assert absent.status_code == present.status_code == 422
    assert "globex/nobody&#x27; not found within the reach tenant:acme" in absent.text
    assert "globex/x9&#x27; not found within the reach tenant:acme" in present.text


def test_a_malformed_actor_name_is_422_and_makes_nothing(client, users, org):
    counts = (ApiKey.objects.count(), Actor.objects.count(), LedgerEvent.objects.count())
    response = _create(client, users.owner, "tenant:acme", "not a ref!")
    assert response.status_code == 422
    assert 'class="error"' in response.text
    assert (ApiKey.objects.count(), Actor.objects.count(), LedgerEvent.objects.count()) == counts


def test_an_erased_actor_is_422_and_makes_nothing(client, users, org):
    erasure.erase_actor(org.u2, principal=users.p_owner)
    keys_before, events_before = ApiKey.objects.count(), LedgerEvent.objects.count()
    response = _create(client, users.owner, "tenant:acme", "u2")
    assert response.status_code == 422
    assert "actor &#x27;u2&#x27; was erased: no key can be bound to it" in response.text
    assert ApiKey.objects.count() == keys_before
    assert LedgerEvent.objects.count() == events_before
    assert AccessLog.objects.filter(action="api_key.create", outcome=410).exists()


def test_the_command_still_registers_an_unknown_actor(org, operator):
    key, _ = keys.create_api_key("cli desk", org.acme, principal=operator, actor_ref="u7")
    assert key.actor.ref == "acme/u7"


def test_the_command_refuses_an_erased_actor_too(org, operator, users):
    from memory_core.errors import Gone

    erasure.erase_actor(org.u2, principal=users.p_owner)
    with pytest.raises(Gone):
        keys.create_api_key("cli desk", org.acme, principal=operator, actor_ref="u2")
    assert not ApiKey.objects.filter(name="cli desk").exists()


def test_an_auditor_cannot_create_a_bound_key(client, users, org):
    response = _create(client, users.auditor, "tenant:acme", "u1")
    assert response.status_code == 403
    assert not ApiKey.objects.filter(name="desk").exists()


def test_a_hostile_actor_name_is_escaped(client, users, org):
    response = _create(client, users.owner, "tenant:acme", "<script>x</script>")
    assert response.status_code == 422
    assert "<script>x</script>" not in response.text
