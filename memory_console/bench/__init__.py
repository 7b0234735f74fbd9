"""`python manage.py bench`: a synthetic organisation in its own database, the real app
served by gunicorn and driven over HTTP, beside a hand-written floor and a peer store.

Modules, one per idea: `sizes` (the organisation's shape per size), `words` (texts),
`database` (the bench database, keyed by size, and whether its seed is complete),
`seed` (COPY of scopes, actors, memories and a hash-valid ledger), `load` (a fixed count of
requests over concurrent HTTP clients), `floor` (floor B and our in-process read), `peer`
(LangGraph's PostgresStore), `report` (latency summaries, the JSON report, the table) and
`run` (the measuring process, started with DATABASE_URL pointing at the bench database).
The app server under test, the HTTP client and the percentile are memory_console/loadgen/,
shared with the reliability suite.

`seed`, `floor` and `peer` write SQL of their own on purpose: the seed is COPY, floor B is
the turn by hand without Django, and the peer's bulk load fills its own store's table.
"""
