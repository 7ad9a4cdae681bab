"""The comparison as the lookup runs it: its members at once (at most four in flight), each on its own
lookup through the real Router (its own decision, relay fallback, block and report), all inside one budget;
a member still running at the deadline is cancelled and listed as timed out. The transports answer with the
simulator's realistic payloads, in process; the waits are real but short (a hung member is released by the
test)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
from pydantic import BaseModel

from functions.catalog.compare import CompareProductsQuery
from functions.catalog.spec import OperationSpec
from functions.core import ApiError, ErrorCode, Reason, RelayGroup, RouteFailure, RouteKey
from functions.services.lookup import MAX_MEMBERS_IN_FLIGHT, Lookup
from functions.services.ports import MemberOutcome
from functions.services.routing import Router
from sandbox.simulator.payloads import realistic_payload, request_fields
from tests.support.clock import ManualClock
from tests.support.core_fakes import (
    T0,
    RecordingEvents,
    RecordingReporter,
    make_router,
    relay,
    route,
    snapshot_of,
)

COMPARED = (
    RouteKey.CU_PRIME,
    RouteKey.CU_STOCK,
    RouteKey.GS25_PRODUCTS,
    RouteKey.SEVEN_GOODS,
    RouteKey.OY_PRODUCT_SEARCH,
)
DIRECT_WORKS = snapshot_of(
    *(route(key) for key in COMPARED),
    *(relay(group) for group in (RelayGroup.CONVENIENCE, RelayGroup.OLIVEYOUNG)),
)
HANG = object()
"""A behaviour: the call blocks until the test releases it (a retailer that never answers)."""


class Transport:
    """Direct or relay: the simulator's realistic answer, or per key an exception to raise or HANG."""

    def __init__(self, behaviours: Mapping[RouteKey, object] | None = None) -> None:
        self.behaviours = dict(behaviours or {})
        self.calls: list[tuple[RouteKey, int]] = []
        self.release = threading.Event()
        self._lock = threading.Lock()

    def fetch(self, spec: OperationSpec[Any, Any], params: BaseModel, *, timeout_ms: int) -> Any:
        with self._lock:
            self.calls.append((spec.key, timeout_ms))
        behaviour = self.behaviours.get(spec.key)
        if behaviour is HANG:
            self.release.wait(timeout=30)
            raise RouteFailure(Reason.TIMEOUT)
        if isinstance(behaviour, BaseException):
            raise behaviour
        request = spec.build_request(params)
        return spec.validate(realistic_payload(spec.key, request_fields(request.url, request.json_body)))

    @property
    def keys(self) -> set[RouteKey]:
        return {key for key, _ in self.calls}


class RecordingLookupEvents:
    def __init__(self) -> None:
        self.answered: list[tuple[str, Mapping[str, MemberOutcome]]] = []

    def members_answered(self, lookup: str, outcomes: Mapping[str, MemberOutcome]) -> None:
        self.answered.append((lookup, dict(outcomes)))


class Container:
    """One lookup container: the router (fresh verdicts: direct works, relays healthy), both transports."""

    def __init__(self, *, direct: Transport | None = None, relays: Transport | None = None) -> None:
        self.clock = ManualClock(T0)
        self.reporter = RecordingReporter()
        self.routing = RecordingEvents()
        self.router: Router = make_router(
            self.clock, DIRECT_WORKS, reporter=self.reporter, events=self.routing
        )
        self.direct = direct or Transport()
        self.relays = relays or Transport()
        self.events = RecordingLookupEvents()

    def lookup(self, budget_ms: int = 10_000) -> Lookup:
        return Lookup(
            router=self.router,
            direct=self.direct,
            relays=self.relays,
            clock=self.clock,
            budget_ms=budget_ms,
            events=self.events,
        )

    def compare(self, budget_ms: int = 10_000, **query: Any) -> Mapping[str, Any]:
        return CompareProductsQuery.model_validate({"keyword": "콜라", **query}).fetch(self.lookup(budget_ms))


@pytest.fixture
def hung() -> Iterator[list[Transport]]:
    """Transports whose hung calls the test releases at its end (and waits for their threads)."""
    transports: list[Transport] = []
    yield transports
    for transport in transports:
        transport.release.set()
    _wait_for_members()


def _wait_for_members() -> None:
    deadline = time.monotonic() + 10
    while (
        any(t.name.startswith("lookup-member") for t in threading.enumerate()) and time.monotonic() < deadline
    ):
        time.sleep(0.01)


def test_every_retailer_at_once_each_on_its_own_routes() -> None:
    container = Container()
    data = container.compare(limit=3)

    assert container.direct.keys == set(COMPARED)
    assert container.relays.calls == []
    assert {row["retailer"] for row in data["results"]} == {"cu", "gs25", "seveneleven", "oliveyoung"}
    assert all(sum(row["retailer"] == name for row in data["results"]) <= 3 for name in data["retailers"])
    assert data["errors"] == []
    [(lookup, outcomes)] = container.events.answered
    assert lookup == "compare_products"
    assert {name: outcome.code for name, outcome in outcomes.items()} == dict.fromkeys(data["retailers"])


def test_only_the_chosen_retailers_are_asked() -> None:
    container = Container()
    data = container.compare(retailers="oliveyoung,gs25")
    assert container.direct.keys == {RouteKey.OY_PRODUCT_SEARCH, RouteKey.GS25_PRODUCTS}
    assert data["retailers"] == ["oliveyoung", "gs25"]


def test_one_retailers_direct_403_falls_back_to_its_relay_and_blocks_only_its_route() -> None:
    container = Container(direct=Transport({RouteKey.SEVEN_GOODS: RouteFailure(Reason.HTTP_403)}))
    data = container.compare()

    assert container.relays.keys == {RouteKey.SEVEN_GOODS}
    assert data["errors"] == []
    assert any(row["retailer"] == "seveneleven" for row in data["results"])
    assert container.reporter.reports == [(RouteKey.SEVEN_GOODS, T0)]
    assert container.routing.fallbacks == [RouteKey.SEVEN_GOODS]
    blocked = [key for key in COMPARED if container.router.local_block_until(key) is not None]
    assert blocked == [RouteKey.SEVEN_GOODS]


def test_each_member_has_the_whole_remaining_budget_not_a_share() -> None:
    container = Container(relays=Transport())
    container.router = make_router(container.clock, None, store=False, relay_configured=True)  # relay-first
    container.compare(budget_ms=7_000)
    assert {timeout for _, timeout in container.relays.calls} == {7_000}


def test_every_retailer_through_its_relay_is_one_compare_of_each_ones_own_relay_calls() -> None:
    # Relay calls are a lookup's to count: each member counts its own (CU's search makes two), so a compare
    # spends no retailer's allowance on another's.
    container = Container()
    container.router = make_router(container.clock, None, store=False, relay_configured=True)  # relay-first
    data = container.compare()
    assert sorted(key for key, _ in container.relays.calls) == sorted(COMPARED)
    assert data["errors"] == []


def test_a_retailer_hanging_on_both_paths_is_listed_as_timed_out_while_the_others_answer(
    hung: list[Transport],
) -> None:
    direct = Transport({RouteKey.GS25_PRODUCTS: HANG})
    relays = Transport({RouteKey.GS25_PRODUCTS: HANG})
    hung.extend([direct, relays])
    container = Container(direct=direct, relays=relays)

    started = time.monotonic()
    data = container.compare(budget_ms=300)  # the fake clock stands still: the members wait in real time
    waited = time.monotonic() - started

    assert waited < 10  # returned at its deadline, not when the hung call ends (released at teardown)
    assert data["errors"] == [
        {"retailer": "gs25", "code": "UPSTREAM_TIMEOUT", "message": ErrorCode.UPSTREAM_TIMEOUT.message}
    ]
    assert {row["retailer"] for row in data["results"]} == {"cu", "seveneleven", "oliveyoung"}
    [(_, outcomes)] = container.events.answered
    assert outcomes["gs25"].code == "UPSTREAM_TIMEOUT"


def test_a_member_cancelled_at_the_deadline_blocks_and_reports_nothing(hung: list[Transport]) -> None:
    direct = Transport({RouteKey.OY_PRODUCT_SEARCH: HANG})
    hung.append(direct)
    container = Container(direct=direct)
    data = container.compare(budget_ms=200, retailers="oliveyoung,cu")
    assert [error["retailer"] for error in data["errors"]] == ["oliveyoung"]

    direct.release.set()  # the hung call now fails (a timeout); its lookup was cancelled meanwhile
    _wait_for_members()
    assert container.router.local_block_until(RouteKey.OY_PRODUCT_SEARCH) is None
    assert container.reporter.reports == []


def test_every_retailer_failing_alike_is_that_error() -> None:
    failing = {key: RouteFailure(Reason.HTTP_5XX) for key in COMPARED}
    container = Container(direct=Transport(failing), relays=Transport(failing))
    with pytest.raises(ApiError) as raised:
        container.compare()
    assert raised.value.code is ErrorCode.UPSTREAM_BAD_RESPONSE
    assert raised.value.message == ErrorCode.UPSTREAM_BAD_RESPONSE.message


def test_retailers_failing_differently_are_503_naming_each() -> None:
    container = Container(
        direct=Transport(
            {
                RouteKey.CU_PRIME: RouteFailure(Reason.HTTP_5XX),
                RouteKey.GS25_PRODUCTS: RouteFailure(Reason.HTTP_403),
            }
        ),
        relays=Transport(
            {
                RouteKey.CU_PRIME: RouteFailure(Reason.TIMEOUT),
                RouteKey.GS25_PRODUCTS: ApiError(ErrorCode.RELAY_QUOTA_EXCEEDED, retry_after=60),
            }
        ),
    )
    with pytest.raises(ApiError) as raised:
        container.compare(retailers="cu,gs25")
    assert raised.value.code is ErrorCode.UPSTREAM_ROUTE_UNAVAILABLE
    assert raised.value.message == "No retailer answered (cu: UPSTREAM_TIMEOUT; gs25: RELAY_QUOTA_EXCEEDED)."


def test_every_members_params_are_validated_before_the_first_call() -> None:
    container = Container()
    # A query the API would refuse, built past its validation: a member refuses it before anyone calls.
    query = CompareProductsQuery.model_construct(
        keyword="", retailers="cu,gs25,seveneleven,oliveyoung", limit=5
    )
    with pytest.raises(Exception):  # noqa: B017, PT011 - pydantic's error: the API never lets this through
        query.fetch(container.lookup())
    assert container.direct.calls == []
    assert container.relays.calls == []


# --- Lookup.each itself ---------------------------------------------------------------------------


def test_at_most_four_members_are_in_flight() -> None:
    in_flight, most = 0, 0
    lock = threading.Lock()
    all_four = threading.Barrier(MAX_MEMBERS_IN_FLIGHT, timeout=10)

    def call(index: int) -> Callable[[Lookup], int]:
        def run(_member: Lookup) -> int:
            nonlocal in_flight, most
            with lock:
                in_flight += 1
                most = max(most, in_flight)
            if index < MAX_MEMBERS_IN_FLIGHT:
                all_four.wait()  # only passes with four in flight at once
            with lock:
                in_flight -= 1
            return index

        return run

    outcomes = Container().lookup().each({f"m{i}": call(i) for i in range(6)}, lookup_name="test")
    assert outcomes == {f"m{i}": i for i in range(6)}
    assert most == MAX_MEMBERS_IN_FLIGHT


def test_a_member_shares_the_deadline_and_counts_its_own_calls() -> None:
    container = Container()
    parent = container.lookup(budget_ms=5_000)
    container.clock.advance(1_000)
    cancel = threading.Event()
    member = parent.member(cancel)
    assert (member.remaining_ms(), member.cancel, member.router) == (4_000, cancel, parent.router)
    assert member is not parent


def test_a_bug_in_a_member_is_raised_not_listed() -> None:
    def broken(_member: Lookup) -> int:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        Container().lookup().each({"a": broken, "b": lambda _member: 1}, lookup_name="test")
