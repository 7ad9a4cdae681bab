"""Logs, metrics and traces for every function, in one place (docs/design.md, "Infrastructure and
observability").

Each metric is written as its own EMF line (`single_metric`) because each carries its own dimensions
(`Route`, `Path`, ...); every dimension takes values from a fixed enum (20 routes x 3 paths at most), so
cardinality stays bounded. Nothing here ever receives a secret: callers pass route keys, codes and numbers.
"""

from __future__ import annotations

from typing import Literal

from aws_lambda_powertools import Logger
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

from functions.core import Path, Reason, RelayCheck, RouteCheck, RouteKey, RouteOverride
from functions.core.snapshot_cache import SnapshotCache
from functions.services.probe_run import ProbeSummary

NAMESPACE = "RouteHealth"
SERVICE = "route-health"

logger = Logger(service=SERVICE)


def emit_metric(name: str, value: float, unit: MetricUnit = MetricUnit.Count, **dimensions: str) -> None:
    """One EMF metric line in the RouteHealth namespace with `service` plus the given dimensions."""
    if is_metrics_disabled():  # single_metric itself ignores POWERTOOLS_METRICS_DISABLED
        return
    with single_metric(
        name=name,
        unit=unit,
        value=value,
        namespace=NAMESPACE,
        default_dimensions={"service": SERVICE, **dimensions},
    ):
        pass


def emit_snapshot_age(snapshots: SnapshotCache | None) -> None:
    """SnapshotAge (ms) of the container's cached snapshot; nothing when there is none (legacy or not loaded)."""
    if snapshots is None:
        return
    age = snapshots.age_ms()
    if age is not None:
        emit_metric("SnapshotAge", max(age, 0), MetricUnit.Milliseconds)


def audit_override_change(action: Literal["set", "clear"], override: RouteOverride, *, caller: str) -> None:
    """One audit line and one `OverrideChange` count per operator change (Mode: the mode set, or `clear`).

    `caller` is the SHA-256 of the caller's source IP. The reason is the operator's own text, never a secret.
    """
    logger.info(
        f"route override {'set' if action == 'set' else 'cleared'}",
        extra={
            "audit": "route-override",
            "action": action,
            "route": override.key.value,
            "mode": override.mode.value,
            "reason": override.reason,
            "createdAt": override.created_at,
            "expiresAt": override.expires_at,
            "callerIpSha256": caller,
        },
    )
    emit_metric("OverrideChange", 1, Mode=override.mode.value if action == "set" else "clear")


def emit_overrides_active(count: int) -> None:
    """The OverridesActive gauge: how many operator overrides count now."""
    emit_metric("OverridesActive", count)


class MetricsRoutingEvents:
    """The router's decisions and failures as metrics and log lines (implements RoutingEvents)."""

    def decided(self, key: RouteKey, path: Path, rule: str) -> None:
        logger.info("route decided", extra={"route": key.value, "path": path.value, "rule": rule})

    def answered(self, key: RouteKey, path: Path) -> None:
        # One count per lookup, Path=unavailable for every 503: the 503-rate alarm divides these.
        emit_metric("LookupRoute", 1, Route=key.value, Path=path.value)
        emit_metric("Lookups", 1, Path=path.value)

    def direct_failed(self, key: RouteKey, reason: Reason) -> None:
        logger.warning("direct failed", extra={"route": key.value, "reason": reason.value})
        emit_metric("DirectFailure", 1, Route=key.value, Reason=reason.value)

    def relay_fallback(self, key: RouteKey) -> None:
        logger.info("relay fallback", extra={"route": key.value})
        emit_metric("RelayFallback", 1, Route=key.value)


class MetricsRelayEvents:
    """The relay transport's events as metrics and log lines (implements adapters.relay.RelayEvents)."""

    def gs25_session_expired(self) -> None:
        logger.warning(
            "GS25 refused the convenience relay's session: renew the GS25 session on the relay",
            extra={"route": RouteKey.GS25_STOCK.value},
        )
        emit_metric("Gs25SessionExpired", 1)


class MetricsProbeEvents:
    """A probe run's results as metrics and log lines (implements functions.services.ports.ProbeEvents)."""

    def route_checked(self, check: RouteCheck) -> None:
        outcome = "pass" if check.direct else "fail"
        emit_metric("ProbeCheck", 1, Route=check.key.value, Outcome=outcome)

    def relay_checked(self, check: RelayCheck) -> None:
        emit_metric("RelayHealthy", 1 if check.healthy else 0, Group=check.group.value)

    def check_crashed(self, target: str, error_type: str) -> None:
        logger.error("probe check crashed", extra={"target": target, "error_type": error_type})

    def run_finished(self, summary: ProbeSummary) -> None:
        logger.info("probe run finished", extra={"probe": summary.to_dict()})
        emit_metric("ProbeRun", 1)
        emit_metric("ProbeRunDuration", summary.duration_ms, MetricUnit.Milliseconds)

    def store_failed(self, operation: str, error_type: str) -> None:
        logger.error("verdict store failed", extra={"operation": operation, "error_type": error_type})
        emit_metric("StoreError", 1, Operation=operation)
