"""The API keys page: who sees which keys, creating one (secret shown once), revoking."""

import re

import pytest
from django.test import Client

from memory_core.accounts import keys
from memory_core.models import AccessLog, ApiKey, LedgerEvent
from tests.helpers import login, refusals


def _names_listed(response) -> set[str]:
    return set(re.findall(r'<td class="text">([^<]*)</td>', response.text))


def _create(client, user, name="support bot", reach="tenant:acme"):
    return login(client, user).post("/keys/create/", {"name": name, "reach": reach})


def _revoke(client, user, key):
    return login(client, user).post(f"/keys/{key.uid}/revoke/")


def _secret_in(response) -> str:
    return re.search(r'class="secret" readonly value="(mc_[^"]+)"', response.text).group(1)


# --- who gets in -----------------------------------------------------------------------


def test_anonymous_is_sent_to_login(client, users):
    response = client.get("/keys/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_anonymous_create_and_revoke_are_sent_to_login_and_change_nothing(client, users, org):
    count = ApiKey.objects.count()
    for path, data in [
        ("/keys/create/", {"name": "k", "reach": "tenant:acme"}),
        (f"/keys/{org.acme_key.uid}/revoke/", {}),
    ]:
        response = client.post(path, data)
        assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert ApiKey.objects.count() == count
    assert ApiKey.objects.get(pk=org.acme_key.pk).revoked_at is None


@pytest.mark.parametrize(
    "who, names",
    [
        ("su", {"acme host", "globex host", "platform"}),
        ("owner", {"acme host"}),
        ("auditor", {"acme host"}),
        ("outsider", {"globex host"}),
    ],
)
def test_the_list_holds_the_keys_whose_reach_lies_under_the_users_grants(client, users, who, names):
    response = login(client, getattr(users, who)).get("/keys/")
    assert response.status_code == 200
    assert _names_listed(response) == names


def test_the_list_shows_prefix_reach_creator_and_state(client, users, org):
    keys.revoke_api_key(org.acme_key, principal=users.p_owner)
    text = login(client, users.su).get("/keys/").text
    assert f"mc_{org.acme_key.prefix}…" in text
    assert 'href="/scopes/tenant:acme/"' in text
    assert "cli:test" in text
    row = re.search(rf'<tr id="key-{org.acme_key.uid}".*?</tr>', text, re.S).group(0)
    assert "revoked" in row and "Revoke…" not in row


def test_auditor_sees_the_list_without_any_form(client, users, org):
    text = login(client, users.auditor).get("/keys/").text
    assert "acme host" in text
    assert 'action="/keys/create/"' not in text
    assert "/revoke/" not in text
    assert "creating or revoking one needs an administrator" in text


def test_owner_sees_a_revoke_form_and_only_the_reaches_they_administer(client, users, org):
    text = login(client, users.owner).get("/keys/").text
    assert f'action="/keys/{org.acme_key.uid}/revoke/"' in text
    offered = set(re.findall(r'<option value="([^"]+)"[^>]*>\1', text.split('id="key-reach"')[1]))
    assert offered == {"tenant:acme", "team:acme/ops"}


def test_user_without_grants_gets_an_empty_page(client, users, django_user_model):
    nobody = django_user_model.objects.create_user("nobody", password="pw-nobody-123")
    response = login(client, nobody).get("/keys/")
    assert response.status_code == 200
    assert "No keys to show" in response.text
    assert _names_listed(response) == set()
    assert 'action="/keys/create/"' not in response.text


def test_the_nav_links_to_api_keys_for_everyone_logged_in(client, users):
    assert 'href="/keys/"' in login(client, users.auditor).get("/scopes/").text


def test_htmx_filter_gets_the_rows_fragment(client, users, org):
    keys.revoke_api_key(org.globex_key, principal=users.p_su)
    response = login(client, users.su).get("/keys/?state=revoked", headers={"HX-Request": "true"})
    assert response.status_code == 200
    assert 'id="key-rows"' in response.text and "<html" not in response.text
    assert _names_listed(response) == {"globex host"}
    assert "HX-Request" in response["Vary"]


def test_reach_filter(client, users, org):
    response = login(client, users.su).get("/keys/?reach=global")
    assert _names_listed(response) == {"platform"}


# --- create ----------------------------------------------------------------------------


def test_owner_creates_a_key_and_sees_its_secret_once(client, users, org):
    posted = _create(client, users.owner, "support bot", "tenant:acme")
    assert posted.status_code == 303 and posted["Location"] == "/keys/#new-key"
    assert "mc_" not in posted.text
    response = client.get("/keys/")
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    assert "it is not stored and will not be shown again" in response.text
    secret = _secret_in(response)
    assert response.text.count(secret) == 1

    key = ApiKey.objects.get(name="support bot")
    assert key.reach == org.acme and key.created_by == "user:owner"
    assert key.revoked_at is None
    # Only the hash is stored; the clear secret is nowhere in the row.
    assert key.secret_hash == keys.hash_secret(secret) != secret
    assert secret not in str([getattr(key, f.attname) for f in ApiKey._meta.fields])
    assert keys.authenticate(secret) == key
    event = LedgerEvent.objects.get(kind="api_key.created", payload__api_key=key.uid)
    assert event.principal == "user:owner" and event.scope == "tenant:acme"
    assert AccessLog.objects.filter(action="api_key.create", outcome=201).exists()

    # Never again: not on the next page, not in the session, not in any log.
    assert secret not in client.get("/keys/").text
    assert secret not in str(dict(client.session))
    assert not AccessLog.objects.filter(detail__icontains=secret[3:]).exists()
    assert secret[3:] not in str(list(LedgerEvent.objects.values_list("payload", flat=True)))


def test_reloading_after_create_shows_no_secret_and_creates_no_second_key(client, users, org):
    count = ApiKey.objects.count()
    posted = _create(client, users.owner, "support bot", "tenant:acme")
    first, reload = client.get(posted["Location"]), client.get(posted["Location"])
    secret = _secret_in(first)
    assert secret not in reload.text and 'class="secret"' not in reload.text
    assert "no-store" not in reload.get("Cache-Control", "")
    assert ApiKey.objects.count() == count + 1
    assert ApiKey.objects.filter(name="support bot", revoked_at__isnull=True).count() == 1
    assert LedgerEvent.objects.filter(kind="api_key.created", principal="user:owner").count() == 1


def test_an_htmx_filter_after_create_leaves_the_secret_for_the_page(client, users, org):
    _create(client, users.owner, "support bot", "tenant:acme")
    rows = client.get("/keys/", {"state": "live"}, headers={"HX-Request": "true"})
    assert 'class="secret"' not in rows.text
    assert _secret_in(client.get("/keys/"))


def test_the_reach_selector_preselects_nothing_and_lists_the_narrowest_first(client, users, org):
    text = login(client, users.su).get("/keys/").text.split('id="key-reach"')[1]
    text = text.split("</select>")[0]
    assert re.search(r'<option value="" selected disabled>', text)
    assert len(re.findall(r"\bselected\b", text)) == 1
    offered = re.findall(r'<option value="([^"]+)"', text)
    assert offered.index("team:acme/ops") < offered.index("tenant:acme") < offered.index("global")
    assert offered[-1] == "global"


def test_creating_without_a_reach_is_a_form_error(client, users, org):
    count = ApiKey.objects.count()
    response = login(client, users.owner).post("/keys/create/", {"name": "bot"})
    assert response.status_code == 422 and "choose the scope" in response.text
    assert ApiKey.objects.count() == count


def test_owner_creates_a_key_at_a_team_below_their_tenant(client, users, org):
    assert _create(client, users.owner, "ops bot", "team:acme/ops").status_code == 303
    assert ApiKey.objects.get(name="ops bot").reach == org.ops


def test_superuser_creates_a_global_key(client, users, org):
    assert _create(client, users.su, "everywhere", "global").status_code == 303
    assert ApiKey.objects.get(name="everywhere").reach == org.root


@pytest.mark.parametrize("reach", ["tenant:globex", "global", "actor:globex/x9", "tenant:nowhere"])
def test_owner_cannot_create_a_key_beyond_their_grants(client, users, org, reach):
    count = ApiKey.objects.count()
    response = _create(client, users.owner, "sneaky", reach)
    assert response.status_code == 403
    assert "recorded in the access log" in response.text
    assert ApiKey.objects.count() == count
    assert not LedgerEvent.objects.filter(kind="api_key.created", principal="user:owner").exists()
    assert refusals("api_key.create", 403, "user:owner").filter(scope=reach).exists()


def test_auditor_cannot_create_a_key(client, users, org):
    count = ApiKey.objects.count()
    response = _create(client, users.auditor, "audit bot", "tenant:acme")
    assert response.status_code == 403
    assert ApiKey.objects.count() == count
    assert refusals("api_key.create", 403, "user:auditor").exists()


def test_outsider_cannot_create_a_key_for_acme(client, users, org):
    count = ApiKey.objects.count()
    assert _create(client, users.outsider, "x", "tenant:acme").status_code == 403
    assert ApiKey.objects.count() == count


@pytest.mark.parametrize(
    "name, reach, message",
    [
        ("  ", "tenant:acme", "needs a name"),
        ("x" * 101, "tenant:acme", "needs a name"),
        ("bot", "", "choose the scope"),
    ],
)
def test_invalid_create_rerenders_the_form_with_the_message(
    client, users, org, name, reach, message
):
    count = ApiKey.objects.count()
    response = _create(client, users.owner, name, reach)
    assert response.status_code == 422
    assert message in response.text
    assert 'action="/keys/create/"' in response.text
    assert ApiKey.objects.count() == count


def test_superuser_naming_an_unknown_reach_is_422(client, users):
    count = ApiKey.objects.count()
    response = _create(client, users.su, "bot", "tenant:nowhere")
    assert response.status_code == 422 and "no scope tenant:nowhere" in response.text
    assert ApiKey.objects.count() == count


def test_a_get_of_create_or_revoke_is_sent_to_the_keys_page(client, users, org):
    login(client, users.owner)
    count = ApiKey.objects.filter(revoked_at=None).count()
    for path in ["/keys/create/", f"/keys/{org.acme_key.uid}/revoke/"]:
        response = client.get(path)
        assert response.status_code == 303 and response["Location"] == "/keys/"
    assert ApiKey.objects.filter(revoked_at=None).count() == count


# --- revoke ----------------------------------------------------------------------------


def test_owner_revokes_an_acme_key(client, users, org):
    assert keys.authenticate(org.acme_secret) == org.acme_key
    response = _revoke(client, users.owner, org.acme_key)
    assert response.status_code == 302 and response["Location"] == "/keys/"
    key = ApiKey.objects.get(pk=org.acme_key.pk)
    assert key.revoked_at is not None
    assert keys.authenticate(org.acme_secret) is None
    assert LedgerEvent.objects.filter(
        kind="api_key.revoked", payload__api_key=key.uid, principal="user:owner"
    ).exists()
    assert "Revoked the key acme host" in client.get("/keys/").text


def test_revoking_twice_changes_nothing_more(client, users, org):
    _revoke(client, users.owner, org.acme_key)
    revoked_at = ApiKey.objects.get(pk=org.acme_key.pk).revoked_at
    assert _revoke(client, users.owner, org.acme_key).status_code == 302
    assert ApiKey.objects.get(pk=org.acme_key.pk).revoked_at == revoked_at
    assert LedgerEvent.objects.filter(kind="api_key.revoked").count() == 1


def test_superuser_revokes_any_key(client, users, org):
    assert _revoke(client, users.su, org.global_key).status_code == 302
    assert keys.authenticate(org.global_secret) is None


@pytest.mark.parametrize("who, key", [("outsider", "acme_key"), ("owner", "global_key")])
def test_a_key_outside_the_users_grants_is_404_to_revoke(client, users, org, who, key):
    target = getattr(org, key)
    response = _revoke(client, getattr(users, who), target)
    assert response.status_code == 404
    assert ApiKey.objects.get(pk=target.pk).revoked_at is None
    assert not LedgerEvent.objects.filter(kind="api_key.revoked").exists()


def test_an_unknown_key_is_404(client, users):
    assert login(client, users.su).post("/keys/key_NOSUCHKEY/revoke/").status_code == 404


def test_auditor_cannot_revoke(client, users, org):
    response = _revoke(client, users.auditor, org.acme_key)
    assert response.status_code == 403
    assert ApiKey.objects.get(pk=org.acme_key.pk).revoked_at is None
    assert keys.authenticate(org.acme_secret) == org.acme_key
    assert refusals("api_key.revoke", 403, "user:auditor").filter(scope="tenant:acme").exists()


# --- CSRF and escaping -----------------------------------------------------------------


def test_posts_without_csrf_token_are_refused(users, org):
    client = Client(enforce_csrf_checks=True)
    client.force_login(users.owner)
    count = ApiKey.objects.count()
    assert client.post("/keys/create/", {"name": "k", "reach": "tenant:acme"}).status_code == 403
    assert client.post(f"/keys/{org.acme_key.uid}/revoke/").status_code == 403
    assert ApiKey.objects.count() == count
    assert ApiKey.objects.get(pk=org.acme_key.pk).revoked_at is None


def test_posts_with_the_page_csrf_token_are_accepted(users, org):
    client = Client(enforce_csrf_checks=True)
    client.force_login(users.owner)
    page = client.get("/keys/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    data = {"csrfmiddlewaretoken": token, "name": "k", "reach": "tenant:acme"}
    assert client.post("/keys/create/", data).status_code == 303
    revoke = client.post(f"/keys/{org.acme_key.uid}/revoke/", {"csrfmiddlewaretoken": token})
    assert revoke.status_code == 302


def test_a_hostile_key_name_is_escaped(client, users, org):
    posted = _create(client, users.owner, "<script>alert(1)</script>", "tenant:acme")
    assert posted.status_code == 303
    for text in (client.get("/keys/").text, client.get("/keys/").text):
        assert "<script>alert(1)" not in text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
