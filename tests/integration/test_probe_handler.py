"""The scheduled probe through its real Lambda handler, on moto and the simulated retailers and relays."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.config import Config

from functions.core import (
    DIRECT_PROBED,
    PROBE_SLOT_MS,
    Reason,
    RelayCheck,
    RelayGroup,
    RouteCheck,
    RouteKey,
    StoreError,
)
from functions.handlers.probe import lambda_handler
from functions.handlers.wiring import Container
from functions.services.probe_run import slot_start_of
from sandbox.simulator.server import Simulator

ContainerFactory = Callable[..., Container]


def scheduled_event(at: datetime, *, event_id: str = "evt-1") -> dict[str, Any]:
    """An EventBridge scheduled event; `time` is the scheduled time."""
    return {
        "version": "0",
        "id": event_id,
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": "123456789012",
        "time": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": "ap-northeast-2",
        "resources": ["arn:aws:events:ap-northeast-2:123456789012:rule/route-health-probe"],
        "detail": {},
    }


SCHEDULED = datetime(2026, 1, 1, 0, 5, tzinfo=UTC)
SCHEDULED_SLOT = slot_start_of(int(SCHEDULED.timestamp() * 1000))


def test_a_scheduled_run_writes_every_verdict_and_calls_each_upstream_once(
    make_container: ContainerFactory, simulator: Simulator, lambda_context: Any
) -> None:
    container = make_container()
    assert container.store is not None

    result = lambda_handler(scheduled_event(SCHEDULED), lambda_context)

    assert result["ran"] is True
    assert result["slotStart"] == SCHEDULED_SLOT
    assert result["routes"] == {
        **{key.value: {"direct": True, "reason": "ok"} for key in DIRECT_PROBED},
        "gs25-stock": {"direct": False, "reason": "pinned-relay"},
    }
    assert result["relays"] == {group.value: {"healthy": True, "reason": "ok"} for group in RelayGroup}
    snapshot = container.store.read_snapshot()
    assert len(snapshot.routes) == 20
    assert len(snapshot.relays) == 3
    assert snapshot.routes[RouteKey.GS25_STOCK].reason is Reason.PINNED_RELAY
    calls = simulator.calls()
    assert {key: calls[f"direct:{key}"] for key in RouteKey} == {
        key: int(key in DIRECT_PROBED) for key in RouteKey
    }
    assert {group: calls[f"relay-health:{group}"] for group in RelayGroup} == dict.fromkeys(RelayGroup, 1)
    assert sum(calls[f"relay:{key}"] for key in RouteKey) == 0  # health checks use no relay quota
    assert calls["leakedSecrets"] == 0
    assert 1 <= simulator.max_in_flight() <= 4


def test_the_slot_comes_from_the_event_and_a_redelivery_never_probes_again(
    make_container: ContainerFactory, simulator: Simulator, lambda_context: Any, clock: Any
) -> None:
    make_container()
    clock.advance(3 * PROBE_SLOT_MS)  # the clock is in another slot: the event's time decides

    first = lambda_handler(scheduled_event(SCHEDULED), lambda_context)
    calls_after_first = simulator.calls()
    again = lambda_handler(scheduled_event(SCHEDULED), lambda_context)
    later_in_slot = lambda_handler(
        scheduled_event(SCHEDULED.replace(second=59), event_id="evt-2"), lambda_context
    )

    assert first["ran"]
    assert first["slotStart"] == SCHEDULED_SLOT
    assert again == {**again, "ran": False, "slotStart": SCHEDULED_SLOT}
    assert not later_in_slot["ran"]
    assert simulator.calls() == calls_after_first
    next_slot = SCHEDULED.replace(minute=10)
    assert lambda_handler(scheduled_event(next_slot, event_id="evt-3"), lambda_context)["ran"]


def test_upstream_faults_become_verdicts(
    make_container: ContainerFactory, simulator: Simulator, lambda_context: Any
) -> None:
    container = make_container()
    simulator.faults.set("direct:cu-stock", "http-403")
    simulator.faults.set("direct:oy-goods-info", "html-200")
    simulator.faults.set("direct:seven-goods", "bad-shape")
    simulator.faults.set("relay:dtryx", "http-503")

    result = lambda_handler(scheduled_event(SCHEDULED), lambda_context)

    failed = {key: route["reason"] for key, route in result["routes"].items() if not route["direct"]}
    assert failed == {
        "cu-stock": "http-403",
        "oy-goods-info": "invalid-response",
        "seven-goods": "shape",
        "gs25-stock": "pinned-relay",
    }
    assert result["relays"]["dtryx"] == {"healthy": False, "reason": "http-5xx"}
    assert container.store is not None
    assert container.store.read_snapshot().routes[RouteKey.CU_STOCK].reason is Reason.HTTP_403


def test_a_run_where_every_upstream_hangs_is_bounded_by_the_check_timeout(
    make_container: ContainerFactory, simulator: Simulator, lambda_context: Any
) -> None:
    container = make_container()
    container.probe_timeout_ms = 200
    for key in DIRECT_PROBED:
        simulator.faults.set(f"direct:{key}", "timeout")
    for group in RelayGroup:
        simulator.faults.set(f"relay:{group}", "timeout")

    started = time.monotonic()
    result = lambda_handler(scheduled_event(SCHEDULED), lambda_context)
    elapsed_s = time.monotonic() - started

    assert elapsed_s <= math.ceil(22 / 4) * 0.2 + 3.0  # rounds of 4 checks x timeout, plus generous overhead
    assert {route["reason"] for key, route in result["routes"].items() if key != "gs25-stock"} == {"timeout"}
    assert {relay["reason"] for relay in result["relays"].values()} == {"timeout"}


def test_metrics_are_emitted_and_no_secret_reaches_a_log_or_a_retailer(
    make_container: ContainerFactory,
    simulator: Simulator,
    lambda_context: Any,
    telemetry: Any,
    test_secrets: Any,
) -> None:
    make_container()
    simulator.faults.set("direct:cu-prime", "http-500")

    lambda_handler(scheduled_event(SCHEDULED), lambda_context)

    metrics = telemetry.metrics()
    assert {metric["namespace"] for metric in metrics} == {"RouteHealth"}
    assert all(metric["dimensions"]["service"] == "route-health" for metric in metrics)
    checks = {m["dimensions"]["Route"]: m["value"] for m in metrics if m["name"] == "DirectHealthy"}
    assert len(checks) == 19  # gs25-stock is pinned to the relay, never checked
    assert checks["cu-prime"] == 0
    assert checks["cu-store"] == 1
    [failed] = [log for log in telemetry.logs() if log.get("message") == "probe check failed"]
    assert (failed["route"], failed["reason"]) == ("cu-prime", "http-5xx")
    relay_health = {m["dimensions"]["Group"]: m["value"] for m in metrics if m["name"] == "RelayHealthy"}
    assert relay_health == {"oliveyoung": 1, "convenience": 1, "dtryx": 1}
    names = [metric["name"] for metric in metrics]
    assert names.count("ProbeRun") == 1
    assert names.count("ProbeRunDuration") == 1
    assert any(log.get("message") == "probe run finished" for log in telemetry.logs())
    output = telemetry.text()
    assert not [value for value in test_secrets.all_values() if value in output]
    assert simulator.calls()["leakedSecrets"] == 0


def test_every_refused_write_counts_as_stale_write_rejected(
    make_container: ContainerFactory, lambda_context: Any, telemetry: Any, clock: Any
) -> None:
    container = make_container()
    assert container.store is not None
    later = clock() + 1_000  # another writer's checks, newer than this run's
    newer = [RouteCheck(key, True, later) for key in (RouteKey.CU_STOCK, RouteKey.DTRYX_MOVIES)]
    container.store.write_checks(newer, [RelayCheck(RelayGroup.DTRYX, True, later)], now=later)

    result = lambda_handler(scheduled_event(SCHEDULED), lambda_context)

    rejected = [m["value"] for m in telemetry.metrics() if m["name"] == "StaleWriteRejected"]
    assert result["staleWritesRejected"] == sum(rejected) == 3


def test_a_store_that_is_down_fails_the_invocation_visibly(
    make_container: ContainerFactory, simulator: Simulator, lambda_context: Any, telemetry: Any
) -> None:
    unreachable = boto3.client(
        "dynamodb",
        endpoint_url="http://127.0.0.1:9",
        config=Config(connect_timeout=0.2, read_timeout=0.2, retries={"total_max_attempts": 1}),
    )
    make_container(dynamodb_client=unreachable, SNAPSHOT_PREFETCH_SECONDS="0.05")

    with pytest.raises(StoreError):
        lambda_handler(scheduled_event(SCHEDULED), lambda_context)

    store_errors = [m for m in telemetry.metrics() if m["name"] == "StoreError"]
    # The container's INIT prefetch failed first (reported, tolerated); then the probe's slot claim.
    assert [m["dimensions"]["Operation"] for m in store_errors] == ["read_snapshot", "claim_probe_slot"]
    assert sum(count for name, count in simulator.calls().items() if name.startswith("direct:")) == 0


def test_an_event_that_is_not_a_scheduled_event_is_refused(
    make_container: ContainerFactory, simulator: Simulator, lambda_context: Any
) -> None:
    make_container()
    with pytest.raises(Exception, match="validation error"):
        lambda_handler({"time": "not a time"}, lambda_context)
    assert simulator.calls()["relay-health:dtryx"] == 0
