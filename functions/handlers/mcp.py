"""The MCP endpoint (`POST /mcp`, docs/design.md, "MCP endpoint and lookup command"), in its own Lambda
function so the lookup function's cold start never loads the protocol.

Each lookup of the OpenAPI document is a tool (`functions/mcp/tools.py`) whose call runs through the lookup
function's own handler, in process, so it answers exactly as `GET /api/...` would.
"""

from __future__ import annotations

from functions.handlers.init_collection import pause_for_init, resume_after_init

pause_for_init()  # until INIT is done: everything INIT creates stays (functions/handlers/init_collection.py)

import base64
import os
from functools import cache
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.handlers import api
from functions.handlers.settings import McpSettings
from functions.handlers.telemetry import logger, report_unexpected_error
from functions.lookup_document import lookup_document, lookup_operations
from functions.mcp.protocol import HttpAnswer, HttpRequest, McpServer, RequestFailed, internal_error
from functions.mcp.tools import LookupTools, server_description


@cache
def served() -> tuple[McpServer, LookupTools]:
    """The server and its tools, from the lookup function's document: built once, at INIT in Lambda."""
    settings = McpSettings.from_environment()
    document = lookup_document(settings.limited_prefixes)  # the tools say which lookups the limit counts
    tools = LookupTools(lookup_operations(document), api.lambda_handler)
    server = McpServer(server_description(document, tools), allowed_hosts=settings.mcp_allowed_hosts)
    return server, tools


@logger.inject_lambda_context(clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    logger.set_correlation_id((event.get("requestContext") or {}).get("requestId"))
    server, tools = served()
    try:
        answer = server.answer(http_request(event), tools.caller(event, context))
    except RequestFailed as failed:  # the request's id was read: its error carries it
        report_unexpected_error(failed.cause)
        answer = internal_error(failed.request_id)
    except Exception as error:
        report_unexpected_error(error)
        answer = internal_error()
    return gateway_response(answer)


def http_request(event: dict[str, Any]) -> HttpRequest:
    body = event.get("body") or ""
    if event.get("isBase64Encoded"):
        body = base64.b64decode(body).decode("utf-8", errors="replace")
    return HttpRequest(
        method=str(((event.get("requestContext") or {}).get("http") or {}).get("method", "")),
        headers={str(name).lower(): str(value) for name, value in (event.get("headers") or {}).items()},
        body=body,
    )


def gateway_response(answer: HttpAnswer) -> dict[str, Any]:
    """The answer as API Gateway (payload 2.0) expects it from the function."""
    return {
        "statusCode": answer.status,
        # POSTs are never cached by CloudFront; no-store also keeps any other cache from reusing an answer.
        "headers": {**answer.headers, "Cache-Control": "no-store"},
        "body": answer.body,
        "isBase64Encoded": False,
    }


def _prepare_at_init() -> None:
    # The lookup handler's import above ran its own INIT (its container, in Lambda) inside this module's pause;
    # the tools are INIT's work too, and this is where INIT ends.
    try:
        if os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):
            served()
    finally:
        resume_after_init()


_prepare_at_init()
