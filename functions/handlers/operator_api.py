"""The operator API (docs/design.md, "Operator API"): `GET`/`POST /api/health/routes` (the stored verdicts;
POST runs the probe for the current slot) and `PUT`/`DELETE /api/health/routes/{key}/override`, behind the
operator key, in the wire format of `functions/handlers/wire.py`.

Powertools validates the route key and PUT's body (`OverrideRequestBody`) and documents each route with the
answers it declares; `functions/handlers/ops.py` is its Lambda function, and the lookup function's document
takes this resolver's own (`functions/handlers/openapi.py`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.exceptions import ValidationException
from aws_lambda_powertools.event_handler.openapi.params import Body

from functions import catalog
from functions.adapters.dynamo_store import DynamoVerdictStore
from functions.adapters.secrets import SecretsError
from functions.core import PROBE_SLOT_MS, ApiError, ErrorCode, RouteKey, Snapshot, StoreError
from functions.core.errors import NOT_STORED, FieldError, error_envelope, error_headers
from functions.core.overrides import PINNED_NEVER_DIRECT, OverrideRefused, new_override, with_active_overrides
from functions.core.quota import client_of
from functions.handlers.composition import OPERATOR_FUNCTION, ProbeFunction
from functions.handlers.documented import (
    GATEWAY_MESSAGE,
    REF,
    RETRY_AFTER,
    error_responses,
    failure,
    json_answer,
    success,
)
from functions.handlers.operator_auth import presented_secret, secrets_match
from functions.handlers.telemetry import audit_override_change, logger, report_unexpected_error
from functions.handlers.viewer import client_address
from functions.handlers.wire import OverrideRequestBody, RouteHealth, RouteOverride

ROUTES_PATH = "/api/health/routes"
OVERRIDE_PATH = "/api/health/routes/<key>/override"

app = APIGatewayHttpResolver(enable_validation=True)

OPERATOR_TAG = "Operator"
OPERATOR_SECURITY: list[dict[str, list[str]]] = [{"healthCheckKey": []}, {"bearer": []}]
"""Either header works: `x-health-check-key: <secret>` or `Authorization: Bearer <secret>`."""
EVERY_ROUTES_ERRORS = (
    ErrorCode.UNAUTHORIZED_HEALTH_CHECK,
    ErrorCode.INTERNAL_ERROR,
    ErrorCode.HEALTH_CHECK_SECRET_NOT_CONFIGURED,
    ErrorCode.ROUTE_HEALTH_NOT_CONFIGURED,
    ErrorCode.ROUTE_HEALTH_FAILED,
)


def _operation(
    name: str, summary: str, data: str, *errors: ErrorCode, fields: bool = False
) -> dict[str, Any]:
    """The route's document: its 200 answers `data` (a model of `functions/handlers/wire.py`), and its
    errors; only PUT's carry body `fields`."""
    codes = sorted({*errors, *EVERY_ROUTES_ERRORS}, key=list(ErrorCode).index)
    ok = json_answer(success({"$ref": REF.format(data)}), summary)
    responses = {200: ok, **error_responses(((code, code.status) for code in codes), fields=fields)}
    return {
        "operation_id": name,
        "summary": summary,
        "tags": [OPERATOR_TAG],
        "security": OPERATOR_SECURITY,
        "responses": responses,
    }


PROBE = _operation(
    "probeRoutes",
    "Probe every route and relay now (once per 5-minute slot)",
    "RouteHealth",
    ErrorCode.INVALID_INPUT,
)
PROBE["description"] = "Takes no body and no query parameters. Answers the verdicts after the probe."
PROBE["responses"][429] = json_answer(
    {
        "oneOf": [
            failure(
                [ErrorCode.PROBE_SLOT_TAKEN.value], retry_after=True, data={"$ref": REF.format("RouteHealth")}
            ),
            GATEWAY_MESSAGE,
        ]
    },
    "PROBE_SLOT_TAKEN: this 5-minute slot was already probed; the current verdicts are in `data`",
    RETRY_AFTER,
)
SET = _operation(
    "setRouteOverride",
    "Force a route to its relay or direct, for a while",
    "RouteOverride",
    ErrorCode.INVALID_INPUT,
    ErrorCode.UNKNOWN_ROUTE_KEY,
    fields=True,
)
SET["description"] = f"Replaces any earlier override of the key. {PINNED_NEVER_DIRECT.note}"
CLEAR = _operation(
    "clearRouteOverride",
    "End a route's override now",
    "RouteOverride",
    ErrorCode.INVALID_INPUT,
    ErrorCode.UNKNOWN_ROUTE_KEY,
    ErrorCode.NO_OVERRIDE,
)


@app.get(
    ROUTES_PATH, **_operation("getRouteHealth", "The stored verdicts and active overrides", "RouteHealth")
)
def read_routes() -> Response[Any]:
    function = OPERATOR_FUNCTION.get()
    store = _authorized_store(function)
    return _json(200, {"success": True, "data": _shown(store.read_snapshot(), function.upstreams.clock())})


@app.post(ROUTES_PATH, **PROBE)
def probe_routes() -> Response[Any]:
    # The probe's code and the retailers' specs load here, on the first POST: reads and overrides never need
    # them (nor does the lookup function, which reads this resolver's routes for its document).
    from functions.services.probe_run import slot_start_of

    function = OPERATOR_FUNCTION.get()
    store = _authorized_store(function)
    now = function.upstreams.clock()
    summary = function.probe(catalog.CATALOG, slot_start=slot_start_of(now), trigger="operator")
    data = _shown(store.read_snapshot(), function.upstreams.clock())
    if summary.ran:
        return _json(200, {"success": True, "data": data})
    retry_after = max(1, math.ceil((summary.slot_start + PROBE_SLOT_MS - now) / 1000))
    slot_taken = ApiError(ErrorCode.PROBE_SLOT_TAKEN, retry_after=retry_after)
    return _json(slot_taken.status, error_envelope(slot_taken, data=data), error_headers(slot_taken))


@app.put(OVERRIDE_PATH, **SET)
def set_override(key: RouteKey, request: Annotated[OverrideRequestBody, Body()]) -> Response[Any]:
    function = OPERATOR_FUNCTION.get()
    overrides = _authorized_store(function)
    try:
        override = new_override(
            key, request.mode, request.reason, request.ttl_seconds, now=function.upstreams.clock()
        )
    except OverrideRefused as refused:
        raise _invalid_body([_body_field(refused.field, refused.message)]) from None
    overrides.put_override(override)
    audit_override_change("set", override, caller=_caller_hash(function))
    return _json(200, {"success": True, "data": RouteOverride.of(override).to_json()})


@app.delete(OVERRIDE_PATH, **CLEAR)
def clear_override(key: RouteKey) -> Response[Any]:
    function = OPERATOR_FUNCTION.get()
    overrides = _authorized_store(function)
    removed = overrides.clear_override(key, now=function.upstreams.clock())
    if removed is None:
        raise ApiError(ErrorCode.NO_OVERRIDE)
    audit_override_change("clear", removed, caller=_caller_hash(function))
    return _json(200, {"success": True, "data": RouteOverride.of(removed).to_json()})


def _shown(snapshot: Snapshot, now: int) -> dict[str, Any]:
    """The snapshot as operators see it: only the overrides that count now."""
    return RouteHealth.from_snapshot(with_active_overrides(snapshot, now)).to_json()


def _invalid_body(fields: Sequence[FieldError]) -> ApiError:
    return ApiError(ErrorCode.INVALID_INPUT, "The request body is invalid.", fields=fields)


def _body_field(field: str | None, message: str) -> FieldError:
    return {"location": "body", "field": field, "message": message}


def _caller_hash(function: ProbeFunction) -> str:
    """The caller for the audit line: the SHA-256 of its address (the viewer's behind the stack's edge, else
    API Gateway's source IP), never the address itself."""
    return client_of(client_address(app.current_event.raw_event, lambda: function.upstreams.secrets))


def _authorized_store(function: ProbeFunction) -> DynamoVerdictStore:
    """Checks, in order: secret configured, caller authorized, input allowed, store configured."""
    expected = function.upstreams.secrets.health_check_secret
    if expected is None:
        raise ApiError(ErrorCode.HEALTH_CHECK_SECRET_NOT_CONFIGURED)
    presented = presented_secret(app.current_event.headers)
    if presented is None or not secrets_match(presented, expected.get_secret_value()):
        raise ApiError(ErrorCode.UNAUTHORIZED_HEALTH_CHECK)
    event = app.current_event
    query = event.get("rawQueryString") or event.query_string_parameters
    if event.http_method in ("POST", "DELETE") and (event.body or query):
        raise ApiError(ErrorCode.INVALID_INPUT, "This endpoint takes no body and no query parameters.")
    if event.http_method == "PUT" and query:
        raise ApiError(ErrorCode.INVALID_INPUT, "This endpoint takes no query parameters.")
    if function.store is None:
        raise ApiError(ErrorCode.ROUTE_HEALTH_NOT_CONFIGURED)
    return function.store


# --- errors: Powertools' validation runs before the route, the route's own checks answer first ---------


def invalid_request(error: ValidationException) -> Response[Any]:
    """A key that is no route key (404) or a body that is not an `OverrideRequestBody` (400, each field's
    error; one that is no JSON object with field null)."""
    errors = [item for item in error.errors() if item["loc"][:1] != ("path",)]  # the key: checked first
    fields = [_body_field(_field_name(item["loc"][1:]), str(item["msg"])) for item in errors]
    return _after_the_routes_checks(_invalid_body(fields))


def undecodable_body(_: UnicodeDecodeError) -> Response[Any]:
    # API Gateway passes a body that is not UTF-8 on base64-encoded: no JSON either.
    return _after_the_routes_checks(
        _invalid_body([_body_field(None, "the body must be a JSON object in UTF-8")])
    )


def _field_name(loc: Sequence[Any]) -> str | None:
    """The field's wire name; None for the body as a whole (a JSON error's loc is a character position)."""
    names = [str(part) for part in loc if isinstance(part, str)]
    return ".".join(names) if names and len(names) == len(loc) else None


def _after_the_routes_checks(refusal: ApiError) -> Response[Any]:
    """`refusal`, unless the checks the route makes first refuse the request (a body that is no JSON stops
    Powertools' validation before it reports the key's error, so the key is checked here)."""
    try:
        _authorized_store(OPERATOR_FUNCTION.get())
    except Exception as refused:  # answered as the route's own failure would be
        return failed(refused)
    key = _KEY_IN_PATH.fullmatch(app.current_event.path)
    if key is not None and key[1] not in ROUTE_KEYS:
        return _error(ApiError(ErrorCode.UNKNOWN_ROUTE_KEY))
    return _error(refusal)


ROUTE_KEYS = frozenset(key.value for key in RouteKey)
_KEY_IN_PATH = re.compile(re.escape(OVERRIDE_PATH).replace("<key>", "([^/]+)"))


def failed(error: Exception) -> Response[Any]:
    """The answer to what a route (or the checks it makes first) raised."""
    if isinstance(error, ApiError):
        return _error(error)
    if isinstance(error, StoreError):
        logger.error("verdict store failed", extra={"error_type": type(error.__cause__ or error).__name__})
        return _error(ApiError(ErrorCode.ROUTE_HEALTH_FAILED))
    if isinstance(error, SecretsError):
        logger.error("secrets unavailable", extra={"problem": str(error)})
        return _error(ApiError(ErrorCode.HEALTH_CHECK_SECRET_NOT_CONFIGURED))
    report_unexpected_error(error)
    return _error(ApiError(ErrorCode.INTERNAL_ERROR))


def not_found(_: Exception) -> Response[Any]:
    return _error(ApiError(ErrorCode.NOT_FOUND))


# Registered by call: Powertools' exception_handler decorator is untyped (mypy --strict).
app.exception_handler(ValidationException)(invalid_request)
app.exception_handler(UnicodeDecodeError)(undecodable_body)
app.exception_handler(Exception)(failed)
app.not_found(not_found)


def _error(error: ApiError) -> Response[Any]:
    return _json(error.status, error_envelope(error), error_headers(error))


def _json(status: int, body: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> Response[Any]:
    return Response(
        status_code=status,
        content_type=content_types.APPLICATION_JSON,
        body=dict(body),
        # Verdicts change by the minute and are the operator's alone: never kept by any cache.
        headers={**(headers or {}), **NOT_STORED},
    )
