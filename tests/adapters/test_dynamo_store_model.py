"""Stateful property test: probe checks and failure reports start at random times and land in any order.

After every step the store (moto) must equal a small reference model that applies the store's rules one write
at a time, and the rules must hold directly on what is stored.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from moto import mock_aws
from mypy_boto3_dynamodb import DynamoDBClient

from functions.adapters.dynamo_store import DynamoVerdictStore, dynamodb_client, table_definition
from functions.core import PINNED_TO_RELAY, Reason, RelayCheck, RelayGroup, RouteCheck, RouteKey, RouteVerdict
from functions.core.model import COOLDOWN_MS, MAX_CLOCK_SKEW_MS, MINUTE_MS
from tests.support.examples import examples

TABLE = "route-health-model"
START = 1_750_000_000_000
KEY = RouteKey.SEVEN_STOCK
KEYS = st.sampled_from([KEY, KEY, KEY, RouteKey.GS25_STOCK])  # mostly the key whose rules interact
GROUP = RelayGroup.CONVENIENCE

# Times sit on a coarse grid (half a cooldown) with +-1 ms jitter: the rules' boundaries are equal times and
# cooldown edges, and a grid makes writes collide on them often. A few free-form times keep it honest.
GRID_MS = COOLDOWN_MS // 2
JITTER = st.sampled_from([0, 0, 0, -1, 1])
# A negative delay is a writer whose clock runs ahead: up to 60 s ahead is accepted, more is refused.
DELAYS = st.one_of(
    st.builds(lambda k, j: max(0, k * GRID_MS + j), st.integers(0, 3), JITTER),
    st.integers(min_value=0, max_value=2 * COOLDOWN_MS),
    st.builds(lambda j: j - MAX_CLOCK_SKEW_MS, JITTER),
    st.integers(min_value=-2 * MINUTE_MS, max_value=-1),
)
CLOCK_STEPS = st.one_of(
    st.builds(lambda k, j: max(1, k * GRID_MS + j), st.integers(0, 2), JITTER),
    st.integers(min_value=1, max_value=2 * COOLDOWN_MS),
)


# -- the reference model: the rules applied to one write at a time ---------------------------------------------


def ahead_of_the_writer(at: int, now: int) -> bool:
    return at > now + MAX_CLOCK_SKEW_MS


def model_check(old: RouteVerdict | None, check: RouteCheck, now: int) -> RouteVerdict | None:
    """The new verdict, or None if the writer refuses the check's time or rule 1 ignores the check."""
    if ahead_of_the_writer(check.checked_at, now):
        return None
    if check.key in PINNED_TO_RELAY:
        check = replace(check, direct=False, reason=Reason.PINNED_RELAY)
    if old is None:
        return RouteVerdict(check.key, check.direct, check.checked_at, check.reason)
    if check.checked_at < old.checked_at or (old.failed_at is not None and check.checked_at <= old.failed_at):
        return None
    blocked = old.blocked_until is not None and now < old.blocked_until
    return replace(old, direct=check.direct and not blocked, checked_at=check.checked_at, reason=check.reason)


def model_failure(old: RouteVerdict | None, key: RouteKey, at: int, now: int) -> RouteVerdict | None:
    """The new verdict, or None if the writer refuses the report's time or rule 3 ignores the report."""
    if ahead_of_the_writer(at, now):
        return None
    if old is not None and (
        (old.failed_at is not None and old.failed_at >= at) or old.checked_at >= at + COOLDOWN_MS
    ):
        return None
    checked_at = at if old is None else max(old.checked_at, at)
    return RouteVerdict(
        key, False, checked_at, Reason.UNAVAILABLE, failed_at=at, blocked_until=at + COOLDOWN_MS
    )


_clients: list[DynamoDBClient] = []


@pytest.fixture(autouse=True, scope="module")
def moto_dynamodb() -> Iterator[None]:
    """One mocked account and client for all examples (each example gets a fresh table): keeps examples fast."""
    with mock_aws():
        _clients.append(dynamodb_client(region_name="ap-northeast-2"))
        yield
        _clients.clear()


def shared_client() -> DynamoDBClient:
    return _clients[0]


class VerdictStoreMachine(RuleBasedStateMachine):
    """Each step lands one write now that started `delay` ms ago, or moves the clock.

    Drawing the start time per write (rather than landing in start order) gives every interleaving of start
    times and landing times: a probe that started before a failure can land after it, a report can arrive
    after later probes, and so on.
    """

    def __init__(self) -> None:
        super().__init__()
        self.client = shared_client()
        self.client.create_table(**table_definition(TABLE))
        self.store = DynamoVerdictStore(TABLE, self.client)
        self.now = START
        self.routes: dict[RouteKey, RouteVerdict] = {}
        self.relay: RelayCheck | None = None
        self.rejected = 0
        self.last_seen: dict[RouteKey, RouteVerdict] = {}

    def teardown(self) -> None:
        self.client.delete_table(TableName=TABLE)

    @rule(key=KEYS, passed=st.booleans(), delay=DELAYS)
    def probe_check_lands(self, key: RouteKey, passed: bool, delay: int) -> None:
        reason = Reason.OK if passed else Reason.HTTP_403
        check = RouteCheck(key, direct=passed, checked_at=self.now - delay, reason=reason)
        self.store.write_checks([check], [], now=self.now)

        accepted = self._apply(key, model_check(self.routes.get(key), check, self.now))
        if accepted is not None and passed and key not in PINNED_TO_RELAY:
            # Rules 2 and 4 stated on their own: an accepted pass is direct exactly when no block is live.
            block_is_live = accepted.blocked_until is not None and self.now < accepted.blocked_until
            assert self.store.read_snapshot().routes[key].direct is not block_is_live

    @rule(key=KEYS, delay=DELAYS)
    def failure_report_lands(self, key: RouteKey, delay: int) -> None:
        at = self.now - delay
        self.store.record_failure(key, at=at, now=self.now)
        if key not in PINNED_TO_RELAY:  # a report for the pinned key is not written (rule 5)
            self._apply(key, model_failure(self.routes.get(key), key, at, self.now))

    @rule(healthy=st.booleans(), delay=DELAYS)
    def relay_check_lands(self, healthy: bool, delay: int) -> None:
        check = RelayCheck(GROUP, healthy=healthy, checked_at=self.now - delay)
        self.store.write_checks([], [check], now=self.now)
        stale = self.relay is not None and check.checked_at < self.relay.checked_at
        if stale or ahead_of_the_writer(check.checked_at, self.now):
            self.rejected += 1
        else:
            self.relay = check

    @rule(step=CLOCK_STEPS)
    def advance_clock(self, step: int) -> None:
        self.now += step

    def _apply(self, key: RouteKey, new: RouteVerdict | None) -> RouteVerdict | None:
        if new is None:
            self.rejected += 1
        else:
            self.routes[key] = new
        return new

    # Checked after every step.

    @invariant()
    def store_matches_the_model_and_the_rules(self) -> None:
        snapshot = self.store.read_snapshot()
        assert dict(snapshot.routes) == self.routes
        assert dict(snapshot.relays) == ({} if self.relay is None else {GROUP: self.relay})
        assert self.store.rejected_writes == self.rejected

        for key, verdict in snapshot.routes.items():
            if verdict.blocked_until is not None and self.now < verdict.blocked_until:
                assert verdict.direct is False, "rule 2: direct while blocked"
            if verdict.failed_at is not None:
                assert verdict.blocked_until == verdict.failed_at + COOLDOWN_MS
            if key in PINNED_TO_RELAY:
                assert (verdict.direct, verdict.reason) == (False, Reason.PINNED_RELAY), "rule 5"
            previous = self.last_seen.get(key)
            if previous is not None:
                assert verdict.checked_at >= previous.checked_at, "checkedAt went back"
                assert (verdict.failed_at or 0) >= (previous.failed_at or 0), "a failure was erased"
            self.last_seen[key] = verdict


VerdictStoreMachine.TestCase.settings = settings(
    max_examples=examples(60),
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestVerdictStoreRules = VerdictStoreMachine.TestCase
