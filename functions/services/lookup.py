"""`Lookup`: run one operation through the router with the container's direct and relay transports.

Every upstream call of the lookup API goes through here, so every one goes through `route_operation`
(which path to take is the router's decision, never the handler's). One `Lookup` serves one API request:
composite endpoints make several calls that share its single time budget, and at most
`MAX_RELAY_CALLS_PER_LOOKUP` relay calls (each one a unit of the relay's quota ledger; direct calls cost the
relay nothing and are not counted). A lookup that runs other lookups at once (the comparison across
retailers) gives each a `member` lookup of its own, on a thread of its own (`each`): the same deadline, its
own calls one after another, its own relay calls.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from pydantic import BaseModel

from functions.catalog import spec_for
from functions.core import ApiError, Clock, ErrorCode, LookupCancelled, RouteKey
from functions.core.model import SECOND_MS
from functions.services.ports import Fetcher, LookupEvents, MemberOutcome
from functions.services.routing import Router

T = TypeVar("T")
K = TypeVar("K", bound=str)

MAX_RELAY_CALLS_PER_LOOKUP = 4
"""Relay calls one lookup may make: what one lookup can cost a relay's ledger at most. Every single-call and
two-call endpoint fits; only the CGV timetable's fallbacks (one timetable per film) can need more."""
RELAY_CALLS_SPENT = (
    f"This lookup has made the {MAX_RELAY_CALLS_PER_LOOKUP} relay calls one lookup may make; asking again "
    "does not help, asking for less does (a CGV timetable: one film, its movieCode from cgvMovies)."
)
"""The message of the 429 `RELAY_QUOTA_EXCEEDED` (this lookup's share of the relay quota), without
Retry-After: waiting does not help."""
MAX_MEMBERS_IN_FLIGHT = 4
"""At most this many members of one lookup run at a time (`Lookup.each`)."""


@dataclass(kw_only=True, eq=False)
class Lookup:
    """The lookups of one API request, all within one budget that starts when this object is made, and
    within `MAX_RELAY_CALLS_PER_LOOKUP` relay calls. Its own calls are made one after another; `each` runs
    members at once."""

    router: Router
    direct: Fetcher
    relays: Fetcher
    clock: Clock
    budget_ms: int
    cancel: threading.Event | None = None
    events: LookupEvents | None = None
    """Where `each` reports its members' outcomes (the handler's log line); None: nowhere."""
    relay_calls: int = field(init=False, default=0)
    """Relay calls made so far (refused ones not included); a member counts its own from 0."""
    _deadline: int = field(init=False)

    def __post_init__(self) -> None:
        self._deadline = self.clock() + self.budget_ms

    def __call__(self, key: RouteKey, params: BaseModel) -> Any:
        """Fetch `key` with already validated params; raises ApiError or LookupCancelled."""
        spec = spec_for(key)

        def direct(timeout_ms: int) -> Any:
            return self.direct.fetch(spec, params, timeout_ms=timeout_ms)

        def relay(timeout_ms: int) -> Any:
            # Counted here, where the router has chosen the relay (at once, or after a direct failure).
            if self.relay_calls >= MAX_RELAY_CALLS_PER_LOOKUP:
                raise ApiError(ErrorCode.RELAY_QUOTA_EXCEEDED, RELAY_CALLS_SPENT)
            self.relay_calls += 1
            return self.relays.fetch(spec, params, timeout_ms=timeout_ms)

        # The router raises the timeout error itself when nothing of the budget is left.
        remaining_ms = self._deadline - self.clock()
        return self.router.route_operation(key, direct, relay, budget_ms=remaining_ms, cancel=self.cancel)

    def data(self, key: RouteKey, params: BaseModel) -> Mapping[str, Any]:
        """Fetch `key` and normalize the answer: the API's `data`."""
        return spec_for(key).normalize(self(key, params))

    def remaining_ms(self) -> int:
        """What is left of the budget now (negative once it has run out)."""
        return self._deadline - self.clock()

    def member(self, cancel: threading.Event) -> Lookup:
        """A lookup of its own for one member of this one: the same deadline, cancelled by `cancel`, its calls
        counted apart from this lookup's and the other members' (each member is used by one thread only)."""
        return replace(self, budget_ms=self.remaining_ms(), cancel=cancel)

    def each(self, calls: Mapping[K, Callable[[Lookup], T]], *, lookup_name: str) -> dict[K, T | ApiError]:
        """Runs every call at once (at most `MAX_MEMBERS_IN_FLIGHT` at a time), each on a `member` lookup,
        until they end or this lookup's budget does: by name, each call's result or its ApiError. A call still
        running at the deadline is cancelled (the router stops it at its next step; its HTTP exchange already
        ends by the deadline) and answers UPSTREAM_TIMEOUT. Anything but ApiError or LookupCancelled is a bug
        and is raised here."""
        cancel = threading.Event()
        started = self.clock()
        ended: dict[K, int] = {}

        def timed(name: K, call: Callable[[Lookup], T], member: Lookup) -> T:
            try:
                return call(member)
            finally:
                ended[name] = self.clock()

        pool = ThreadPoolExecutor(
            max_workers=max(1, min(MAX_MEMBERS_IN_FLIGHT, len(calls))), thread_name_prefix="lookup-member"
        )
        try:
            futures: dict[K, Future[T]] = {
                name: pool.submit(timed, name, call, self.member(cancel)) for name, call in calls.items()
            }
            wait(futures.values(), timeout=max(0, self.remaining_ms()) / SECOND_MS)
        finally:
            cancel.set()  # nothing is waited for any longer: a member still running stops at its next step
            pool.shutdown(wait=False, cancel_futures=True)
        outcomes: dict[K, T | ApiError] = {}
        for name, future in futures.items():
            outcome = _outcome(future)  # outside the dict's type context, where mypy would widen T
            outcomes[name] = outcome
        if self.events is not None:
            now = self.clock()
            self.events.members_answered(
                lookup_name,
                {
                    name: MemberOutcome(_code(outcome), ended.get(name, now) - started)
                    for name, outcome in outcomes.items()
                },
            )
        return outcomes


def _code(outcome: object) -> str | None:
    return outcome.code.value if isinstance(outcome, ApiError) else None


def _outcome(future: Future[T]) -> T | ApiError:
    """A member's result or its error; one that had not ended (or never started) timed out."""
    if future.cancelled() or not future.done():
        return ApiError(ErrorCode.UPSTREAM_TIMEOUT)
    error = future.exception()
    if error is None:
        return future.result()
    if isinstance(error, LookupCancelled):  # cancelled at the deadline
        return ApiError(ErrorCode.UPSTREAM_TIMEOUT)
    if isinstance(error, ApiError):
        return error
    raise error
