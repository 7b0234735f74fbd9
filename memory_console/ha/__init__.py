"""High availability: PostgreSQL nodes managed by Patroni, with etcd as its consensus store.

`config` writes Patroni's configuration for N nodes (pure); `cluster` starts and stops etcd
and the nodes in one directory and finds the primary; `drill` is `manage.py ha_drill`: load,
SIGKILL the primary, keep writing, kill a replica, bring the old primary back through
pg_rewind, then check every acknowledged write. docs/operators/high-availability.md.
"""
