"""The Python client and the server's OpenAPI document describe the same API.

For every client method: the operation it calls exists (method and path); its arguments are
exactly the operation's path and query parameters and body fields, the required ones
positional and required, the rest optional; Client and AsyncClient agree; and its result
class has exactly the response schema's fields, with matching types, enums and nullability,
down through every nested object. And every operation of the document has a client method.
So a field added, renamed, retyped or made optional on either side fails here.
"""

import dataclasses
import inspect
import io
import json
import re
import types
import typing
from datetime import datetime
from typing import Literal, Union

import pytest
from django.core.management import call_command

from memory_console.api import api
from memory_console.management.commands.export_openapi import openapi_text
from memory_console_client import AsyncClient, Client
from memory_console_client.operations import OPERATIONS

PREFIX = "/api/v1"
# Probes for orchestrators, not operations an agent calls.
NOT_CLIENT_OPERATIONS = {("GET", "/api/v1/health/live"), ("GET", "/api/v1/health/ready")}


@pytest.fixture(scope="module")
def document():
    return api.get_openapi_schema()


def resolve(document, schema: dict) -> dict:
    while "$ref" in schema:
        name = schema["$ref"].removeprefix("#/components/schemas/")
        schema = document["components"]["schemas"][name]
    return schema


def operation(document, name: str) -> dict:
    op = OPERATIONS[name]
    return document["paths"][PREFIX + op.path][op.method.lower()]


def arguments(document, name: str) -> tuple[set[str], set[str]]:
    """The operation's (every, required) parameter and body-field names."""
    spec = operation(document, name)
    every = {p["name"] for p in spec.get("parameters", [])}
    required = {p["name"] for p in spec.get("parameters", []) if p.get("required")}
    body = spec.get("requestBody", {}).get("content", {}).get("application/json")
    if body:
        schema = resolve(document, body["schema"])
        every |= set(schema["properties"])
        required |= set(schema.get("required", []))
    return every, required


def signature(method) -> tuple[set[str], set[str]]:
    parameters = list(inspect.signature(method).parameters.values())[1:]  # less self
    every = {p.name for p in parameters}
    required = {p.name for p in parameters if p.default is inspect.Parameter.empty}
    positional = [p for p in parameters if p.kind is not inspect.Parameter.KEYWORD_ONLY]
    # Required arguments are positional, optional ones keyword-only.
    assert {p.name for p in positional} == required, method
    return every, required


def conforms(document, annotation, schema: dict, where: str) -> list[str]:
    """Where `annotation` (a result class's field type) and `schema` disagree."""
    schema = resolve(document, schema)
    options = typing.get_args(annotation)
    is_union = typing.get_origin(annotation) in (Union, types.UnionType)
    if "anyOf" in schema:
        branches = [resolve(document, branch) for branch in schema["anyOf"]]
        nullable = {"type": "null"} in branches
        branches = [branch for branch in branches if branch != {"type": "null"}]
        classes = [option for option in options if option is not type(None)] if is_union else []
        if nullable != (is_union and type(None) in options):
            return [f"{where}: nullable in one, not the other ({annotation})"]
        if len(branches) == 1:
            inner = classes[0] if len(classes) == 1 else annotation
            return conforms(document, inner, branches[0], where)
        if len(classes) != len(branches):
            return [f"{where}: {len(branches)} alternatives, {annotation} has {len(classes)}"]
        problems = []
        for index, (cls, branch) in enumerate(zip(classes, branches, strict=True)):
            problems += conforms(document, cls, branch, f"{where}|{index}")
        return problems
    if is_union:
        return [f"{where}: {annotation} is a union, the schema is not"]
    kind = schema.get("type")
    if "enum" in schema:
        if typing.get_origin(annotation) is not Literal:
            return [f"{where}: the schema is an enum, the client has {annotation}"]
        if set(options) != set(schema["enum"]):
            return [f"{where}: enum {schema['enum']} against {options}"]
        return []
    expected = {"string": (str, datetime), "integer": (int,), "boolean": (bool,)}
    if kind in expected:
        return [] if annotation in expected[kind] else [f"{where}: {kind} against {annotation}"]
    if kind == "array":
        if typing.get_origin(annotation) is not list:
            return [f"{where}: array against {annotation}"]
        return conforms(document, options[0], schema["items"], f"{where}[]")
    if kind == "object":
        if not dataclasses.is_dataclass(annotation):
            return [f"{where}: object against {annotation}"]
        fields = {f.name: f for f in dataclasses.fields(annotation)}
        properties = schema.get("properties", {})
        if set(fields) != set(properties):
            return [
                f"{where}: {annotation.__name__} has {sorted(fields)}, "
                f"the schema {sorted(properties)}"
            ]
        hints = typing.get_type_hints(annotation)
        problems = []
        for name, field_schema in properties.items():
            problems += conforms(document, hints[name], field_schema, f"{where}.{name}")
        return problems
    return [f"{where}: unhandled schema {schema}"]


def success(document, name: str) -> dict[str, dict | None]:
    """The operation's 2xx answers: status → body schema (None for no body)."""
    answers = {}
    for status, answer in operation(document, name)["responses"].items():
        if str(status).startswith("2"):
            content = answer.get("content", {}).get("application/json")
            answers[str(status)] = content["schema"] if content else None
    return answers


def test_every_operation_of_the_document_has_a_client_method(document):
    served = {
        (method.upper(), path) for path, methods in document["paths"].items() for method in methods
    }
    called = {(op.method, PREFIX + op.path) for op in OPERATIONS.values()}
    assert served - NOT_CLIENT_OPERATIONS == called


def test_client_and_async_client_have_the_same_methods():
    for name in OPERATIONS:
        sync, asynchronous = getattr(Client, name), getattr(AsyncClient, name)
        assert inspect.iscoroutinefunction(asynchronous) and not inspect.iscoroutinefunction(sync)
        assert inspect.signature(sync) == inspect.signature(asynchronous), name


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_the_methods_arguments_are_the_operations_fields(document, name):
    every, required = arguments(document, name)
    assert signature(getattr(Client, name)) == (every, required)
    placeholders = set(re.findall(r"{(\w+)}", OPERATIONS[name].path))
    in_path = {
        p["name"] for p in operation(document, name).get("parameters", []) if p["in"] == "path"
    }
    assert placeholders == in_path


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_the_methods_result_is_the_operations_response(document, name):
    result = OPERATIONS[name].result
    answers = success(document, name)
    assert answers, name
    for status, schema in answers.items():
        if schema is None:
            assert result is None, f"{name} {status} has no body"
        else:
            assert result is not None, f"{name} {status} has a body"
            assert conforms(document, result, schema, f"{name} {status}") == []


def test_a_changed_field_is_noticed(document):
    """The comparison itself: a result class that lost a field, or retyped one, fails."""

    @dataclasses.dataclass
    class Stale:
        ref: str
        display_name: int

    schema = document["components"]["schemas"]["ActorOut"]
    assert conforms(document, Stale, schema, "actor") == [
        "actor: Stale has ['display_name', 'ref'], the schema ['display_name', 'ref', 'scopes']"
    ]

    @dataclasses.dataclass
    class Retyped:
        ref: str
        display_name: int
        scopes: list[str] | None

    assert conforms(document, Retyped, schema, "actor") == [
        "actor.display_name: string against <class 'int'>",
        "actor.scopes: list[str] | None is a union, the schema is not",
    ]


def test_export_openapi_writes_the_served_document(tmp_path):
    call_command("export_openapi", str(tmp_path / "openapi.json"))
    written = (tmp_path / "openapi.json").read_text(encoding="utf-8")
    assert written == openapi_text() and written.endswith("}\n")
    assert json.loads(written)["paths"]["/api/v1/turns"]["post"]["operationId"] == "take_turn"
    out = io.StringIO()
    call_command("export_openapi", stdout=out)
    assert out.getvalue() == written
