"""The MCP endpoint: agents connect with the Model Context Protocol, under the same keys,
reach, services, ledger and access log as the REST API (README, "MCP").

- views.py: the HTTP endpoint (/mcp/, /mcp/actors/<ref>/): method, Origin, key, media types;
- protocol.py: the two protocol revisions served (2026-07-28, 2025-06-18) and dispatch;
- jsonrpc.py: JSON-RPC 2.0 framing, one message per POST;
- connection.py: whose memories a call reads, fixed by the URL or the key, never the model;
- tools.py: the six tools, each a thin handler over the REST API's service call;
- arguments.py: what each tool takes, in the API's own field types;
- renderings.py: the short text a model reads beside each structured result.
"""
