"""Seed the private database of the reliability tests: run as a script with DATABASE_URL set,
a JSON spec on stdin, and the created secrets as one JSON line on stdout.

Spec: {"scopes": [[token, parent], ...], "keys": [[name, reach], ...],
       "users": [[username, password, [[scope, role], ...]], ...],
       "memories": [[scope, key, text], ...]}
"""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memory_console.settings")


def main() -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from memory_core import actors, writes
    from memory_core.accounts import keys
    from memory_core.accounts.grants import grant
    from memory_core.accounts.principals import Principal
    from memory_core.models import Scope

    spec = json.loads(sys.stdin.read())
    system = Principal.system("cli:reliability")
    out = {"keys": {}, "memories": {}}
    for token, parent in spec.get("scopes", []):
        actors.ensure_scope(token, Scope.objects.get(token=parent), principal=system)
    for name, reach in spec.get("keys", []):
        _, secret = keys.create_api_key(name, Scope.objects.get(token=reach), principal=system)
        out["keys"][name] = secret
    User = get_user_model()
    for username, password, grants in spec.get("users", []):
        User.objects.create_user(username, f"{username}@example.com", password)
        for token, role in grants:
            grant(username, Scope.objects.get(token=token), role, principal=system)
    for token, key, text in spec.get("memories", []):
        memory = writes.publish(Scope.objects.get(token=token), key, text, principal=system)
        out["memories"][f"{token}/{key}"] = memory.uid
    print(json.dumps(out))


if __name__ == "__main__":
    main()
