"""Console addresses of things named by hosts and tenants (docs/administrators/console.md,
"Addresses").

Run ids and thread ids are the host's own strings: `../../keys` is a valid run id. A link
built by pasting one into a path would be resolved by the browser to another page, so
every such segment is percent-encoded whole (its "/" too); the server decodes it back and
the route takes the rest of the path (`<path:…>`). A segment that is exactly "." or ".."
cannot travel in a path at all (browsers drop or climb it even when percent-encoded), so
such a run is linked through `/attribution/?run=…` and such a thread is not linked.

Actor refs and scope tokens are validated names (`acme/u1`, `team:acme/ops`): their "/"
is the tenant separator and their segments never start with a dot, so they stay readable.
"""

from urllib.parse import quote, urlencode

DOT_SEGMENTS = frozenset({".", ".."})


def segment(value: str) -> str | None:
    """`value` as one path segment, or None when no path can carry it."""
    if value in DOT_SEGMENTS:
        return None
    return quote(value, safe="")


def actor_path(ref: str) -> str:
    return f"/actors/{quote(ref, safe='/@')}/"


def scope_path(token: str) -> str:
    return f"/scopes/{quote(token, safe=':/@')}/"


def run_path(actor_ref: str, run_id: str) -> str:
    run = segment(run_id)
    if run is None:
        return "/attribution/?" + urlencode({"run": run_id})
    return f"/runs/{quote(actor_ref, safe='/@')}/{run}/"


def thread_path(thread_id: str, actor_ref: str | None = None, run: str | None = None) -> str:
    """The conversation page, or "" when the id cannot be carried by a path."""
    thread = segment(thread_id)
    if thread is None:
        return ""
    query = {k: v for k, v in (("actor", actor_ref), ("run", run)) if v}
    return f"/threads/{thread}/" + ("?" + urlencode(query) if query else "")


def run_candidates(path: str) -> list[tuple[str, str]]:
    """(actor ref, run id) readings of `<actor>/<run_id>`: a ref is one name or a
    tenant-qualified two, and a run id may hold "/" itself, so `acme/u1/r1` is tried as
    actor `acme/u1` first, then as actor `acme` with run `u1/r1`."""
    parts = path.split("/")
    readings = []
    if len(parts) >= 3:
        readings.append(("/".join(parts[:2]), "/".join(parts[2:])))
    if len(parts) >= 2:
        readings.append((parts[0], "/".join(parts[1:])))
    return readings
