"""Hostile upstreams over real sockets: every transport (direct, relay lookup, relay health, probe) turns
whatever an upstream does into a classified failure within its deadline and bounded memory, and closes the
connection at the deadline.

The upstreams are `tests.support.hostile_upstream.HostileServer`s on 127.0.0.1; the clients are the production ones.
Deadlines are short (a few hundred ms) to keep the suite quick; the mechanisms do not depend on the length.
"""

from __future__ import annotations

import math
import socket
import threading
import time
import tracemalloc
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict

from functions.adapters.direct import DirectTransport
from functions.adapters.dynamo_store import DynamoVerdictStore
from functions.adapters.http import PER_HOST_LIMITS, new_http_client
from functions.adapters.relay import RelayCredentials, RelayEndpoint, RelayTransport
from functions.catalog.spec import OperationSpec
from functions.core import DIRECT_PROBED, PINNED_TO_RELAY, ApiError, RouteFailure
from functions.core.model import Reason, RelayCheck, RelayGroup, RouteKey
from functions.services.ports import ProbeSummary
from functions.services.probe_run import run_probe, slot_start_of
from tests.support.core_fakes import RecordingProbeEvents, RecordingRelayEvents
from tests.support.hostile_upstream import (
    GZIPPED_OK,
    JSON_OK,
    Behaviour,
    HostileServer,
    Peer,
    body_drip,
    chunked,
    close_without_answer,
    deep_json,
    endless_informational,
    gzip_bomb,
    hang,
    hang_after_headers,
    header_drip,
    ok_json,
    reset_after_request,
    reset_mid_body,
    respond,
)
from tests.support.specs import spec_of
from tests.support.waiting import eventually

DEADLINE_MS = 400
SLACK_S = 0.6
"""How late past its deadline an exchange may end on a busy 2-core runner (it ends within ms when idle)."""
MIB = 1 << 20
NOW = 1_767_225_600_000
CREDS = RelayCredentials("relay-token-1")


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    q: str


class Ok(BaseModel):
    status: Literal["ok"]


def spec_at(url: str, key: RouteKey = RouteKey.DTRYX_MOVIES) -> OperationSpec[Params, Ok]:
    return spec_of(
        key,
        url=url,
        headers={"Accept": "application/json"},
        params=Params,
        probe=Params(q="probe"),
        response=Ok,
        method="GET",
        query=lambda p: [("q", p.q)],
        relay_operation="movies",
    )


def direct_outcome(url: str, *, timeout_ms: int = DEADLINE_MS) -> Reason:
    """The reason a direct fetch of `url` failed, or OK."""
    try:
        DIRECT.fetch(spec_at(url), Params(q="x"), timeout_ms=timeout_ms)
    except RouteFailure as failure:
        return failure.reason
    return Reason.OK


DIRECT = DirectTransport(new_http_client())
RELAYS_CLIENT = new_http_client()


def relays_at(base: str) -> RelayTransport:
    endpoint = RelayEndpoint.parse(RelayGroup.DTRYX, base, CREDS)
    return RelayTransport(
        RELAYS_CLIENT, {RelayGroup.DTRYX: endpoint}, clock=lambda: NOW, events=RecordingRelayEvents()
    )


# --- the behaviours, and what each must come to ------------------------------------------------------------

HEAD_200 = b"HTTP/1.1 200 OK\r\nContent-Type: application/json"
HOSTILE: dict[str, tuple[Behaviour, Reason]] = {
    # time
    "header-drip": (header_drip(), Reason.TIMEOUT),
    "body-drip": (body_drip(), Reason.TIMEOUT),
    "no-answer": (hang, Reason.TIMEOUT),
    "no-body": (hang_after_headers, Reason.TIMEOUT),
    "endless-100-continue": (endless_informational, Reason.TIMEOUT),
    # size and content-coding
    "gzip-bomb": (gzip_bomb(64), Reason.RESPONSE_TOO_LARGE),
    "double-gzip-bomb": (gzip_bomb(64, coding=b"gzip, gzip", layers=2), Reason.INVALID_RESPONSE),
    "gzip-in-two-headers": (
        respond(HEAD_200 + b"\r\nContent-Encoding: gzip\r\nContent-Encoding: gzip", GZIPPED_OK),
        Reason.INVALID_RESPONSE,
    ),
    "brotli": (ok_json(JSON_OK, b"Content-Encoding: br"), Reason.INVALID_RESPONSE),
    "unknown-coding": (ok_json(JSON_OK, b"Content-Encoding: x-bomb"), Reason.INVALID_RESPONSE),
    "corrupt-gzip": (ok_json(b"not gzip at all", b"Content-Encoding: gzip"), Reason.INVALID_RESPONSE),
    "truncated-gzip": (ok_json(GZIPPED_OK[:-6], b"Content-Encoding: gzip"), Reason.INVALID_RESPONSE),
    "bytes-after-gzip": (ok_json(GZIPPED_OK + b"junk", b"Content-Encoding: gzip"), Reason.OK),  # as browsers
    "declared-too-large": (
        respond(HEAD_200 + b"\r\nContent-Length: %d" % (3 * MIB), b"{"),
        Reason.RESPONSE_TOO_LARGE,
    ),
    "chunked-too-large": (chunked(*[b"a" * MIB] * 3), Reason.RESPONSE_TOO_LARGE),
    "too-large-until-close": (respond(HEAD_200, b"a" * 3 * MIB), Reason.RESPONSE_TOO_LARGE),
    # bodies
    "deep-json": (ok_json(deep_json(100_000)), Reason.INVALID_RESPONSE),
    "nested-json": (ok_json(deep_json(500)), Reason.INVALID_RESPONSE),
    "html": (ok_json(b"<!DOCTYPE html><html><body>blocked</body></html>"), Reason.INVALID_RESPONSE),
    "invalid-utf8-body": (ok_json(b'{"status":"\xff\xfe"}'), Reason.INVALID_RESPONSE),
    "longer-than-declared": (respond(HEAD_200 + b"\r\nContent-Length: 5", JSON_OK), Reason.INVALID_RESPONSE),
    # framing and headers
    "invalid-utf8-headers": (ok_json(JSON_OK, b"X-Name: \xff\xfe\x80\xc3"), Reason.OK),
    "garbage-status-line": (respond(b"HELLO THERE"), Reason.NETWORK_ERROR),
    "http2-status-line": (respond(b"HTTP/2 200 OK"), Reason.NETWORK_ERROR),
    "huge-header-line": (respond(HEAD_200 + b"\r\nX-Big: " + b"a" * 300_000, JSON_OK), Reason.NETWORK_ERROR),
    "many-headers": (
        respond(HEAD_200 + b"".join(b"\r\nX-%d: v" % i for i in range(30_000))),
        Reason.NETWORK_ERROR,
    ),
    "truncated-chunked": (chunked(b'{"status":', end=b""), Reason.NETWORK_ERROR),
    "invalid-chunk-size": (
        respond(HEAD_200 + b"\r\nTransfer-Encoding: chunked", b"zz\r\n{}\r\n0\r\n\r\n"),
        Reason.NETWORK_ERROR,
    ),
    "unknown-transfer-coding": (
        respond(HEAD_200 + b"\r\nTransfer-Encoding: gzip", JSON_OK),
        Reason.NETWORK_ERROR,
    ),
    "shorter-than-declared": (respond(HEAD_200 + b"\r\nContent-Length: 100", JSON_OK), Reason.NETWORK_ERROR),
    "huge-content-length": (
        respond(HEAD_200 + b"\r\nContent-Length: " + b"9" * 5_000, JSON_OK),
        Reason.NETWORK_ERROR,
    ),
    "negative-content-length": (respond(HEAD_200 + b"\r\nContent-Length: -1", JSON_OK), Reason.NETWORK_ERROR),
    "conflicting-content-length": (
        respond(HEAD_200 + b"\r\nContent-Length: 2\r\nContent-Length: 3", JSON_OK),
        Reason.NETWORK_ERROR,
    ),
    "switching-protocols": (respond(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x"), Reason.NETWORK_ERROR),
    "reset-after-request": (reset_after_request, Reason.NETWORK_ERROR),
    "reset-mid-body": (reset_mid_body, Reason.NETWORK_ERROR),
    "close-without-answer": (close_without_answer, Reason.NETWORK_ERROR),
    # statuses with absurd details
    "429-absurd-retry-after": (
        respond(b"HTTP/1.1 429 Too Many\r\nContent-Length: 0\r\nRetry-After: " + b"9" * 5_000),
        Reason.HTTP_429,
    ),
    "redirect-away": (
        respond(b"HTTP/1.1 302 Found\r\nLocation: http://10.0.0.1/\r\nContent-Length: 0"),
        Reason.HTTP_ERROR,
    ),
    "status-999": (respond(b"HTTP/1.1 999 Whatever\r\nContent-Length: 2", b"{}"), Reason.HTTP_ERROR),
}


def behaviour_for(path: str) -> Behaviour:
    return HOSTILE[path.strip("/").split("/")[0].split("?")[0]][0]


@pytest.fixture(scope="module")
def hostile() -> Iterator[HostileServer]:
    with HostileServer(behaviour_for) as server:
        yield server


def relay_lookup(
    relays: RelayTransport, *, timeout_ms: int = DEADLINE_MS
) -> tuple[int, str, int | None] | None:
    """The relay lookup's error (status, code, Retry-After), or None when it succeeded."""
    try:
        relays.fetch(spec_at("unused"), Params(q="x"), timeout_ms=timeout_ms)
    except ApiError as error:
        return error.status, error.code, error.retry_after
    return None


def expected_relay_answer(reason: Reason) -> tuple[int, str, int | None] | None:
    """What a relay lookup answers when the relay behaves as the direct upstream that gave `reason`."""
    if reason is Reason.OK:
        return None
    if reason is Reason.TIMEOUT:
        return 504, "UPSTREAM_TIMEOUT", None
    if reason is Reason.HTTP_429:
        return 429, "RELAY_QUOTA_EXCEEDED", 86_400  # the absurd Retry-After, clamped
    return 502, "UPSTREAM_BAD_RESPONSE", None


# --- the catch-all, per transport ------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(HOSTILE))
def test_direct_classifies_every_hostile_upstream_within_its_deadline(
    hostile: HostileServer, name: str
) -> None:
    started = time.monotonic()
    assert direct_outcome(f"{hostile.base_url}/{name}") is HOSTILE[name][1]
    assert time.monotonic() - started < DEADLINE_MS / 1000 + SLACK_S


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_relay_lookup_classifies_every_hostile_relay_and_never_answers_500(
    hostile: HostileServer, name: str
) -> None:
    relays = relays_at(f"{hostile.base_url}/{name}")
    started = time.monotonic()
    assert relay_lookup(relays) == expected_relay_answer(HOSTILE[name][1])
    assert time.monotonic() - started < DEADLINE_MS / 1000 + SLACK_S


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_relay_health_check_classifies_every_hostile_relay(hostile: HostileServer, name: str) -> None:
    relays = relays_at(f"{hostile.base_url}/{name}")
    reason = HOSTILE[name][1]
    check = relays.check_health(RelayGroup.DTRYX, timeout_ms=DEADLINE_MS, now=NOW)
    assert check == RelayCheck(RelayGroup.DTRYX, healthy=reason is Reason.OK, checked_at=NOW, reason=reason)


def probe_with(
    base_url: str, behaviour_of: dict[str, str], store: DynamoVerdictStore, *, slot: int, timeout_ms: int
) -> tuple[ProbeSummary, RecordingProbeEvents]:
    """One probe run where check `target` (`direct:<key>` / `relay:<group>`) meets `behaviour_of[target]`."""
    specs = {
        key: spec_at(f"{base_url}/{behaviour_of.get(f'direct:{key}', 'no-answer')}", key) for key in RouteKey
    }
    endpoints = {
        group: RelayEndpoint.parse(group, f"{base_url}/{behaviour_of[f'relay:{group}']}", CREDS)
        for group in RelayGroup
    }
    events = RecordingProbeEvents()
    summary = run_probe(
        specs=specs,
        direct=DIRECT,
        relays=RelayTransport(RELAYS_CLIENT, endpoints, events=RecordingRelayEvents()),
        store=store,
        clock=lambda: slot + 1_000,
        slot_start=slot,
        trigger="test",
        events=events,
        timeout_ms=timeout_ms,
    )
    return summary, events


PROBE_TARGETS = [f"direct:{key}" for key in DIRECT_PROBED] + [f"relay:{group}" for group in RelayGroup]


def test_a_probe_run_meeting_every_hostile_upstream_stores_each_verdict_classified(
    hostile: HostileServer, store: DynamoVerdictStore
) -> None:
    names = list(HOSTILE)
    runs = math.ceil(len(names) / len(PROBE_TARGETS))
    for run in range(runs):
        slot = slot_start_of(NOW) + run * 300_000
        assigned = {
            target: names[(run * len(PROBE_TARGETS) + index) % len(names)]
            for index, target in enumerate(PROBE_TARGETS)
        }
        summary, events = probe_with(hostile.base_url, assigned, store, slot=slot, timeout_ms=DEADLINE_MS)

        assert events.crashes == []
        snapshot = store.read_snapshot()
        stored = {f"direct:{key}": (v.checked_at, v.direct, v.reason) for key, v in snapshot.routes.items()}
        stored |= {
            f"relay:{group}": (r.checked_at, r.healthy, r.reason) for group, r in snapshot.relays.items()
        }
        for target, name in assigned.items():
            reason = HOSTILE[name][1]
            assert stored[target] == (slot + 1_000, reason is Reason.OK, reason), target
        assert {snapshot.routes[key].reason for key in PINNED_TO_RELAY} == {Reason.PINNED_RELAY}
        assert summary.ran


# --- point by point --------------------------------------------------------------------------------------


def test_a_1_gib_gzip_bomb_ends_as_too_large_within_the_deadline_in_little_memory() -> None:
    # ~1 MiB on the wire (gzip's best ratio on zeros), 1 GiB once inflated; produced as it is sent.
    timeout_ms = 3_000
    with HostileServer(lambda path: gzip_bomb(1024)) as server:
        tracemalloc.start()
        try:
            started = time.monotonic()
            reason = direct_outcome(server.base_url, timeout_ms=timeout_ms)
            elapsed = time.monotonic() - started
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert reason is Reason.RESPONSE_TOO_LARGE
    assert elapsed < timeout_ms / 1000
    assert peak < 64 * MIB  # all Python allocations of this process, the server's own included
    print(f"1 GiB gzip bomb: {reason} in {elapsed:.3f} s, traced peak {peak / MIB:.1f} MiB")


def test_header_drip_ends_at_the_deadline_and_the_connection_is_closed_then() -> None:
    # One byte every 50 ms: every read is far inside httpx's own timeout; only the deadline can end it.
    threads_before = threading.active_count()
    with HostileServer(lambda path: header_drip(0.05)) as server:
        started = time.monotonic()
        assert direct_outcome(server.base_url, timeout_ms=300) is Reason.TIMEOUT
        returned = time.monotonic() - started
        (peer,) = server.peers
        assert peer.wait_closed(SLACK_S)  # nothing of the exchange lives on to keep the socket open
        assert peer.closed_by_client_at is not None
        closed = peer.closed_by_client_at - started
        assert threading.active_count() <= threads_before + 2  # the server's accept and peer threads only
    assert returned < 0.3 + SLACK_S
    assert closed < 0.3 + SLACK_S


@pytest.mark.parametrize("name", ["header-drip", "no-answer", "no-body", "body-drip"])
def test_relay_calls_close_the_connection_at_the_deadline(name: str) -> None:
    with HostileServer(lambda path: HOSTILE[name][0]) as server:
        relays = relays_at(server.base_url)
        started = time.monotonic()
        assert relay_lookup(relays, timeout_ms=300) == (504, "UPSTREAM_TIMEOUT", None)
        check = relays.check_health(RelayGroup.DTRYX, timeout_ms=300, now=NOW)
        assert check.reason is Reason.TIMEOUT
        for peer in server.peers:
            assert peer.wait_closed(SLACK_S)
            assert peer.closed_by_client_at is not None
        assert len(server.peers) == 2
        assert time.monotonic() - started < 2 * (0.3 + SLACK_S)


def test_a_host_whose_addresses_all_drop_the_connection_fails_at_one_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A listener whose accept queue is full drops new connection attempts: the connect neither succeeds nor
    # fails. Given a host name, the socket module would give each of its addresses the whole timeout.
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)):  # fills the accept queue
            resolve = socket.getaddrinfo

            def ten_addresses(host: str, *args: Any, **kwargs: Any) -> Any:
                if host == "many-addresses.test":
                    return resolve("127.0.0.1", *args, **kwargs) * 10
                return resolve(host, *args, **kwargs)

            monkeypatch.setattr(socket, "getaddrinfo", ten_addresses)
            started = time.monotonic()
            assert direct_outcome(f"http://many-addresses.test:{port}/", timeout_ms=300) is Reason.TIMEOUT
            assert time.monotonic() - started < 0.3 + SLACK_S


def test_forty_slow_calls_to_one_host_do_not_delay_a_call_to_another() -> None:
    timeout_ms = 1_500
    with (
        HostileServer(lambda path: hang) as slow,
        HostileServer(lambda path: ok_json(JSON_OK)) as fine,
        ThreadPoolExecutor(max_workers=40) as callers,
    ):
        stuck = [callers.submit(direct_outcome, slow.base_url, timeout_ms=timeout_ms) for _ in range(40)]
        pool_size = PER_HOST_LIMITS.max_connections
        assert pool_size is not None
        assert eventually(lambda: len(slow.peers) >= pool_size)  # its pool is full
        started = time.monotonic()
        assert direct_outcome(fine.base_url, timeout_ms=timeout_ms) is Reason.OK
        elapsed = time.monotonic() - started
        # the other 24 are waiting for one of the slow host's own connections, not opening more
        assert len(slow.peers) == PER_HOST_LIMITS.max_connections
        assert {future.result() for future in stuck} == {Reason.TIMEOUT}
        assert eventually(lambda: all(peer.closed_by_client_at for peer in slow.peers))
    assert elapsed < 0.5  # not after the slow calls' deadline


def test_a_probe_run_with_every_upstream_hanging_or_dripping_ends_in_time_and_writes_every_verdict(
    store: DynamoVerdictStore,
) -> None:
    # The production run is a check per probed route and per relay, 3 s each, 4 at a time. Here the same at
    # 300 ms.
    timeout_ms = 300
    stalls = ["header-drip", "no-answer", "no-body", "body-drip", "endless-100-continue"]
    assigned = {target: stalls[index % len(stalls)] for index, target in enumerate(PROBE_TARGETS)}
    with HostileServer(behaviour_for) as server:
        started = time.monotonic()
        summary, events = probe_with(
            server.base_url, assigned, store, slot=slot_start_of(NOW), timeout_ms=timeout_ms
        )
        elapsed = time.monotonic() - started
        peers = list(server.peers)

    rounds = math.ceil(len(PROBE_TARGETS) / 4)
    assert elapsed < rounds * timeout_ms / 1000 + 4.0  # the slack a busy machine needs; a hang is far longer
    assert events.crashes == []
    assert len(peers) == len(PROBE_TARGETS)
    assert all(peer.closed_by_client_at is not None for peer in peers)  # each closed by its check
    snapshot = store.read_snapshot()
    assert {snapshot.routes[key].reason for key in DIRECT_PROBED} == {Reason.TIMEOUT}
    assert {relay.reason for relay in snapshot.relays.values()} == {Reason.TIMEOUT}
    assert len(summary.routes) == len(RouteKey)
    print(f"probe run, every upstream stalling, {timeout_ms} ms per check: {elapsed:.2f} s")


def test_the_peer_helper_sees_a_client_close() -> None:
    """The server-side close detection the deadline tests rely on."""
    seen: list[Peer] = []

    def record(peer: Peer) -> None:
        seen.append(peer)
        peer.hold()

    with HostileServer(lambda path: record) as server:
        port = int(server.base_url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.sendall(b"GET /x HTTP/1.1\r\nHost: a\r\n\r\n")
            while not seen:
                time.sleep(0.01)
        assert seen[0].wait_closed(2.0)
        assert seen[0].closed_by_client_at is not None
