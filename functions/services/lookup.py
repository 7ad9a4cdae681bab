"""`Lookup`: run one operation through the router with the container's direct and relay transports.

Every upstream call of the lookup API goes through here, so every one goes through `route_operation`
(which path to take is the router's decision, never the handler's). One `Lookup` serves one API request:
composite endpoints make several calls that share its single time budget, and at most
`MAX_RELAY_CALLS_PER_LOOKUP` relay calls (each one a unit of the relay's quota ledger; direct calls cost the
relay nothing and are not counted).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from functions.catalog import spec_for
from functions.core import ApiError, Clock, ErrorCode, RouteKey
from functions.services.ports import Fetcher
from functions.services.routing import Router

MAX_RELAY_CALLS_PER_LOOKUP = 4
"""Relay calls one lookup may make: what one lookup can cost a relay's ledger at most. Every single-call and
two-call endpoint fits; only the CGV timetable's fallbacks (one timetable per film) can need more."""
RELAY_CALLS_SPENT = (
    f"This lookup has made the {MAX_RELAY_CALLS_PER_LOOKUP} relay calls one lookup may make; asking again "
    "does not help, asking for less does (a CGV timetable: one film, its movieCode from cgvMovies)."
)
"""The message of the 429 `RELAY_QUOTA_EXCEEDED` (this lookup's share of the relay quota), without
Retry-After: waiting does not help."""


@dataclass(kw_only=True, eq=False)
class Lookup:
    """The lookups of one API request, all within one budget that starts when this object is made, and
    within `MAX_RELAY_CALLS_PER_LOOKUP` relay calls. Its calls are made one after another."""

    router: Router
    direct: Fetcher
    relays: Fetcher
    clock: Clock
    budget_ms: int
    cancel: threading.Event | None = None
    relay_calls: int = field(init=False, default=0)
    """Relay calls made so far (refused ones not included)."""
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
