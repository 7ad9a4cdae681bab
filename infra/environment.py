"""The one source of the service name and the metrics namespace: Powertools' environment variables.

The stack sets these on every function; the functions read them from their environment (Powertools' Logger,
Tracer and metrics do), and the dashboard and alarms, the sandbox and the benchmarks take them from here.
No CDK import: the sandbox and the benchmarks import this module too.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

SERVICE_NAME = "route-health"
METRICS_NAMESPACE = "RouteHealth"
DEFAULT_LOG_LEVEL = "INFO"
"""Per-lookup decisions log at DEBUG; deploy with `--parameters LogLevel=DEBUG` to see them."""

POWERTOOLS_ENVIRONMENT: Mapping[str, str] = MappingProxyType(
    {"POWERTOOLS_SERVICE_NAME": SERVICE_NAME, "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE}
)

RUNTIME_ENVIRONMENT: Mapping[str, str] = MappingProxyType({"PYDANTIC_DISABLE_PLUGINS": "__all__"})
"""Every function's: pydantic looks for plugins in every installed distribution's entry points when it builds
its first model, and the Lambda package has none (the search is about 1.5 % of the lookup function's
import)."""

TRACE_DISABLED_VARIABLE = "POWERTOOLS_TRACE_DISABLED"
CALLS_UNTRACED: Mapping[str, str] = MappingProxyType({TRACE_DISABLED_VARIABLE: "true"})
"""What every function gets unless deployed with `--parameters TraceCalls=true` (and Tracing=xray): no
Powertools Tracer, so the probe and operator functions never import the X-Ray SDK
(functions/handlers/tracing.py). With Tracing=xray, Lambda's active tracing still records every invocation."""
