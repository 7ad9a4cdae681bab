"""Many writers at once against moto's ThreadedMotoServer on 127.0.0.1: the rules hold afterwards.

DynamoDB applies each conditional write atomically per item. moto's server does not lock items, so the test
server runs one request at a time to model that guarantee; the writers' threads still interleave freely
between their requests, which is where a read-modify-write window in the store would show.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import Any

import boto3
import pytest
from botocore.config import Config
from moto.moto_server import threaded_moto_server
from moto.moto_server.werkzeug_app import DomainDispatcherApplication
from mypy_boto3_dynamodb import DynamoDBClient

from functions.adapters.dynamo_store import (
    DynamoVerdictStore,
    quota_partition,
    table_definition,
)
from functions.core.model import (
    COOLDOWN_MS,
    MINUTE_MS,
    PROBE_SLOT_MS,
    SECOND_MS,
    Reason,
    RelayCheck,
    RelayGroup,
    RouteCheck,
    RouteKey,
    Snapshot,
)
from functions.core.quota import korea_day
from functions.services.quota import FLUSH_INTERVAL_MS, DailyQuota

T0 = 1_750_000_000_000
KEYS = (RouteKey.CU_STOCK, RouteKey.SEVEN_STOCK, RouteKey.DTRYX_TIMETABLE)
WRITERS = 8


class OneRequestAtATime(DomainDispatcherApplication):
    """moto's dispatcher, serialized: each DynamoDB request is atomic, as it is in DynamoDB."""

    _lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        with self._lock:
            return super().__call__(environ, start_response)


@pytest.fixture(scope="module")
def endpoint_url() -> Iterator[str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(threaded_moto_server, "DomainDispatcherApplication", OneRequestAtATime)
        server = threaded_moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def patient_client(endpoint_url: str) -> DynamoDBClient:
    """A client that sends each request once and waits however long a busy machine takes to answer.

    These tests are about what DynamoDB's per-item atomicity leaves after a race, not about time: with the
    store's own 0.6 s read timeout, a request queued behind the others on a busy machine would be retried, and
    a retried write that had already landed counts twice (an ADD) or is refused as stale (a slot claim), as
    it would in DynamoDB. tests/adapters/test_dynamo_store.py holds the store to its timeouts.
    """
    patient = Config(region_name="ap-northeast-2", read_timeout=60, retries={"total_max_attempts": 1})
    return boto3.client("dynamodb", endpoint_url=endpoint_url, config=patient)


@pytest.fixture
def client(endpoint_url: str, request: pytest.FixtureRequest) -> DynamoDBClient:
    dynamodb = patient_client(endpoint_url)
    table = request.node.name.replace("_", "-")[:200]
    dynamodb.create_table(**table_definition(table))
    return dynamodb


@pytest.fixture
def store(client: DynamoDBClient, request: pytest.FixtureRequest) -> DynamoVerdictStore:
    return DynamoVerdictStore(request.node.name.replace("_", "-")[:200], client)


def run_at_once(writes: list[Callable[[], object]]) -> None:
    """Queue every write on WRITERS threads, release them together, and re-raise any error."""
    go = threading.Event()

    def when_released(write: Callable[[], object]) -> object:
        go.wait(timeout=5)
        return write()

    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        futures = [pool.submit(when_released, write) for write in writes]
        go.set()
        for future in futures:
            future.result(timeout=30)


def race(store: DynamoVerdictStore, failures: list[int], checks: list[RouteCheck], *, now: int) -> Snapshot:
    """Every key's failure reports at `failures` and every check, written at once; then the snapshot."""
    writes: list[Callable[[], object]] = [
        partial(store.record_failure, key, at=at, now=now) for key in KEYS for at in failures
    ]
    writes += [partial(store.write_checks, [check], [], now=now) for check in checks]
    run_at_once(writes)
    return store.read_snapshot()


def test_checks_and_failures_racing_during_a_block_leave_direct_off(store: DynamoVerdictStore) -> None:
    now = T0 + 2 * MINUTE_MS
    failures = [T0 + i * SECOND_MS for i in range(8)]
    checks = [
        RouteCheck(key, direct=i % 3 != 0, checked_at=T0 - MINUTE_MS + i * 7 * SECOND_MS, reason=Reason.OK)
        for key in KEYS
        for i in range(12)
    ]
    snapshot = race(store, failures, checks, now=now)
    for key in KEYS:
        verdict = snapshot.routes[key]
        newest_check = max(c.checked_at for c in checks if c.key == key)
        assert verdict.direct is False  # rule 2: every failure's block is still live at `now`
        assert verdict.failed_at == max(failures)  # rule 3: the newest report always wins
        assert verdict.blocked_until == max(failures) + COOLDOWN_MS
        assert verdict.checked_at == newest_check  # rule 1: it is newer than every failure, so it lands
    assert store.rejected_writes > 0


def test_checks_and_failures_racing_after_the_block_recover_direct(store: DynamoVerdictStore) -> None:
    now = T0 + 3 * COOLDOWN_MS
    failures = [T0 + i * SECOND_MS for i in range(8)]
    newest_pass = T0 + 2 * COOLDOWN_MS  # re-checked after every failure's cooldown ended
    checks = [
        RouteCheck(key, direct=False, checked_at=T0 + i * 5 * SECOND_MS) for key in KEYS for i in range(8)
    ]
    checks += [RouteCheck(key, direct=True, checked_at=newest_pass, reason=Reason.OK) for key in KEYS]
    snapshot = race(store, failures, checks, now=now)
    for key in KEYS:
        verdict = snapshot.routes[key]
        assert (verdict.direct, verdict.checked_at, verdict.reason) == (
            True,
            newest_pass,
            Reason.OK,
        )  # rule 4
        assert verdict.failed_at is not None
        assert verdict.blocked_until == verdict.failed_at + COOLDOWN_MS <= now


def test_every_stale_write_is_counted_once_under_contention(store: DynamoVerdictStore) -> None:
    failure_at = T0 + MINUTE_MS
    for key in KEYS:
        store.record_failure(key, at=failure_at, now=failure_at)
    stale = [
        RouteCheck(key, direct=True, checked_at=T0 + i, reason=Reason.OK) for key in KEYS for i in range(10)
    ]

    run_at_once([partial(store.write_checks, [check], [], now=failure_at) for check in stale])

    assert store.rejected_writes == len(stale)
    assert all(verdict.direct is False for verdict in store.read_snapshot().routes.values())


def test_racing_relay_checks_keep_the_newest(store: DynamoVerdictStore) -> None:
    checks = [RelayCheck(RelayGroup.DTRYX, healthy=i % 2 == 0, checked_at=T0 + i) for i in range(24)]

    run_at_once([partial(store.write_checks, [], [check], now=T0 + 30) for check in checks])

    assert store.read_snapshot().relays[RelayGroup.DTRYX] == checks[-1]


def test_racing_slot_claims_let_exactly_one_probe_run(store: DynamoVerdictStore) -> None:
    claims: list[bool] = []
    claims_lock = threading.Lock()

    def claim(slot_start: int) -> None:
        claimed = store.claim_probe_slot(slot_start, trigger="schedule", now=slot_start + 1)
        with claims_lock:
            claims.append(claimed)

    run_at_once([partial(claim, T0) for _ in range(WRITERS)])
    assert sorted(claims) == [False] * (WRITERS - 1) + [True]

    assert store.claim_probe_slot(T0 + PROBE_SLOT_MS, trigger="operator", now=T0 + PROBE_SLOT_MS) is True


# --- the daily quota's counters ----------------------------------------------------------------------------

NOON_KST = 1_767_236_400_000  # 2026-01-01T12:00:00+09:00
CLIENT = "c" * 64


def test_concurrent_adds_from_many_containers_are_atomic(
    endpoint_url: str, store: DynamoVerdictStore
) -> None:
    containers = [DynamoVerdictStore(store._table_name, patient_client(endpoint_url)) for _ in range(WRITERS)]
    totals: list[int] = []
    totals_lock = threading.Lock()

    def add(container: DynamoVerdictStore) -> None:
        total = container.add_daily_lookups(korea_day(NOON_KST), CLIENT, 1)
        with totals_lock:
            totals.append(total)

    run_at_once([partial(add, container) for container in containers for _ in range(25)])

    assert sorted(totals) == list(range(1, 8 * 25 + 1))  # every add saw its own total: none was lost


class FlushWaiter(ThreadPoolExecutor):
    """A container's background executor whose flushes its request thread can wait for (to pace the test)."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.submitted: list[Future[Any]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future = super().submit(fn, *args, **kwargs)
        self.submitted.append(future)
        return future

    def wait_for_flushes(self) -> None:
        for future in self.submitted:
            future.result(timeout=30)


def test_eight_containers_share_one_clients_total_and_count_every_lookup_once(
    endpoint_url: str, client: DynamoDBClient, store: DynamoVerdictStore
) -> None:
    """8 containers take one lookup each per round, together; each flushes before its next lookup.

    A container knows every other container's lookups up to two rounds back (a flush may land just before
    another container's), so past the limit at most two rounds of 8 get through.
    """
    limit, rounds = 100, 20
    clock = [NOON_KST]
    start_round = threading.Barrier(
        WRITERS, action=lambda: clock.__setitem__(0, clock[0] + FLUSH_INTERVAL_MS)
    )
    executors = [FlushWaiter() for _ in range(WRITERS)]
    quotas = [
        DailyQuota(
            limit,
            store=DynamoVerdictStore(store._table_name, patient_client(endpoint_url)),
            executor=executor,
            clock=lambda: clock[0],
        )
        for executor in executors
    ]

    def container(quota: DailyQuota, executor: FlushWaiter) -> int:
        admitted = 0
        for _ in range(rounds):
            start_round.wait(timeout=30)
            admitted += quota.admit(CLIENT, now=clock[0]).allowed
            executor.wait_for_flushes()
        return admitted

    with ThreadPoolExecutor(max_workers=WRITERS) as pool:
        admitted = sum(pool.map(container, quotas, executors))
    for executor in executors:
        executor.shutdown(wait=True)

    assert limit <= admitted <= limit + 2 * WRITERS
    key = {"pk": {"S": quota_partition(korea_day(NOON_KST))}, "sk": {"S": CLIENT}}
    item = client.get_item(TableName=store._table_name, Key=key)["Item"]
    assert int(item["lookups"]["N"]) == admitted  # each counted exactly once
