"""`sandbox_load`: a bounded load over the lookup endpoints of `route-health sandbox`, with a fault flip.

The sandbox runs in its own process on a 127.0.0.1 port the OS picks (the real handlers, embedded DynamoDB, the
simulated retailers and relays). REQUESTS lookups cycle through every lookup endpoint at a fixed CONCURRENCY
(httpx in threads). After FLIP_AT answers one route's retailer starts answering 403; after RECOVER_AT the
fault is cleared and the sandbox clock is moved past the 5-minute cooldown, so the scheduled probe sees the
route healthy again and the lookups go back to direct.

An answer is correct when it is a 2xx with `{"success": true, "data": {...}}`; a 503
UPSTREAM_ROUTE_UNAVAILABLE would be correct only when both paths are known bad, which never happens here
(every relay stays healthy), so it counts as an error too. `direct_share` comes from the simulator's call
counts (`/_sandbox/calls`): direct / (direct + relay) upstream calls over the windows where direct was
healthy (before the flip for every route, during the flip for every other route), probe calls excluded.

The sandbox runs with its EMF metrics on (`POWERTOOLS_METRICS_DISABLED=false`), so its log holds every metric
line the functions wrote: `metric_series_emitted` is the number of distinct series among them (what CloudWatch
would bill), and `log_bytes_per_lookup` the functions' log volume (JSON lines and EMF) per load request, which
the cost model (`bench/cases/cost.py`) prices.
"""

from __future__ import annotations

import json
import secrets
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.common import LOOKUP_ENDPOINTS, median, percentile, progress
from functions.core.model import COOLDOWN_MS, PINNED_TO_RELAY, PROBE_SLOT_MS, RouteKey
from infra.environment import SERVICE_NAME
from sandbox.process import sandbox_process
from sandbox.scheduler import slot_start

REQUESTS = 2_000
CONCURRENCY = 8
FLIP_AT = 600
RECOVER_AT = 1_100
FAULTED_ROUTE = RouteKey.CU_STORE
PROBED_KEYS = [key.value for key in RouteKey if key not in PINNED_TO_RELAY]


@contextmanager
def running_sandbox() -> Iterator[tuple[str, Path]]:
    """Starts `route-health sandbox` in a temporary directory; yields its URL and its stdout log."""
    with (
        tempfile.TemporaryDirectory(prefix="route-health-bench-") as workdir,
        sandbox_process(
            Path(workdir),
            health_check_secret=secrets.token_urlsafe(24),
            # Both caches off: the load asks the same few questions over and over, to measure routing while a
            # route fails and recovers (the `cache` case measures the caches).
            settings={"POWERTOOLS_METRICS_DISABLED": "false", "RESPONSE_CACHE": "off"},
            edge_cache=False,
        ) as started,
    ):
        yield started.url, started.stdout


@dataclass
class Outcome:
    index: int
    path: str
    status: int
    ms: float
    correct: bool
    code: str | None = None


@dataclass
class LoadState:
    """The answers so far, and a gate that holds new requests while the sandbox clock is moved."""

    outcomes: list[Outcome] = field(default_factory=list)
    lock: threading.Condition = field(default_factory=threading.Condition)
    open: bool = True
    in_flight: int = 0

    def enter(self) -> None:
        with self.lock:
            self.lock.wait_for(lambda: self.open)
            self.in_flight += 1

    def leave(self, outcome: Outcome) -> None:
        with self.lock:
            self.in_flight -= 1
            self.outcomes.append(outcome)
            self.lock.notify_all()

    def wait_for_answers(self, count: int) -> int:
        """Waits until at least `count` requests were answered; returns how many were."""
        with self.lock:
            self.lock.wait_for(lambda: len(self.outcomes) >= count)
            return len(self.outcomes)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """No request in flight inside: a 5-minute clock jump under a running lookup would eat its budget,
        which no real clock does."""
        with self.lock:
            self.open = False
            self.lock.wait_for(lambda: self.in_flight == 0)
        try:
            yield
        finally:
            with self.lock:
                self.open = True
                self.lock.notify_all()


def _judge(response: httpx.Response, expected_fields: frozenset[str]) -> tuple[bool, str | None]:
    """(correct, error code if any). A 2xx is correct only with the endpoint's own `data` fields, so an
    answer meant for another request (cross-talk between concurrent invocations) is caught too."""
    try:
        body = response.json()
    except ValueError:
        return False, "not-json"
    if not 200 <= response.status_code < 300:
        error = body.get("error") if isinstance(body, dict) else None
        return False, error.get("code") if isinstance(error, dict) else None
    data = body.get("data")
    if body.get("success") is not True or not isinstance(data, dict):
        return False, "not-an-envelope"
    if frozenset(data) != expected_fields:
        return False, "wrong-data-fields"
    return True, None


def _expected_fields(control: httpx.Client) -> dict[str, frozenset[str]]:
    """Each endpoint's `data` field names, from one serial request each (no concurrency, all direct)."""
    fields = {}
    for path, params in LOOKUP_ENDPOINTS:
        response = control.get(path, params=dict(params))
        response.raise_for_status()
        fields[path] = frozenset(response.json()["data"])
    return fields


def _worker(url: str, tasks: Iterator[int], state: LoadState, expected: Mapping[str, frozenset[str]]) -> None:
    with httpx.Client(base_url=url, timeout=30) as http:
        for index in tasks:
            path, params = LOOKUP_ENDPOINTS[index % len(LOOKUP_ENDPOINTS)]
            state.enter()
            started = time.perf_counter()
            try:
                response = http.get(path, params=dict(params))
                status, (correct, code) = response.status_code, _judge(response, expected[path])
            except httpx.HTTPError as error:
                status, correct, code = 0, False, type(error).__name__
            state.leave(Outcome(index, path, status, (time.perf_counter() - started) * 1000, correct, code))


class _Tasks:
    """A thread-safe iterator over request numbers."""

    def __init__(self, count: int) -> None:
        self._numbers = iter(range(count))
        self._lock = threading.Lock()

    def __iter__(self) -> _Tasks:
        return self

    def __next__(self) -> int:
        with self._lock:
            return next(self._numbers)


def _delta(after: Mapping[str, int], before: Mapping[str, int]) -> dict[str, int]:
    return {name: after[name] - before.get(name, 0) for name in after}


def _shares(delta: Mapping[str, int], keys: list[str]) -> tuple[int, int]:
    """(direct, relay) lookup calls of `keys` in a window, the probe's own direct checks removed."""
    probe_runs = delta.get("relay-health:oliveyoung", 0)
    direct = sum(max(0, delta[f"direct:{key}"] - probe_runs) for key in keys)
    relay = sum(delta[f"relay:{key}"] for key in keys)
    return direct, relay


def _settle(control: httpx.Client) -> None:
    """Past every cooldown to 1 s after a slot start (the scheduled probe runs), then until lookups go direct
    again. Aligned so that no real-time slot boundary (a background probe) falls inside the run."""
    now = control.get("/_sandbox/clock").json()["now"]
    advance = slot_start(now + COOLDOWN_MS) + PROBE_SLOT_MS + 1_000 - now
    control.post("/_sandbox/clock", json={"advanceMs": advance}).raise_for_status()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        before = _calls(control)
        control.get("/api/seveneleven/popwords").raise_for_status()
        after = _calls(control)
        if after["direct:seven-popwords"] > before["direct:seven-popwords"]:
            return
        time.sleep(0.05)
    raise RuntimeError("the sandbox's lookup container never went direct")


def emitted_series(log: str) -> set[str]:
    """Every distinct metric series in the EMF lines of a log, as `Name{Dimension=value,...}`."""
    series = set()
    for line in log.splitlines():
        if not line.startswith("{") or '"_aws"' not in line:
            continue
        blob = json.loads(line)
        for directive in blob["_aws"]["CloudWatchMetrics"]:
            for dimension_set in directive["Dimensions"]:
                dimensions = ",".join(f"{name}={blob[name]}" for name in sorted(dimension_set))
                for metric in directive["Metrics"]:
                    series.add(f"{directive['Namespace']}/{metric['Name']}{{{dimensions}}}")
    return series


def function_log_bytes(log: bytes) -> int:
    """Bytes of the functions' own lines (Powertools JSON logs and EMF), each with its newline."""
    return sum(
        len(line) + 1
        for line in log.splitlines()
        if line.startswith(b"{") and (b'"_aws"' in line or f'"service":"{SERVICE_NAME}"'.encode() in line)
    )


def _logged_errors(log: Path, limit: int = 3) -> list[dict[str, Any]]:
    """The sandbox's ERROR log lines (Powertools JSON): message, exception name and the last trace lines."""
    found = []
    for line in log.read_text(errors="replace").splitlines():
        if '"level":"ERROR"' not in line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        trace = str(record.get("exception", "")).strip().splitlines()
        found.append(
            {
                "message": record.get("message"),
                "exception_name": record.get("exception_name"),
                "trace_tail": trace[-6:],
            }
        )
    return found[:limit]


@dataclass(frozen=True)
class _Load:
    """What the load run saw: the answers in completion order, when the fault was set and cleared (in answers),
    how long it took, and `/_sandbox/calls` at each of those moments."""

    outcomes: list[Outcome]
    flipped_at: int
    recovered_at: int
    elapsed_s: float
    calls_start: Mapping[str, int]
    calls_flip: Mapping[str, int]
    calls_recover: Mapping[str, int]
    calls_recovered: Mapping[str, int]
    calls_end: Mapping[str, int]


def run() -> dict[str, Any]:
    progress("sandbox load: starting route-health sandbox on 127.0.0.1")
    with running_sandbox() as (url, log), httpx.Client(base_url=url, timeout=60) as control:
        _settle(control)
        expected = _expected_fields(control)
        load_starts_at = log.stat().st_size
        load = _load_with_fault_flip(url, control, expected)
        logged_errors = _logged_errors(log)
        lines = log.read_bytes()
    result = _result(load, logged_errors)
    result["metric_series_emitted"] = sorted(emitted_series(lines.decode(errors="replace")))
    result["log_bytes_per_lookup"] = round(function_log_bytes(lines[load_starts_at:]) / len(load.outcomes))
    progress(
        f"sandbox load: {result['requests']} requests, {result['errors']} errors, p50 {result['p50_ms']} ms, "
        f"p99 {result['p99_ms']} ms, direct share {result['direct_share']}"
    )
    return {"sandbox_load": result}


def _load_with_fault_flip(url: str, control: httpx.Client, expected: Mapping[str, frozenset[str]]) -> _Load:
    """REQUESTS lookups at CONCURRENCY; FAULTED_ROUTE's retailer answers 403 from FLIP_AT answers on, and from
    RECOVER_AT it is healed and the clock moved past the cooldown (with no request in flight)."""
    progress(
        f"sandbox load: {REQUESTS} lookups at concurrency {CONCURRENCY}, "
        f"{FAULTED_ROUTE} -> http-403 after {FLIP_AT}, recovered after {RECOVER_AT}"
    )
    state = LoadState()
    tasks = _Tasks(REQUESTS)
    started = time.perf_counter()
    calls_start = _calls(control)
    workers = [
        threading.Thread(target=_worker, args=(url, tasks, state, expected)) for _ in range(CONCURRENCY)
    ]
    for worker in workers:
        worker.start()

    state.wait_for_answers(FLIP_AT)
    calls_flip = _calls(control)
    control.post(
        "/_sandbox/faults", json={"target": f"direct:{FAULTED_ROUTE}", "fault": "http-403"}
    ).raise_for_status()
    flipped_at = len(state.outcomes)
    progress(f"sandbox load: {flipped_at} answered; direct:{FAULTED_ROUTE} now answers 403")
    state.wait_for_answers(RECOVER_AT)
    with state.paused():
        calls_recover = _calls(control)
        control.delete("/_sandbox/faults").raise_for_status()
        moved = control.post("/_sandbox/clock", json={"advanceMs": COOLDOWN_MS + 1_000}).json()
        calls_recovered = _calls(control)
        recovered_at = len(state.outcomes)
    progress(
        f"sandbox load: {recovered_at} answered; fault cleared, clock +5 min, probe ran: "
        f"{moved.get('probe', {}).get('ran')}"
    )
    for worker in workers:
        worker.join()
    return _Load(
        outcomes=state.outcomes,
        flipped_at=flipped_at,
        recovered_at=recovered_at,
        elapsed_s=time.perf_counter() - started,
        calls_start=calls_start,
        calls_flip=calls_flip,
        calls_recover=calls_recover,
        calls_recovered=calls_recovered,
        calls_end=_calls(control),
    )


def _calls(control: httpx.Client) -> dict[str, int]:
    counts: dict[str, int] = control.get("/_sandbox/calls").json()
    return counts


def _result(load: _Load, logged_errors: list[dict[str, Any]]) -> dict[str, Any]:
    outcomes = sorted(load.outcomes, key=lambda outcome: outcome.index)
    latencies = [outcome.ms for outcome in outcomes]
    errors = [outcome for outcome in outcomes if not outcome.correct]
    # Requests issued from the flip on (by completion order the flip fell at `flipped_at`).
    completion_order = load.outcomes
    flip_errors = sum(
        1 for outcome in completion_order[load.flipped_at - CONCURRENCY :] if not outcome.correct
    )

    healthy_keys = [key for key in PROBED_KEYS if key != FAULTED_ROUTE.value]
    direct_a, relay_a = _shares(_delta(load.calls_flip, load.calls_start), PROBED_KEYS)
    direct_b, relay_b = _shares(_delta(load.calls_recover, load.calls_flip), healthy_keys)
    recovery = _delta(load.calls_end, load.calls_recovered)
    direct_c, relay_c = _shares(recovery, PROBED_KEYS)
    faulted = FAULTED_ROUTE.value
    during_flip = _delta(load.calls_recover, load.calls_flip)
    return {
        "requests": len(outcomes),
        "errors": len(errors),
        "p50_ms": round(median(latencies), 2),
        "p99_ms": round(percentile(latencies, 0.99), 2),
        "direct_share": round((direct_a + direct_b) / max(1, direct_a + relay_a + direct_b + relay_b), 4),
        "fault_flip_errors": flip_errors,
        "detail": {
            "concurrency": CONCURRENCY,
            "endpoints": len(LOOKUP_ENDPOINTS),
            "throughput_rps": round(len(outcomes) / load.elapsed_s, 1),
            "elapsed_s": round(load.elapsed_s, 1),
            "faulted_route": faulted,
            "flip_after_answers": load.flipped_at,
            "recover_after_answers": load.recovered_at,
            "error_answers": [
                {"answer": number, "path": outcome.path, "status": outcome.status, "code": outcome.code}
                for number, outcome in enumerate(completion_order)
                if not outcome.correct
            ][:20],
            "direct_share_before_flip": round(direct_a / max(1, direct_a + relay_a), 4),
            "direct_share_during_flip_other_routes": round(direct_b / max(1, direct_b + relay_b), 4),
            "direct_share_after_recovery_all_routes": round(direct_c / max(1, direct_c + relay_c), 4),
            "faulted_route_calls_during_flip": {
                "direct": during_flip[f"direct:{faulted}"] - during_flip.get("relay-health:oliveyoung", 0),
                "relay": during_flip[f"relay:{faulted}"],
            },
            "faulted_route_calls_after_recovery": {
                "direct": recovery[f"direct:{faulted}"] - recovery.get("relay-health:oliveyoung", 0),
                "relay": recovery[f"relay:{faulted}"],
            },
            "leaked_secrets": load.calls_end.get("leakedSecrets", 0),
            "sandbox_logged_errors": logged_errors,
            "note": "after recovery the container's snapshot is stale (the clock moved 5 min), so lookups go "
            "relay-first until its background refresh lands: that window is excluded from direct_share",
        },
    }
