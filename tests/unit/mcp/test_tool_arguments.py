"""A tool call's arguments against the JSON types of its `inputSchema`: a wrong type is REST's `INVALID_INPUT`
for that field and never reaches the lookup (which would search its text and count it against the daily
quota); a right type goes on to the lookup, which judges every other rule as for REST."""

from __future__ import annotations

import json
from typing import Any

import pytest

from functions.core import ErrorCode
from functions.lookup_document import LookupOperation, Parameter, lookup_document, lookup_operations
from functions.mcp.arguments import wrong_types
from functions.mcp.tools import LookupTools

OPERATIONS = {operation.name: operation for operation in lookup_operations(lookup_document())}
TYPED = LookupOperation(
    name="exampleTyped",
    path="/api/example/{code}",
    summary="",
    description="",
    tag="example",
    parameters=tuple(
        Parameter(name, "path" if name == "code" else "query", name == "code", {"type": kind}, "")
        for name, kind in [
            ("code", "string"),
            ("count", "integer"),
            ("lat", "number"),
            ("exact", "boolean"),
            ("either", ["string", "integer"]),
            ("anything", "object-of-the-future"),
        ]
    ),
    data_schema={},
)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("code", "a"),
        ("count", 3),
        ("count", 2793.0),  # JSON Schema: an integer
        ("count", -1),  # a range is the lookup's to judge
        ("lat", 37.5),
        ("lat", 37),
        ("exact", False),
        ("either", "x"),
        ("either", 4),
        ("anything", ["a"]),  # a type this check does not know: the lookup judges it
        ("count", None),  # null is absent
    ],
)
def test_a_value_of_a_declared_type_passes(name: str, value: object) -> None:
    assert wrong_types(TYPED, {"code": "a", name: value}) == []


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("code", ["a", "b"], "Input should be a valid string"),
        ("code", {"a": 1}, "Input should be a valid string"),
        ("code", True, "Input should be a valid string"),
        ("code", 12, "Input should be a valid string"),
        ("count", "3", "Input should be a valid integer"),
        ("count", 2.5, "Input should be a valid integer"),
        ("count", True, "Input should be a valid integer"),
        ("lat", "37.5", "Input should be a valid number"),
        ("lat", float("nan"), "Input should be a valid number"),
        ("lat", float("inf"), "Input should be a valid number"),
        ("exact", "true", "Input should be a valid boolean"),
        ("exact", 1, "Input should be a valid boolean"),
        ("either", 1.5, "Input should be a valid string or a valid integer"),
    ],
)
def test_a_value_of_another_type_is_a_field_error(name: str, value: object, message: str) -> None:
    location = "path" if name == "code" else "query"
    arguments = {"code": "a", name: value}
    assert wrong_types(TYPED, arguments) == [{"location": location, "field": name, "message": message}]


def test_every_wrong_argument_is_named_and_unknown_names_are_ignored() -> None:
    errors = wrong_types(OPERATIONS["cuStores"], {"lat": "37", "lon": [127], "keyword": {}, "other": []})
    assert [error["field"] for error in errors] == ["lat", "lon", "keyword"]


@pytest.mark.parametrize("keyword", [["a", "b"], {"k": "v"}, True, 7])
def test_a_wrongly_typed_call_never_reaches_the_lookup(keyword: object) -> None:
    sent: list[dict[str, Any]] = []

    def lookup(event: dict[str, Any], context: Any) -> dict[str, Any]:
        sent.append(event)
        return {"statusCode": 200, "body": json.dumps({"success": True, "data": {}})}

    tools = LookupTools(list(OPERATIONS.values()), lookup)
    result = tools.call("cuProducts", {"keyword": keyword, "limit": 2}, event={}, context=None)

    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"]) == {
        "status": 400,
        "code": "INVALID_INPUT",
        "message": ErrorCode.INVALID_INPUT.message,
        "fields": [{"location": "query", "field": "keyword", "message": "Input should be a valid string"}],
    }
    assert sent == []
    assert tools.call("cuProducts", {"keyword": "a", "limit": 2}, event={}, context=None)["isError"] is False
    assert [event["rawQueryString"] for event in sent] == ["keyword=a&limit=2"]
