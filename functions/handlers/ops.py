"""The operator API (docs/design.md, "Operator API"): `GET`/`POST /api/health/routes` (the stored verdicts;
POST runs the probe for the current slot) and `PUT`/`DELETE /api/health/routes/{key}/override`, behind the
operator key, in the wire format of `functions/handlers/wire.py`.
"""

from __future__ import annotations

from functions.handlers.init_collection import pause_for_init

pause_for_init()  # until INIT is done: everything INIT creates stays (functions/handlers/init_collection.py)

import math
from collections.abc import Mapping, Sequence
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import ValidationError

from functions import catalog
from functions.adapters.dynamo_store import DynamoVerdictStore
from functions.adapters.secrets import SecretsError
from functions.core import PROBE_SLOT_MS, ApiError, ErrorCode, RouteKey, Snapshot, StoreError
from functions.core.errors import NOT_STORED, FieldError, error_envelope, error_headers, field_errors
from functions.core.overrides import OverrideRefused, new_override, with_active_overrides
from functions.core.quota import client_of
from functions.handlers.composition import OPERATOR_FUNCTION, ProbeFunction, prepare_at_init
from functions.handlers.operator_auth import presented_secret, secrets_match
from functions.handlers.telemetry import audit_override_change, logger, report_unexpected_error
from functions.handlers.tracing import traced
from functions.handlers.viewer import client_address
from functions.handlers.wire import OverrideRequestBody, RouteHealth, RouteOverride
from functions.services.probe_run import slot_start_of

ROUTES_PATH = "/api/health/routes"
OVERRIDE_PATH = "/api/health/routes/<key>/override"

app = APIGatewayHttpResolver()


@app.get(ROUTES_PATH)
def read_routes() -> Response[Any]:
    function = OPERATOR_FUNCTION.get()
    store = _authorized_store(function)
    return _json(200, {"success": True, "data": _shown(store.read_snapshot(), function.upstreams.clock())})


@app.post(ROUTES_PATH)
def probe_routes() -> Response[Any]:
    function = OPERATOR_FUNCTION.get()
    store = _authorized_store(function)
    now = function.upstreams.clock()
    # The retailers' specs load here, on the first POST: reads and overrides never need them.
    summary = function.probe(catalog.CATALOG, slot_start=slot_start_of(now), trigger="operator")
    data = _shown(store.read_snapshot(), function.upstreams.clock())
    if summary.ran:
        return _json(200, {"success": True, "data": data})
    retry_after = max(1, math.ceil((summary.slot_start + PROBE_SLOT_MS - now) / 1000))
    slot_taken = ApiError(ErrorCode.PROBE_SLOT_TAKEN, retry_after=retry_after)
    return _json(slot_taken.status, error_envelope(slot_taken, data=data), error_headers(slot_taken))


@app.put(OVERRIDE_PATH)
def set_override(key: str) -> Response[Any]:
    function = OPERATOR_FUNCTION.get()
    overrides = _authorized_store(function)
    route = _route_key(key)
    request = _override_request(_body_text())
    try:
        override = new_override(
            route, request.mode, request.reason, request.ttl_seconds, now=function.upstreams.clock()
        )
    except OverrideRefused as refused:
        raise _invalid_body([_body_field(refused.field, refused.message)]) from None
    overrides.put_override(override)
    audit_override_change("set", override, caller=_caller_hash(function))
    return _json(200, {"success": True, "data": RouteOverride.of(override).to_json()})


@app.delete(OVERRIDE_PATH)
def clear_override(key: str) -> Response[Any]:
    function = OPERATOR_FUNCTION.get()
    overrides = _authorized_store(function)
    removed = overrides.clear_override(_route_key(key), now=function.upstreams.clock())
    if removed is None:
        raise ApiError(ErrorCode.NO_OVERRIDE)
    audit_override_change("clear", removed, caller=_caller_hash(function))
    return _json(200, {"success": True, "data": RouteOverride.of(removed).to_json()})


def _shown(snapshot: Snapshot, now: int) -> dict[str, Any]:
    """The snapshot as operators see it: only the overrides that count now."""
    return RouteHealth.from_snapshot(with_active_overrides(snapshot, now)).to_json()


def _route_key(name: str) -> RouteKey:
    try:
        return RouteKey(name)
    except ValueError:
        raise ApiError(ErrorCode.UNKNOWN_ROUTE_KEY) from None


def _body_text() -> str | None:
    """The body as text: one that is not UTF-8 (API Gateway passes it on base64-encoded) is no JSON either."""
    try:
        return app.current_event.decoded_body
    except UnicodeDecodeError:
        raise _invalid_body([_body_field(None, "the body must be a JSON object in UTF-8")]) from None


def _override_request(body: str | None) -> OverrideRequestBody:
    if not body:
        raise _invalid_body([_body_field(None, "a JSON object with mode, reason and ttlSeconds is required")])
    try:
        return OverrideRequestBody.model_validate_json(body, by_name=False)
    except ValidationError as error:
        raise _invalid_body(field_errors("body", error.errors())) from None


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


def _api_error(error: ApiError) -> Response[Any]:
    return _error(error)


def _store_error(error: StoreError) -> Response[Any]:
    logger.error("verdict store failed", extra={"error_type": type(error.__cause__ or error).__name__})
    return _error(ApiError(ErrorCode.ROUTE_HEALTH_FAILED))


def _secrets_error(error: SecretsError) -> Response[Any]:
    logger.error("secrets unavailable", extra={"problem": str(error)})
    return _error(ApiError(ErrorCode.HEALTH_CHECK_SECRET_NOT_CONFIGURED))


def _unexpected(error: Exception) -> Response[Any]:
    report_unexpected_error(error)
    return _error(ApiError(ErrorCode.INTERNAL_ERROR))


# Registered by call: Powertools' exception_handler decorator is untyped (mypy --strict).
app.exception_handler(ApiError)(_api_error)
app.exception_handler(StoreError)(_store_error)
app.exception_handler(SecretsError)(_secrets_error)
app.exception_handler(Exception)(_unexpected)


@app.not_found
def _not_found(_: Exception) -> Response[Any]:
    return _error(ApiError(ErrorCode.NOT_FOUND))


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


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
@traced
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)


prepare_at_init(OPERATOR_FUNCTION)
