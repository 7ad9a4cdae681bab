"""The container's cache of lookup answers: fresh for max-age on the injected clock, never an error, LRU under
both caps, one upstream call for identical misses at once."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from functions.services.response_cache import ResponseCache, Unshared
from tests.support.clock import ManualClock
from tests.support.held_call import HeldCall

MINUTE_MS = 60_000


class Upstream:
    """Counts the fetches; answers `answer-<n>` for the n-th."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        return f"answer-{self.calls}"


def cache(
    clock: ManualClock | None = None, *, max_bytes: int = 10_000, max_entries: int = 100
) -> ResponseCache:
    return ResponseCache(clock=clock or ManualClock(), max_bytes=max_bytes, max_entries=max_entries)


def test_a_repeat_inside_max_age_is_a_hit_with_its_age_and_makes_no_call() -> None:
    clock, upstream = ManualClock(), Upstream()
    answers = cache(clock)

    first = answers.get_or_fetch("q", MINUTE_MS, upstream)
    clock.advance(MINUTE_MS - 1)
    again = answers.get_or_fetch("q", MINUTE_MS, upstream)

    assert (first.body, first.hit, first.age_ms) == ("answer-1", False, 0)
    assert (again.body, again.hit, again.age_ms) == ("answer-1", True, MINUTE_MS - 1)
    assert upstream.calls == 1


def test_an_answer_expires_at_max_age_on_the_clock() -> None:
    clock, upstream = ManualClock(), Upstream()
    answers = cache(clock)
    answers.get_or_fetch("q", MINUTE_MS, upstream)

    clock.advance(MINUTE_MS)
    after = answers.get_or_fetch("q", MINUTE_MS, upstream)

    assert (after.body, after.hit) == ("answer-2", False)
    assert upstream.calls == 2


def test_keys_are_separate_entries() -> None:
    upstream = Upstream()
    answers = cache()

    assert answers.get_or_fetch("a", MINUTE_MS, upstream).body == "answer-1"
    assert answers.get_or_fetch("b", MINUTE_MS, upstream).body == "answer-2"
    assert answers.get_or_fetch("a", MINUTE_MS, upstream).body == "answer-1"


def test_a_failed_fetch_is_never_stored() -> None:
    answers = cache()

    def failing() -> str:
        raise RuntimeError("upstream failed")

    with pytest.raises(RuntimeError):
        answers.get_or_fetch("q", MINUTE_MS, failing)
    assert len(answers) == 0
    assert answers.get_or_fetch("q", MINUTE_MS, Upstream()).hit is False


def test_no_max_age_and_an_answer_over_the_byte_cap_are_not_stored() -> None:
    answers = cache(max_bytes=10)

    answers.get_or_fetch("no-max-age", 0, Upstream())
    answers.get_or_fetch("too-big", MINUTE_MS, lambda: "x" * 11)

    assert (len(answers), answers.bytes) == (0, 0)


def test_the_least_recently_used_entry_goes_first_at_the_entry_cap() -> None:
    upstream = Upstream()
    answers = cache(max_entries=2)
    answers.get_or_fetch("a", MINUTE_MS, upstream)
    answers.get_or_fetch("b", MINUTE_MS, upstream)
    answers.get_or_fetch("a", MINUTE_MS, upstream)  # a is now the most recently used

    answers.get_or_fetch("c", MINUTE_MS, upstream)

    assert answers.get_or_fetch("a", MINUTE_MS, upstream).hit is True
    assert answers.get_or_fetch("b", MINUTE_MS, upstream).hit is False


def test_utf8_bytes_are_counted_against_the_byte_cap() -> None:
    answers = cache(max_bytes=12)

    answers.get_or_fetch("a", MINUTE_MS, lambda: "가나")  # 6 bytes in UTF-8
    answers.get_or_fetch("b", MINUTE_MS, lambda: "다라")
    answers.get_or_fetch("c", MINUTE_MS, lambda: "x")

    assert (len(answers), answers.bytes) == (2, 7)


@given(
    st.lists(
        st.tuples(st.integers(0, 20), st.integers(0, 40), st.integers(0, 3 * MINUTE_MS)),
        max_size=60,
    ),
    st.integers(1, 100),
    st.integers(1, 8),
)
def test_the_caps_and_the_byte_count_hold_under_any_sequence(
    steps: list[tuple[int, int, int]], max_bytes: int, max_entries: int
) -> None:
    clock = ManualClock()
    answers = cache(clock, max_bytes=max_bytes, max_entries=max_entries)
    for key, size, advance in steps:
        clock.advance(advance)
        served = answers.get_or_fetch(key, MINUTE_MS, partial(str.__mul__, "x", size))
        assert served.age_ms < MINUTE_MS  # never an expired answer
        assert len(answers) <= max_entries
        assert answers.bytes <= max_bytes
        assert answers.bytes == sum(entry.size for entry in answers._entries.values())


def lead_and_follow(
    answers: ResponseCache, leader_fetch: HeldCall[Any], followers: int = 1
) -> list[Future[Any]]:
    """The leader's miss, its fetch held while `followers` ask for the same key, then let go: every caller's
    outcome, the leader's first."""
    with ThreadPoolExecutor(max_workers=1 + followers) as pool:
        leader = pool.submit(answers.get_or_fetch, "q", MINUTE_MS, leader_fetch)
        assert leader_fetch.started.wait(timeout=10)
        others = [pool.submit(answers.get_or_fetch, "q", MINUTE_MS, Upstream()) for _ in range(followers)]
        leader_fetch.release()
    return [leader, *others]


def upstream_failure() -> str:
    raise RuntimeError("upstream failed")


def test_identical_misses_at_once_make_one_upstream_call() -> None:
    slow = HeldCall(lambda: "shared")
    served = [future.result() for future in lead_and_follow(cache(), slow, followers=4)]

    assert slow.calls == 1
    assert {answer.body for answer in served} == {"shared"}
    assert [answer.hit for answer in served].count(False) == 1


def test_after_a_failed_leader_each_waiting_caller_fetches_for_itself() -> None:
    leader, follower = lead_and_follow(cache(), HeldCall(upstream_failure))
    with pytest.raises(RuntimeError):
        leader.result()
    assert follower.result().body == "answer-1"


def test_an_unshared_answer_goes_to_its_caller_only_and_is_never_stored() -> None:
    answers = cache()
    partial_answer = answers.get_or_fetch("q", MINUTE_MS, lambda: Unshared("partial"))

    assert (partial_answer.body, partial_answer.hit, partial_answer.reusable) == ("partial", False, False)
    assert (len(answers), answers.bytes) == (0, 0)
    complete = answers.get_or_fetch("q", MINUTE_MS, Upstream())
    assert (complete.body, complete.hit, complete.reusable) == ("answer-1", False, True)
    assert answers.get_or_fetch("q", MINUTE_MS, Upstream()).hit is True


def test_a_caller_waiting_for_an_unshared_answer_fetches_for_itself() -> None:
    leader, follower = lead_and_follow(cache(), HeldCall(lambda: Unshared("partial")))
    assert leader.result().body == "partial"
    assert follower.result().body == "answer-1"
