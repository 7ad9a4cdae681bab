"""The lookup operations as the MCP tools and `route-health lookup` read them from the lookup function's OpenAPI
document: every public GET, its parameters with their constraints, its `data` schema standing alone; and a new
operation in the document is a new tool, a new tools/list entry and a new command with no other change."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import pytest

from functions.catalog import LOOKUPS
from functions.handlers.api import operation_id
from functions.handlers.settings import LOOPBACK_HOSTS
from functions.lookup_document import MissingArgument, as_text, lookup_document, lookup_operations
from functions.mcp.protocol import HttpRequest, McpServer
from functions.mcp.tools import LookupTools, server_description
from ops_cli import lookup as lookup_cli

DOCUMENT = lookup_document()
OPERATIONS = lookup_operations(DOCUMENT)
BY_NAME = {operation.name: operation for operation in OPERATIONS}


def _refs(node: Any) -> list[str]:
    text = json.dumps(node)
    return [part for part in text.split('"') if part.startswith("#/")]


def test_every_lookup_endpoint_is_an_operation_named_by_its_operation_id_in_order() -> None:
    assert [operation.name for operation in OPERATIONS] == [operation_id(query) for query in LOOKUPS]
    assert [operation.path for operation in OPERATIONS] == [query.path for query in LOOKUPS]
    # The operator's GET is in the document but needs the secret: not a lookup.
    assert "getRouteHealth" not in BY_NAME


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda operation: operation.name)
def test_the_input_schema_is_the_operations_parameters_with_their_constraints(operation) -> None:
    documented = DOCUMENT["paths"][operation.path]["get"].get("parameters", [])
    schema = operation.input_schema()

    assert schema["type"] == "object"
    assert list(schema["properties"]) == [parameter["name"] for parameter in documented]
    for parameter in documented:
        expected = dict(parameter["schema"])
        if "description" in parameter:
            expected["description"] = parameter["description"]
        assert schema["properties"][parameter["name"]] == expected
    assert set(schema.get("required", [])) == {p["name"] for p in documented if p.get("required")}


@pytest.mark.parametrize("operation", OPERATIONS, ids=lambda operation: operation.name)
def test_the_data_schema_is_the_200_answers_data_standing_alone(operation) -> None:
    answer = DOCUMENT["paths"][operation.path]["get"]["responses"]["200"]["content"]["application/json"]
    (reference,) = _refs(answer["schema"]["properties"]["data"])
    model = reference.rsplit("/", 1)[1]

    assert not _refs(operation.data_schema)
    assert (
        operation.data_schema["properties"].keys()
        == DOCUMENT["components"]["schemas"][model]["properties"].keys()
    )
    assert operation.data_schema["type"] == "object"


def test_a_nested_reference_is_inlined_with_its_siblings() -> None:
    stock = BY_NAME["oliveyoungStock"].data_schema["properties"]["stores"]["items"]["properties"]["stock"]
    assert stock["properties"]["status"]["enum"] == ["in_stock", "out_of_stock", "not_sold", "unknown"]

    document = {
        "components": {
            "schemas": {"Loop": {"$ref": "#/components/schemas/Loop"}, "Text": {"type": "string"}}
        },
        "paths": {
            "/api/x": {
                "get": _operation("x", data={"$ref": "#/components/schemas/Text", "description": "d"})
            },
            "/api/loop": {"get": _operation("loop", data={"$ref": "#/components/schemas/Loop"})},
        },
    }
    with pytest.raises(ValueError, match="recursive"):
        lookup_operations(document)
    del document["paths"]["/api/loop"]
    (operation,) = lookup_operations(document)
    assert operation.data_schema == {"type": "string", "description": "d"}


def test_a_request_fills_the_path_and_sends_the_given_values_as_text() -> None:
    goods = BY_NAME["oliveyoungGoodsInfo"]
    assert goods.request({"goodsNo": "A0/1 2"}) == ("/api/oliveyoung/products/A0%2F1%202", [])
    with pytest.raises(MissingArgument) as missing:
        goods.request({})
    assert missing.value.name == "goodsNo"

    stock = BY_NAME["gs25Stock"]
    path, query = stock.request({"lat": 37.5, "lon": 127, "keyword": "콜라", "itemCode": None, "other": "x"})
    assert path == "/api/gs25/stock"
    assert query == [("keyword", "콜라"), ("lat", "37.5"), ("lon", "127")]
    assert [as_text(value) for value in (True, False, 1.0, ["a"], "텍스트")] == [
        "true",
        "false",
        "1.0",
        '["a"]',
        "텍스트",
    ]


def _operation(
    name: str, *, data: dict[str, Any], parameters: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    envelope = {"type": "object", "properties": {"success": {"const": True}, "data": data}}
    return {
        "operationId": name,
        "summary": f"{name} summary",
        "description": f"{name} description",
        "tags": ["Example"],
        "parameters": parameters or [],
        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": envelope}}}},
    }


def test_a_new_operation_in_the_document_is_a_tool_a_listed_tool_and_a_command(capsys) -> None:
    document = copy.deepcopy(DOCUMENT)
    document["components"]["schemas"]["Things"] = {
        "type": "object",
        "required": ["things"],
        "properties": {"things": {"type": "array", "items": {"type": "string"}}},
    }
    parameters: list[dict[str, Any]] = [
        {
            "name": "thingId",
            "in": "path",
            "required": True,
            "schema": {"type": "string", "pattern": "^[a-z]+$"},
        },
        {
            "name": "limit",
            "in": "query",
            "schema": {"type": "integer", "minimum": 1, "maximum": 9},
            "description": "n",
        },
    ]
    document["paths"]["/api/example/things/{thingId}"] = {
        "get": _operation(
            "exampleThings", data={"$ref": "#/components/schemas/Things"}, parameters=parameters
        )
    }
    sent: list[dict[str, Any]] = []

    def lookup_function(event: dict[str, Any], context: Any) -> dict[str, Any]:
        sent.append(event)
        return {"statusCode": 200, "body": json.dumps({"success": True, "data": {"things": ["a"]}})}

    operations = lookup_operations(document)
    tools = LookupTools(operations, lookup_function)
    server = McpServer(server_description(document, tools), allowed_hosts=LOOPBACK_HOSTS)
    listed = _rpc(server, tools, "tools/list", {})["result"]["tools"]
    called = _rpc(
        server, tools, "tools/call", {"name": "exampleThings", "arguments": {"thingId": "ab", "limit": 3}}
    )

    (tool,) = [tool for tool in listed if tool["name"] == "exampleThings"]
    assert tool["inputSchema"] == {
        "type": "object",
        "properties": {
            "thingId": {"type": "string", "pattern": "^[a-z]+$"},
            "limit": {"type": "integer", "minimum": 1, "maximum": 9, "description": "n"},
        },
        "required": ["thingId"],
    }
    assert tool["outputSchema"] == document["components"]["schemas"]["Things"]
    assert tool["annotations"]["readOnlyHint"] is True
    assert called["result"]["structuredContent"] == {"things": ["a"]}
    assert (sent[0]["rawPath"], sent[0]["rawQueryString"]) == ("/api/example/things/ab", "limit=3")

    assert lookup_cli.main(["--list"], operations) == 0
    assert "exampleThings" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        lookup_cli.main(["exampleThings", "--help"], operations)
    helped = capsys.readouterr().out
    assert "--thingId STRING" in helped
    assert re.search(r"--limit INTEGER +n \(integer; 1\.\.9\)", helped)


def _rpc(server: McpServer, tools: LookupTools, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    request = HttpRequest(
        "POST",
        {"host": "localhost", "content-type": "application/json", "mcp-protocol-version": "2025-11-25"},
        body,
    )
    answer = server.answer(
        request, tools.caller({"requestContext": {"http": {"sourceIp": "192.0.2.1"}}}, None)
    )
    assert answer.status == 200, answer.body
    result: dict[str, Any] = json.loads(answer.body)
    return result
