"""The OpenAPI document is the contract: schemathesis (v4) generates requests from it, the
ones it allows (positive) and the ones it forbids (negative), and checks every answer.

A mismatch fails the test: a request the document allows refused as malformed (400/422),
one it forbids accepted (2xx), a 5xx, a status, content type or body the document does not
declare, a method it does not list answered other than 405 with `Allow`. Refusals that
depend on what exists rather than on the request's shape (403 outside the key's reach,
404 for an unknown actor or memory) are declared by each operation and count as answers
to well-formed requests.

Phases: examples, coverage (each field's boundaries, positive and negative, and the
methods each path does not take) and fuzzing (random requests, positive and negative, up
to MAX_EXAMPLES per operation: about a minute on two slow cores).

Requests go in-process through the WSGI application, inside the test's transaction (`db`),
with the acme host's key. Django closes "old" connections at the start and end of every
request; inside a test transaction that would close the test's own connection, so (as
Django's test client does) that signal handler is detached while the schema is exercised.
"""

import re

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.parameters import ParameterLocation
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    missing_required_header,
    negative_data_rejection,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)

from memory_console.api import patterns
from memory_console.wsgi import application
from memory_core import writes

# slow: every operation, fuzzed.
pytestmark = pytest.mark.slow

MAX_EXAMPLES = 25

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    positive_data_acceptance,
    negative_data_rejection,
    missing_required_header,
    unsupported_method,
]


@pytest.fixture
def keep_test_connection():
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def populated(org, operator):
    """Something for the generated requests to find: policies, a note, a transcript."""
    writes.publish(org.root, "units", "report distances in kilometres", principal=operator)
    writes.publish(org.acme, "fiscal-year", "starts in October", principal=operator)
    org.note = writes.remember(
        org.u1, "fiscal-year", "calendar year", principal=org.acme_agent, thread_id="thr_1"
    ).memory
    return org


def aimed_at_known_data(case, memory_id: str) -> None:
    """Point the generated request at u1 (in the key's reach) and at a real memory id.

    Random refs are almost all unknown actors, so the generated requests alone would
    rarely get past the 404; each case is therefore also sent aimed at data that exists,
    keeping everything else it generated. Only a well-formed ref is replaced: in a negative
    case a malformed one may be the very thing that makes it negative.
    """
    for container in (case.query, case.body):
        if isinstance(container, dict) and well_formed_ref(container.get("actor")):
            container["actor"] = "u1"
    if isinstance(case.path_parameters, dict):
        if well_formed_ref(case.path_parameters.get("ref")):
            case.path_parameters["ref"] = "u1"
        if "memory_id" in case.path_parameters:
            case.path_parameters["memory_id"] = memory_id


def object_in_query(case) -> bool:
    """A negative case that turned a query parameter into an object: a query string cannot
    carry one, and the WSGI client sends its Python repr (`{'a': 'b'}`) instead, which is a
    well-formed string for a free-text parameter such as `thread_id`, so accepting it is
    right and the check's verdict would be wrong."""
    return isinstance(case.query, dict) and any(isinstance(v, dict) for v in case.query.values())


def well_formed_ref(value) -> bool:
    return isinstance(value, str) and re.fullmatch(patterns.REF, value) is not None


# Loaded once, at collection: the document itself needs no database.
schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", application)
schema.config.phases.update(phases=["examples", "coverage", "fuzzing"])
schema.config.generation.update(modes=list(GenerationMode), max_examples=MAX_EXAMPLES)
# What a well-formed request may be answered with. 401 is not among them: every request
# carries a live key. 403 and 404 depend on what exists (see the module docstring); 409 is
# an extraction asked of a server without an extractor (the suite's configuration).
schema.config.checks.positive_data_acceptance.expected_statuses = ["2XX", "403", "404", "409"]
# A malformed request is refused: as such (422 invalid or not JSON, 400 what Django refuses
# before the API sees it, 401 without its Authorization header), or for what else it asks
# before its shape is looked at (403 a scope outside the reach, listed twice), or it never
# reaches an operation (404 a path parameter that routes nowhere, 405 for its method).
schema.config.checks.negative_data_rejection.expected_statuses = [
    "400",
    "401",
    "403",
    "404",
    "405",
    "422",
]


@schema.parametrize()
@settings(
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)
def test_every_operation_conforms_to_the_openapi_document(case, populated, keep_test_connection):
    if object_in_query(case):
        return  # not a request a query string can carry (see object_in_query)
    # A case whose headers are the negative part (no Authorization) is sent as generated.
    negative_headers = case.meta is not None and case.meta.is_negative_at(ParameterLocation.HEADER)
    auth = None if negative_headers else {"Authorization": f"Bearer {populated.acme_secret}"}
    case.call_and_validate(headers=auth, checks=CHECKS)
    aimed_at_known_data(case, populated.note.uid)
    case.call_and_validate(headers=auth, checks=CHECKS)
