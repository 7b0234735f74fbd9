"""Names are per tenant (memory_core/rules/names.py, DESIGN.md §2).

Widens the columns that hold scope tokens and actor refs for tenant-qualified names
(`team:acme/ops`, `actor:acme/u1`, ref `acme/u1`), adds memory_core_tenant_of() (names.tenant_of
in SQL) and two triggers that keep every scope and membership inside its tenant.

Existing databases are brought over in place: every scope below a tenant that is not yet
named inside it is renamed (`team:ops` under `tenant:acme` becomes `team:acme/ops`, `actor:u1`
becomes `actor:acme/u1`) and actor refs follow their scopes. Only the Scope and Actor rows
change. The ledger, the access log and stored digests keep the names they were written
with (history is not rewritten), so every ledger stream still verifies; streams are named
by top-level scopes, which keep their names.
"""

import django.contrib.postgres.fields
import pgtrigger.compiler
import pgtrigger.migrations
from django.db import migrations, models

TENANT_OF_SQL = """
CREATE FUNCTION memory_core_tenant_of(token text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE
        WHEN token LIKE 'tenant:%' THEN substr(token, 8)
        WHEN position('/' IN token) > 0 THEN split_part(split_part(token, ':', 2), '/', 1)
    END
$$;
"""

RENAME_INTO_TENANTS_SQL = """
WITH RECURSIVE up AS (
    SELECT id AS scope_id, parent_id, token, 0 AS depth FROM memory_core_scope
    UNION ALL
    SELECT up.scope_id, p.parent_id, p.token, up.depth + 1
    FROM up JOIN memory_core_scope p ON p.id = up.parent_id
    WHERE up.depth < 64
), tenant AS (
    SELECT DISTINCT ON (scope_id) scope_id, substr(token, 8) AS name
    FROM up WHERE depth > 0 AND token LIKE 'tenant:%'
    ORDER BY scope_id, depth
)
UPDATE memory_core_scope s
SET token = split_part(s.token, ':', 1) || ':' || t.name || '/'
            || substr(s.token, position(':' IN s.token) + 1)
FROM tenant t
WHERE t.scope_id = s.id AND s.token NOT LIKE 'tenant:%' AND position('/' IN s.token) = 0;

UPDATE memory_core_actor a SET ref = substr(s.token, 7)
FROM memory_core_scope s
WHERE s.id = a.scope_id AND s.token <> 'actor:' || a.ref;
"""


class Migration(migrations.Migration):

    dependencies = [
        ('memory_core', '0006_lean_write_indexes'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='actor',
            name='actor_ref_shape',
        ),
        migrations.RemoveConstraint(
            model_name='scope',
            name='scope_token_shape',
        ),
        migrations.AlterField(
            model_name='accesslog',
            name='actor_ref',
            field=models.CharField(blank=True, max_length=257, null=True),
        ),
        migrations.AlterField(
            model_name='accesslog',
            name='scope',
            field=models.CharField(blank=True, max_length=290, null=True),
        ),
        migrations.AlterField(
            model_name='actor',
            name='ref',
            field=models.CharField(max_length=257, unique=True),
        ),
        migrations.AlterField(
            model_name='digest',
            name='chain',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=290), size=None),
        ),
        migrations.AlterField(
            model_name='ledgerevent',
            name='actor_ref',
            field=models.CharField(blank=True, max_length=257, null=True),
        ),
        migrations.AlterField(
            model_name='ledgerevent',
            name='scope',
            field=models.CharField(max_length=290),
        ),
        migrations.AlterField(
            model_name='ledgerevent',
            name='stream',
            field=models.CharField(max_length=290),
        ),
        migrations.AlterField(
            model_name='scope',
            name='stream',
            field=models.CharField(max_length=290),
        ),
        migrations.AlterField(
            model_name='scope',
            name='token',
            field=models.CharField(max_length=290, unique=True),
        ),
        migrations.RunSQL(TENANT_OF_SQL, "DROP FUNCTION memory_core_tenant_of(text)"),
        migrations.RunSQL(RENAME_INTO_TENANTS_SQL, migrations.RunSQL.noop),
        pgtrigger.migrations.AddTrigger(
            model_name='membership',
            trigger=pgtrigger.compiler.Trigger(name='membership_in_actor_tenant', sql=pgtrigger.compiler.UpsertTriggerSql(func="\n    DECLARE scope_token text; actor_ref text;\n    BEGIN\n        SELECT token INTO scope_token FROM memory_core_scope WHERE id = NEW.scope_id;\n        SELECT ref INTO actor_ref FROM memory_core_actor WHERE id = NEW.actor_id;\n        IF scope_token <> 'global' AND memory_core_tenant_of(scope_token)\n                IS DISTINCT FROM memory_core_tenant_of('actor:' || actor_ref) THEN\n            RAISE EXCEPTION 'actor % cannot be a member of % (names are per tenant)',\n                actor_ref, scope_token USING ERRCODE = '25006';\n        END IF;\n        RETURN NEW;\n    END;\n", hash='c77e76efcecb1c11759776e2c6b1f50a0dac4ad9', operation='INSERT OR UPDATE', pgid='pgtrigger_membership_in_actor_tenant_9f4d7', table='memory_core_membership', when='BEFORE')),
        ),
        pgtrigger.migrations.AddTrigger(
            model_name='scope',
            trigger=pgtrigger.compiler.Trigger(name='scope_named_in_its_tenant', sql=pgtrigger.compiler.UpsertTriggerSql(func="\n    DECLARE parent_token text;\n    BEGIN\n        IF NEW.parent_id IS NULL THEN\n            RETURN NEW;\n        END IF;\n        SELECT token INTO parent_token FROM memory_core_scope WHERE id = NEW.parent_id;\n        IF NEW.token LIKE 'tenant:%' THEN\n            IF parent_token <> 'global' THEN\n                RAISE EXCEPTION 'scope %: a tenant hangs directly under global', NEW.token\n                    USING ERRCODE = '25006';\n            END IF;\n        ELSIF memory_core_tenant_of(NEW.token)\n                IS DISTINCT FROM memory_core_tenant_of(parent_token) THEN\n            RAISE EXCEPTION 'scope % cannot hang under % (names are per tenant)',\n                NEW.token, parent_token USING ERRCODE = '25006';\n        END IF;\n        RETURN NEW;\n    END;\n", hash='b744c4bf9f040c14c85b0b817136c03d4bec445d', operation='INSERT OR UPDATE OF "token", "parent_id"', pgid='pgtrigger_scope_named_in_its_tenant_ddf6c', table='memory_core_scope', when='BEFORE')),
        ),
        migrations.AddConstraint(
            model_name='actor',
            constraint=models.CheckConstraint(condition=models.Q(('ref__regex', '^(?:[A-Za-z0-9][A-Za-z0-9._@-]{0,127}/)?[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$')), name='actor_ref_shape'),
        ),
        migrations.AddConstraint(
            model_name='scope',
            constraint=models.CheckConstraint(condition=models.Q(('token__regex', '^(global|[a-z][a-z0-9_-]{0,31}:(?:[A-Za-z0-9][A-Za-z0-9._@-]{0,127}/)?[A-Za-z0-9][A-Za-z0-9._@-]{0,127})$')), name='scope_token_shape'),
        ),
        migrations.AddConstraint(
            model_name='scope',
            constraint=models.CheckConstraint(condition=models.Q(('token__regex', '^tenant:.*/'), _negated=True), name='scope_tenant_is_one_name'),
        ),
    ]
