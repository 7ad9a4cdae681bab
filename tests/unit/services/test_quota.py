"""The daily quota's container logic: the Korea day, counting, background flushes, fail-open, eviction."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from functions.core import StoreError
from functions.core.quota import DAY_MS, client_of, korea_day, korea_day_end
from functions.services.quota import FLUSH_BUDGET_MS, FLUSH_INTERVAL_MS, RETRY_AFTER_ERROR_MS, DailyQuota
from tests.support.clock import ManualClock
from tests.support.executor import ClosedExecutor, ManualExecutor

# 2026-01-01T14:59:59Z is 23:59:59 in Seoul; one second later it is 2026-01-02 00:00:00 there.
LAST_SECOND_KST = 1_767_279_599_000
MIDNIGHT_KST = LAST_SECOND_KST + 1_000
NOON_KST = MIDNIGHT_KST - 12 * 60 * 60 * 1_000
ALICE = client_of("203.0.113.7")
BOB = client_of("198.51.100.23")


@dataclass
class SharedStore:
    """A QuotaStore: one table of day totals shared by every container; optionally failing or slow."""

    clock: ManualClock | None = None
    totals: dict[tuple[int, str], int] = field(default_factory=dict)
    calls: list[tuple[int, str, int]] = field(default_factory=list)
    error: Exception | None = None
    takes_ms: int = 0

    def add_daily_lookups(self, day: int, client: str, lookups: int) -> int:
        self.calls.append((day, client, lookups))
        if self.clock is not None:
            self.clock.advance(self.takes_ms)
        if self.error is not None:
            raise self.error
        total = self.totals.get((day, client), 0) + lookups
        self.totals[(day, client)] = total
        return total


@dataclass
class Container:
    quota: DailyQuota
    executor: ManualExecutor


def container(
    store: SharedStore | None,
    clock: ManualClock,
    *,
    limit: int = 5,
    errors: list[Exception] | None = None,
    **options: int,
) -> Container:
    executor = ManualExecutor()
    quota = DailyQuota(
        limit,
        store=store,
        executor=executor,
        clock=clock,
        on_flush_error=None if errors is None else errors.append,
        **options,  # type: ignore[arg-type]
    )
    return Container(quota, executor)


def admitted(quota: DailyQuota, client: str, times: int, clock: ManualClock) -> list[bool]:
    return [quota.admit(client, now=clock()).allowed for _ in range(times)]


# --- the Korea day ---------------------------------------------------------------------------------------


def test_the_korea_day_turns_at_midnight_in_seoul_not_utc() -> None:
    assert korea_day(LAST_SECOND_KST) + 1 == korea_day(MIDNIGHT_KST)
    assert korea_day(MIDNIGHT_KST) == korea_day(MIDNIGHT_KST + DAY_MS - 1)
    assert korea_day_end(korea_day(LAST_SECOND_KST)) == MIDNIGHT_KST
    assert korea_day_end(korea_day(MIDNIGHT_KST)) == MIDNIGHT_KST + DAY_MS


def test_a_client_used_up_at_235959_is_allowed_again_at_000000_seoul() -> None:
    clock = ManualClock(LAST_SECOND_KST)
    quota = container(SharedStore(), clock, limit=2).quota
    assert admitted(quota, ALICE, 3, clock) == [True, True, False]

    refused = quota.admit(ALICE, now=clock())
    assert (refused.allowed, refused.remaining) == (False, 0)
    assert refused.resets_at == MIDNIGHT_KST
    assert refused.retry_after_s == 1

    clock.advance(1_000)
    fresh = quota.admit(ALICE, now=clock())
    assert (fresh.allowed, fresh.limit, fresh.remaining) == (True, 2, 1)
    assert fresh.resets_at == MIDNIGHT_KST + DAY_MS
    assert fresh.retry_after_s == DAY_MS // 1_000


def test_remaining_counts_down_to_zero_and_the_last_allowed_lookup_says_zero() -> None:
    clock = ManualClock(NOON_KST)
    quota = container(SharedStore(), clock, limit=3).quota
    decisions = [quota.admit(ALICE, now=clock()) for _ in range(4)]
    assert [(d.allowed, d.remaining) for d in decisions] == [(True, 2), (True, 1), (True, 0), (False, 0)]
    assert decisions[0].retry_after_s == 12 * 60 * 60


def test_the_client_is_a_sha256_of_the_source_ip() -> None:
    assert hashlib.sha256(b"203.0.113.7").hexdigest() == ALICE
    assert "203.0.113.7" not in ALICE


# --- counting and sharing ----------------------------------------------------------------------------------


def test_counts_go_to_the_store_in_the_background_and_never_on_the_request() -> None:
    clock = ManualClock(NOON_KST)
    store = SharedStore()
    one = container(store, clock)
    one.quota.admit(ALICE, now=clock())
    assert store.calls == []  # only queued
    assert one.executor.run_pending() == 1
    assert store.totals == {(korea_day(NOON_KST), ALICE): 1}


def test_a_forgotten_quota_starts_afresh_and_a_flush_from_before_changes_nothing() -> None:
    # SnapStart: every container restored from one snapshot would otherwise flush the snapshot's counts.
    clock = ManualClock(NOON_KST)
    store = SharedStore(error=StoreError("down"))
    one = container(store, clock, limit=2)
    admitted(one.quota, ALICE, 1, clock)  # its flush is queued
    admitted(one.quota, BOB, 1, clock)  # unflushed

    one.quota.forget()

    admitted(one.quota, ALICE, 1, clock)  # counted afresh; a new flush is queued
    one.executor.run_pending()  # both fail: only the new count goes back to the next flush
    assert admitted(one.quota, ALICE, 2, clock) == [True, False]
    assert admitted(one.quota, BOB, 3, clock) == [True, True, False]  # BOB's old count is gone


def test_clients_are_counted_apart() -> None:
    clock = ManualClock(NOON_KST)
    quota = container(SharedStore(), clock, limit=2).quota
    assert admitted(quota, ALICE, 3, clock) == [True, True, False]
    assert admitted(quota, BOB, 2, clock) == [True, True]


def test_one_flush_in_flight_at_most_and_one_per_interval_batched_per_client() -> None:
    clock = ManualClock(NOON_KST)
    store = SharedStore()
    day = korea_day(NOON_KST)
    one = container(store, clock, limit=100)
    admitted(one.quota, ALICE, 1, clock)  # starts a flush
    admitted(one.quota, ALICE, 3, clock)
    admitted(one.quota, BOB, 2, clock)
    clock.advance(FLUSH_INTERVAL_MS)
    admitted(one.quota, ALICE, 1, clock)  # the first flush has not finished: no second one
    assert len(one.executor.pending) == 1
    one.executor.run_pending()
    assert store.calls == [(day, ALICE, 1)]

    admitted(one.quota, BOB, 1, clock)  # one flush carries each client's lookups as one number
    one.executor.run_pending()
    assert store.calls[1:] == [(day, ALICE, 4), (day, BOB, 3)]

    clock.advance(FLUSH_INTERVAL_MS - 1)
    admitted(one.quota, BOB, 1, clock)  # within the interval since the last flush started
    assert one.executor.pending == []
    clock.advance(1)
    admitted(one.quota, BOB, 1, clock)
    one.executor.run_pending()
    assert store.calls[3:] == [(day, BOB, 2)]


def test_a_flush_takes_at_most_batch_size_clients_the_rest_wait() -> None:
    clock = ManualClock(NOON_KST)
    store = SharedStore()
    one = container(store, clock, batch_size=2, flush_interval_ms=0)
    for client in ("a", "b", "c"):  # "a" starts a flush; "b" and "c" wait for the next
        admitted(one.quota, client, 1, clock)
    one.executor.run_pending()
    admitted(one.quota, "d", 1, clock)
    one.executor.run_pending()
    assert [call[1] for call in store.calls] == ["a", "b", "c"]
    admitted(one.quota, "a", 1, clock)
    one.executor.run_pending()
    assert [call[1] for call in store.calls] == ["a", "b", "c", "d", "a"]


def test_totals_from_other_containers_refuse_the_client_here() -> None:
    clock = ManualClock(NOON_KST)
    store = SharedStore()
    one, two = container(store, clock, limit=5), container(store, clock, limit=5)
    assert admitted(one.quota, ALICE, 4, clock) == [True] * 4
    one.executor.run_pending()  # the first flush carried 1 lookup
    clock.advance(FLUSH_INTERVAL_MS)
    admitted(one.quota, ALICE, 1, clock)  # the 5th: flushes the other 4
    one.executor.run_pending()
    assert store.totals[(korea_day(NOON_KST), ALICE)] == 5

    # The other container does not know yet: it lets one lookup through, and learns the total from its flush.
    assert admitted(two.quota, ALICE, 1, clock) == [True]
    two.executor.run_pending()
    assert admitted(two.quota, ALICE, 1, clock) == [False]
    assert store.totals[(korea_day(NOON_KST), ALICE)] == 6  # the stated overshoot: what it had not yet heard


def test_without_a_store_each_container_counts_on_its_own() -> None:
    clock = ManualClock(NOON_KST)
    one = container(None, clock, limit=2)
    assert admitted(one.quota, ALICE, 3, clock) == [True, True, False]
    assert one.executor.pending == []


# --- fail open -----------------------------------------------------------------------------------------------


def test_store_errors_never_refuse_or_lose_counts_and_are_reported() -> None:
    clock = ManualClock(NOON_KST)
    store = SharedStore(error=StoreError("DynamoDB UpdateItem failed: ThrottlingException"))
    errors: list[Exception] = []
    one = container(store, clock, limit=5, errors=errors)
    assert admitted(one.quota, ALICE, 2, clock) == [True, True]
    one.executor.run_pending()
    assert [type(error) for error in errors] == [StoreError]

    # Meanwhile the container keeps counting what it saw: the limit still holds in this container.
    clock.advance(FLUSH_INTERVAL_MS)
    assert admitted(one.quota, ALICE, 4, clock) == [True, True, True, False]
    assert one.executor.pending == []  # no retry storm: the next flush waits after an error

    store.error = None
    clock.advance(RETRY_AFTER_ERROR_MS)
    admitted(one.quota, BOB, 1, clock)
    one.executor.run_pending()
    assert store.totals == {(korea_day(NOON_KST), ALICE): 5, (korea_day(NOON_KST), BOB): 1}


def test_a_slow_store_cuts_the_flush_short_and_the_rest_wait_for_the_next() -> None:
    clock = ManualClock(NOON_KST)
    store = SharedStore(clock=clock, takes_ms=FLUSH_BUDGET_MS)
    one = container(store, clock, flush_interval_ms=0)
    admitted(one.quota, "first", 1, clock)
    admitted(one.quota, "a", 1, clock)
    admitted(one.quota, "b", 1, clock)
    one.executor.run_pending()
    admitted(one.quota, "c", 1, clock)  # starts a flush of a, b, c
    one.executor.run_pending()
    assert [call[1] for call in store.calls] == ["first", "a"]  # the budget was spent on "a"
    store.takes_ms = 0
    admitted(one.quota, "d", 1, clock)
    one.executor.run_pending()
    assert sorted(client for (_, client) in store.totals) == ["a", "b", "c", "d", "first"]


def test_a_shut_down_executor_keeps_the_counts_for_later() -> None:
    clock = ManualClock(NOON_KST)
    quota = DailyQuota(2, store=SharedStore(), executor=ClosedExecutor(), clock=clock)
    assert admitted(quota, ALICE, 3, clock) == [True, True, False]


# --- bounded memory --------------------------------------------------------------------------------------------


def test_the_least_recently_seen_flushed_client_is_forgotten_first() -> None:
    clock = ManualClock(NOON_KST)
    store = SharedStore()
    one = container(store, clock, limit=2, max_clients=2, flush_interval_ms=0)
    admitted(one.quota, ALICE, 2, clock)
    one.executor.run_pending()
    admitted(one.quota, BOB, 1, clock)
    one.executor.run_pending()
    assert admitted(one.quota, ALICE, 1, clock) == [False]  # seen again: now the most recent

    admitted(one.quota, "carol", 1, clock)  # full: Bob (flushed, least recently seen) makes room
    assert admitted(one.quota, ALICE, 1, clock) == [False]
    one.executor.run_pending()

    # Bob comes back unknown; the container relearns his total from the store at its next flush.
    assert admitted(one.quota, BOB, 1, clock) == [True]
    one.executor.run_pending()
    assert store.totals[(korea_day(NOON_KST), BOB)] == 2
    assert admitted(one.quota, BOB, 1, clock) == [False]


def test_when_every_tracked_client_has_unflushed_counts_a_new_one_passes_uncounted() -> None:
    clock = ManualClock(NOON_KST)
    store = SharedStore()
    untracked: list[None] = []
    executor = ManualExecutor()
    quota = DailyQuota(
        1,
        store=store,
        executor=executor,
        clock=clock,
        max_clients=2,
        on_untracked=lambda: untracked.append(None),
    )
    admitted(quota, ALICE, 1, clock)
    admitted(quota, BOB, 1, clock)
    assert admitted(quota, "mallory", 2, clock) == [True, True]  # fails open, never drops Alice's or Bob's
    assert len(untracked) == 2
    assert admitted(quota, ALICE, 1, clock) == admitted(quota, BOB, 1, clock) == [False]  # both still counted

    executor.run_pending()  # Alice's count is in the store now: she may be forgotten
    clock.advance(FLUSH_INTERVAL_MS)
    assert admitted(quota, "mallory", 2, clock) == [True, False]  # tracked in Alice's place, and counted
    executor.run_pending()
    day = korea_day(NOON_KST)
    assert store.totals == {(day, ALICE): 1, (day, BOB): 1, (day, "mallory"): 1}


def test_a_new_day_forgets_the_old_one_and_a_late_flush_of_it_changes_nothing() -> None:
    clock = ManualClock(LAST_SECOND_KST)
    store = SharedStore()
    one = container(store, clock, limit=1)
    admitted(one.quota, ALICE, 1, clock)  # its flush is queued, not run
    clock.advance(1_000)
    assert admitted(one.quota, ALICE, 2, clock) == [True, False]
    one.executor.run_pending()  # the old day's flush lands after midnight
    assert admitted(one.quota, ALICE, 1, clock) == [False]  # the new day's count stands
    assert store.totals == {(korea_day(LAST_SECOND_KST), ALICE): 1}


def test_the_stored_total_replaces_what_the_container_knew() -> None:
    clock = ManualClock(NOON_KST)
    store = SharedStore()
    one = container(store, clock, limit=3, flush_interval_ms=0)
    for _ in range(2):
        admitted(one.quota, ALICE, 1, clock)
        one.executor.run_pending()
    del store.totals[(korea_day(NOON_KST), ALICE)]  # e.g. an operator deleted the client's item
    admitted(one.quota, ALICE, 1, clock)
    one.executor.run_pending()  # the store now says 1
    assert admitted(one.quota, ALICE, 3, clock) == [True, True, False]
