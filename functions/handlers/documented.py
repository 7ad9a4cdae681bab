"""The answers each route declares to Powertools (`responses=`), which puts them in the OpenAPI document: per
status, exactly the `ErrorCode`s the route can answer with, in the one error envelope (`functions/core/
errors.py`), and API Gateway's own throttle (`{"message": ...}`), which can answer any route.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal, TypedDict

from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse, OpenAPIResponseHeader
from pydantic import ConfigDict, Field

from functions.core import ErrorCode


class FieldError(TypedDict):
    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]

    location: Literal["query", "path", "body"]
    field: Annotated[str | None, Field(description="null: a rule across parameters")]
    message: str


class GatewayMessage(TypedDict):
    """An answer of API Gateway itself (throttled, or no such route)"""

    message: str


REF = "#/components/schemas/{}"
GATEWAY_MESSAGE = {"$ref": REF.format("GatewayMessage")}
RETRY_AFTER: dict[str, OpenAPIResponseHeader] = {
    "Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait before trying again"}
}
NOT_STORED: dict[str, OpenAPIResponseHeader] = {
    "Cache-Control": {"schema": {"const": "no-store"}, "description": "Never reused by a cache"}
}
RATE_LIMIT_HEADERS: dict[str, OpenAPIResponseHeader] = {
    name: {"schema": {"type": "integer"}, "description": description}
    for name, description in (
        ("X-RateLimit-Limit", "Lookups allowed per client per Korea day"),
        ("X-RateLimit-Remaining", "Lookups left today"),
        ("X-RateLimit-Reset", "When the count resets (next midnight in Korea), epoch s"),
    )
}
"""On every answer of a daily-limited lookup but a cacheable 200 (`functions/handlers/openapi.py` marks them)."""
STATUS_TEXT = {
    400: "The request is invalid",
    401: "A valid health check secret is required",
    404: "Not found",
    422: "The upstream refused the request",
    429: "Too many requests",
    500: "Unexpected error",
    502: "The upstream answered with something unusable",
    503: "Unavailable",
    504: "The upstream did not answer in time",
}


def json_answer(
    schema: Mapping[str, Any], description: str, headers: Mapping[str, OpenAPIResponseHeader] | None = None
) -> OpenAPIResponse:
    answer: OpenAPIResponse = {
        "description": description,
        "content": {"application/json": {"schema": dict(schema)}},
    }
    if headers:
        answer["headers"] = dict(headers)
    return answer


def success(data: Mapping[str, Any]) -> dict[str, Any]:
    """`{"success": true, "data": ...}`."""
    properties = {"success": {"const": True}, "data": dict(data)}
    return {
        "type": "object",
        "required": ["success", "data"],
        "additionalProperties": False,
        "properties": properties,
    }


def failure(
    codes: Iterable[str], *, fields: bool = False, retry_after: bool | None = None, **more: Any
) -> dict[str, Any]:
    """The error envelope with exactly these codes; `fields` when field errors can come, `retryAfter` required
    (True) or optional (False) when a wait can; `more` adds keys beside `error`."""
    properties: dict[str, Any] = {"code": {"enum": list(codes)}, "message": {"type": "string"}}
    if fields:
        properties["fields"] = {"type": "array", "items": {"$ref": REF.format("FieldError")}}
    if retry_after is not None:
        properties["retryAfter"] = {"type": "integer", "minimum": 1}
    error = {
        "type": "object",
        "required": ["code", "message", *(["retryAfter"] if retry_after else [])],
        "additionalProperties": False,
        "properties": properties,
    }
    return {
        "type": "object",
        "required": ["success", "error", *more],
        "additionalProperties": False,
        "properties": {"success": {"const": False}, "error": error, **more},
    }


def error_responses(
    codes: Iterable[tuple[ErrorCode, int]],
    *,
    fields: bool = False,
    headers: Mapping[str, OpenAPIResponseHeader] | None = None,
) -> dict[int, OpenAPIResponse]:
    """Each status's answer with its codes (`fields` with INVALID_INPUT's field errors, when `fields`); a 429
    may also be API Gateway's throttle, and says when to retry."""
    by_status: dict[int, list[str]] = {}
    for code, status in codes:
        by_status.setdefault(status, []).append(code.value)
    responses: dict[int, OpenAPIResponse] = {}
    for status, status_codes in sorted(by_status.items()):
        schema = failure(status_codes, fields=fields and ErrorCode.INVALID_INPUT in status_codes)
        status_headers = dict(headers or {})
        if status == 429:
            schema = {"oneOf": [failure(status_codes, retry_after=False), GATEWAY_MESSAGE]}
            status_headers.update(RETRY_AFTER)
        if status == 401:
            status_headers["WWW-Authenticate"] = {"schema": {"const": "Bearer"}}
        responses[status] = json_answer(
            schema, f"{STATUS_TEXT[status]}: {', '.join(status_codes)}", status_headers
        )
    responses.setdefault(
        429, json_answer(GATEWAY_MESSAGE, 'API Gateway\'s throttle: {"message": "Too Many Requests"}')
    )
    return responses
