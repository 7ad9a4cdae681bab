"""run_probe: slot claim first, every check classified, checkedAt before the request, bounded concurrency and time.

The transports are the real ones over `httpx.MockTransport`; the store is the real DynamoDB store on moto.
Specs are small stand-ins (one per route key) so each test states exactly what each upstream answers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, Literal

import boto3
import httpx
import pytest
from botocore.config import Config
from pydantic import BaseModel, ConfigDict

from functions.adapters.direct import DirectTransport
from functions.adapters.dynamo_store import DynamoVerdictStore
from functions.adapters.http import new_http_client
from functions.adapters.relay import (
    RelayConfigError,
    RelayCredentials,
    RelayEndpoint,
    RelayTransport,
)
from functions.catalog.spec import OperationSpec
from functions.core import (
    DIRECT_PROBED,
    PROBE_SLOT_MS,
    Reason,
    RelayGroup,
    RouteCheck,
    RouteKey,
    StoreError,
)
from functions.services.ports import ProbeSummary
from functions.services.probe_run import MAX_IN_FLIGHT, run_probe, slot_start_of
from tests.support.aws import TABLE
from tests.support.clock import ManualClock
from tests.support.core_fakes import RecordingProbeEvents, RecordingRelayEvents

NOW = 1_767_225_600_000 + 7_000
SLOT = slot_start_of(NOW)
Handler = Callable[[httpx.Request], httpx.Response]


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    at: int


class Ok(BaseModel):
    model_config = ConfigDict(strict=True)
    ok: Literal[True]


def _spec(key: RouteKey, *, bad_params: bool = False) -> OperationSpec[Params, Ok]:
    def probe_params(now: int) -> Params:
        return Params.model_validate({"at": "not-a-number"} if bad_params else {"at": now})

    return OperationSpec(
        key=key,
        base_url=f"https://{key.value}.retailer.test",
        path="/probe",
        headers={},
        params=Params,
        probe_params=probe_params,
        response=Ok,
        normalizer=Ok.model_dump,
        relay_input=Params,
        method="GET",
        query=lambda p: [("at", str(p.at))],
        relay_operation="op",
    )


SPECS = {key: _spec(key) for key in RouteKey}
TOKEN = "relay-token-secret-1"
CREDS = RelayCredentials(TOKEN, "access-id-secret-2", "access-secret-secret-3")


def _relay_base(group: RelayGroup) -> str:
    return f"https://relay-{group.value}.test"


def _healthy(group: RelayGroup) -> httpx.Response:
    return httpx.Response(
        200, json={"state": "ready"} if group is RelayGroup.OLIVEYOUNG else {"status": "ok"}
    )


def _route_of(request: httpx.Request) -> RouteKey | None:
    host = request.url.host
    return RouteKey(host.removesuffix(".retailer.test")) if host.endswith(".retailer.test") else None


def _group_of(request: httpx.Request) -> RelayGroup | None:
    host = request.url.host
    return (
        RelayGroup(host.removeprefix("relay-").removesuffix(".test")) if host.startswith("relay-") else None
    )


def all_ok(request: httpx.Request) -> httpx.Response:
    group = _group_of(request)
    return _healthy(group) if group is not None else httpx.Response(200, json={"ok": True})


class Upstreams:
    """The MockTransport side: the answer handler, the requests seen and the most in flight at once."""

    def __init__(self, handler: Handler, on_request: Callable[[], None] = lambda: None) -> None:
        self._handler = handler
        self._on_request = on_request
        self._lock = threading.Lock()
        self.requests: list[httpx.Request] = []
        self.in_flight = 0
        self.max_in_flight = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            self._on_request()
            return self._handler(request)
        finally:
            with self._lock:
                self.in_flight -= 1


def probe(
    store: Any,
    upstreams: Upstreams,
    *,
    clock: ManualClock | None = None,
    events: RecordingProbeEvents | None = None,
    specs: Any = SPECS,
    endpoints: Any = None,
    timeout_ms: int = 3_000,
    slot: int = SLOT,
) -> ProbeSummary:
    transport = httpx.MockTransport(upstreams)
    if endpoints is None:
        endpoints = {group: RelayEndpoint.parse(group, _relay_base(group), CREDS) for group in RelayGroup}
    return run_probe(
        specs=specs,
        direct=DirectTransport(new_http_client(transport)),
        relays=RelayTransport(new_http_client(transport), endpoints, events=RecordingRelayEvents()),
        store=store,
        clock=clock or ManualClock(NOW),
        slot_start=slot,
        trigger="test",
        events=events or RecordingProbeEvents(),
        rejected_writes=lambda: store.rejected_writes if isinstance(store, DynamoVerdictStore) else 0,
        timeout_ms=timeout_ms,
    )


def test_slot_start_is_the_5_minute_boundary() -> None:
    assert slot_start_of(SLOT) == SLOT
    assert slot_start_of(SLOT + PROBE_SLOT_MS - 1) == SLOT
    assert slot_start_of(SLOT + PROBE_SLOT_MS) == SLOT + PROBE_SLOT_MS
    assert SLOT % PROBE_SLOT_MS == 0


def test_a_healthy_run_stores_23_direct_verdicts_the_pinned_route_and_4_relays(
    store: DynamoVerdictStore,
) -> None:
    upstreams = Upstreams(all_ok)
    events = RecordingProbeEvents()

    summary = probe(store, upstreams, events=events)

    assert summary.ran
    assert {check.key for check in summary.routes} == set(RouteKey)
    direct = {check.key: (check.direct, check.reason) for check in summary.routes}
    assert direct == {
        **{key: (True, Reason.OK) for key in DIRECT_PROBED},
        RouteKey.GS25_STOCK: (False, Reason.PINNED_RELAY),
    }
    assert {(c.group, c.healthy, c.reason) for c in summary.relays} == {
        (g, True, Reason.OK) for g in RelayGroup
    }
    # a direct request per probed route and a health check per relay; nothing for the pinned route
    hosts = sorted(request.url.host for request in upstreams.requests)
    assert len(hosts) == len(DIRECT_PROBED) + len(RelayGroup)
    assert "gs25-stock.retailer.test" not in hosts
    snapshot = store.read_snapshot()
    assert {key: verdict.direct for key, verdict in snapshot.routes.items()} == {
        key: key is not RouteKey.GS25_STOCK for key in RouteKey
    }
    assert snapshot.routes[RouteKey.GS25_STOCK].reason is Reason.PINNED_RELAY
    assert all(snapshot.relays[group].healthy for group in RelayGroup)
    assert sorted(check.key for check in events.routes) == sorted(RouteKey)
    assert sorted(check.group for check in events.relays) == sorted(RelayGroup)
    assert events.finished == [summary]


def test_relay_credentials_go_only_to_relays(store: DynamoVerdictStore) -> None:
    upstreams = Upstreams(all_ok)
    probe(store, upstreams)
    for request in upstreams.requests:
        sent = " ".join([str(request.url), *request.headers.values()])
        carries = any(value in sent for value in (TOKEN, "access-id-secret-2", "access-secret-secret-3"))
        assert carries == (_group_of(request) is not None), request.url


def test_checked_at_is_taken_before_each_request(store: DynamoVerdictStore) -> None:
    clock = ManualClock(NOW)
    # Every request moves the clock: a checkedAt taken after the request would be later than its start.
    upstreams = Upstreams(all_ok, on_request=lambda: setattr(clock, "now", clock.now + 1_000))

    summary = probe(store, upstreams, clock=clock)

    sent_at = {int(request.url.params["at"]) for request in upstreams.requests if _route_of(request)}
    direct_checks = [check for check in summary.routes if check.key in DIRECT_PROBED]
    # probe_params(now) got the same `now` as checkedAt, and that was before the clock moved for its request
    assert {check.checked_at for check in direct_checks} == sent_at
    assert all(check.checked_at < clock.now for check in summary.routes)


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (httpx.Response(401), Reason.HTTP_401),
        (httpx.Response(403), Reason.HTTP_403),
        (httpx.Response(429), Reason.HTTP_429),
        (httpx.Response(500), Reason.HTTP_5XX),
        (httpx.Response(404), Reason.HTTP_ERROR),  # UpstreamRejected: the fixed probe input was refused
        (httpx.Response(422), Reason.HTTP_ERROR),
        (httpx.Response(200, text="<!DOCTYPE html><html></html>"), Reason.INVALID_RESPONSE),
        (httpx.Response(200, json={"ok": False}), Reason.SHAPE),
    ],
)
def test_each_direct_failure_is_stored_with_its_reason(
    store: DynamoVerdictStore, answer: httpx.Response, reason: Reason
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return answer if _route_of(request) is RouteKey.CU_STOCK else all_ok(request)

    summary = probe(store, Upstreams(handler))

    failed = [check for check in summary.routes if check.key is RouteKey.CU_STOCK]
    assert [(check.direct, check.reason) for check in failed] == [(False, reason)]
    assert store.read_snapshot().routes[RouteKey.CU_STOCK].reason is reason
    assert sum(check.direct for check in summary.routes) == len(DIRECT_PROBED) - 1  # all but cu-stock


def test_a_connection_error_and_invalid_probe_params_are_failures_not_crashes(
    store: DynamoVerdictStore,
) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if _route_of(request) is RouteKey.SEVEN_GOODS:
            raise httpx.ConnectError("refused", request=request)
        return all_ok(request)

    specs = {**SPECS, RouteKey.DTRYX_TIMETABLE: _spec(RouteKey.DTRYX_TIMETABLE, bad_params=True)}
    upstreams = Upstreams(handler)

    summary = probe(store, upstreams, specs=specs)

    reasons = {check.key: check.reason for check in summary.routes if not check.direct}
    assert reasons == {
        RouteKey.SEVEN_GOODS: Reason.NETWORK_ERROR,
        RouteKey.DTRYX_TIMETABLE: Reason.INVALID_INPUT,
        RouteKey.GS25_STOCK: Reason.PINNED_RELAY,
    }
    assert "dtryx-timetable.retailer.test" not in {request.url.host for request in upstreams.requests}


def test_relay_health_unhealthy_and_misconfigured(store: DynamoVerdictStore) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        group = _group_of(request)
        if group is RelayGroup.CONVENIENCE:
            return httpx.Response(503)
        return all_ok(request)

    endpoints = {
        RelayGroup.OLIVEYOUNG: RelayEndpoint.parse(
            RelayGroup.OLIVEYOUNG, _relay_base(RelayGroup.OLIVEYOUNG), CREDS
        ),
        RelayGroup.CONVENIENCE: RelayEndpoint.parse(
            RelayGroup.CONVENIENCE, _relay_base(RelayGroup.CONVENIENCE), CREDS
        ),
        RelayGroup.DTRYX: RelayConfigError("dtryx relay URL must be https"),
    }

    summary = probe(store, Upstreams(handler), endpoints=endpoints)

    relays = {check.group: (check.healthy, check.reason) for check in summary.relays}
    assert relays == {
        RelayGroup.OLIVEYOUNG: (True, Reason.OK),
        RelayGroup.CONVENIENCE: (False, Reason.HTTP_5XX),
        RelayGroup.DTRYX: (False, Reason.CONFIGURATION),
        RelayGroup.CGV: (False, Reason.CONFIGURATION),  # no relay settings at all
    }
    stored = store.read_snapshot().relays
    assert {group: check.healthy for group, check in stored.items()} == {g: h for g, (h, _) in relays.items()}


def test_a_claimed_slot_calls_nothing_and_writes_nothing(store: DynamoVerdictStore) -> None:
    first, second = Upstreams(all_ok), Upstreams(all_ok)
    events = RecordingProbeEvents()

    assert probe(store, first).ran
    written = store.read_snapshot()
    again = probe(store, second, events=events)

    assert not again.ran
    assert again.slot_start == SLOT
    assert second.requests == []
    assert events.routes == []
    assert events.finished == []
    assert store.read_snapshot() == written
    assert probe(store, Upstreams(all_ok), slot=SLOT + PROBE_SLOT_MS).ran  # the next slot runs


def test_never_more_than_max_in_flight_requests_at_once(store: DynamoVerdictStore) -> None:
    upstreams = Upstreams(all_ok, on_request=lambda: time.sleep(0.02))
    probe(store, upstreams)
    assert len(upstreams.requests) == len(DIRECT_PROBED) + len(RelayGroup)
    assert 2 <= upstreams.max_in_flight <= MAX_IN_FLIGHT


def test_stale_writes_are_counted(store: DynamoVerdictStore) -> None:
    later = NOW + 60_000
    store.write_checks([RouteCheck(RouteKey.CU_PRIME, True, later, Reason.OK)], [], now=later)

    summary = probe(store, Upstreams(all_ok))

    assert summary.stale_writes_rejected >= 1
    assert store.read_snapshot().routes[RouteKey.CU_PRIME].checked_at == later


def test_a_store_that_is_down_is_reported_and_raised_before_any_upstream_call() -> None:
    client = boto3.client(
        "dynamodb",
        endpoint_url="http://127.0.0.1:9",  # discard port: nothing listens
        config=Config(connect_timeout=0.2, read_timeout=0.2, retries={"total_max_attempts": 1}),
    )
    upstreams = Upstreams(all_ok)
    events = RecordingProbeEvents()

    with pytest.raises(StoreError):
        probe(DynamoVerdictStore(TABLE, client), upstreams, events=events)

    assert upstreams.requests == []
    assert [operation for operation, _ in events.store_failures] == ["claim_probe_slot"]


def test_the_summary_dict_has_only_fixed_codes(store: DynamoVerdictStore) -> None:
    summary = probe(store, Upstreams(all_ok)).to_dict()
    assert summary["ran"] is True
    assert summary["slotStart"] == SLOT
    assert summary["trigger"] == "test"
    assert summary["routes"]["gs25-stock"] == {"direct": False, "reason": "pinned-relay"}
    assert summary["relays"]["dtryx"] == {"healthy": True, "reason": "ok"}
