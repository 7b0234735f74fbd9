"""The OpenAPI document is the contract: schemathesis (v4) generates requests from it and
checks every answer against it (no 5xx; documented status codes, content types and bodies).

Requests go in-process through the WSGI application, inside the test's transaction (`db`),
with the acme host's key. Django closes "old" connections at the start and end of every
request; inside a test transaction that would close the test's own connection, so (as
Django's test client does) that signal handler is detached while the schema is exercised.
"""

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from memory_console.wsgi import application
from memory_core import writes

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
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
    keeping everything else it generated (valid or not).
    """
    for container in (case.query, case.body):
        if isinstance(container, dict) and "actor" in container:
            container["actor"] = "u1"
    if isinstance(case.path_parameters, dict):
        if "ref" in case.path_parameters:
            case.path_parameters["ref"] = "u1"
        if "memory_id" in case.path_parameters:
            case.path_parameters["memory_id"] = memory_id


# Loaded once, at collection: the document itself needs no database.
schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", application)


@schema.parametrize()
@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)
def test_every_operation_conforms_to_the_openapi_document(case, populated, keep_test_connection):
    auth = {"Authorization": f"Bearer {populated.acme_secret}"}
    case.call_and_validate(headers=auth, checks=CHECKS)
    aimed_at_known_data(case, populated.note.uid)
    case.call_and_validate(headers=auth, checks=CHECKS)
