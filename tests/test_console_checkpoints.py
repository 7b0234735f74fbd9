"""The console's side of signed checkpoints: "Verify chain" against an uploaded checkpoint
(with an uploaded or configured public key), and the last checkpoint on the dashboard."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from memory_console.console.ledger.verification import VERIFICATION_KEY
from memory_core import writes
from memory_core.ledger import checkpoints
from memory_core.models import LedgerEvent
from tests import tampering
from tests.helpers import login


@pytest.fixture
def signed(users, org, tmp_path):
    writes.publish(org.acme, "fiscal-year", "starts in October", principal=users.p_owner)
    writes.publish(org.acme, "units", "kilometres", principal=users.p_owner)
    writes.publish(org.globex, "plan", "globex only", principal=users.p_outsider)
    private, public = checkpoints.write_keypair(tmp_path / "keys")
    taken = checkpoints.take(checkpoints.load_signing_key(private), users.p_su)
    return taken, public


def _upload(taken, public=None):
    files = {"checkpoint": SimpleUploadedFile("cp.json", checkpoints.dumps(taken).encode())}
    if public is not None:
        files["public_key"] = SimpleUploadedFile("k.pub", public.read_bytes())
    return files


def _verify(client, user, taken, public=None):
    login(client, user)
    response = client.post("/ledger/verify/", {"next": "/ledger/", **_upload(taken, public)})
    return response, client.session.get(VERIFICATION_KEY)


def test_an_uploaded_checkpoint_and_key_verify(client, users, signed):
    taken, public = signed
    response, summary = _verify(client, users.su, taken, public)
    assert response.status_code == 302 and response["Location"] == "/ledger/"
    assert summary["ok"] and summary["count"] == LedgerEvent.objects.count()
    assert summary["checkpoint"]["heads"] == len(taken["streams"])
    assert summary["checkpoint"]["key_source"] == "uploaded"
    page = client.get("/ledger/")
    assert f"{len(taken['streams'])} checkpointed heads hold" in page.text


def test_the_configured_key_is_used_without_an_upload(client, users, signed, settings):
    taken, public = signed
    settings.LEDGER_PUBLIC_KEY = str(public)
    _, summary = _verify(client, users.su, taken)
    assert summary["ok"] and summary["checkpoint"]["key_source"] == "configured"
    page = client.get("/ledger/")
    assert taken["key_id"][:16] in page.text


def test_without_any_key_the_ledger_page_says_so_and_nothing_is_checked(client, users, signed):
    taken, _ = signed
    login(client, users.su)
    data = {"next": "/ledger/?kind=memory.published", **_upload(taken)}
    response = client.post("/ledger/verify/", data)
    assert response.status_code == 302
    assert response["Location"] == "/ledger/?kind=memory.published"  # the page, as it was
    assert VERIFICATION_KEY not in client.session
    page = client.get(response["Location"])
    assert "<h1>Ledger</h1>" in page.text and "Back to the scopes" not in page.text
    assert "upload the public key to trust with the checkpoint" in page.text
    assert 'class="flash-error"' in page.text


def test_without_any_key_htmx_shows_why_in_the_chain_status_and_the_last_verdict_stands(
    client, users, signed
):
    taken, _ = signed
    login(client, users.su)
    client.post("/ledger/verify/", headers={"HX-Request": "true"})  # a plain check first
    before = client.session[VERIFICATION_KEY]
    response = client.post("/ledger/verify/", _upload(taken), headers={"HX-Request": "true"})
    assert response.status_code == 200  # htmx swaps it in
    assert response.text.lstrip().startswith('<div id="chain-status"')
    assert '<p class="error" role="alert">upload the public key to trust' in response.text
    assert f"ok: {before['count']} events" in response.text
    assert client.session[VERIFICATION_KEY] == before


def test_a_file_that_is_no_checkpoint_stays_on_the_ledger_with_why(client, users, signed):
    _, public = signed
    login(client, users.su)
    files = {
        "checkpoint": SimpleUploadedFile("cp.json", b"[1, 2]"),
        "public_key": SimpleUploadedFile("k.pub", public.read_bytes()),
    }
    response = client.post("/ledger/verify/", files)
    assert response.status_code == 302 and response["Location"] == "/ledger/"
    assert VERIFICATION_KEY not in client.session
    page = client.get("/ledger/")
    assert "not a checkpoint" in page.text and 'class="flash-error"' in page.text


def test_a_refused_upload_never_follows_an_outside_next(client, users, signed):
    taken, _ = signed
    login(client, users.su)
    response = client.post("/ledger/verify/", {"next": "https://evil.example/", **_upload(taken)})
    assert response.status_code == 302 and response["Location"] == "/ledger/"


def test_a_rewrite_with_recomputed_hashes_is_caught_in_the_console(client, users, signed):
    taken, public = signed
    head = {h["stream"]: h for h in taken["streams"]}["tenant:acme"]
    tampering.edit_and_rehash("tenant:acme", 2, principal="user:mallory")
    _, summary = _verify(client, users.auditor, taken, public)
    assert not summary["ok"]
    assert (summary["checkpoint"]["stream"], summary["checkpoint"]["seq"]) == (
        "tenant:acme",
        head["seq"],
    )
    page = client.get("/ledger/")
    assert f"broken: stream tenant:acme, seq {head['seq']}" in page.text


def test_a_tenants_auditor_checks_only_their_streams(client, users, signed):
    taken, public = signed
    tampering.edit_and_rehash("tenant:globex", 1, principal="user:mallory")
    _, summary = _verify(client, users.auditor, taken, public)
    assert summary["ok"] and summary["streams"] == ["tenant:acme"]
    assert summary["checkpoint"]["skipped"] == len(taken["streams"]) - 1
    _, everyone = _verify(client, users.su, taken, public)
    assert not everyone["ok"] and everyone["checkpoint"]["stream"] == "tenant:globex"


def test_a_forged_signature_fails_in_the_console(client, users, signed):
    taken, public = signed
    taken["streams"][0]["seq"] += 1
    _, summary = _verify(client, users.su, taken, public)
    assert not summary["ok"] and "signature does not match" in summary["problem"]


def test_checkpoint_upload_needs_a_login(client, users, signed):
    taken, public = signed
    response = client.post("/ledger/verify/", _upload(taken, public))
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_dashboard_shows_the_last_checkpoint_and_its_age(client, users, signed):
    taken, _ = signed
    page = login(client, users.auditor).get("/")
    assert 'id="checkpoint-status"' in page.text
    assert "Last signed checkpoint" in page.text and taken["key_id"][:16] in page.text
    # Global sizes are a superuser's: an auditor sees the time and age only.
    assert f"{taken['events']} events in" not in page.text
    assert f"{taken['events']} events in" in login(client, users.su).get("/").text


def test_dashboard_without_a_checkpoint_says_how_to_take_one(client, users):
    page = login(client, users.su).get("/")
    assert "No signed checkpoint taken yet" in page.text
