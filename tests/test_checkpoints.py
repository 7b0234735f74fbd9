"""Signed ledger checkpoints: keys, taking one, and verification against it — including
every way a superuser could rewrite history so that the chain alone still verifies."""

import base64
import json
import os
import stat

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memory_core import writes
from memory_core.errors import Invalid
from memory_core.ledger import checkpoints
from memory_core.models import AccessLog, LedgerCheckpoint, LedgerEvent
from tests import tampering


@pytest.fixture
def keys(tmp_path):
    private, public = checkpoints.write_keypair(tmp_path / "keys")
    return private, public


@pytest.fixture
def history(org, operator):
    """A few events in tenant:acme's stream after the org's own."""
    for n in range(4):
        writes.publish(org.acme, f"k{n}", f"fact number {n}", principal=operator)


def _checkpoint(keys, tmp_path, operator):
    key = checkpoints.load_signing_key(keys[0])
    taken = checkpoints.take(key, operator)
    path = tmp_path / "checkpoint.json"
    path.write_text(checkpoints.dumps(taken))
    return taken, path


def _verify(path, public, capsys):
    with pytest.raises(SystemExit) as exit_info:
        call_command("verify_ledger", checkpoint=str(path), public_key=str(public))
        raise SystemExit(0)
    out = capsys.readouterr()
    return exit_info.value.code, out.out, out.err


def _acme_seq(kind="memory.published"):
    return LedgerEvent.objects.filter(stream="tenant:acme", kind=kind).order_by("seq")[1].seq


# --- keys ------------------------------------------------------------------------------


def test_keygen_writes_a_private_key_only_its_owner_reads(tmp_path, capsys):
    call_command("ledger_keygen", out=str(tmp_path / "k"))
    private = tmp_path / "k" / "ledger-signing.key"
    public = tmp_path / "k" / "ledger-signing.pub"
    assert stat.S_IMODE(os.stat(private).st_mode) == 0o600
    assert private.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert public.read_bytes().startswith(b"-----BEGIN PUBLIC KEY-----")
    key_id = checkpoints.key_id(checkpoints.load_public_key(public))
    assert f"key id: {key_id}" in capsys.readouterr().out


def test_keygen_refuses_to_overwrite_a_key(tmp_path):
    call_command("ledger_keygen", out=str(tmp_path))
    before = (tmp_path / "ledger-signing.key").read_bytes()
    with pytest.raises(CommandError, match="exists"):
        call_command("ledger_keygen", out=str(tmp_path))
    assert (tmp_path / "ledger-signing.key").read_bytes() == before


def test_signing_key_comes_from_the_environment(monkeypatch, keys):
    pem = keys[0].read_text()
    monkeypatch.setenv("LEDGER_SIGNING_KEY", pem)
    from_env = checkpoints.load_signing_key(None)
    assert checkpoints.key_id(from_env.public_key()) == checkpoints.key_id(
        checkpoints.load_public_key(keys[1])
    )


def test_no_signing_key_is_refused(monkeypatch):
    monkeypatch.delenv("LEDGER_SIGNING_KEY", raising=False)
    with pytest.raises(Invalid, match="LEDGER_SIGNING_KEY"):
        checkpoints.load_signing_key(None)
    monkeypatch.setenv("LEDGER_SIGNING_KEY", "not a key")
    with pytest.raises(Invalid, match="private key"):
        checkpoints.load_signing_key(None)


# --- taking one --------------------------------------------------------------------------


def test_checkpoint_signs_every_streams_head_and_records_only_that_it_was_taken(
    history, keys, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("LEDGER_SIGNING_KEY", keys[0].read_text())
    out = tmp_path / "cp.json"
    call_command("ledger_checkpoint", out=str(out))
    taken = json.loads(out.read_text())
    assert taken["format"] == checkpoints.FORMAT
    streams = {h["stream"]: h for h in taken["streams"]}
    assert set(streams) == set(LedgerEvent.objects.values_list("stream", flat=True))
    for stream, head in streams.items():
        last = LedgerEvent.objects.filter(stream=stream).order_by("-seq").first()
        assert (head["seq"], head["hash"]) == (last.seq, last.hash)
        assert head["count"] == LedgerEvent.objects.filter(stream=stream).count()
    assert taken["events"] == LedgerEvent.objects.count()
    # The signature is over the canonical body, with the public key from keygen.
    public = checkpoints.load_public_key(keys[1])
    body = {k: v for k, v in taken.items() if k != "signature"}
    public.verify(base64.b64decode(taken["signature"]), checkpoints.signed_bytes(body))
    record = LedgerCheckpoint.objects.get()
    assert record.key_id == taken["key_id"] == checkpoints.key_id(public)
    assert record.signature_sha256 == checkpoints.signature_sha256(taken)
    assert record.events == taken["events"] and record.principal == "cli:ledger_checkpoint"
    assert record.heads["tenant:acme"]["hash"] == streams["tenant:acme"]["hash"]
    logged = AccessLog.objects.get(action="ledger.checkpoint")
    assert logged.principal == "cli:ledger_checkpoint" and logged.channel == "cli"
    assert logged.outcome == 201 and logged.count == taken["events"]
    # Nothing of the private key is in the database.
    private_b64 = keys[0].read_text().splitlines()[1]
    assert private_b64 not in json.dumps(list(LedgerCheckpoint.objects.values()), default=str)
    assert f"checkpoint: {out}" in capsys.readouterr().out


def test_checkpoint_without_a_key_fails_and_records_nothing(history, monkeypatch):
    monkeypatch.delenv("LEDGER_SIGNING_KEY", raising=False)
    with pytest.raises(CommandError, match="no signing key"):
        call_command("ledger_checkpoint")
    assert not LedgerCheckpoint.objects.exists()


def test_checkpoint_without_out_goes_to_the_checkpoint_dir(history, keys, tmp_path, settings):
    settings.LEDGER_CHECKPOINT_DIR = str(tmp_path / "cps")
    call_command("ledger_checkpoint", key=str(keys[0]))
    found = checkpoints.latest_file(settings.LEDGER_CHECKPOINT_DIR)
    assert found is not None and json.loads(found.read_text())["events"] > 0


def test_checkpoint_records_are_append_only(history, keys, operator):
    from django.db import InternalError, transaction

    checkpoints.take(checkpoints.load_signing_key(keys[0]), operator)
    from tests.roles import as_owner

    for statement in (
        "UPDATE memory_core_ledgercheckpoint SET events = 0",
        "DELETE FROM memory_core_ledgercheckpoint",
    ):
        with pytest.raises(InternalError), transaction.atomic(), as_owner():
            from django.db import connection

            with connection.cursor() as cursor:
                cursor.execute(statement)
    assert LedgerCheckpoint.objects.count() == 1


# --- verifying against one ---------------------------------------------------------------


def test_an_untouched_ledger_verifies_against_its_checkpoint(
    history, keys, tmp_path, operator, capsys
):
    taken, path = _checkpoint(keys, tmp_path, operator)
    code, out, err = _verify(path, keys[1], capsys)
    assert code == 0, err
    assert out.splitlines()[0] == f"ok: {LedgerEvent.objects.count()} events"
    assert f"{len(taken['streams'])} head(s) hold" in out


def test_events_appended_after_the_checkpoint_still_verify(
    org, history, keys, tmp_path, operator, capsys
):
    _, path = _checkpoint(keys, tmp_path, operator)
    writes.publish(org.acme, "later", "a later fact", principal=operator)
    writes.publish(org.root, "newer", "a global fact", principal=operator)
    code, out, _ = _verify(path, keys[1], capsys)
    assert code == 0 and f"ok: {LedgerEvent.objects.count()} events" in out


def test_an_edit_with_every_later_hash_recomputed_is_caught(
    history, keys, tmp_path, operator, capsys
):
    taken, path = _checkpoint(keys, tmp_path, operator)
    head = {h["stream"]: h for h in taken["streams"]}["tenant:acme"]
    seq = _acme_seq()
    tampering.edit_and_rehash("tenant:acme", seq, principal="user:mallory")
    # The chain alone no longer shows it ...
    from memory_core.ledger import ledger

    assert ledger.verify().ok
    # ... the checkpoint does, naming the stream and the checkpointed sequence.
    code, _, err = _verify(path, keys[1], capsys)
    assert code == 1
    assert f"stream tenant:acme, seq {head['seq']}" in err and "differs" in err


def test_deleted_events_renumbered_and_rehashed_are_caught(
    history, keys, tmp_path, operator, capsys
):
    taken, path = _checkpoint(keys, tmp_path, operator)
    head = {h["stream"]: h for h in taken["streams"]}["tenant:acme"]
    tampering.delete_and_rehash("tenant:acme", _acme_seq())
    code, _, err = _verify(path, keys[1], capsys)
    assert code == 1
    assert f"stream tenant:acme, seq {head['seq']}" in err and "missing" in err


def test_a_truncated_and_rebuilt_stream_is_caught(history, keys, tmp_path, operator, capsys):
    taken, path = _checkpoint(keys, tmp_path, operator)
    head = {h["stream"]: h for h in taken["streams"]}["tenant:acme"]
    tampering.truncate_and_rebuild("tenant:acme", keep=2)
    code, _, err = _verify(path, keys[1], capsys)
    assert code == 1
    assert f"stream tenant:acme, seq {head['seq']}" in err
    assert "2 event(s) at or before it remain" in err


def test_an_edit_without_rehashing_is_named_by_the_chain_walk(
    history, keys, tmp_path, operator, capsys
):
    _, path = _checkpoint(keys, tmp_path, operator)
    seq = _acme_seq()
    tampering.edit_in_place("tenant:acme", seq, principal="user:mallory")
    code, _, err = _verify(path, keys[1], capsys)
    assert code == 1
    assert f"stream tenant:acme, seq {seq}" in err and "hash does not match" in err


def test_a_tampered_checkpoint_fails_its_signature(history, keys, tmp_path, operator, capsys):
    taken, path = _checkpoint(keys, tmp_path, operator)
    # Someone "updates" the checkpoint to the rewritten history's head.
    taken["streams"][0]["hash"] = "0" * 64
    path.write_text(checkpoints.dumps(taken))
    code, _, err = _verify(path, keys[1], capsys)
    assert code == 1 and "signature does not match" in err


def test_a_wrong_public_key_fails(history, keys, tmp_path, operator, capsys):
    _, path = _checkpoint(keys, tmp_path, operator)
    _, other_public = checkpoints.write_keypair(tmp_path / "other")
    code, _, err = _verify(path, other_public, capsys)
    assert code == 1 and "signature does not match" in err


def test_a_checkpoint_re_signed_with_another_key_fails_against_the_real_one(
    history, keys, tmp_path, operator, capsys
):
    other_private, _ = checkpoints.write_keypair(tmp_path / "other")
    forged = checkpoints.take(checkpoints.load_signing_key(other_private), operator)
    path = tmp_path / "forged.json"
    path.write_text(checkpoints.dumps(forged))
    code, _, err = _verify(path, keys[1], capsys)
    assert code == 1 and "signature does not match" in err


def test_not_a_checkpoint_fails_cleanly(history, keys, tmp_path, capsys):
    path = tmp_path / "junk.json"
    path.write_text("{}")
    code, _, err = _verify(path, keys[1], capsys)
    assert code == 1 and "not a checkpoint" in err


def test_checkpoint_and_public_key_go_together(history, tmp_path):
    with pytest.raises(CommandError, match="go together"):
        call_command("verify_ledger", checkpoint=str(tmp_path / "x.json"))


def test_verify_ledger_without_a_checkpoint_is_unchanged(history, capsys):
    call_command("verify_ledger")
    assert capsys.readouterr().out == f"ok: {LedgerEvent.objects.count()} events\n"


def test_a_tenants_check_neither_probes_nor_names_other_streams(
    org, history, keys, tmp_path, operator
):
    taken, _ = _checkpoint(keys, tmp_path, operator)
    tampering.edit_and_rehash("tenant:globex", 1, principal="user:mallory")
    public = checkpoints.load_public_key(keys[1])
    mine = checkpoints.verify(taken, public, streams=["tenant:acme"])
    assert mine.ok and [h["stream"] for h in mine.heads] == ["tenant:acme"]
    assert mine.skipped == len(taken["streams"]) - 1
    everyone = checkpoints.verify(taken, public)
    assert not everyone.ok and everyone.stream == "tenant:globex"
