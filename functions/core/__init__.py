"""The pure core: route keys, verdicts, the route decision, overrides, the quota's arithmetic, the error model.

Rules and models only: no AWS, HTTP or Powertools imports, no os, no threads, never a clock read
(tests/unit/core/test_core_purity.py). What keeps state — the router's blocks, the snapshot cache, the quota's
counts, background reports — is in `functions/services/`.
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
from functions.core.ports import Clock, VerdictStore

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
    "CachedSnapshot",
    "Clock",
    "Decision",
    "ErrorCode",
    "LookupCancelled",
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
    "Rule",
    "Snapshot",
    "StoreError",
    "UpstreamRejected",
    "VerdictStore",
    "decide",
    "group_of",
]
