"""The backup/restore drill: `backup`, then `restore_check` restores into a scratch server
and verifies the ledger there against the latest signed checkpoint. Runs on a small
organisation (committed data: pg_dump sees only what is committed, hence transactional_db);
each drill starts and removes a scratch PostgreSQL, about 10-15 s."""

import pytest
from django.core.management import call_command

from memory_core import writes
from memory_core.ledger import checkpoints
from memory_core.models import LedgerEvent
from tests import tampering

# slow: each drill starts and removes a scratch PostgreSQL.
pytestmark = pytest.mark.slow


@pytest.fixture
def drill(transactional_db, org, operator, tmp_path, settings):
    writes.publish(org.acme, "fiscal-year", "starts in October", principal=operator)
    writes.publish(org.acme, "units", "kilometres", principal=operator)
    writes.remember(org.u1, "tz", "works in CET", principal=org.acme_agent)
    private, public = checkpoints.write_keypair(tmp_path / "keys")
    settings.LEDGER_CHECKPOINT_DIR = str(tmp_path / "checkpoints")
    settings.LEDGER_PUBLIC_KEY = str(public)
    call_command("ledger_checkpoint", key=str(private))
    return tmp_path


def _run(capsys, *args):
    with pytest.raises(SystemExit) as exit_info:
        call_command("restore_check", *args)
        raise SystemExit(0)
    out = capsys.readouterr()
    return exit_info.value.code, out.out, out.err


def test_a_backup_restores_and_holds_the_latest_checkpoint(drill, org, operator, capsys):
    # Written after the checkpoint: the backup holds it, and it chains to the checkpoint.
    writes.publish(org.acme, "later", "after the checkpoint", principal=operator)
    dump = drill / "backup.dump"
    call_command("backup", out=str(dump))
    assert dump.stat().st_size > 0
    code, out, err = _run(capsys, str(dump))
    assert code == 0, out + err
    assert f"ok: {LedgerEvent.objects.count()} events" in out
    head = LedgerEvent.objects.filter(stream="tenant:acme").order_by("-seq").first()
    assert f"  tenant:acme seq {head.seq} {head.hash} ({head.seq} events)" in out
    assert "drill ok" in out


def test_a_backup_of_a_tampered_ledger_fails_the_drill(drill, capsys):
    seq = LedgerEvent.objects.filter(stream="tenant:acme").order_by("seq")[1].seq
    tampering.edit_and_rehash("tenant:acme", seq, principal="user:mallory")
    dump = drill / "backup.dump"
    call_command("backup", out=str(dump))
    code, out, err = _run(capsys, str(dump))
    assert code == 1
    assert "stream tenant:acme, seq" in out and "differs from the checkpoint" in out
    assert "drill FAILED" in err


def test_restore_check_without_a_checkpoint_is_refused(transactional_db, tmp_path, settings):
    from django.core.management.base import CommandError

    settings.LEDGER_CHECKPOINT_DIR = str(tmp_path / "none")
    with pytest.raises(CommandError, match="no checkpoint"):
        call_command("restore_check", str(tmp_path / "x.dump"))


def test_restore_check_of_a_missing_backup_is_refused(drill):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no backup"):
        call_command("restore_check", str(drill / "missing.dump"))
