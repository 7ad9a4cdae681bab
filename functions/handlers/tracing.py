"""Tracing, all of it: the one module that may load Powertools' Tracer and with it the AWS X-Ray SDK
(docs/deploy.md, "Traces").

`TraceCalls=true` adds a subsegment per AWS and upstream call of the probe and operator functions (loading the
SDK costs about 140 ms of CPU per cold start, bench/profile_notes.md); otherwise the SDK is never imported. No
response is ever captured: calls carry relay credentials. A test holds that nothing else imports the SDK, so a
move to OpenTelemetry replaces this module and the stack's tracing settings only.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar, cast

from aws_lambda_powertools.shared import constants
from aws_lambda_powertools.shared.functions import resolve_truthy_env_var_choice

Handler = TypeVar("Handler", bound=Callable[..., Any])


def traced(handler: Handler) -> Handler:
    """The handler under Powertools' Tracer, or the handler itself when tracing is disabled."""
    if resolve_truthy_env_var_choice(env=os.getenv(constants.TRACER_DISABLED_ENV, "false")):
        return handler
    from aws_lambda_powertools import Tracer  # here: it loads the X-Ray SDK

    # the service name from POWERTOOLS_SERVICE_NAME, as everywhere
    return cast(Handler, Tracer().capture_lambda_handler(handler, capture_response=False))
