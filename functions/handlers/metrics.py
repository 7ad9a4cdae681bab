"""Every custom metric the functions emit, with every value each of its dimensions can take: one table and
the series budget (docs/design.md, "Infrastructure and observability").

`worst_case_series()` counts the series the code can ever emit, every function included (they share one
service name, so the `mcp` function's lookups emit the lookup function's series); a test holds it to
`SERIES_BUDGET`. A metric counts across routes so an alarm can page on it; which route failed and why is in
the log lines. `telemetry.emit_metric` refuses anything not declared here, and the dashboard and alarms
(`infra/observability.py`) take their names from this table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from aws_lambda_powertools.metrics import MetricUnit

from functions.core import ErrorCode
from functions.core.decision import Path
from functions.core.model import OverrideMode

SERIES_BUDGET = 60
"""At most this many distinct series in the worst case, every function included (about $18 a month at $0.30
per series); a deployment without lookups emits only the probe's few (`PROBE_METRICS`)."""

LOOKUP_ERROR_CODES = frozenset(code.value for code in ErrorCode if code.lookup)
"""Every `error.code` the lookup API answers with."""


@dataclass(frozen=True)
class MetricDefinition:
    name: str
    meaning: str
    unit: MetricUnit = MetricUnit.Count
    dimensions: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Each dimension with every value the code may give it."""

    def series(self) -> int:
        """How many distinct series this metric can have at most."""
        return math.prod(len(values) for values in self.dimensions.values())


def _table(*definitions: MetricDefinition) -> Mapping[str, MetricDefinition]:
    return MappingProxyType({definition.name: definition for definition in definitions})


METRICS = _table(
    MetricDefinition(
        "Lookups",
        "One per routed upstream call of a lookup, by the path decided; `unavailable` for every 503 answer.",
        dimensions={"Path": frozenset(path.value for path in Path)},
    ),
    MetricDefinition(
        "RelayLookup",
        "An upstream call of a lookup sent to its relay: by decision, or as the fallback after a live failure "
        "(which route: the `route decided` and `relay fallback` log lines).",
    ),
    MetricDefinition(
        "DirectFailure",
        "A live direct failure of a lookup (route and reason: the `direct failed` log line).",
    ),
    MetricDefinition("RelayFallback", "A lookup answered through the relay after a live direct failure."),
    MetricDefinition(
        "LookupError",
        "An error answer of the lookup API, by its `error.code`.",
        dimensions={"Code": LOOKUP_ERROR_CODES},
    ),
    MetricDefinition(
        "ResponseCache",
        "A lookup answered from the container's cache (hit) or fetched (miss); which lookup: not counted "
        'per operation (docs/design.md, "Caching", has the Logs Insights query for the ratio per lookup).',
        dimensions={"Outcome": frozenset({"hit", "miss"})},
    ),
    MetricDefinition(
        "UnexpectedError",
        "An unexpected exception answered as 500 INTERNAL_ERROR by the lookup or operator API (a bug).",
    ),
    MetricDefinition(
        "RoutesFailingDirect",
        "Routes whose direct check failed in a probe run (which, and why: its `probe check failed` lines).",
    ),
    MetricDefinition(
        "RelaysUnhealthy",
        "Relays that failed their health check in a probe run (which, and why: its `relay check failed` "
        "lines).",
    ),
    MetricDefinition(
        "ProbeRunDuration",
        "How long a probe run that claimed its slot took: one value per run (SampleCount = runs).",
        unit=MetricUnit.Milliseconds,
    ),
    MetricDefinition(
        "SnapshotAge",
        "Age of the lookup container's verdict snapshot at each invocation.",
        unit=MetricUnit.Milliseconds,
    ),
    MetricDefinition("StaleWriteRejected", "A verdict write the store refused as stale (normal)."),
    MetricDefinition(
        "StoreError",
        "A verdict store call that failed (DynamoDB down, throttled, timed out); which call: the log line's "
        "`operation`.",
    ),
    MetricDefinition("Gs25SessionExpired", "GS25 refused the convenience relay's GS25 session or key."),
    MetricDefinition(
        "DailyQuotaUntracked",
        "A lookup let through uncounted by the daily quota: the container's client table was full.",
    ),
    MetricDefinition(
        "OverrideChange",
        "An operator set (by mode) or cleared a route override; who and why are in the audit log line.",
        dimensions={"Mode": frozenset({*(mode.value for mode in OverrideMode), "clear"})},
    ),
    MetricDefinition(
        "OverridesActive", "How many operator overrides count now (reported by each probe run)."
    ),
)


PROBE_METRICS = frozenset(
    {"RoutesFailingDirect", "RelaysUnhealthy", "ProbeRunDuration", "StaleWriteRejected", "OverridesActive"}
)
"""What a deployment without lookups still emits: the probe's own metrics, one series each."""


def worst_case_series(metrics: Mapping[str, MetricDefinition] = METRICS) -> int:
    """Every series the code can emit: each metric's dimension values multiplied out, summed."""
    return sum(definition.series() for definition in metrics.values())
