"""The metric table is the series budget, and the code emits nothing outside it."""

from __future__ import annotations

import contextvars
import json
import logging
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from functions.core import DIRECT_PROBED, Reason, RelayCheck, RelayGroup, RouteCheck, RouteKey
from functions.core.decision import Path as RoutePath
from functions.handlers.metrics import (
    METRICS,
    PROBE_METRICS,
    SERIES_BUDGET,
    MetricDefinition,
    worst_case_series,
)
from functions.handlers.telemetry import (
    LogLookupEvents,
    MetricsProbeEvents,
    MetricsRoutingEvents,
    count_error_answer,
    emit_metric,
)
from functions.handlers.telemetry import logger as telemetry_logger
from functions.services.ports import MemberOutcome, ProbeSummary

README = Path(__file__).resolve().parents[3] / "docs/operations.md"


def test_the_worst_case_fits_the_budget():
    # Every metric times every value of every dimension the code can give it: every route failing for
    # every reason, every error code answered, every store call failing, every function (one service name).
    per_route = [name for name, definition in METRICS.items() if "Route" in definition.dimensions]
    assert per_route == []  # which route, and why, is in the log lines: a new route adds no series
    assert SERIES_BUDGET == 60
    assert worst_case_series() <= SERIES_BUDGET


def test_the_probe_alone_emits_a_series_per_metric_whatever_the_number_of_routes():
    assert METRICS.keys() >= PROBE_METRICS
    assert all(METRICS[name].series() == 1 for name in PROBE_METRICS)


def test_no_dimension_carries_a_reason():
    reasons = {reason.value for reason in Reason}
    for definition in METRICS.values():
        assert "Reason" not in definition.dimensions, definition.name
        for values in definition.dimensions.values():
            assert not values & (reasons - {"unavailable"}), definition.name


def test_series_multiply_across_dimensions():
    two_by_three = MetricDefinition("X", "", dimensions={"A": frozenset("ab"), "B": frozenset("xyz")})
    assert two_by_three.series() == 6
    assert MetricDefinition("Y", "").series() == 1
    assert worst_case_series({"X": two_by_three}) == 6


def test_the_readme_states_the_worst_case_of_the_table():
    readme = README.read_text()
    total = re.search(r"\| \*\*total\*\* \| \| \*\*(\d+)\*\* \|", readme)
    assert total is not None
    assert int(total.group(1)) == worst_case_series()
    every_function = re.search(
        r"\| \*\*worst case, every function\*\* \(budget (\d+)\) \| \| \*\*(\d+)\*\* \|", readme
    )
    assert every_function is not None
    assert (int(every_function.group(1)), int(every_function.group(2))) == (
        SERIES_BUDGET,
        worst_case_series(),
    )


def _series(telemetry: Any) -> set[tuple[str, tuple[tuple[str, str], ...]]]:
    return {(m["name"], tuple(sorted(m["dimensions"].items()))) for m in telemetry.metrics()}


def test_everything_the_events_can_emit_is_in_the_table(telemetry):
    routing = MetricsRoutingEvents()
    for key in RouteKey:
        for path in RoutePath:
            routing.decided(key, path, "rule")
            routing.answered(key, path)
        routing.relay_fallback(key)
    for key in DIRECT_PROBED:
        for reason in Reason:
            routing.direct_failed(key, reason)
    probe = MetricsProbeEvents()
    for key in RouteKey:
        for passed in (True, False):
            probe.route_checked(
                RouteCheck(key, direct=passed, checked_at=1, reason=Reason.OK if passed else Reason.HTTP_403)
            )
    for group in RelayGroup:
        probe.relay_checked(RelayCheck(group, healthy=False, checked_at=1, reason=Reason.TIMEOUT))

    emitted = _series(telemetry)
    for name, dimensions in emitted:
        definition = METRICS[name]
        assert dict(dimensions).keys() - {"service"} == definition.dimensions.keys()
        for dimension, value in dimensions:
            assert dimension == "service" or value in definition.dimensions[dimension]
    assert "undeclared metric" not in telemetry.text()
    # Every route failing for every reason is still one DirectFailure series; the routes are in the logs.
    assert len({d for n, d in emitted if n == "DirectFailure"}) == 1
    failed = [log for log in telemetry.logs() if log["message"] == "direct failed"]
    assert {log["route"] for log in failed} == {key.value for key in DIRECT_PROBED}


def test_each_probe_check_is_a_log_line_with_its_route_or_group_and_reason(telemetry):
    probe = MetricsProbeEvents()
    probe.route_checked(RouteCheck(RouteKey.CU_STOCK, direct=True, checked_at=1, reason=Reason.OK))
    probe.route_checked(
        RouteCheck(RouteKey.OY_GOODS_INFO, direct=False, checked_at=1, reason=Reason.HTTP_403)
    )
    probe.route_checked(
        RouteCheck(RouteKey.GS25_STOCK, direct=False, checked_at=1, reason=Reason.PINNED_RELAY)
    )
    probe.relay_checked(RelayCheck(RelayGroup.DTRYX, healthy=False, checked_at=1, reason=Reason.TIMEOUT))
    probe.relay_checked(RelayCheck(RelayGroup.OLIVEYOUNG, healthy=True, checked_at=1, reason=Reason.OK))

    lines = [
        (log["message"], log.get("route") or log.get("group"), log["reason"]) for log in telemetry.logs()
    ]
    assert lines == [
        ("probe check passed", "cu-stock", "ok"),
        ("probe check failed", "oy-goods-info", "http-403"),
        # gs25-stock is written pinned without a request: nothing was checked
        ("relay check failed", "dtryx", "timeout"),
        ("relay check passed", "oliveyoung", "ok"),
    ]
    assert telemetry.metrics() == []  # the run's counts come with its end


def test_a_probe_run_counts_failing_routes_and_unhealthy_relays(telemetry):
    routes = (
        RouteCheck(RouteKey.CU_STOCK, direct=False, checked_at=1, reason=Reason.HTTP_403),
        RouteCheck(RouteKey.OY_GOODS_INFO, direct=False, checked_at=1, reason=Reason.TIMEOUT),
        RouteCheck(RouteKey.CU_PRIME, direct=True, checked_at=1, reason=Reason.OK),
        RouteCheck(RouteKey.GS25_STOCK, direct=False, checked_at=1, reason=Reason.PINNED_RELAY),
    )
    relays = (
        RelayCheck(RelayGroup.DTRYX, healthy=False, checked_at=1, reason=Reason.TIMEOUT),
        RelayCheck(RelayGroup.OLIVEYOUNG, healthy=True, checked_at=1, reason=Reason.OK),
    )
    summary = ProbeSummary(
        ran=True, slot_start=0, trigger="schedule", routes=routes, relays=relays, duration_ms=1234
    )

    MetricsProbeEvents().run_finished(summary)

    values = {m["name"]: m["value"] for m in telemetry.metrics()}
    assert values == {"RoutesFailingDirect": 2, "RelaysUnhealthy": 1, "ProbeRunDuration": 1234}
    assert all(m["dimensions"] == {"service": "route-health"} for m in telemetry.metrics())


@pytest.mark.parametrize(
    ("name", "dimensions"),
    [
        ("NotInTheTable", {}),
        ("DirectFailure", {"Route": "cu-stock", "Reason": "http-403"}),  # route and reason: the log line
        ("StoreError", {"Operation": "read_snapshot"}),  # which call: the log line
        ("LookupError", {"Code": "SOMETHING_NEW"}),
    ],
)
def test_an_undeclared_metric_is_logged_not_emitted(telemetry, name, dimensions):
    emit_metric(name, 1, **dimensions)

    assert telemetry.metrics() == []
    [line] = [log for log in telemetry.logs() if log["message"] == "undeclared metric not emitted"]
    assert line["metric"] == name


def test_error_answers_are_counted_by_code(telemetry):
    count_error_answer("UPSTREAM_TIMEOUT")
    [metric] = telemetry.metrics()
    assert metric["name"] == "LookupError"
    assert metric["dimensions"] == {"service": "route-health", "Code": "UPSTREAM_TIMEOUT"}
    assert metric["namespace"] == "RouteHealth"


def _emf_lines(telemetry: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in telemetry.text().splitlines() if '"_aws"' in line]


def test_each_metric_carries_its_own_dimensions_only(telemetry):
    # Another metric's dimension on it would be a series nobody budgeted.
    emit_metric("Lookups", 1, Path="direct")
    emit_metric("SnapshotAge", 1500)
    emit_metric("Lookups", 1, Path="relay")
    emit_metric("ResponseCache", 1, Outcome="hit")

    emitted = [(m["name"], m["dimensions"], m["value"]) for m in telemetry.metrics()]
    service = {"service": "route-health"}
    assert emitted == [
        ("Lookups", {**service, "Path": "direct"}, 1),
        ("SnapshotAge", service, 1500),
        ("Lookups", {**service, "Path": "relay"}, 1),
        ("ResponseCache", {**service, "Outcome": "hit"}, 1),
    ]
    assert {m["namespace"] for m in telemetry.metrics()} == {"RouteHealth"}


def test_metrics_from_a_lookups_member_threads_and_after_it_are_all_written(telemetry):
    # A lookup's members run in copies of its context (functions/services/lookup.py, `each`), and a member
    # may outlive its request.
    with ThreadPoolExecutor(max_workers=2) as pool:
        for path in ("direct", "relay"):
            pool.submit(contextvars.copy_context().run, emit_metric, "Lookups", 1, Path=path)
    thread = threading.Thread(target=emit_metric, args=("DirectFailure", 1))
    thread.start()
    thread.join()

    emitted = sorted((m["name"], m["dimensions"].get("Path")) for m in telemetry.metrics())
    assert emitted == [("DirectFailure", None), ("Lookups", "direct"), ("Lookups", "relay")]


def test_a_lookups_members_are_one_log_line_with_each_ones_outcome_and_time(telemetry):
    LogLookupEvents().members_answered(
        "compare_products",
        {"cu": MemberOutcome(None, 120), "gs25": MemberOutcome("UPSTREAM_TIMEOUT", 10_000)},
    )
    [line] = [line for line in telemetry.logs() if line["message"] == "lookup members"]
    assert line["lookup"] == "compare_products"
    assert line["members"] == {
        "cu": {"outcome": "ok", "ms": 120},
        "gs25": {"outcome": "UPSTREAM_TIMEOUT", "ms": 10_000},
    }
    assert telemetry.metrics() == []  # no series per member: the router counts their calls


def test_no_line_while_metrics_are_disabled(telemetry, monkeypatch):
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    emit_metric("SnapshotAge", 1)
    emit_metric("Lookups", 1, Path="direct")

    assert _emf_lines(telemetry) == []


def test_at_debug_level_a_route_decision_is_logged_with_its_rule(telemetry):
    level = telemetry_logger.log_level
    telemetry_logger.setLevel(logging.DEBUG)
    try:
        MetricsRoutingEvents().decided(RouteKey.CU_STOCK, RoutePath.DIRECT, "fresh-direct")
    finally:
        telemetry_logger.setLevel(level)

    [line] = [log for log in telemetry.logs() if log["message"] == "route decided"]
    assert (line["route"], line["path"], line["rule"]) == ("cu-stock", "direct", "fresh-direct")


def test_at_the_default_level_a_route_decision_builds_no_log_record(telemetry, monkeypatch):
    # A direct lookup pays for the record only when DEBUG is on (Lookups counts every decision).
    monkeypatch.setattr(
        telemetry_logger, "debug", lambda *args, **kwargs: pytest.fail("built a DEBUG record")
    )

    MetricsRoutingEvents().decided(RouteKey.CU_STOCK, RoutePath.DIRECT, "fresh-direct")

    assert "route decided" not in telemetry.text()


def test_a_relay_decision_is_a_log_line_with_its_route_and_one_series_for_every_route(telemetry):
    events = MetricsRoutingEvents()
    for key in (RouteKey.CU_STOCK, RouteKey.GS25_STOCK):
        events.decided(key, RoutePath.RELAY, "stale-snapshot")

    lines = [log for log in telemetry.logs() if log["message"] == "route decided"]
    assert [(line["route"], line["path"], line["rule"]) for line in lines] == [
        ("cu-stock", "relay", "stale-snapshot"),
        ("gs25-stock", "relay", "stale-snapshot"),
    ]
    assert {(m["name"], tuple(sorted(m["dimensions"]))) for m in telemetry.metrics()} == {
        ("RelayLookup", ("service",))
    }
