"""Logs, metrics and traces for every function, in one place (docs/design.md, "Infrastructure and
observability").

Powertools' own environment variables name the service, namespace and log level. Metrics are only those
`functions.handlers.metrics` declares, each one Powertools `single_metric` line with its own dimensions (a
Powertools `Metrics` document gives every metric in it every dimension set, which would add series; what a
line per metric costs: docs/benchmarks.md, "Metrics: Powertools' lines"). Nothing here ever receives a
secret: callers pass route keys, codes and numbers.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from aws_lambda_powertools import Logger
from aws_lambda_powertools.metrics import single_metric
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

from functions import core
from functions.handlers.metrics import METRICS
from functions.services.snapshot_cache import SnapshotCache

if TYPE_CHECKING:  # the lookup function never loads the probe's code
    from functions.services.ports import MemberOutcome, ProbeSummary

logger = Logger()


def emit_metric(name: str, value: float, **dimensions: str) -> None:
    """A metric of the table as one EMF line, with Powertools' `service` plus the given dimensions.

    A name or dimension value outside the table is a bug: it is logged and not emitted (it would add series
    nobody budgeted), and never raised into the lookup that reported it.
    """
    definition = METRICS.get(name)
    if (
        definition is None
        or dimensions.keys() != definition.dimensions.keys()
        or any(value_ not in definition.dimensions[dimension] for dimension, value_ in dimensions.items())
    ):
        logger.error("undeclared metric not emitted", extra={"metric": name, "dimensions": dimensions})
        return
    if is_metrics_disabled():  # single_metric writes its line even then (Powertools 3.37)
        return
    with single_metric(name=name, unit=definition.unit, value=value, default_dimensions=dimensions):
        pass


def emit_snapshot_age(snapshots: SnapshotCache | None) -> None:
    """SnapshotAge (ms) of the container's cached snapshot; nothing when there is none (legacy or not loaded)."""
    if snapshots is None:
        return
    age = snapshots.age_ms()
    if age is not None:
        emit_metric("SnapshotAge", max(age, 0))


def count_error_answer(code: str) -> None:
    """LookupError{Code}: one per error answer of the lookup API."""
    emit_metric("LookupError", 1, Code=code)


def report_unexpected_error(error: Exception) -> None:
    """An exception no handler expected, answered as 500 INTERNAL_ERROR: logged with its trace, counted."""
    logger.exception("unexpected error", extra={"error_type": type(error).__name__})
    emit_metric("UnexpectedError", 1)


def audit_override_change(
    action: Literal["set", "clear"], override: core.RouteOverride, *, caller: str
) -> None:
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

    def decided(self, key: core.RouteKey, path: core.Path, rule: str) -> None:
        # A relay decision is logged (which route, why: a dimension per route would grow the metric bill with
        # every new operation); a direct one only at DEBUG (POWERTOOLS_LOG_LEVEL=DEBUG), where below DEBUG a
        # lookup does not even build the record (2.0 → 0.5 µs).
        if path is core.Path.RELAY:
            logger.info("route decided", extra={"route": key.value, "path": path.value, "rule": rule})
            emit_metric("RelayLookup", 1)
        elif logger.log_level <= logging.DEBUG:
            logger.debug("route decided", extra={"route": key.value, "path": path.value, "rule": rule})

    def answered(self, key: core.RouteKey, path: core.Path) -> None:
        # One count per lookup, Path=unavailable for every 503: the 503-rate alarm divides these.
        emit_metric("Lookups", 1, Path=path.value)
        if path is core.Path.UNAVAILABLE:
            logger.warning("route unavailable", extra={"route": key.value})

    def direct_failed(self, key: core.RouteKey, reason: core.Reason) -> None:
        # Which route and why: this line (the dashboard's "Live direct failures per route"); the metric counts.
        logger.warning("direct failed", extra={"route": key.value, "reason": reason.value})
        emit_metric("DirectFailure", 1)

    def relay_fallback(self, key: core.RouteKey) -> None:
        logger.info("relay fallback", extra={"route": key.value})
        emit_metric("RelayLookup", 1)
        emit_metric("RelayFallback", 1)


class LogLookupEvents:
    """A lookup's members as one log line (implements functions.services.ports.LookupEvents): each member's
    outcome and time. Their upstream calls are counted by the router's own metrics; no series per member."""

    def members_answered(self, lookup: str, outcomes: Mapping[str, MemberOutcome]) -> None:
        logger.info(
            "lookup members",
            extra={
                "lookup": lookup,
                "members": {
                    name: {"outcome": outcome.code or "ok", "ms": outcome.elapsed_ms}
                    for name, outcome in outcomes.items()
                },
            },
        )


class MetricsRelayEvents:
    """The relay transport's events as metrics and log lines (implements adapters.relay.RelayEvents)."""

    def gs25_session_expired(self) -> None:
        logger.warning(
            "GS25 refused the convenience relay's session: renew the GS25 session on the relay",
            extra={"route": core.RouteKey.GS25_STOCK.value},
        )
        emit_metric("Gs25SessionExpired", 1)


def report_relay_configuration_invalid(group: core.RelayGroup, error: Exception) -> None:
    """A relay whose URL or credentials cannot be used: its lookups answer 503 and its check `configuration`."""
    logger.warning("relay configuration invalid", extra={"group": group.value, "problem": str(error)})


class MetricsProbeEvents:
    """A probe run's results as log lines and metrics (implements functions.services.ports.ProbeEvents).

    Each check is one log line with its route or relay group and reason (the dashboard's per-route and
    per-relay tables, the saved queries); the metrics count across routes and relays, one series each, so
    that the alarms can page on them whatever the number of routes.
    """

    def route_checked(self, check: core.RouteCheck) -> None:
        if check.key in core.PINNED_TO_RELAY:  # written without a request: nothing was checked
            return
        logger.info(
            "probe check passed" if check.direct else "probe check failed",
            extra={"route": check.key.value, "reason": _code(check.reason)},
        )

    def relay_checked(self, check: core.RelayCheck) -> None:
        logger.info(
            "relay check passed" if check.healthy else "relay check failed",
            extra={"group": check.group.value, "reason": _code(check.reason)},
        )

    def check_crashed(self, target: str, error_type: str) -> None:
        logger.error("probe check crashed", extra={"target": target, "error_type": error_type})

    def run_finished(self, summary: ProbeSummary) -> None:
        logger.info("probe run finished", extra={"probe": summary.to_dict()})
        checked = [check for check in summary.routes if check.key not in core.PINNED_TO_RELAY]
        emit_metric("RoutesFailingDirect", sum(not check.direct for check in checked))
        emit_metric("RelaysUnhealthy", sum(not check.healthy for check in summary.relays))
        emit_metric("ProbeRunDuration", summary.duration_ms)

    def store_failed(self, operation: str, error_type: str) -> None:
        logger.error("verdict store failed", extra={"operation": operation, "error_type": error_type})
        emit_metric("StoreError", 1)


def _code(reason: core.Reason | None) -> str | None:
    return None if reason is None else reason.value
