"""Bearer authentication: the presented secret becomes the key's principal, or a 401."""

from ninja.security import HttpBearer

from memory_core.accounts import keys
from memory_core.accounts.principals import Principal


class ApiKeyBearer(HttpBearer):
    """`Authorization: Bearer mc_…`. A missing, unknown, revoked, paused or expired key
    returns None, which Ninja answers with 401 `{"detail": "Unauthorized"}` (one answer for
    all, so a caller cannot tell a revoked key from one that never existed)."""

    def authenticate(self, request, token: str) -> Principal | None:
        api_key = keys.authenticate(token)
        if api_key is None:
            return None
        return Principal.for_api_key(api_key)
