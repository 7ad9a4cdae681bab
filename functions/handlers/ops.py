"""The operator function: the operator API (`functions/handlers/operator_api.py`) as a Lambda handler."""

from __future__ import annotations

from functions.handlers.init_collection import pause_for_init

pause_for_init()  # until INIT is done: everything INIT creates stays (functions/handlers/init_collection.py)

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.handlers.composition import OPERATOR_FUNCTION, prepare_at_init
from functions.handlers.operator_api import OVERRIDE_PATH, ROUTES_PATH, app
from functions.handlers.telemetry import logger
from functions.handlers.tracing import traced

__all__ = ["OVERRIDE_PATH", "ROUTES_PATH", "lambda_handler"]


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
@traced
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(as_json_body(event), context)


def as_json_body(event: dict[str, Any]) -> dict[str, Any]:
    """The event with its body declared JSON: a body is JSON whatever its `Content-Type` says (Powertools'
    validation would parse a form or multipart body instead, and fail on a malformed multipart type)."""
    headers = {
        name: value for name, value in (event.get("headers") or {}).items() if name.lower() != "content-type"
    }
    return {**event, "headers": {**headers, "content-type": "application/json"}}


prepare_at_init(OPERATOR_FUNCTION)
