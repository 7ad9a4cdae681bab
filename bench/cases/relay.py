"""`relay`: what the reference relay adds to an upstream call, and how it behaves at its concurrency limit.

- `added_ms_median`, `added_ms_p99`: the simulated Dtryx retailer on 127.0.0.1 (no cache at the relay, so
  every call reaches the retailer) called two ways, interleaved in batches: bare (the spec's request over the
  bounded exchange, what the relay itself sends) and through the relay (the Lambda's relay transport ->
  `route-health relay` -> the retailer). Added = the percentile of the relay path minus the same percentile
  of the bare path. The relay's quota limits are raised for the run (its ledger is still written, fsync
  included, on every call).
- `unexpected_errors_at_limit`: 64 callers at once, each sending 4 different requests back to back to the
  Dtryx relay (4 upstream slots, 32 outstanding) while the retailer takes 200 ms per call; every answer must
  be 200 or the protocol's 503 `{"error": "Relay busy"}`. The retailer's own peak of calls in flight shows
  the slot bound holds.
"""

from __future__ import annotations

import io
import json
import secrets
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import httpx

from bench.common import median, progress
from functions.adapters.http import exchange, new_http_client
from functions.adapters.relay import RelayCredentials, RelayEndpoint, RelayTransport
from functions.catalog import spec_for
from functions.core import RelayGroup, RouteKey
from functions.handlers.telemetry import MetricsRelayEvents
from relay.app import POLICIES
from relay.config import GroupConfig, RelayConfig
from relay.logs import RelayLog
from relay.quota import QuotaLimits
from relay.server import BackgroundRelay, bound_socket, build_apps, system_clock
from sandbox.simulator.server import RELAY_UPSTREAM, Simulator, SimulatorServer, loopback_transport

TOKEN = secrets.token_urlsafe(16)
KEY = RouteKey.DTRYX_MOVIES
BATCHES = 15
PER_BATCH = 40
CALLERS = 64
REQUESTS_PER_CALLER = 4
SLOW_UPSTREAM = "slow-200"
BUSY = {"error": "Relay busy"}


def run() -> dict[str, Any]:
    with TemporaryDirectory(prefix="bench-relay-") as state, SimulatorServer(Simulator({})) as server:
        relay = _relay(server, Path(state))
        try:
            latency = _added_latency(server, relay)
            at_limit = _at_the_limit(server, relay)
        finally:
            relay.stop()
    progress(
        f"relay: adds {latency['added_ms_median']:.2f} ms median, {latency['added_ms_p99']:.2f} ms p99; "
        f"{at_limit['unexpected_errors']} unexpected errors at its limit"
    )
    return {
        "relay": {
            "added_ms_median": latency["added_ms_median"],
            "added_ms_p99": latency["added_ms_p99"],
            "unexpected_errors_at_limit": at_limit["unexpected_errors"],
            "detail": {"latency": latency, "at_limit": at_limit},
        }
    }


def _relay(server: SimulatorServer, state: Path) -> BackgroundRelay:
    generous = replace(POLICIES[RelayGroup.DTRYX], quota=QuotaLimits(per_minute=10**9, per_day=10**12))
    config = RelayConfig((GroupConfig(RelayGroup.DTRYX, TOKEN, state, 0),))
    (app,) = build_apps(
        config,
        log=RelayLog(io.StringIO()),
        clock=system_clock,
        transport=loopback_transport(server.base_url, entrance=RELAY_UPSTREAM),
        policies={**POLICIES, RelayGroup.DTRYX: generous},
    ).values()
    return BackgroundRelay(app, bound_socket()).start()


def _added_latency(server: SimulatorServer, relay: BackgroundRelay) -> dict[str, Any]:
    spec = spec_for(KEY)
    params = spec.probe_params(system_clock())
    built = spec.build_request(params)
    bare_client = new_http_client(loopback_transport(server.base_url, entrance=RELAY_UPSTREAM))
    endpoint = RelayEndpoint.parse(RelayGroup.DTRYX, relay.url, RelayCredentials(TOKEN))
    relayed = RelayTransport(new_http_client(), {RelayGroup.DTRYX: endpoint}, events=MetricsRelayEvents())

    def bare() -> None:
        request = bare_client.build_request(built.method, built.url, headers=dict(built.headers))
        answer = exchange(bare_client, request, timeout_ms=5_000)
        assert answer.status == 200
        spec.validate(json.loads(answer.body))

    def through_relay() -> None:
        relayed.fetch(spec, params, timeout_ms=5_000)

    bare_ms: list[float] = []
    relay_ms: list[float] = []
    for _ in range(5):  # warm both paths (connections, imports)
        bare()
        through_relay()
    for batch in range(BATCHES):
        order = [(bare, bare_ms), (through_relay, relay_ms)]
        for call, samples in order if batch % 2 == 0 else reversed(order):
            for _ in range(PER_BATCH):
                started = time.perf_counter()
                call()
                samples.append((time.perf_counter() - started) * 1000)
    bare_client.close()
    return {
        "added_ms_median": round(median(relay_ms) - median(bare_ms), 2),
        "added_ms_p99": round(_p99(relay_ms) - _p99(bare_ms), 2),
        "bare_ms_median": round(median(bare_ms), 2),
        "bare_ms_p99": round(_p99(bare_ms), 2),
        "relay_ms_median": round(median(relay_ms), 2),
        "relay_ms_p99": round(_p99(relay_ms), 2),
        "calls_each": len(bare_ms),
        "note": "Dtryx movies, no relay cache; same simulated retailer; interleaved batches",
    }


def _at_the_limit(server: SimulatorServer, relay: BackgroundRelay) -> dict[str, Any]:
    simulator = server.simulator
    simulator.faults.set(f"{RELAY_UPSTREAM}:{KEY}", SLOW_UPSTREAM)
    simulator.reset_max_in_flight()
    statuses: dict[str, int] = {}
    lock = threading.Lock()
    url = f"{relay.url}/v1/dtryx/movies"
    headers = {"Authorization": f"Bearer {TOKEN}"}

    def caller(index: int) -> None:
        with httpx.Client(timeout=30, trust_env=False) as client:
            for round_ in range(REQUESTS_PER_CALLER):
                cinema = f"{(index * REQUESTS_PER_CALLER + round_) % 1_000_000:06d}"
                answer = client.post(
                    url, json={"brandCode": "indieart", "cinemaCode": cinema}, headers=headers
                )
                outcome = str(answer.status_code)
                if answer.status_code == 503 and answer.json() == BUSY:
                    outcome = "503-busy"
                with lock:
                    statuses[outcome] = statuses.get(outcome, 0) + 1

    started = time.monotonic()
    with ThreadPoolExecutor(CALLERS) as callers:
        list(callers.map(caller, range(CALLERS)))
    elapsed_s = time.monotonic() - started
    simulator.faults.clear()
    return {
        "unexpected_errors": sum(
            count for outcome, count in statuses.items() if outcome not in ("200", "503-busy")
        ),
        "answers": dict(sorted(statuses.items())),
        "retailer_peak_in_flight": simulator.max_in_flight(),
        "upstream_slots": POLICIES[RelayGroup.DTRYX].upstream_slots,
        "max_outstanding": POLICIES[RelayGroup.DTRYX].max_outstanding,
        "callers": CALLERS,
        "requests": CALLERS * REQUESTS_PER_CALLER,
        "retailer_ms_per_call": int(SLOW_UPSTREAM.removeprefix("slow-")),
        "elapsed_s": round(elapsed_s, 1),
    }


def _p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
