"""What a console request's parameters must be before any view reads them.

Console views read query parameters, form fields and the address's own values as text and
hand them to the ORM. A value PostgreSQL cannot take would fail deep inside whichever query
it reached first: a 500, or an export that answered 200 and broke off mid-stream. So every
console page, action and export, being a `console_view` (access.py), has its parameters
checked here first, whatever their names (a parameter added tomorrow is covered too):

- no NUL character in any name or value of the query string, the form, or the address
  (PostgreSQL text cannot hold one);
- the query string, and a urlencoded form, are UTF-8 (Django would quietly turn other
  bytes into U+FFFD, and the page would look for something nobody typed);
- no value longer than MAX_VALUE_CHARS, twice the longest text a console form takes.

A request that fails is answered 400 before the view runs, so no query and no write sees
it: the console's error page, or `{"detail": ...}` for an export, which scripts read.

That settles the transport. What a value means stays each page's business: its form (the
area's forms.py) turns an unusable filter into "no filter" on a page (a stale bookmark still
shows the page) and into a 422 on an export (a proof must be of what was asked). An export
also refuses a parameter it does not read, or one given twice (`unexpected`): a misspelt
filter (`knd=`) would otherwise export every row. Numbers
are held to a range before any query sees them, so no OFFSET or comparison leaves
PostgreSQL's bigint: page numbers to MAX_PAGE (forms.page_number), id cursors to BIGINT_MAX
(cursors.cursor_id), and an export's sequence numbers past it are a 422.

The API and MCP check their own inputs with their schemas and answer 422 in their own
shapes; Django's login form refuses a NUL itself.
"""

from urllib.parse import unquote_to_bytes

# The longest console inputs are a fact (MEMORY_MAX_FACT_CHARS, at most 2000) and a pasted
# prompt line or search (2000); none is near this.
MAX_VALUE_CHARS = 4096
# PostgreSQL's bigint, the type of every id and sequence number.
BIGINT_MAX = 2**63 - 1
# Far past the last page of any list (a page past the last shows the last), and small
# enough that no OFFSET computed from it overflows.
MAX_PAGE = 1_000_000

FORM_CONTENT_TYPE = "application/x-www-form-urlencoded"


def bounded_int(raw, *, minimum: int, maximum: int) -> int | None:
    """`raw` as a whole number within [minimum, maximum] (clamped), or None if it is not
    one: for a number a page rounds rather than refuses, such as a page number."""
    try:
        value = int(str(raw).strip())
    except (TypeError, ValueError):
        return None
    return max(minimum, min(value, maximum))


def _is_utf8(raw: bytes) -> bool:
    # Separators are ASCII, which never occurs inside a multi-byte sequence: decoding the
    # whole unquoted string is the same as decoding each name and value.
    try:
        unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _raw_query(request) -> bytes:
    text = request.META.get("QUERY_STRING", "")
    try:
        return text.encode("iso-8859-1")  # WSGI: the bytes as sent, one character each
    except UnicodeEncodeError:
        return text.encode("utf-8")  # ASGI: already decoded


def _named(where: str, name: str) -> str:
    shown = name.replace("\x00", "\\0")
    return f"{where} {shown[:40]!r}" if shown else where


def _value_problem(where: str, name: str, value) -> str | None:
    if not isinstance(value, str):
        return None  # an uploaded file: its own reader checks it
    for text in (name, value):
        if "\x00" in text:
            return f"{_named(where, name)} holds a NUL character, which no console field takes"
        if len(text) > MAX_VALUE_CHARS:
            return f"{_named(where, name)} is longer than {MAX_VALUE_CHARS} characters"
    return None


def problem(request, path_values: dict) -> str | None:
    """What is wrong with the request's parameters, or None when nothing is."""
    if not _is_utf8(_raw_query(request)):
        return "the query string is not UTF-8"
    form = request.method == "POST"
    if form and request.content_type == FORM_CONTENT_TYPE and not _is_utf8(request.body):
        return "the form is not UTF-8"
    sources = [("the address's", path_values.items()), ("the parameter", request.GET.lists())]
    if form:
        sources.append(("the form field", request.POST.lists()))
    for where, pairs in sources:
        for name, values in pairs:
            for value in values if isinstance(values, list) else [values]:
                found = _value_problem(where, str(name), value)
                if found is not None:
                    return found
    return None


def unexpected(query, allowed) -> str | None:
    """What in `query` (a QueryDict) an address reading only the names `allowed` cannot
    take: a name it does not read, or one given more than once. None when nothing."""
    for name, values in query.lists():
        if name not in allowed:
            reads = ", ".join(sorted(allowed))
            return f"unknown parameter {name[:40]!r}: this address reads {reads}"
        if len(values) > 1:
            return f"parameter {name!r} is given {len(values)} times: give it once"
    return None
