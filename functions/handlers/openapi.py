"""The OpenAPI 3.1 document served at `GET /api/openapi.json`: the lookup endpoints and the operator API.

Built from the code, not written by hand: each lookup endpoint's path, summary, query model (with its
constraints: lengths, patterns, ranges, defaults, enums) and `data` model come from its registration in
`functions/handlers/api.py`; the schemas come from the pydantic models. Every operation lists exactly the
error codes it can answer with, per status; the tests validate the document with an OpenAPI validator and
check real answers of every endpoint against it.

API Gateway answers some requests itself, with `{"message": ...}`: 429 `Too Many Requests` when the stage's
throttle refuses a request (documented on every operation), and 404 `Not Found` for a method or path it has
no route for (documented as a component response: no operation exists for it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.json_schema import SkipJsonSchema, models_json_schema

from functions.core import ErrorCode, Reason, RelayGroup, RouteKey
from functions.core.input_rules import CrossRule
from functions.core.model import OverrideMode
from functions.core.overrides import MAX_REASON_CHARS, MAX_TTL_SECONDS, PINNED_NEVER_DIRECT, REASON_PATTERN
from functions.handlers import lookup_data
from functions.handlers.lookup_endpoint import LookupEndpoint
from functions.handlers.settings import DAILY_LIMITED_PREFIXES

OPENAPI_VERSION = "3.1.0"
REF = "#/components/schemas/{model}"
OPERATOR_TAG = "Operator"
ROUTES_PATH = "/api/health/routes"
OVERRIDE_PATH = "/api/health/routes/{key}/override"
OPERATOR_SECURITY: list[dict[str, list[str]]] = [{"healthCheckKey": []}, {"bearer": []}]
"""Either header works: `x-health-check-key: <secret>` or `Authorization: Bearer <secret>`."""


# --- the operator API (functions/handlers/ops.py; its wire format is functions/handlers/wire.py) -------


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ActiveOverride(_Wire):
    """An operator override that counts now. Times: epoch ms."""

    mode: OverrideMode
    reason: Annotated[str, Field(min_length=1, max_length=MAX_REASON_CHARS)]
    expiresAt: int
    createdAt: int


class RouteOverride(ActiveOverride):
    """The override a PUT stored or a DELETE removed."""

    key: RouteKey


class OverrideRequestBody(_Wire):
    """The body of PUT: the reason is shown to every operator (never a secret), without the whitespace around
    it."""

    mode: OverrideMode
    reason: Annotated[str, Field(min_length=1, max_length=MAX_REASON_CHARS, pattern=REASON_PATTERN)]
    ttlSeconds: Annotated[int, Field(ge=1, le=MAX_TTL_SECONDS)]


class RouteVerdict(_Wire):
    """A route's stored verdict; optional keys are left out, never null. Times: epoch ms."""

    key: RouteKey
    direct: bool
    checkedAt: int
    reason: Reason | SkipJsonSchema[None] = None
    failedAt: int | SkipJsonSchema[None] = None
    blockedUntil: int | SkipJsonSchema[None] = None
    override: ActiveOverride | SkipJsonSchema[None] = None


class RelayVerdict(_Wire):
    group: RelayGroup
    healthy: bool
    checkedAt: int
    reason: Reason | SkipJsonSchema[None] = None


class RouteHealth(_Wire):
    """The stored verdicts (a key or group without one is absent) and every override that counts now, with or
    without a verdict for its key."""

    routes: dict[RouteKey, RouteVerdict]
    relays: dict[RelayGroup, RelayVerdict]
    overrides: dict[RouteKey, RouteOverride]


# --- the builder ---------------------------------------------------------------------------------


@dataclass
class _Errors:
    """The error codes one operation can answer with, by HTTP status."""

    by_status: dict[int, list[str]] = field(default_factory=dict)

    def add(self, *codes: ErrorCode, status: int | None = None) -> _Errors:
        for code in codes:
            self.by_status.setdefault(status or code.status, []).append(code.value)
        return self


def lookup_errors(endpoint: LookupEndpoint) -> _Errors:
    """What `functions/services/routing.py` and `api.py` can answer for this endpoint."""
    errors = _Errors()
    if endpoint.inputs():
        errors.add(ErrorCode.INVALID_INPUT)
    errors.add(ErrorCode.UPSTREAM_REJECTED).add(ErrorCode.UPSTREAM_REJECTED, status=422)
    errors.add(ErrorCode.UPSTREAM_NOT_FOUND)
    if endpoint.path.startswith(DAILY_LIMITED_PREFIXES):
        errors.add(ErrorCode.DAILY_RATE_LIMIT_EXCEEDED)
    errors.add(ErrorCode.RELAY_QUOTA_EXCEEDED, ErrorCode.INTERNAL_ERROR, ErrorCode.UPSTREAM_BAD_RESPONSE)
    return errors.add(ErrorCode.UPSTREAM_ROUTE_UNAVAILABLE, ErrorCode.UPSTREAM_TIMEOUT)


def operator_errors(method: Literal["get", "post", "put", "delete"]) -> _Errors:
    """What `functions/handlers/ops.py` can answer (PROBE_SLOT_TAKEN is its own 429 shape)."""
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


def _refs(models: Iterable[type[BaseModel]]) -> tuple[dict[type[BaseModel], dict[str, str]], dict[str, Any]]:
    """Each model's `$ref` and every schema they need, for `components.schemas`."""
    unique = list(dict.fromkeys(models))
    refs, top = models_json_schema([(model, "serialization") for model in unique], ref_template=REF)
    schemas = top.get("$defs", {})
    for schema in schemas.values():
        for property_schema in schema.get("properties", {}).values():
            # An optional key that is left out when unknown (`X | SkipJsonSchema[None] = None`) has no default.
            if "default" in property_schema and property_schema["default"] is None:
                del property_schema["default"]
    return {model: refs[(model, "serialization")] for model in unique}, schemas


def _without_null(schema: dict[str, Any]) -> dict[str, Any]:
    """A query parameter is absent or a value, never null: `anyOf [X, null]` -> X (keeping its description)."""
    options = [option for option in schema.get("anyOf", ()) if option.get("type") != "null"]
    if len(options) != 1:
        return schema
    outer = {key: value for key, value in schema.items() if key != "anyOf" and value is not None}
    return {**options[0], **outer}


def _parameters(endpoint: LookupEndpoint) -> list[dict[str, Any]]:
    parameters = []
    for location, name, annotated in endpoint.inputs():
        if location == "path":
            schema = TypeAdapter(annotated).json_schema(ref_template=REF)
            parameters.append({"name": name, "in": "path", "required": True, "schema": schema})
            continue
        model_schema = annotated.model_json_schema(ref_template=REF)
        required = set(model_schema.get("required", ()))
        for field_name, field_schema in model_schema["properties"].items():
            schema = _without_null({k: v for k, v in field_schema.items() if k != "title"})
            description = schema.pop("description", None)
            parameter = {
                "name": field_name,
                "in": "query",
                "required": field_name in required,
                "schema": schema,
            }
            if description:
                parameter["description"] = description
            parameters.append(parameter)
    return parameters


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
        if status == 429:
            schema = {"oneOf": [schema, GATEWAY_MESSAGE]}
            status_headers.update(RETRY_AFTER)
        if status == 401:
            status_headers["WWW-Authenticate"] = {"schema": {"const": "Bearer"}}
        description = f"{ERROR_TEXT[status]}: {', '.join(codes)}"
        responses[str(status)] = _json(schema, description, status_headers)
    if "429" not in responses:  # the stage's throttle answers any route
        responses["429"] = _json(GATEWAY_MESSAGE, 'API Gateway\'s throttle: {"message": "Too Many Requests"}')
    return responses


def _data_model(endpoint: LookupEndpoint) -> type[BaseModel]:
    model: type[BaseModel] = getattr(lookup_data, endpoint.data)
    return model


def _lookup_operation(
    endpoint: LookupEndpoint, refs: Mapping[type[BaseModel], dict[str, str]]
) -> dict[str, Any]:
    limited = endpoint.path.startswith(DAILY_LIMITED_PREFIXES)
    headers = RATE_LIMIT_HEADERS if limited else {}
    operation: dict[str, Any] = {
        "operationId": endpoint.operation_id,
        "summary": endpoint.summary,
        "tags": [endpoint.tag],
        "parameters": _parameters(endpoint),
        "responses": {
            "200": _json(_success(refs[_data_model(endpoint)]), "The normalized data", headers),
            **_error_responses(lookup_errors(endpoint), headers=headers, field_errors=True),
        },
    }
    notes = [_cross_rule_note(rule) for rule in endpoint.query.cross_rules]
    if limited:
        notes.append(
            "Counts against the per-client daily rate limit (by default; `DAILY_RATE_LIMIT_PREFIXES`)."
        )
    if notes:
        operation["description"] = " ".join(notes)
    if not operation["parameters"]:
        del operation["parameters"]
    return operation


def _cross_rule_note(rule: CrossRule) -> str:
    """A rule across parameters, which no parameter's schema can state."""
    return f"Rule across parameters (else 400 `INVALID_INPUT`): {rule.text}."


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
    put["description"] = f"Replaces any earlier override of the key. {_cross_rule_note(PINNED_NEVER_DIRECT)}"
    delete = _operator_operation("delete", "clearRouteOverride", "End a route's override now", override)
    delete["parameters"] = [key]
    return {ROUTES_PATH: {"get": get, "post": post}, OVERRIDE_PATH: {"put": put, "delete": delete}}


def openapi_document(lookups: Sequence[LookupEndpoint]) -> dict[str, Any]:
    refs, schemas = _refs(
        [*(_data_model(endpoint) for endpoint in lookups), RouteHealth, RouteOverride, OverrideRequestBody]
    )
    paths: dict[str, dict[str, Any]] = {}
    for endpoint in lookups:
        paths.setdefault(endpoint.path, {})["get"] = _lookup_operation(endpoint, refs)
    paths.update(_operator_paths(refs))
    schemas["FieldError"] = {
        "type": "object",
        "required": ["location", "field", "message"],
        "additionalProperties": False,
        "properties": {
            "location": {"enum": ["query", "path", "body"]},
            "field": {"type": ["string", "null"], "description": "null: a rule across parameters"},
            "message": {"type": "string"},
        },
    }
    schemas["GatewayMessage"] = {
        "type": "object",
        "required": ["message"],
        "properties": {"message": {"type": "string"}},
        "description": "An answer of API Gateway itself (throttled, or no such route)",
    }
    tags = list(dict.fromkeys([*(endpoint.tag for endpoint in lookups), OPERATOR_TAG]))
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": "Route Health",
            "version": "1.0.0",
            "description": "Korean retail and cinema lookups with normalized data, and the operator API. "
            'Answers: `{"success": true, "data": ...}` or `{"success": false, "error": {"code", "message"}}`. '
            "A GET of an unknown path under /api answers 404 `NOT_FOUND`; any other method or path is "
            'answered by API Gateway itself: 404 `{"message": "Not Found"}`.',
        },
        "servers": [{"url": "/", "description": "The API that serves this document"}],
        "tags": [{"name": tag} for tag in tags],
        "paths": paths,
        "components": {
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
    }
