"""`probe_run_ms` (all healthy, all hanging) and `probe_max_in_flight`, through the real probe handler.

The probe Lambda's handler runs in this process on moto, against the simulated retailers and the reference
relays in front of them on 127.0.0.1 (as in the sandbox, reached through its loopback transport), with
production timings:
3 s per check, 4 in flight. Each run gets an EventBridge event for its own 5-minute slot.

- all_healthy: median of a few runs, every upstream answering normally.
- all_hanging: one run where every retailer and every relay health URL hangs past the 3 s deadline
  (27 checks / 4 in flight => about 7 rounds of 3 s, 21 s).
- probe_max_in_flight: the simulator's own peak of concurrent requests, over a run where every upstream
  answers after 300 ms (so the pool is saturated the whole run). The hanging run's peak is reported too:
  the simulator counts a hanging request until *it* gives up, even after the probe has abandoned it.
"""

from __future__ import annotations

import io
import threading
import time
from typing import TYPE_CHECKING, Any

import boto3

from bench.cases.cost import cost_per_day
from bench.cases.handler import CallCounter
from bench.common import (
    BENCH_SECRET_VALUES,
    REGION,
    TABLE_NAME,
    lambda_context,
    median,
    on_moto,
    progress,
)
from functions.adapters.dynamo_store import (
    PROBE_PARTITION,
    VERDICT_PARTITION,
    DynamoVerdictStore,
    store_client_config,
    table_definition,
)
from functions.adapters.relay import RelayCredentials
from functions.adapters.secrets import Secrets
from functions.catalog import cgv
from functions.core import DIRECT_PROBED, DIRECT_TIMEOUT_MS, RelayGroup, RouteKey
from functions.core.model import PINNED_TO_RELAY, PROBE_SLOT_MS
from relay.logs import RelayLog
from relay.server import system_clock
from sandbox.relays import start_upstreams
from sandbox.scheduler import scheduled_event
from sandbox.simulator.server import Simulator, SimulatorServer, loopback_transport

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient

    from functions.handlers.composition import ProbeFunction

HEALTHY_RUNS = 3
HANG_LIMIT_S = 4.0
"""The simulator holds a hanging request this long: past the probe's 3 s deadline."""
SATURATING_DELAY = "slow-300"


def _credentials(secrets: Secrets) -> dict[RelayGroup, RelayCredentials]:
    """Each relay process's credentials (CGV's are the Dtryx relay's, whose process serves it)."""
    credentials: dict[RelayGroup, RelayCredentials] = {}
    for group in RelayGroup:
        if group is RelayGroup.CGV:
            continue
        values = secrets.relay(group)
        assert values.token is not None
        credentials[group] = values.credentials()
    return credentials


def _every_target() -> list[str]:
    direct = [f"direct:{key}" for key in RouteKey if key not in PINNED_TO_RELAY]
    return direct + [f"relay:{group}" for group in RelayGroup]


def _cost(dynamodb: Any, writes_per_run: float) -> dict[str, Any]:
    """Cost per day from what the probe runs stored: the real items' sizes and the counted writes."""
    verdicts = dynamodb.query(
        TableName=TABLE_NAME,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": VERDICT_PARTITION}},
    )["Items"]
    slots = dynamodb.query(
        TableName=TABLE_NAME,
        KeyConditionExpression="pk = :p",
        ExpressionAttributeValues={":p": {"S": PROBE_PARTITION}},
    )["Items"]
    seen: list[bool] = []

    def record_consistency(params: dict[str, Any], **_: Any) -> None:
        seen.append(bool(params.get("ConsistentRead")))

    dynamodb.meta.events.register("provide-client-params.dynamodb.Query", record_consistency)
    try:
        DynamoVerdictStore(TABLE_NAME, dynamodb).read_snapshot()
    finally:
        dynamodb.meta.events.unregister("provide-client-params.dynamodb.Query", record_consistency)
    return cost_per_day(
        verdict_items=verdicts,
        slot_item=slots[0],
        writes_per_run=round(writes_per_run),
        consistent_reads=all(seen),
    )


def run() -> dict[str, Any]:
    with on_moto():
        return _run()


class _ProbeRuns:
    """Invokes the real probe handler, each time with the EventBridge event of the next 5-minute slot."""

    def __init__(self) -> None:
        self._slot = time.time_ns() // 1_000_000

    def __call__(self) -> tuple[float, dict[str, Any]]:
        """(elapsed ms, the handler's summary) of one run, which must have run."""
        from functions.handlers import probe

        self._slot += PROBE_SLOT_MS
        started = time.perf_counter()
        summary: dict[str, Any] = probe.lambda_handler(
            scheduled_event(self._slot, region=REGION),
            lambda_context("probe"),  # type: ignore[arg-type]
        )
        elapsed_ms = (time.perf_counter() - started) * 1000
        assert summary["ran"] is True, summary
        return elapsed_ms, summary


def _probe_function(server: SimulatorServer, secrets: Secrets, dynamodb: DynamoDBClient) -> ProbeFunction:
    """The probe function's parts against the simulator on 127.0.0.1, with production timings."""
    from functions.handlers.composition import Surroundings, build_probe_function
    from functions.handlers.settings import ProbeSettings

    settings = ProbeSettings.from_environment(
        ROUTE_HEALTH_TABLE=TABLE_NAME,
        OY_RELAY_URL=server.relay_url(RelayGroup.OLIVEYOUNG),
        CONVENIENCE_RELAY_URL=server.relay_url(RelayGroup.CONVENIENCE),
        DTRYX_RELAY_URL=server.relay_url(RelayGroup.DTRYX),
    )
    return build_probe_function(
        settings,
        Surroundings(
            dynamodb_client=dynamodb, http_transport=loopback_transport(server.base_url), secrets=secrets
        ),
    )


def _run() -> dict[str, Any]:
    from functions.handlers.composition import PROBE_FUNCTION

    secrets = Secrets.from_mapping(BENCH_SECRET_VALUES, source="bench")
    dynamodb = boto3.client("dynamodb", region_name=REGION, config=store_client_config())
    dynamodb.create_table(**table_definition(TABLE_NAME))
    signing_keys = {cgv.SIGNING_KEY: BENCH_SECRET_VALUES[cgv.SIGNING_KEY]}
    simulator = Simulator(_credentials(secrets), signing_keys=signing_keys, hang_limit_s=HANG_LIMIT_S)
    quiet = RelayLog(io.StringIO())
    with start_upstreams(simulator, _credentials(secrets), clock=system_clock, log=quiet) as upstreams:
        probe = _probe_function(upstreams.server, secrets, dynamodb)
        PROBE_FUNCTION.install(probe)
        one_run = _ProbeRuns()
        try:
            one_run()  # warm: the function's first run pays imports of the payload builders
            healthy, writes_per_run = _healthy_runs(one_run, dynamodb)
            cost = _cost(dynamodb, writes_per_run)
            saturated_ms, _, max_in_flight = _run_with_every_upstream(simulator, one_run, SATURATING_DELAY)
            progress(
                f"probe: every upstream slow ({SATURATING_DELAY}): {saturated_ms:.0f} ms, "
                f"simulator peak {max_in_flight} in flight"
            )
            progress("probe: every upstream hanging (about 21 s) ...")
            hanging_ms, hanging, hanging_peak = _run_with_every_upstream(simulator, one_run, "timeout")
            reasons = sorted({route["reason"] for route in hanging["routes"].values()})
            progress(f"probe: all hanging {hanging_ms:.0f} ms; reasons {reasons}")
        finally:
            PROBE_FUNCTION.install(None)
            probe.close()
    return {
        "cost_per_day": cost,
        "probe_run_ms": {"all_healthy": round(median(healthy)), "all_hanging": round(hanging_ms)},
        "probe_max_in_flight": max_in_flight,
        "probe_detail": {
            "all_healthy_runs_ms": [round(value) for value in healthy],
            "every_upstream_slow_300ms_run_ms": round(saturated_ms),
            "hanging_run_reasons": reasons,
            "hanging_run_simulator_peak_in_flight": hanging_peak,
            "hanging_note": "the simulator holds a hanging request for "
            f"{HANG_LIMIT_S:g} s, past the probe's 3 s deadline; requests the probe already abandoned "
            "still count at the simulator until then",
            "checks_per_run": {"direct": len(DIRECT_PROBED), "relay_health": len(RelayGroup)},
            "timeout_ms_per_check": DIRECT_TIMEOUT_MS,
        },
    }


def _healthy_runs(one_run: _ProbeRuns, dynamodb: DynamoDBClient) -> tuple[list[float], float]:
    """HEALTHY_RUNS runs with every upstream answering normally: their times, and DynamoDB writes per run."""
    healthy = []
    calls = CallCounter(threading.current_thread())
    dynamodb.meta.events.register("before-call", calls)
    for _ in range(HEALTHY_RUNS):
        elapsed_ms, summary = one_run()
        assert all(route["direct"] for key, route in summary["routes"].items() if key != "gs25-stock")
        healthy.append(elapsed_ms)
    dynamodb.meta.events.unregister("before-call", calls)
    progress(f"probe: all healthy {median(healthy):.0f} ms (median of {HEALTHY_RUNS})")
    return healthy, (calls.on_request_path.total() + calls.background.total()) / HEALTHY_RUNS


def _run_with_every_upstream(
    simulator: Simulator, one_run: _ProbeRuns, fault: str
) -> tuple[float, dict[str, Any], int]:
    """One run with `fault` on every retailer and relay: its time, its summary and the simulator's peak of
    requests in flight. The faults are cleared afterwards."""
    for target in _every_target():
        simulator.faults.set(target, fault)
    simulator.reset_max_in_flight()
    elapsed_ms, summary = one_run()
    peak = simulator.max_in_flight()
    simulator.faults.clear()
    return elapsed_ms, summary, peak
