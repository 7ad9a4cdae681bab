"""X-Ray subsegments for the probe's and the operator API's calls, when the deployment turns them on.

Lambda's active tracing records every invocation of every function without any SDK. Powertools' Tracer adds
a subsegment per AWS and upstream call, but building one loads the X-Ray SDK, whose recorder creates its own
botocore client on import: about 140 ms of CPU per cold start (bench/profile_notes.md). So the stack sets
Powertools' `POWERTOOLS_TRACE_DISABLED=true` unless deployed with `-c traceCalls=true`, and then the SDK is
never imported. The lookup function never traces its calls. No response is ever captured (calls carry relay
credentials).
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
