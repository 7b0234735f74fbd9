"""The one list of ledger event kinds (memory_core/ledger/kinds.py): every kind the code can
write is in it, it names nothing the code does not write, and the ledger page suggests
exactly it."""

import re

from memory_core.ledger.kinds import EVENT_KINDS
from tests.code_reading import written_event_kinds
from tests.helpers import login


def test_every_kind_the_code_writes_is_listed():
    written = written_event_kinds()
    missing = {kind: where for kind, where in written.items() if kind not in EVENT_KINDS}
    assert not missing, f"add these to memory_core/ledger/kinds.py: {missing}"


def test_the_list_names_only_kinds_the_code_writes():
    assert len(set(EVENT_KINDS)) == len(EVENT_KINDS)
    assert set(EVENT_KINDS) <= set(written_event_kinds())


def test_the_ledger_page_suggests_every_kind_the_code_writes(client, users):
    page = login(client, users.auditor).get("/ledger/").text
    datalist = re.search(r'<datalist id="ledger-kinds">(.*?)</datalist>', page, re.S)[1]
    suggested = re.findall(r'<option value="([^"]+)">', datalist)
    assert sorted(suggested) == sorted(written_event_kinds())
    # The ones the hand-kept list had missed.
    for kind in ("proposal.approved", "proposal.dismissed", "api_key.paused", "api_key.resumed"):
        assert kind in suggested
