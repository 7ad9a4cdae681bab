"""The operator API: `GET`/`POST /api/health/routes` (DESIGN §6), wire format as in the seed.

- GET returns the stored snapshot and never probes.
- POST takes no input (a body or query string is 400 `INVALID_INPUT`) and runs the full check for the current
  5-minute slot. If that slot already ran (scheduled or another POST), the answer is 429 with `Retry-After`
  (seconds to the next slot) and the current snapshot in the same envelope:
  `{"success": false, "error": {"code": "PROBE_SLOT_TAKEN", "message", "retryAfter"}, "data": <snapshot>}`.
- Auth: `Authorization: Bearer <secret>` (scheme case-insensitive) or `x-health-check-key: <secret>`,
  compared in constant time. Errors: 503 `HEALTH_CHECK_SECRET_NOT_CONFIGURED`, 401 `UNAUTHORIZED_HEALTH_CHECK`,
  503 `ROUTE_HEALTH_NOT_CONFIGURED` (no store), 503 `ROUTE_HEALTH_FAILED` (store error).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.adapters.secrets import SecretsError
from functions.core import PROBE_SLOT_MS, ServiceError, StoreError, VerdictStore
from functions.handlers.operator_auth import presented_secret, secrets_match
from functions.handlers.settings import OpsSettings
from functions.handlers.telemetry import logger
from functions.handlers.tracing import tracer
from functions.handlers.wire import snapshot_to_wire
from functions.handlers.wiring import Container, get_container, prepare_container_at_init
from functions.services.probe_run import slot_start_of

ROUTES_PATH = "/api/health/routes"

app = APIGatewayHttpResolver()


class OpsError(ServiceError):
    """An operator API refusal, answered as the error envelope."""


SECRET_NOT_CONFIGURED = OpsError(
    "HEALTH_CHECK_SECRET_NOT_CONFIGURED", 503, "The health check secret is not configured."
)
UNAUTHORIZED = OpsError("UNAUTHORIZED_HEALTH_CHECK", 401, "A valid health check secret is required.")
NOT_CONFIGURED = OpsError("ROUTE_HEALTH_NOT_CONFIGURED", 503, "The route verdict store is not configured.")
FAILED = OpsError("ROUTE_HEALTH_FAILED", 503, "The route health state could not be read or updated.")
INPUT_REFUSED = OpsError("INVALID_INPUT", 400, "This endpoint takes no body and no query parameters.")


@app.get(ROUTES_PATH)
def read_routes() -> Response[Any]:
    store = _authorized_store(get_container(OpsSettings))
    return _json(200, {"success": True, "data": snapshot_to_wire(store.read_snapshot())})


@app.post(ROUTES_PATH)
def probe_routes() -> Response[Any]:
    container = get_container(OpsSettings)
    store = _authorized_store(container)
    now = container.clock()
    summary = container.probe(slot_start=slot_start_of(now), trigger="operator")
    data = snapshot_to_wire(store.read_snapshot())
    if summary.ran:
        return _json(200, {"success": True, "data": data})
    retry_after = max(1, math.ceil((summary.slot_start + PROBE_SLOT_MS - now) / 1000))
    error = {
        "code": "PROBE_SLOT_TAKEN",
        "message": "The routes were already checked in this 5-minute slot; try again later.",
        "retryAfter": retry_after,
    }
    return _json(429, {"success": False, "error": error, "data": data}, {"Retry-After": str(retry_after)})


def _authorized_store(container: Container) -> VerdictStore:
    """Checks, in order: secret configured, caller authorized, no input on POST, store configured."""
    expected = container.secrets.health_check_secret
    if expected is None:
        raise SECRET_NOT_CONFIGURED
    presented = presented_secret(app.current_event.headers)
    if presented is None or not secrets_match(presented, expected.get_secret_value()):
        raise UNAUTHORIZED
    event = app.current_event
    if event.http_method == "POST" and (
        event.body or event.get("rawQueryString") or event.query_string_parameters
    ):
        raise INPUT_REFUSED
    if container.store is None:
        raise NOT_CONFIGURED
    return container.store


def _service_error(error: ServiceError) -> Response[Any]:
    return _error(error)


def _store_error(error: StoreError) -> Response[Any]:
    logger.error("verdict store failed", extra={"error_type": type(error.__cause__ or error).__name__})
    return _error(FAILED)


def _secrets_error(error: SecretsError) -> Response[Any]:
    logger.error("secrets unavailable", extra={"problem": str(error)})
    return _error(SECRET_NOT_CONFIGURED)


def _unexpected(error: Exception) -> Response[Any]:
    logger.error("unexpected error", extra={"error_type": type(error).__name__})
    return _error(ServiceError("INTERNAL_ERROR", 500, "Something went wrong."))


# Registered by call: Powertools' exception_handler decorator is untyped (mypy --strict).
app.exception_handler(ServiceError)(_service_error)
app.exception_handler(StoreError)(_store_error)
app.exception_handler(SecretsError)(_secrets_error)
app.exception_handler(Exception)(_unexpected)


@app.not_found
def _not_found(_: Exception) -> Response[Any]:
    return _error(ServiceError("NOT_FOUND", 404, "No such endpoint."))


def _error(error: ServiceError) -> Response[Any]:
    body = {"success": False, "error": {"code": error.code, "message": error.message}}
    return _json(error.status, body)


def _json(status: int, body: Mapping[str, Any], headers: Mapping[str, str] | None = None) -> Response[Any]:
    return Response(
        status_code=status,
        content_type=content_types.APPLICATION_JSON,
        body=dict(body),
        headers=dict(headers or {}),
    )


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)


prepare_container_at_init(OpsSettings)
