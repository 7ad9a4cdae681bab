"""The pure core: route keys, verdicts, the route decision and `route_operation`.

Imports nothing from boto3, botocore, httpx, aws_lambda_powertools or os, and never reads a clock.
"""

from functions.core.decision import CachedSnapshot, Decision, Path, Rule, decide
from functions.core.errors import (
    ApiError,
    ErrorCode,
    LookupCancelled,
    RouteFailure,
    StoreError,
    UpstreamRejected,
)
from functions.core.model import (
    COOLDOWN_MS,
    DIRECT_PROBED,
    DIRECT_TIMEOUT_MS,
    LOOKUP_BUDGET_MS,
    MAX_BODY_BYTES,
    PINNED_TO_RELAY,
    PROBE_SLOT_MS,
    SNAPSHOT_TTL_MS,
    VERDICT_MAX_AGE_MS,
    OverrideMode,
    Reason,
    RelayCheck,
    RelayGroup,
    RouteCheck,
    RouteKey,
    RouteOverride,
    RouteVerdict,
    Snapshot,
    group_of,
)
from functions.core.ports import Clock, FailureReporter, RoutingEvents, VerdictStore
from functions.core.reporting import BackgroundFailureReporter
from functions.core.routing import NoRoutingEvents, Router
from functions.core.snapshot_cache import SnapshotCache

__all__ = [
    "COOLDOWN_MS",
    "DIRECT_PROBED",
    "DIRECT_TIMEOUT_MS",
    "LOOKUP_BUDGET_MS",
    "MAX_BODY_BYTES",
    "PINNED_TO_RELAY",
    "PROBE_SLOT_MS",
    "SNAPSHOT_TTL_MS",
    "VERDICT_MAX_AGE_MS",
    "ApiError",
    "BackgroundFailureReporter",
    "CachedSnapshot",
    "Clock",
    "Decision",
    "ErrorCode",
    "FailureReporter",
    "LookupCancelled",
    "NoRoutingEvents",
    "OverrideMode",
    "Path",
    "Reason",
    "RelayCheck",
    "RelayGroup",
    "RouteCheck",
    "RouteFailure",
    "RouteKey",
    "RouteOverride",
    "RouteVerdict",
    "Router",
    "RoutingEvents",
    "Rule",
    "Snapshot",
    "SnapshotCache",
    "StoreError",
    "UpstreamRejected",
    "VerdictStore",
    "decide",
    "group_of",
]
