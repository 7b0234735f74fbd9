"""The ledger's event hash as a SQL function, so PostgreSQL seals each event as it is
appended and a verification hashes a million events where they are stored.

Events sealed before this migration (the v1 form, hashed in Python) still verify:
memory_core.ledger checks an event the function does not match against that form too.
"""

from django.db import migrations

# The canonical text is jsonb's own rendering of one array of the event's fields, which
# PostgreSQL produces identically wherever it runs (keys of an object ordered by length,
# then bytes; ", " and ": " between items). memory_core.ledger.ledger.canonical() is the same
# rendering in Python, for auditors and for the benchmark's bulk seeding; the tests hold
# the two to each other. STABLE (not IMMUTABLE) so the planner may inline it.
CREATE = r"""
CREATE OR REPLACE FUNCTION memory_core_ledger_hash(
    stream text, seq bigint, kind text, scope text, principal text, actor text,
    payload jsonb, created_at timestamptz, prev_hash text
) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT encode(sha256(convert_to(jsonb_build_array(
        stream, seq, kind, scope, principal, actor, payload,
        to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        prev_hash
    )::text, 'UTF8')), 'hex')
$$;
"""
DROP = "DROP FUNCTION IF EXISTS memory_core_ledger_hash(text, bigint, text, text, text, text, jsonb, timestamptz, text);"


class Migration(migrations.Migration):
    dependencies = [("memory_core", "0004_login_attempt")]

    operations = [migrations.RunSQL(CREATE, DROP)]
