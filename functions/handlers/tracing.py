"""Tracing, all of it: the one module that may load Powertools' Tracer and with it the AWS X-Ray SDK.

Two stack parameters decide it (README.md, "Traces"). `Tracing=xray` (the default) turns on Lambda's active
tracing, which records every invocation of every function without any SDK; `off` records nothing. With
`TraceCalls=true` as well, Powertools' Tracer adds a subsegment per AWS and upstream call of the probe and the
operator API; building one loads the X-Ray SDK, whose recorder creates its own botocore client on import:
about 140 ms of CPU per cold start (bench/profile_notes.md). Otherwise the stack sets Powertools'
`POWERTOOLS_TRACE_DISABLED=true` and the SDK is never imported. The lookup function never traces its calls.
No response is ever captured (calls carry relay credentials).

The X-Ray SDKs reach their end of support on 2027-02-25, and Powertools' Tracer has no OpenTelemetry provider
yet; the way out is AWS Distro for OpenTelemetry (its Lambda layer, or an OpenTelemetry SDK sending to X-Ray's
OTLP endpoint). Because nothing else imports the SDK (a test holds this), that move replaces this module and
the stack's tracing settings, and nothing else.
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
