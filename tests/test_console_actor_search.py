"""The actor search (/actors/): by ref or name, tenant and team, only actors the user may
open, paged."""

import re

from memory_console.console.actors import reads as actor_search
from memory_core.models import AccessLog
from tests.helpers import login


def _refs(response) -> list[str]:
    return re.findall(r'<td class="key"><a href="/actors/([^"]+)/">', response.text)


def test_anonymous_is_sent_to_login(client, users):
    assert client.get("/actors/").status_code == 302


def test_lists_only_actors_the_user_may_open(client, users):
    login(client, users.owner)
    response = client.get("/actors/")
    assert _refs(response) == ["acme/u1", "acme/u2"]
    assert "globex" not in response.text and "2 actors" in response.text
    login(client, users.su)
    assert _refs(client.get("/actors/")) == ["acme/u1", "acme/u2", "globex/x9"]


def test_search_by_ref_name_tenant_and_team(client, users):
    login(client, users.su)
    assert _refs(client.get("/actors/", {"q": "u2"})) == ["acme/u2"]
    assert _refs(client.get("/actors/", {"q": "outsider"})) == ["globex/x9"]
    assert _refs(client.get("/actors/", {"tenant": "globex"})) == ["globex/x9"]
    assert _refs(client.get("/actors/", {"team": "team:acme/ops"})) == ["acme/u1"]
    assert AccessLog.objects.filter(action="actor.search", principal="user:root").exists()


def test_another_tenant_stays_hidden_whatever_the_query(client, users):
    login(client, users.owner)
    response = client.get("/actors/", {"tenant": "globex"})
    assert _refs(response) == [] and "0 actors match" in response.text


def test_paging(client, users, monkeypatch):
    monkeypatch.setattr(actor_search, "PAGE_SIZE", 2)
    login(client, users.su)
    first = client.get("/actors/")
    assert "page 1 of 2" in first.text and len(_refs(first)) == 2
    assert _refs(client.get("/actors/", {"page": 2})) == ["globex/x9"]
