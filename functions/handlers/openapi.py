"""The OpenAPI 3.1 document served at `GET /api/openapi.json` (docs/design.md, "HTTP API"): Powertools'
own, from the lookup function's routes, corrected in one step where the library falls short.

The corrections: each lookup's 200 with its typed `data`, exactly the error codes it can answer per status (no
422, which this API never answers), parameters without titles and with integral bounds, the operator API from
its wire models, and API Gateway's own answers (`{"message": ...}`: 429 from the stage throttle on every
operation, 404 for a route it does not have).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from pydantic import BaseModel, TypeAdapter

from functions.catalog import LOOKUPS
from functions.catalog.contract import LookupQuery, answer_type, retailer_of
from functions.core import ErrorCode
from functions.core.overrides import PINNED_NEVER_DIRECT
from functions.handlers.settings import DAILY_LIMITED_PREFIXES
from functions.handlers.wire import OverrideRequestBody, RouteHealth, RouteOverride

REF = "#/components/schemas/{model}"
OPERATOR_TAG = "Operator"
ROUTES_PATH = "/api/health/routes"
OVERRIDE_PATH = "/api/health/routes/{key}/override"
OPERATOR_SECURITY: list[dict[str, list[str]]] = [{"healthCheckKey": []}, {"bearer": []}]
"""Either header works: `x-health-check-key: <secret>` or `Authorization: Bearer <secret>`."""


# --- the builder ---------------------------------------------------------------------------------


@dataclass
class _Errors:
    """The error codes one operation can answer with, by HTTP status."""

    by_status: dict[int, list[str]] = field(default_factory=dict)

    def add(self, *codes: ErrorCode, status: int | None = None) -> _Errors:
        for code in codes:
            self.by_status.setdefault(status or code.status, []).append(code.value)
        return self


def lookup_errors(query: type[LookupQuery]) -> _Errors:
    """What `functions/services/routing.py` and `api.py` can answer for this endpoint."""
    errors = _Errors()
    if query.model_fields:
        errors.add(ErrorCode.INVALID_INPUT)
    errors.add(ErrorCode.UPSTREAM_REJECTED).add(ErrorCode.UPSTREAM_REJECTED, status=422)
    errors.add(ErrorCode.UPSTREAM_NOT_FOUND)
    if query.path.startswith(DAILY_LIMITED_PREFIXES):
        errors.add(ErrorCode.DAILY_RATE_LIMIT_EXCEEDED)
    errors.add(ErrorCode.RELAY_QUOTA_EXCEEDED, ErrorCode.INTERNAL_ERROR, ErrorCode.UPSTREAM_BAD_RESPONSE)
    return errors.add(ErrorCode.UPSTREAM_ROUTE_UNAVAILABLE, ErrorCode.UPSTREAM_TIMEOUT)


def operator_errors(method: Literal["get", "post", "put", "delete"]) -> _Errors:
    """What `functions/handlers/operator_api.py` can answer (PROBE_SLOT_TAKEN is its own 429 shape)."""
    errors = _Errors()
    if method != "get":
        errors.add(ErrorCode.INVALID_INPUT)
    errors.add(ErrorCode.UNAUTHORIZED_HEALTH_CHECK)
    if method in ("put", "delete"):
        errors.add(ErrorCode.UNKNOWN_ROUTE_KEY, *([ErrorCode.NO_OVERRIDE] if method == "delete" else []))
    errors.add(ErrorCode.INTERNAL_ERROR)
    return errors.add(
        ErrorCode.HEALTH_CHECK_SECRET_NOT_CONFIGURED,
        ErrorCode.ROUTE_HEALTH_NOT_CONFIGURED,
        ErrorCode.ROUTE_HEALTH_FAILED,
    )


def _refs(types: Iterable[Any]) -> tuple[dict[Any, dict[str, str]], dict[str, Any]]:
    """Each type's `$ref` and every schema they need, for `components.schemas`."""
    unique = list(dict.fromkeys(types))
    refs, top = TypeAdapter.json_schemas(
        [(kind, "serialization", TypeAdapter(kind)) for kind in unique], ref_template=REF
    )
    schemas = top.get("$defs", {})
    for schema in schemas.values():
        for property_schema in schema.get("properties", {}).values():
            # An optional key that is left out when unknown (`X | SkipJsonSchema[None] = None`) has no default.
            if "default" in property_schema and property_schema["default"] is None:
                del property_schema["default"]
    return {kind: refs[(kind, "serialization")] for kind in unique}, schemas


def _success(data: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["success", "data"],
        "additionalProperties": False,
        "properties": {"success": {"const": True}, "data": data},
    }


def _failure(codes: Sequence[str], **extra: dict[str, Any]) -> dict[str, Any]:
    """The error envelope with exactly these codes; `fields` only with INVALID_INPUT from a lookup."""
    error: dict[str, Any] = {
        "type": "object",
        "required": ["code", "message", *(["retryAfter"] if "retryAfter" in extra else [])],
        "additionalProperties": False,
        "properties": {"code": {"enum": list(codes)}, "message": {"type": "string"}},
    }
    if "retryAfter" in extra:
        error["properties"]["retryAfter"] = extra.pop("retryAfter")
    if "fields" in extra:
        error["properties"]["fields"] = extra.pop("fields")
    return {
        "type": "object",
        "required": ["success", "error", *extra],
        "additionalProperties": False,
        "properties": {"success": {"const": False}, "error": error, **extra},
    }


GATEWAY_MESSAGE = {"$ref": REF.format(model="GatewayMessage")}
HEADER = {"schema": {"type": "integer"}}
RETRY_AFTER = {"Retry-After": {**HEADER, "description": "Seconds to wait before trying again"}}
RATE_LIMIT_HEADERS = {
    "X-RateLimit-Limit": {**HEADER, "description": "Lookups allowed per client per Korea day"},
    "X-RateLimit-Remaining": {**HEADER, "description": "Lookups left today"},
    "X-RateLimit-Reset": {**HEADER, "description": "When the count resets (next midnight in Korea), epoch s"},
}
NOT_STORED = {"Cache-Control": {"schema": {"const": "no-store"}, "description": "Never reused by a cache"}}
ERROR_TEXT = {
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


def _json(
    schema: dict[str, Any], description: str, headers: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    answer: dict[str, Any] = {"description": description, "content": {"application/json": {"schema": schema}}}
    if headers:
        answer["headers"] = dict(headers)
    return answer


def _error_responses(
    errors: _Errors, *, headers: Mapping[str, Any], field_errors: bool
) -> dict[str, dict[str, Any]]:
    responses = {}
    for status, codes in sorted(errors.by_status.items()):
        extra = {"fields": {"type": "array", "items": {"$ref": REF.format(model="FieldError")}}}
        schema = _failure(codes, **(extra if field_errors and "INVALID_INPUT" in codes else {}))
        status_headers = dict(headers)
        if status == 429:  # `retryAfter` with the `Retry-After` header, when there is one
            schema["properties"]["error"]["properties"]["retryAfter"] = {"type": "integer", "minimum": 1}
            schema = {"oneOf": [schema, GATEWAY_MESSAGE]}
            status_headers.update(RETRY_AFTER)
        if status == 401:
            status_headers["WWW-Authenticate"] = {"schema": {"const": "Bearer"}}
        description = f"{ERROR_TEXT[status]}: {', '.join(codes)}"
        responses[str(status)] = _json(schema, description, status_headers)
    if "429" not in responses:  # the stage's throttle answers any route
        responses["429"] = _json(GATEWAY_MESSAGE, 'API Gateway\'s throttle: {"message": "Too Many Requests"}')
    return responses


def _corrected_lookup(
    operation: dict[str, Any], query: type[LookupQuery], refs: Mapping[Any, dict[str, str]]
) -> None:
    """Powertools' operation for `query`, with its typed 200 answer and its exact error answers."""
    limited = query.path.startswith(DAILY_LIMITED_PREFIXES)
    # A cacheable answer never carries one client's counts (a cache would hand them to others).
    error_headers = {**NOT_STORED, **(RATE_LIMIT_HEADERS if limited else {})}
    fresh = {
        "Cache-Control": {
            "schema": {"type": "string"},
            "description": f"`{query.freshness.cache_control()}` (max-age less the answer's age when it "
            "was kept in the function's cache)" + "".join(f". {note}" for note in query.freshness_notes),
        }
    }
    operation["responses"] = {
        "200": _json(_success(refs[answer_type(query)]), "The normalized data", fresh),
        **_error_responses(lookup_errors(query), headers=error_headers, field_errors=True),
    }
    for parameter in operation.get("parameters", ()):
        schema = parameter["schema"]
        schema.pop("title", None)
        if schema.get("description") == parameter.get("description"):
            schema.pop("description", None)
        for bound in BOUNDS:  # Powertools writes a bound of 90 as 90.0
            if isinstance(schema.get(bound), float) and schema[bound].is_integer():
                schema[bound] = int(schema[bound])
    if limited:
        notes = [operation.get("description", ""), LIMITED_NOTE]
        operation["description"] = " ".join(note for note in notes if note)


BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
LIMITED_NOTE = "Counts against the per-client daily rate limit (by default; `DAILY_RATE_LIMIT_PREFIXES`)."


def _operator_operation(
    method: Literal["get", "post", "put", "delete"], operation_id: str, summary: str, answer: dict[str, Any]
) -> dict[str, Any]:
    return {
        "operationId": operation_id,
        "summary": summary,
        "tags": [OPERATOR_TAG],
        "security": OPERATOR_SECURITY,
        "responses": {
            "200": _json(_success(answer), summary),
            # Only PUT's body errors carry `fields` (location `body`).
            **_error_responses(operator_errors(method), headers={}, field_errors=method == "put"),
        },
    }


def _operator_paths(refs: Mapping[type[BaseModel], dict[str, str]]) -> dict[str, dict[str, Any]]:
    routes, override = refs[RouteHealth], refs[RouteOverride]
    get = _operator_operation("get", "getRouteHealth", "The stored verdicts and active overrides", routes)
    post = _operator_operation(
        "post", "probeRoutes", "Probe every route and relay now (once per 5-minute slot)", routes
    )
    post["description"] = "Takes no body and no query parameters. Answers the verdicts after the probe."
    slot_taken = _failure(
        [ErrorCode.PROBE_SLOT_TAKEN.value], retryAfter={"type": "integer", "minimum": 1}, data=routes
    )
    post["responses"]["429"] = _json(
        {"oneOf": [slot_taken, GATEWAY_MESSAGE]},
        "PROBE_SLOT_TAKEN: this 5-minute slot was already probed; the current verdicts are in `data`",
        RETRY_AFTER,
    )
    key = {"name": "key", "in": "path", "required": True, "schema": {"$ref": REF.format(model="RouteKey")}}
    put = _operator_operation(
        "put", "setRouteOverride", "Force a route to its relay or direct, for a while", override
    )
    put["parameters"] = [key]
    put["requestBody"] = {
        "required": True,
        "content": {"application/json": {"schema": refs[OverrideRequestBody]}},
    }
    put["description"] = f"Replaces any earlier override of the key. {PINNED_NEVER_DIRECT.note}"
    delete = _operator_operation("delete", "clearRouteOverride", "End a route's override now", override)
    delete["parameters"] = [key]
    return {ROUTES_PATH: {"get": get, "post": post}, OVERRIDE_PATH: {"put": put, "delete": delete}}


def openapi_document(app: APIGatewayHttpResolver) -> dict[str, Any]:
    """The lookup function's document as Powertools generates it from `app`, corrected, with the operator API."""
    generated = app.get_openapi_schema(title=TITLE, version="1.0.0", description=DESCRIPTION)
    document: dict[str, Any] = generated.model_dump(mode="json", by_alias=True, exclude_none=True)
    queries = {query.path: query for query in LOOKUPS}
    refs, schemas = _refs(
        [*(answer_type(query) for query in LOOKUPS), RouteHealth, RouteOverride, OverrideRequestBody]
    )
    for path, item in document["paths"].items():
        _corrected_lookup(item["get"], queries[path], refs)
    # In the contract's order, the operator API last.
    paths = {query.path: document["paths"][query.path] for query in LOOKUPS}
    document["paths"] = paths | _operator_paths(refs)
    schemas.update(FIELD_ERROR_AND_GATEWAY_MESSAGE)
    tags = list(dict.fromkeys([*(retailer_of(query) for query in LOOKUPS), OPERATOR_TAG]))
    document.update(
        servers=[{"url": "/", "description": "The API that serves this document"}],
        tags=[{"name": tag} for tag in tags],
        components={
            "schemas": dict(sorted(schemas.items())),
            "responses": {
                "GatewayNotFound": _json(
                    GATEWAY_MESSAGE, 'API Gateway: no such route, {"message": "Not Found"}'
                )
            },
            "securitySchemes": {
                "healthCheckKey": {"type": "apiKey", "in": "header", "name": "x-health-check-key"},
                "bearer": {"type": "http", "scheme": "bearer", "description": "The same health check secret"},
            },
        },
    )
    return document


TITLE = "Route Health"
DESCRIPTION = (
    "Korean retail and cinema lookups with normalized data, and the operator API. "
    'Answers: `{"success": true, "data": ...}` or `{"success": false, "error": {"code", "message"}}`. '
    "A GET of an unknown path under /api answers 404 `NOT_FOUND`; any other method or path is "
    'answered by API Gateway itself: 404 `{"message": "Not Found"}`.'
)
FIELD_ERROR_AND_GATEWAY_MESSAGE: dict[str, Any] = {
    "FieldError": {
        "type": "object",
        "required": ["location", "field", "message"],
        "additionalProperties": False,
        "properties": {
            "location": {"enum": ["query", "path", "body"]},
            "field": {"type": ["string", "null"], "description": "null: a rule across parameters"},
            "message": {"type": "string"},
        },
    },
    "GatewayMessage": {
        "type": "object",
        "required": ["message"],
        "properties": {"message": {"type": "string"}},
        "description": "An answer of API Gateway itself (throttled, or no such route)",
    },
}
