"""A console user who opens a page of something outside their grants gets the 404 page, and
the refusal is written to the access log as the API writes its own (docs/administrators/console.md,
"Everywhere"): channel `console`, outcome 404, reason `not_found`, and what the address
named (ids and refs, when they have the shape of one), never a key or a text.

The prober is an administrator of tenant:globex opening tenant:acme's memory, actor, run,
thread, scope and proposal pages, and acting on its memories and keys. The superuser's
access-log page shows every row; the probed tenant sees the ones naming its actors and
scopes; the prober sees none of them.
"""

import json

import pytest

from memory_core import transcripts, turns, writes
from memory_core.garden import passes
from memory_core.models import AccessLog, Proposal

SECRETS = ["lives in Porto", "allergic to penicillin", "city", "Likes cats"]


@pytest.fixture
def acme(org, users):
    """u1's own note, a tenant policy, a run that showed them, a conversation, u1's key."""

    class Acme:
        pass

    a = Acme()
    a.note = writes.remember(org.u1, "city", "lives in Porto", principal=org.acme_agent).memory
    a.policy = writes.publish(org.acme, "units", "report in kilometres", principal=users.p_owner)
    turns.resolve_turn(org.u1, "r1", principal=org.acme_agent, thread_id="t1")
    transcripts.record_message(
        org.u1, "t1", "user", "I am allergic to penicillin", principal=org.acme_agent
    )
    a.key = org.acme_key
    return a


@pytest.fixture
def merge(org, settings):
    """A globex gardening proposal (two near-identical notes of x9)."""
    settings.GARDEN_MIN_ACTORS = 3
    settings.MEMORY_EMBEDDER = "none"
    writes.remember(org.x9, "a", "Likes cats", principal=org.globex_agent)
    writes.remember(org.x9, "b", "likes cats!", principal=org.globex_agent)
    passes.run_pass()
    return Proposal.objects.get(kind="merge")


def _after(mark: int):
    return AccessLog.objects.filter(id__gt=mark).order_by("id")


def _mark() -> int:
    return AccessLog.objects.order_by("-id").values_list("id", flat=True).first() or 0


def probe(client, user, path, *, method="get", data=None, **extra):
    """One request by `user`: its 404 page and the one refusal row it wrote."""
    client.force_login(user)
    mark = _mark()
    response = getattr(client, method)(path, data or {}, **extra)
    if extra.get("HTTP_HX_REQUEST"):
        assert response.status_code == 200  # htmx: the notice, in the fragment
        assert "nothing here, or nothing you may see" in response.text
    else:
        assert response.status_code == 404, path
        assert "Nothing here, or nothing you may see." in response.text
    [row] = _after(mark).filter(outcome__gte=400)
    assert (row.channel, row.principal, row.outcome) == (
        "console",
        f"user:{user.get_username()}",
        404,
    )
    assert row.detail["reason"] == "not_found"
    return row


def _fields(row):
    return (row.action, row.actor_ref, row.scope, row.memory_ids, row.detail)


# --- each page kind -----------------------------------------------------------------------


def test_another_tenants_memory_page(client, users, acme):
    row = probe(client, users.outsider, f"/memories/{acme.note.uid}/")
    assert _fields(row) == ("memory.read", None, None, [acme.note.uid], {"reason": "not_found"})


def test_another_tenants_actor_page(client, users, acme):
    row = probe(client, users.outsider, "/actors/acme/u1/")
    assert _fields(row) == ("actor.read", "acme/u1", None, [], {"reason": "not_found"})


def test_another_tenants_run_page(client, users, acme):
    row = probe(client, users.outsider, "/runs/acme/u1/r1/")
    detail = {"reason": "not_found", "run_id": "r1"}
    assert _fields(row) == ("run.read", "acme/u1", None, [], detail)


@pytest.mark.parametrize("query, actor_ref", [("?actor=acme/u1", "acme/u1"), ("", None)])
def test_another_tenants_thread_page(client, users, acme, query, actor_ref):
    row = probe(client, users.outsider, f"/threads/t1/{query}")
    detail = {"reason": "not_found", "thread": "t1"}
    assert _fields(row) == ("thread.read", actor_ref, None, [], detail)


@pytest.mark.parametrize(
    "path", ["/scopes/tenant:acme/", "/scopes/team:acme/ops/", "/scopes/?open=tenant:acme"]
)
def test_another_tenants_scope_page(client, users, acme, path):
    row = probe(client, users.outsider, path)
    token = path.removeprefix("/scopes/").removeprefix("?open=").rstrip("/")
    assert _fields(row) == ("scope.read", None, token, [], {"reason": "not_found"})


def test_another_tenants_proposal_page(client, users, merge):
    row = probe(client, users.owner, f"/garden/{merge.uid}/")
    detail = {"reason": "not_found", "proposal": merge.uid}
    assert _fields(row) == ("garden.read", None, None, [], detail)


def test_another_tenants_proposal_decisions(client, users, merge):
    row = probe(client, users.owner, f"/garden/{merge.uid}/dismiss/", method="post")
    assert (row.action, row.detail["proposal"]) == ("proposal.dismiss", merge.uid)
    merge.refresh_from_db()
    assert merge.state == "open"


@pytest.mark.parametrize("action", ["revoke", "pause", "resume"])
def test_another_tenants_key(client, users, acme, action):
    row = probe(client, users.outsider, f"/keys/{acme.key.uid}/{action}/", method="post")
    detail = {"reason": "not_found", "api_key": acme.key.uid}
    assert _fields(row) == (f"api_key.{action}", None, None, [], detail)
    acme.key.refresh_from_db()
    assert acme.key.revoked_at is None


@pytest.mark.parametrize(
    "action, logged_as",
    [("pin", "pin"), ("tags", "tag"), ("invalidate", "invalidate"), ("forget", "forget")],
)
@pytest.mark.parametrize("htmx", [False, True])
def test_an_action_on_another_tenants_memory(client, users, acme, action, logged_as, htmx):
    extra = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    data = {"reason": "probe", "confirm_key": "city", "tags": "x"}
    path = f"/memories/{acme.note.uid}/{action}/"
    row = probe(client, users.outsider, path, method="post", data=data, **extra)
    # One row: htmx's answer looks the memory up again, and does not log it twice.
    assert _fields(row) == (logged_as, None, None, [acme.note.uid], {"reason": "not_found"})
    assert AccessLog.objects.filter(action__in=["memory.read", logged_as]).count() == 1
    acme.note.refresh_from_db()
    assert acme.note.retired_at is None and not acme.note.pinned


def test_a_conflict_decision_on_another_tenants_memory(client, users, acme, org):
    narrow = writes.remember(org.u1, "units", "miles", principal=org.acme_agent).memory
    path = f"/conflicts/{narrow.uid}/{acme.policy.uid}/invalidate/"
    row = probe(client, users.outsider, path, method="post", data={"reason": "probe"})
    assert (row.action, row.memory_ids) == ("invalidate", [narrow.uid])


def test_an_unknown_object_is_logged_for_a_superuser_too(client, users, org):
    row = probe(client, users.su, "/memories/mem_00000000000000000000000000/")
    assert row.memory_ids == ["mem_00000000000000000000000000"]
    row = probe(client, users.su, "/actors/acme/nobody/")
    assert row.actor_ref == "acme/nobody"


# --- what the rows hold -------------------------------------------------------------------


# Wider than the columns (refs 257, scope tokens 290, host ids 128 characters) but within
# what the console takes at all (console/parameters.py); or of the wrong shape.
HOSTILE = {
    "long memory id": "/memories/" + "M" * 1000 + "/",
    "markup for an id": "/memories/mem_%3Cscript%3E/",
    "long actor ref": "/actors/" + "a" * 1000 + "/",
    "space in a ref": "/actors/acme/u%201/",
    "long scope": "/scopes/team:" + "x" * 1000 + "/",
    "long run id": "/runs/acme/u1/" + "r" * 1000 + "/",
    "bidi override in a run id": "/runs/acme/u1/r%E2%80%AE1/",
    "long thread id, malformed actor": "/threads/" + "t" * 1000 + "/?actor=acme/u%201",
    "bidi override in a thread id": "/threads/t%E2%80%AE1/",
}


@pytest.mark.parametrize("path", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_hostile_address_is_refused_and_logged_without_it(client, users, acme, path):
    row = probe(client, users.outsider, path)
    assert (row.actor_ref, row.scope, row.memory_ids) == (None, None, [])
    assert set(row.detail) == {"reason"}


def test_no_row_holds_a_key_or_a_text(client, users, acme, merge):
    for path in [
        f"/memories/{acme.note.uid}/",
        f"/memories/{acme.policy.uid}/",
        "/actors/acme/u1/",
        "/runs/acme/u1/r1/",
        "/threads/t1/?actor=acme/u1",
        "/scopes/actor:acme/u1/",
    ]:
        probe(client, users.outsider, path)
    probe(client, users.owner, f"/garden/{merge.uid}/")
    logged = json.dumps(
        [[r.actor_ref, r.scope, r.memory_ids, r.detail] for r in AccessLog.objects.all()]
    )
    for text in SECRETS:
        assert text not in logged


def test_a_page_the_user_reads_writes_no_refusal(client, users, acme):
    client.force_login(users.owner)
    mark = _mark()
    for path in [
        f"/memories/{acme.note.uid}/",
        "/actors/acme/u1/",
        "/runs/acme/u1/r1/",
        "/threads/t1/",
        "/scopes/tenant:acme/",
        "/scopes/?open=tenant:acme",
    ]:
        assert client.get(path).status_code == 200, path
    assert not _after(mark).filter(outcome__gte=400).exists()


# --- who sees the rows ---------------------------------------------------------------------


def _probe_everything(client, users, acme):
    probe(client, users.outsider, f"/memories/{acme.note.uid}/")
    probe(client, users.outsider, "/actors/acme/u1/")
    probe(client, users.outsider, "/runs/acme/u1/r1/")
    probe(client, users.outsider, "/threads/t1/?actor=acme/u1")
    probe(client, users.outsider, "/scopes/tenant:acme/")


def _shown(client, user) -> str:
    client.force_login(user)
    response = client.get("/access/", {"principal": "user:outsider", "refused": "on"})
    assert response.status_code == 200
    return response.text


def test_the_superusers_access_log_shows_every_console_refusal(client, users, acme):
    _probe_everything(client, users, acme)
    page = _shown(client, users.su)
    for action in ["memory.read", "actor.read", "run.read", "thread.read", "scope.read"]:
        assert f"<code>{action}</code>" in page
    assert page.count('class="refused"') == 5
    assert acme.note.uid in page
    assert '<strong class="refused-count">5</strong>' in page


def test_the_probed_tenant_sees_the_probes_naming_its_actors_and_scopes(client, users, acme):
    _probe_everything(client, users, acme)
    page = _shown(client, users.auditor)
    for action in ["actor.read", "run.read", "thread.read", "scope.read"]:
        assert f"<code>{action}</code>" in page
    # The memory row names no scope or actor: the superuser's alone.
    assert "<code>memory.read</code>" not in page


def test_the_prober_sees_none_of_its_refusals(client, users, acme):
    _probe_everything(client, users, acme)
    page = _shown(client, users.outsider)
    assert 'class="refused"' not in page
