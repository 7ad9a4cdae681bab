"""The scheduled probe through its real Lambda handler, on moto and the simulated retailers and relays."""

from __future__ import annotations

from typing import Any

import pytest

from functions.catalog import CATALOG
from functions.core import DIRECT_PROBED, PROBE_SLOT_MS, Reason, RelayCheck, RelayGroup, RouteCheck, RouteKey
from functions.core.errors import StoreError
from functions.handlers import probe
from functions.handlers.composition import StoreNotConfigured
from functions.handlers.telemetry import MetricsProbeEvents
from functions.services.probe_run import MAX_IN_FLIGHT, run_probe, slot_start_of
from tests.integration.conftest import TEST_SECRETS, Lambdas
from tests.support.secret_values import secret_values
from tests.support.telemetry import TelemetryOutput

SCHEDULED = 1_767_225_900_000
"""2026-01-01T00:05:00Z: when the schedule fires for its slot."""
SCHEDULED_SLOT = slot_start_of(SCHEDULED)


def test_a_scheduled_run_writes_every_verdict_and_calls_each_upstream_once(lambdas: Lambdas) -> None:
    lambdas.deploy()

    result = lambdas.probe(SCHEDULED)

    assert result["ran"] is True
    assert result["slotStart"] == SCHEDULED_SLOT
    assert result["routes"] == {
        **{key.value: {"direct": True, "reason": "ok"} for key in DIRECT_PROBED},
        "gs25-stock": {"direct": False, "reason": "pinned-relay"},
    }
    assert result["relays"] == {group.value: {"healthy": True, "reason": "ok"} for group in RelayGroup}
    snapshot = lambdas.store.read_snapshot()
    assert set(snapshot.routes) == set(RouteKey)
    assert set(snapshot.relays) == set(RelayGroup)
    assert snapshot.routes[RouteKey.GS25_STOCK].reason is Reason.PINNED_RELAY
    calls = lambdas.simulator.calls()
    assert {key: calls[f"direct:{key}"] for key in RouteKey} == {
        key: int(key in DIRECT_PROBED) for key in RouteKey
    }
    assert {group: calls[f"relay-health:{group}"] for group in RelayGroup} == dict.fromkeys(RelayGroup, 1)
    assert sum(calls[f"relay:{key}"] for key in RouteKey) == 0  # health checks use no relay quota
    assert calls["leakedSecrets"] == 0
    assert 1 <= lambdas.simulator.max_in_flight() <= MAX_IN_FLIGHT


def test_the_slot_comes_from_the_event_and_a_redelivery_never_probes_again(lambdas: Lambdas) -> None:
    lambdas.deploy()
    lambdas.clock.advance(3 * PROBE_SLOT_MS)  # the clock is in another slot: the event's time decides

    first = lambdas.probe(SCHEDULED)
    calls_after_first = lambdas.simulator.calls()
    again = lambdas.probe(SCHEDULED)
    later_in_slot = lambdas.probe(SCHEDULED + 59_000)

    assert first["ran"]
    assert first["slotStart"] == SCHEDULED_SLOT
    assert again == {**again, "ran": False, "slotStart": SCHEDULED_SLOT}
    assert not later_in_slot["ran"]
    assert lambdas.simulator.calls() == calls_after_first
    assert lambdas.probe(SCHEDULED + PROBE_SLOT_MS)["ran"]


def test_upstream_faults_become_verdicts(lambdas: Lambdas) -> None:
    lambdas.deploy()
    lambdas.simulator.faults.set("direct:cu-stock", "http-403")
    lambdas.simulator.faults.set("direct:oy-goods-info", "html-200")
    lambdas.simulator.faults.set("direct:seven-goods", "bad-shape")
    lambdas.simulator.faults.set("relay:dtryx", "http-503")

    result = lambdas.probe(SCHEDULED)

    failed = {key: route["reason"] for key, route in result["routes"].items() if not route["direct"]}
    assert failed == {
        "cu-stock": "http-403",
        "oy-goods-info": "invalid-response",
        "seven-goods": "shape",
        "gs25-stock": "pinned-relay",
    }
    assert result["relays"]["dtryx"] == {"healthy": False, "reason": "http-5xx"}
    assert lambdas.store.read_snapshot().routes[RouteKey.CU_STOCK].reason is Reason.HTTP_403


def test_a_run_where_every_upstream_hangs_ends_each_check_as_a_timeout(lambdas: Lambdas) -> None:
    # The probe function's own transports and store, each check bounded by 200 ms instead of the deployed
    # DIRECT_TIMEOUT_MS (3 s), so that every check can hang without a long test.
    lambdas.deploy()
    for key in DIRECT_PROBED:
        lambdas.simulator.faults.set(f"direct:{key}", "timeout")
    for group in RelayGroup:
        lambdas.simulator.faults.set(f"relay:{group}", "timeout")
    function = lambdas.probe_function
    assert function.store is not None

    summary = run_probe(
        specs=CATALOG,
        direct=function.upstreams.direct,
        relays=function.upstreams.relays,
        store=function.store,
        clock=lambdas.clock,
        slot_start=slot_start_of(SCHEDULED),
        trigger="test",
        events=MetricsProbeEvents(),
        timeout_ms=200,
    )
    # Every check ended by its own bound (the simulator's hang outlasts the test otherwise); how long that
    # took is the bench's to measure, not a test's.
    assert {check.reason for check in summary.routes if check.key in DIRECT_PROBED} == {Reason.TIMEOUT}
    assert {check.reason for check in summary.relays} == {Reason.TIMEOUT}


def test_metrics_are_emitted_and_no_secret_reaches_a_log_or_a_retailer(
    lambdas: Lambdas, telemetry: TelemetryOutput
) -> None:
    lambdas.deploy()
    lambdas.simulator.faults.set("direct:cu-prime", "http-500")

    lambdas.probe(SCHEDULED)

    metrics = telemetry.metrics()
    assert {metric["namespace"] for metric in metrics} == {"RouteHealth"}
    assert all(metric["dimensions"]["service"] == "route-health" for metric in metrics)
    # Per route and relay: one log line per check; the metrics count across them.
    checks = {
        log["route"]: log["message"]
        for log in telemetry.logs()
        if str(log.get("message")).startswith("probe check")
    }
    assert set(checks) == {
        key.value for key in DIRECT_PROBED
    }  # gs25-stock is pinned to the relay, never checked
    assert checks["cu-prime"] == "probe check failed"
    assert checks["cu-store"] == "probe check passed"
    [failed] = [log for log in telemetry.logs() if log.get("message") == "probe check failed"]
    assert (failed["route"], failed["reason"]) == ("cu-prime", "http-5xx")
    relays = {log["group"]: log["message"] for log in telemetry.logs() if "group" in log}
    assert relays == dict.fromkeys(("oliveyoung", "convenience", "dtryx", "cgv"), "relay check passed")
    counts = {
        m["name"]: m["value"] for m in metrics if m["name"] in ("RoutesFailingDirect", "RelaysUnhealthy")
    }
    assert counts == {"RoutesFailingDirect": 1, "RelaysUnhealthy": 0}
    assert [metric["name"] for metric in metrics].count("ProbeRunDuration") == 1  # one per run
    assert any(log.get("message") == "probe run finished" for log in telemetry.logs())
    output = telemetry.text()
    assert not [value for value in secret_values(TEST_SECRETS) if value in output]
    assert lambdas.simulator.calls()["leakedSecrets"] == 0


def test_every_refused_write_counts_as_stale_write_rejected(
    lambdas: Lambdas, telemetry: TelemetryOutput
) -> None:
    lambdas.deploy()
    later = lambdas.clock() + 1_000  # another writer's checks, newer than this run's
    newer = [RouteCheck(key, True, later) for key in (RouteKey.CU_STOCK, RouteKey.DTRYX_MOVIES)]
    lambdas.store.write_checks(newer, [RelayCheck(RelayGroup.DTRYX, True, later)], now=later)

    result = lambdas.probe(SCHEDULED)

    rejected = [m["value"] for m in telemetry.metrics() if m["name"] == "StaleWriteRejected"]
    assert result["staleWritesRejected"] == sum(rejected) == 3


def test_a_store_that_is_down_fails_the_invocation_visibly(
    lambdas: Lambdas, unreachable_dynamodb: Any, telemetry: TelemetryOutput
) -> None:
    lambdas.deploy(dynamodb=unreachable_dynamodb, SNAPSHOT_PREFETCH_SECONDS="0.05")

    with pytest.raises(StoreError):
        lambdas.probe(SCHEDULED)

    store_errors = [m for m in telemetry.metrics() if m["name"] == "StoreError"]
    assert [m["dimensions"] for m in store_errors] == [{"service": "route-health"}] * 2
    # The container's INIT prefetch failed first (reported, tolerated); then the probe's slot claim.
    failed_calls = [log["operation"] for log in telemetry.logs() if "operation" in log]
    assert failed_calls == ["read_snapshot", "claim_probe_slot"]
    assert sum(count for name, count in lambdas.simulator.calls().items() if name.startswith("direct:")) == 0


def test_an_event_that_is_not_a_scheduled_event_is_refused(lambdas: Lambdas) -> None:
    lambdas.deploy()
    with pytest.raises(Exception, match="validation error"):
        probe.lambda_handler({"time": "not a time"}, lambdas.context)
    assert lambdas.simulator.calls()["relay-health:dtryx"] == 0


def test_a_store_error_after_the_run_only_costs_the_overrides_gauge(
    lambdas: Lambdas, telemetry: TelemetryOutput, monkeypatch: pytest.MonkeyPatch
) -> None:
    lambdas.deploy()
    store = lambdas.probe_function.store
    assert store is not None

    def unreadable() -> Any:
        raise StoreError("read_snapshot")

    monkeypatch.setattr(store, "read_snapshot", unreadable)  # the run's writes work; the read after it fails
    result = lambdas.probe(SCHEDULED)

    assert result["ran"] is True
    assert "OverridesActive" not in {metric["name"] for metric in telemetry.metrics()}
    assert [line["message"] for line in telemetry.logs() if line["level"] == "WARNING"] == [
        "active overrides not counted"
    ]


def test_a_legacy_install_has_nothing_to_probe(lambdas: Lambdas) -> None:
    lambdas.deploy(table=False)
    with pytest.raises(StoreNotConfigured):
        lambdas.probe(SCHEDULED)
