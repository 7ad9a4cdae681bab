"""Jobs: the cache, coalescing, the concurrency bounds, deadlines, queue expiry, cancellation and the Olive
Young per-consumer limits."""

from __future__ import annotations

import time
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import anyio
import httpx
import pytest

from functions.core import RelayGroup, RouteKey, group_of
from relay.app import RelayApp
from relay.cache import ResponseCache
from tests.relay.conftest import RelayFactory, RelayUnderTest, auth, path_of, probe_body, wait_until

CONSUMER_A = "a" * 64
CONSUMER_B = "b" * 64


def units_used(relay: RelayUnderTest, group: RelayGroup) -> int:
    """Quota units spent today (the tests stay within one UTC day)."""
    ledger = relay.app.relays[group].ledger
    return ledger.limits.per_day - int(relay.health(group)["quota"]["dailyRemaining"])


def cu_stock(word: str) -> dict[str, Any]:
    return {**probe_body(RouteKey.CU_STOCK), "searchWord": word}


def goods(number: str) -> dict[str, Any]:
    return {"goodsNo": number}


@pytest.fixture
def pool() -> Any:
    with ThreadPoolExecutor(8) as executor:
        yield executor


# --- cache ---------------------------------------------------------------------------------------


def test_a_success_is_served_from_the_cache_until_its_ttl_ends(relay: RelayUnderTest) -> None:
    first = relay.post(RouteKey.CU_PRIME)
    second = relay.post(RouteKey.CU_PRIME)
    assert (first.headers["x-relay-cache"], second.headers["x-relay-cache"]) == ("miss", "hit")
    assert first.content == second.content
    assert relay.retailers.calls() == 1
    assert units_used(relay, RelayGroup.CONVENIENCE) == 1  # a hit uses no quota
    relay.clock.advance(299_999)
    assert relay.post(RouteKey.CU_PRIME).headers["x-relay-cache"] == "hit"
    relay.clock.advance(1)
    assert relay.post(RouteKey.CU_PRIME).headers["x-relay-cache"] == "miss"


@pytest.mark.parametrize(
    ("key", "ttl_ms"),
    [
        (RouteKey.OY_FIND_STORE, 300_000),
        (RouteKey.OY_PRODUCT_SEARCH, 300_000),
        (RouteKey.OY_GOODS_INFO, 600_000),
        (RouteKey.OY_STOCK_STORES, 60_000),
        (RouteKey.CU_STORE, 30_000),
        (RouteKey.SEVEN_STOCK, 30_000),
        (RouteKey.SEVEN_GOODS, 300_000),
        (RouteKey.CGV_THEATERS, 300_000),
        (RouteKey.CGV_MOVIES, 300_000),
        (RouteKey.CGV_TIMETABLE, 30_000),
        (RouteKey.CGV_TIMETABLE_MOVIE, 30_000),
    ],
)
def test_ttls_per_operation_and_hits_use_no_quota(relay: RelayUnderTest, key: RouteKey, ttl_ms: int) -> None:
    remaining = relay.health(group_of(key))["quota"]["dailyRemaining"]
    assert relay.post(key).headers["x-relay-cache"] == "miss"
    relay.clock.advance(ttl_ms - 1)
    assert relay.post(key).headers["x-relay-cache"] == "hit"
    assert relay.health(group_of(key))["quota"]["dailyRemaining"] == remaining - 1
    relay.clock.advance(1)
    assert relay.post(key).headers["x-relay-cache"] == "miss"
    assert relay.retailers.calls() == 2


def test_failures_are_never_cached(relay: RelayUnderTest) -> None:
    relay.retailers.answers[RouteKey.CU_PRIME] = lambda request: httpx.Response(500)
    assert relay.post(RouteKey.CU_PRIME).status_code == 502
    del relay.retailers.answers[RouteKey.CU_PRIME]
    assert relay.post(RouteKey.CU_PRIME).headers["x-relay-cache"] == "miss"
    assert relay.retailers.calls() == 2


def test_dtryx_has_no_cache(relay: RelayUnderTest) -> None:
    answers = [relay.post(RouteKey.DTRYX_MOVIES) for _ in range(2)]
    assert all("x-relay-cache" not in answer.headers for answer in answers)
    assert relay.retailers.calls() == 2


def test_callers_with_different_gs25_keys_never_share_an_answer(relay: RelayUnderTest) -> None:
    body = probe_body(RouteKey.GS25_STOCK)
    for key in ("key-one", "key-two", "key-one"):
        relay.post(RouteKey.GS25_STOCK, {**body, "apiKey": key})
    assert relay.retailers.calls() == 2


def test_the_cache_keeps_at_most_its_entries_and_bytes() -> None:
    now = [0]
    cache = ResponseCache(clock=lambda: now[0], max_entries=2, max_bytes=100)
    cache.put("a", b"1" * 10, 1000)
    cache.put("b", b"2" * 10, 1000)
    assert cache.get("a") == b"1" * 10  # now "b" is the least recently used
    cache.put("c", b"3" * 10, 1000)
    assert (cache.get("b"), cache.get("c")) == (None, b"3" * 10)
    cache.put("big", b"x" * 100, 1000)  # larger than the whole budget: not kept, nothing evicted for it
    assert cache.get("big") is None
    assert cache.get("a") is not None
    cache.put("d", b"4" * 90, 1000)  # fits only after evicting both others
    assert (cache.stats()["entries"], cache.stats()["bytes"]) == (1, 91)
    now[0] = 1000
    assert cache.get("d") is None
    assert cache.stats() == {
        "entries": 0,
        "bytes": 0,
        "maxEntries": 2,
        "maxBytes": 100,
        "hits": 3,
        "misses": 3,
        "expired": 1,
        "evicted": 3,
    }


# --- coalescing ------------------------------------------------------------------------------------


def test_identical_requests_in_flight_share_one_call_and_one_quota_unit(
    relay: RelayUnderTest, pool: ThreadPoolExecutor
) -> None:
    relay.retailers.hold = True
    leader = pool.submit(relay.post, RouteKey.CU_STOCK)
    wait_until(relay.retailers.held.is_set, "the first call reached the retailer")
    joiner = pool.submit(relay.post, RouteKey.CU_STOCK)
    wait_until(lambda: relay.app.relays[RelayGroup.CONVENIENCE].outstanding == 2, "the joiner waits")
    relay.retailers.released.set()
    answers = [leader.result(5), joiner.result(5)]
    assert [a.status_code for a in answers] == [200, 200]
    assert [a.headers["x-relay-cache"] for a in answers] == ["miss", "coalesced"]
    assert answers[0].content == answers[1].content
    assert relay.retailers.calls() == 1
    assert units_used(relay, RelayGroup.CONVENIENCE) == 1


def test_a_failure_reaches_every_waiter_and_is_not_kept(
    relay: RelayUnderTest, pool: ThreadPoolExecutor
) -> None:
    relay.retailers.hold = True
    relay.retailers.answers[RouteKey.OY_GOODS_INFO] = lambda request: httpx.Response(503)
    first = pool.submit(relay.post, RouteKey.OY_GOODS_INFO)
    wait_until(relay.retailers.held.is_set, "the call reached the retailer")
    second = pool.submit(relay.post, RouteKey.OY_GOODS_INFO)
    wait_until(lambda: relay.app.relays[RelayGroup.OLIVEYOUNG].outstanding == 2, "the joiner waits")
    relay.retailers.released.set()
    assert [first.result(5).status_code, second.result(5).status_code] == [502, 502]
    relay.retailers.hold = False
    del relay.retailers.answers[RouteKey.OY_GOODS_INFO]
    assert relay.post(RouteKey.OY_GOODS_INFO).headers["x-relay-cache"] == "miss"


# --- bounds --------------------------------------------------------------------------------------


def test_at_most_four_convenience_calls_at_once_the_rest_queue_in_order(
    relay: RelayUnderTest, pool: ThreadPoolExecutor
) -> None:
    relay.retailers.hold = True
    futures = [pool.submit(relay.post, RouteKey.CU_STOCK, cu_stock(f"word{i}")) for i in range(6)]
    wait_until(
        lambda: relay.retailers.calls() == 4 and relay.health(RelayGroup.CONVENIENCE)["queued"] == 2,
        "four calls at the retailer, two waiting for a slot",
    )
    time.sleep(0.05)  # and no fifth call follows
    state = relay.health(RelayGroup.CONVENIENCE)
    assert (state["active"], state["outstanding"], relay.retailers.calls()) == (4, 6, 4)
    relay.retailers.released.set()
    assert [future.result(5).status_code for future in futures] == [200] * 6
    assert relay.retailers.calls() == 6


def test_olive_young_calls_its_retailer_one_at_a_time(
    relay: RelayUnderTest, pool: ThreadPoolExecutor
) -> None:
    relay.retailers.hold = True
    futures = [
        pool.submit(relay.post, RouteKey.OY_GOODS_INFO, goods(f"A{i}"), {"x-relay-consumer": str(i) * 64})
        for i in range(3)
    ]
    wait_until(lambda: relay.app.relays[RelayGroup.OLIVEYOUNG].outstanding == 3, "all three admitted")
    wait_until(relay.retailers.held.is_set, "the first call reached the retailer")
    time.sleep(0.05)  # and no second one follows
    assert relay.retailers.calls() == 1
    assert relay.health(RelayGroup.OLIVEYOUNG)["active"] is True
    relay.retailers.released.set()
    assert [future.result(5).status_code for future in futures] == [200] * 3


@pytest.mark.parametrize(
    ("key", "busy"),
    [(RouteKey.OY_GOODS_INFO, {"error": "Relay busy"}), (RouteKey.DTRYX_MOVIES, {"error": "Relay busy"})],
)
def test_past_the_outstanding_limit_the_relay_is_busy(
    make_relay: RelayFactory, pool: ThreadPoolExecutor, key: RouteKey, busy: Mapping[str, str]
) -> None:
    relay = make_relay(max_outstanding=2)
    relay.retailers.hold = True
    bodies = (
        [goods("A1"), goods("A2")]
        if key is RouteKey.OY_GOODS_INFO
        else [
            probe_body(key),
            {**probe_body(key), "cinemaCode": "000068"},
        ]
    )
    futures = [
        pool.submit(relay.post, key, body, {"x-relay-consumer": c})
        for body, c in zip(bodies, "ab", strict=True)
    ]
    wait_until(lambda: relay.app.relays[RelayGroup(path_of(key).split("/")[2])].outstanding == 2, "two in")
    response = relay.post(key, {**bodies[0]})
    assert (response.status_code, response.json()) == (503, busy)
    relay.retailers.released.set()
    assert [future.result(5).status_code for future in futures] == [200, 200]


def test_the_deadline_covers_the_queue_and_the_call(
    make_relay: RelayFactory, pool: ThreadPoolExecutor
) -> None:
    relay = make_relay(deadline_ms=300, upstream_slots=1)
    relay.retailers.hold = True
    first = pool.submit(relay.post, RouteKey.DTRYX_MOVIES)
    wait_until(relay.retailers.held.is_set, "the call reached the retailer")
    second = relay.post(RouteKey.DTRYX_MOVIES, {**probe_body(RouteKey.DTRYX_MOVIES), "cinemaCode": "000068"})
    assert (second.status_code, second.json()) == (504, {"error": "Relay request failed"})
    assert (first.result(5).status_code, first.result().json()) == (504, {"error": "Relay request failed"})
    assert units_used(relay, RelayGroup.DTRYX) == 1  # the queued one never took a unit
    assert relay.health(RelayGroup.DTRYX)["active"] == 1  # the abandoned call keeps its slot until it ends
    relay.retailers.released.set()
    wait_until(lambda: relay.app.relays[RelayGroup.DTRYX].active == 0, "the abandoned call ended")


# --- Olive Young queue expiry ----------------------------------------------------------------------


def test_each_olive_young_waiter_expires_by_its_own_wait(
    relay: RelayUnderTest, pool: ThreadPoolExecutor
) -> None:
    relay.retailers.hold = True
    oy = relay.app.relays[RelayGroup.OLIVEYOUNG]
    running = pool.submit(relay.post, RouteKey.OY_GOODS_INFO, goods("A0"))
    wait_until(relay.retailers.held.is_set, "the first call reached the retailer")
    stale = pool.submit(relay.post, RouteKey.OY_GOODS_INFO, goods("A1"), {"x-relay-consumer": CONSUMER_A})
    wait_until(lambda: oy.outstanding == 2, "the stale one queued")
    relay.clock.advance(30_000)
    fresh = pool.submit(relay.post, RouteKey.OY_GOODS_INFO, goods("A1"), {"x-relay-consumer": CONSUMER_B})
    wait_until(lambda: oy.outstanding == 3, "the fresh one joined")
    relay.clock.advance(10_000)
    relay.retailers.released.set()
    assert running.result(5).status_code == 200
    assert (stale.result(5).status_code, stale.result().json()) == (503, {"error": "Request expired"})
    assert (fresh.result(5).status_code, fresh.result().headers["x-relay-cache"]) == (200, "coalesced")


def test_a_job_whose_waiters_all_expired_is_skipped(relay: RelayUnderTest, pool: ThreadPoolExecutor) -> None:
    relay.retailers.hold = True
    oy = relay.app.relays[RelayGroup.OLIVEYOUNG]
    running = pool.submit(relay.post, RouteKey.OY_GOODS_INFO, goods("A0"))
    wait_until(relay.retailers.held.is_set, "the first call reached the retailer")
    expired = pool.submit(relay.post, RouteKey.OY_GOODS_INFO, goods("A1"))
    wait_until(lambda: oy.outstanding == 2, "the second one queued")
    relay.clock.advance(40_000)
    relay.retailers.released.set()
    assert (running.result(5).status_code, expired.result(5).status_code) == (200, 503)
    assert relay.retailers.calls() == 1
    assert units_used(relay, RelayGroup.OLIVEYOUNG) == 1


# --- cancellation ----------------------------------------------------------------------------------


async def _request_then_hang_up(
    app: RelayApp, path: str, body: bytes, headers: Mapping[str, str]
) -> list[Any]:
    """One request whose caller disconnects 50 ms after sending it; the messages the app sent back."""
    sent: list[Any] = []
    incoming = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if incoming:
            return incoming.pop()
        await anyio.sleep(0.05)
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(name.lower().encode(), value.encode()) for name, value in headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("relay.test", 80),
    }
    await app(scope, receive, send)
    return sent


@pytest.mark.parametrize("key", [RouteKey.OY_GOODS_INFO, RouteKey.DTRYX_MOVIES])
def test_a_caller_that_hangs_up_is_499_and_its_queued_job_never_runs(
    make_relay: RelayFactory, pool: ThreadPoolExecutor, key: RouteKey
) -> None:
    relay = make_relay(upstream_slots=1)
    group = RelayGroup(path_of(key).split("/")[2])
    relay.retailers.hold = True
    running: Future[httpx.Response] = pool.submit(relay.post, key)
    wait_until(relay.retailers.held.is_set, "the first call reached the retailer")
    other = (
        {"goodsNo": "A1"} if key is RouteKey.OY_GOODS_INFO else {**probe_body(key), "cinemaCode": "000068"}
    )
    import json

    relay.client.run(
        lambda: _request_then_hang_up(relay.app, path_of(key), json.dumps(other).encode(), auth(group))
    )
    relay.retailers.released.set()
    assert running.result(5).status_code == 200
    assert relay.retailers.calls() == 1
    assert units_used(relay, group) == 1
    statuses = [line["status"] for line in relay.log_lines() if line["event"] == "request"]
    assert 499 in statuses, relay.log.getvalue()


# --- Olive Young per-consumer limits -----------------------------------------------------------------


def test_a_consumer_has_two_requests_in_flight_at_most(
    relay: RelayUnderTest, pool: ThreadPoolExecutor
) -> None:
    relay.retailers.hold = True
    oy = relay.app.relays[RelayGroup.OLIVEYOUNG]
    mine = {"x-relay-consumer": CONSUMER_A}
    futures = [pool.submit(relay.post, RouteKey.OY_GOODS_INFO, goods(f"A{i}"), mine) for i in range(2)]
    wait_until(lambda: oy.outstanding == 2, "two in flight")
    refused = relay.post(RouteKey.OY_GOODS_INFO, goods("A9"), mine)
    assert refused.status_code == 429
    assert refused.json() == {"error": "Relay quota exceeded", "reason": "consumer-busy"}
    assert (refused.headers["x-relay-quota-reason"], refused.headers["retry-after"]) == ("consumer-busy", "1")
    other = pool.submit(relay.post, RouteKey.OY_GOODS_INFO, goods("A9"), {"x-relay-consumer": CONSUMER_B})
    wait_until(lambda: oy.outstanding == 3, "another consumer is admitted")
    relay.retailers.released.set()
    assert [f.result(5).status_code for f in [*futures, other]] == [200, 200, 200]


def test_a_consumer_starts_a_bounded_number_of_jobs_per_minute(
    relay: RelayUnderTest, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("relay.consumers.JOBS_PER_MINUTE", 2)
    for header in (CONSUMER_A, "NOT-HEX"):  # an unreadable consumer id is the shared `legacy` one
        mine = {"x-relay-consumer": header}
        assert [
            relay.post(RouteKey.OY_GOODS_INFO, goods(f"{header[:3]}{i}"), mine).status_code for i in (1, 2)
        ] == [
            200,
            200,
        ]
        refused = relay.post(RouteKey.OY_GOODS_INFO, goods(f"{header[:3]}3"), mine)
        assert refused.json() == {"error": "Relay quota exceeded", "reason": "consumer"}
        assert (refused.headers["x-relay-quota-reason"], refused.headers["retry-after"]) == ("consumer", "40")
        assert relay.post(RouteKey.OY_GOODS_INFO, goods(f"{header[:3]}1"), mine).status_code == 200  # a hit
    relay.clock.advance(40_000)
    assert (
        relay.post(RouteKey.OY_GOODS_INFO, goods("A3"), {"x-relay-consumer": CONSUMER_A}).status_code == 200
    )
