"""Load-generation tooling: what drives the real app from outside, shared by the benchmark
(`manage.py bench`, memory_console/bench/) and the reliability suite (tests/reliability/).
None of it is imported by the served app.

Modules, one per idea: `server` (the app server under test: `manage.py serve` in a
subprocess on a free loopback port, and waiting for it), `client` (one HTTP request, timed,
and a logged-in console session), `mcp` (an MCP tool call as a client sends it) and
`percentiles` (the one percentile definition, nearest rank, of every latency figure either
of them reports).
"""
