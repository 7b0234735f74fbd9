"""The peer: LangGraph's PostgresStore (the `bench` extra), in the bench database.

One namespace per scope, ("memories", <scope token>), holding the live memories as items.
The peer's turn is one search per namespace of the chain, merged in the client (narrowest
scope wins per key, as ours); its remember is a put (an overwrite: no history, no ledger,
no access log). Token widths are fixed (t001, u001), so the store's LIKE prefix match on
one namespace never takes in another.
"""

import importlib.util

import psycopg

from memory_console.bench.database import PEER_MARKER_DDL

NAMESPACE = "memories"
SEARCH_LIMIT = 1000  # far above a scope's rows here: the peer must return them all


def available() -> bool:
    try:
        return importlib.util.find_spec("langgraph.store.postgres") is not None
    except ModuleNotFoundError:
        return False


def open_store(url: str):
    from langgraph.store.postgres import PostgresStore

    return PostgresStore.from_conn_string(url)


def ensure_seeded(url: str, size: str, stream) -> None:
    """Load the live memories into the store once per bench database (one INSERT … SELECT,
    the bulk path: a million puts would measure the loader, not the store)."""
    with open_store(url) as store:
        store.setup()
    with psycopg.connect(url) as conn:
        conn.execute(PEER_MARKER_DDL)
        if conn.execute("SELECT 1 FROM bench_peer_seed WHERE size = %s", [size]).fetchone():
            return
        stream.write("Loading the peer's store ...\n")
        stream.flush()
        conn.execute("DELETE FROM store")
        items = conn.execute(
            """
            INSERT INTO store (prefix, key, value, created_at, updated_at)
            SELECT %s || '.' || s.token, m.key,
                   jsonb_build_object('text', m.text, 'author', m.author, 'pinned', m.pinned,
                                      'id', m.uid),
                   m.created_at, m.created_at
            FROM memory_core_memory m JOIN memory_core_scope s ON s.id = m.scope_id
            WHERE m.retired_at IS NULL
            """,
            [NAMESPACE],
        ).rowcount
        conn.execute("INSERT INTO bench_peer_seed (size, items) VALUES (%s, %s)", [size, items])


def chain_read(store, chain: list[str]) -> dict:
    """The peer's turn: a search per namespace of the chain, merged narrowest first."""
    merged: dict[str, dict] = {}
    for token in chain:
        for item in store.search((NAMESPACE, token), limit=SEARCH_LIMIT):
            entry = merged.get(item.key)
            if entry is None:
                merged[item.key] = {"winner": item, "overrides": []}
            else:
                entry["overrides"].append(item)
    return merged


def put(store, actor_token: str, key: str, fact: str) -> None:
    store.put((NAMESPACE, actor_token), key, {"text": fact, "author": "agent", "pinned": False})
