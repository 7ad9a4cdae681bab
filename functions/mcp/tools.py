"""Each lookup of the lookup API as an MCP tool: a `tools/call` becomes the REST request it stands for, in an
API Gateway event that keeps the caller's context, answered by the lookup function's own handler in process,
and its answer becomes the tool result (docs/design.md, "MCP endpoint and lookup command", "Tools")."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from pydantic_core import from_json, to_json

from functions.core import ApiError, ErrorCode
from functions.core.errors import FieldError, error_envelope
from functions.lookup_document import LookupOperation, MissingArgument
from functions.mcp.arguments import wrong_types
from functions.mcp.protocol import ServerDescription

LOOKUP_ROUTE_KEY = "GET /api/{proxy+}"
"""The REST route every lookup arrives on (infra/api.py)."""
ANNOTATIONS = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True}
"""Lookups read retailers' and cinemas' public data and change nothing."""
NOT_FORWARDED = frozenset({"content-type", "content-length", "content-encoding", "transfer-encoding"})
"""The POST's own body headers; the lookup is a GET without a body."""

LambdaHandler = Callable[[dict[str, Any], Any], dict[str, Any]]


def tool_definition(operation: LookupOperation) -> dict[str, Any]:
    description = "\n\n".join(part for part in (operation.summary, operation.description) if part)
    return {
        "name": operation.name,
        "title": operation.summary,
        "description": description,
        "inputSchema": operation.input_schema(),
        "outputSchema": dict(operation.data_schema),
        "annotations": ANNOTATIONS,
    }


class LookupTools:
    """The tools and how one is run: `lookup` is the lookup function's Lambda handler."""

    def __init__(self, operations: Sequence[LookupOperation], lookup: LambdaHandler) -> None:
        self._operations = {operation.name: operation for operation in operations}
        self._lookup = lookup
        self.definitions = [tool_definition(operation) for operation in operations]

    def caller(
        self, event: Mapping[str, Any], context: Any
    ) -> Callable[[str, Mapping[str, Any]], dict[str, Any]]:
        """Runs tools on behalf of the caller of this MCP request."""

        def call(name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
            return self.call(name, arguments, event=event, context=context)

        return call

    def call(
        self, name: str, arguments: Mapping[str, Any], *, event: Mapping[str, Any], context: Any
    ) -> dict[str, Any]:
        operation = self._operations[name]
        wrong = wrong_types(operation, arguments)
        if wrong:  # before the lookup: it would count against the daily quota
            return invalid_input_result(wrong)
        try:
            path, query = operation.request(arguments)
        except MissingArgument as missing:
            return invalid_input_result(
                [{"location": "path", "field": missing.name, "message": "Field required"}]
            )
        return tool_result(self._lookup(rest_event(event, path, query), context))


def rest_event(caller: Mapping[str, Any], path: str, query: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """The API Gateway (payload 2.0) event of `GET path?query` from the caller of `caller`: same request
    context (source IP, request id, time), same headers but the body's."""
    context = dict(caller.get("requestContext") or {})
    http = {**(context.get("http") or {}), "method": "GET", "path": path}
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": LOOKUP_ROUTE_KEY,
        "rawPath": path,
        "rawQueryString": urlencode(query),
        "headers": {
            name: value
            for name, value in (caller.get("headers") or {}).items()
            if name.lower() not in NOT_FORWARDED
        },
        "pathParameters": {"proxy": path.removeprefix("/api/")},
        "requestContext": {**context, "http": http, "routeKey": LOOKUP_ROUTE_KEY},
        "isBase64Encoded": False,
    }
    if query:
        event["queryStringParameters"] = dict(query)
    return event


def tool_result(response: Mapping[str, Any]) -> dict[str, Any]:
    """The lookup function's answer as a `CallToolResult`."""
    status = int(response["statusCode"])
    envelope = from_json(response["body"])
    if status == 200 and envelope.get("success") is True:
        data = envelope["data"]
        return {
            "content": [{"type": "text", "text": to_json(data).decode()}],
            "structuredContent": data,
            "isError": False,
        }
    return error_result(status, envelope["error"])


def invalid_input_result(fields: Sequence[FieldError]) -> dict[str, Any]:
    """`INVALID_INPUT` as REST answers it, for arguments refused before any lookup."""
    refused = ApiError(ErrorCode.INVALID_INPUT, fields=list(fields))
    return error_result(refused.status, error_envelope(refused)["error"])


def error_result(status: int, error: Mapping[str, Any]) -> dict[str, Any]:
    """The REST error (`code`, `message`, and `fields` or `retryAfter` when it has them) with its HTTP status,
    as the text of an error result: what a model reads to correct its call or wait."""
    return {
        "content": [{"type": "text", "text": to_json({"status": status, **error}).decode()}],
        "isError": True,
    }


SERVER_NAME = "route-health"
INSTRUCTIONS = (
    "Live lookups in Korean retail and cinema services: Olive Young (올리브영) stores, products and stock; "
    "CU, GS25 and 7-Eleven (세븐일레븐) convenience stores, products and stock; CGV theaters, films and "
    "timetables; Dtryx independent cinemas (films, dates, showtimes and seats). Search text may be Korean "
    "or English (Korean product names match best). To compare a product's price across the convenience "
    "stores and Olive Young at once, use compareProducts. Find an item's code with a product search first, "
    "then ask for its stock near a point (WGS84 lat/lon). Results are the retailers' live data; errors carry "
    "a code and a message (INVALID_INPUT lists the fields to fix; DAILY_RATE_LIMIT_EXCEEDED and "
    "RELAY_QUOTA_EXCEEDED say when to retry, or what to ask for instead)."
)


def server_description(document: Mapping[str, Any], tools: LookupTools) -> ServerDescription:
    """The server's name, version and instructions; its title and version are the document's."""
    info = document.get("info", {})
    return ServerDescription(
        name=SERVER_NAME,
        title=str(info.get("title", SERVER_NAME)),
        version=str(info.get("version", "")),
        instructions=INSTRUCTIONS,
        tools=tools.definitions,
    )
