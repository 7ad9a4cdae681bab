"""`Lookup`: run one operation through the router with the container's direct and relay transports.

Every upstream call of the lookup API goes through here, so every one goes through `route_operation`
(which path to take is the router's decision, never the handler's). One `Lookup` serves one API request:
composite endpoints make several calls that share its single time budget.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from functions.catalog import spec_for
from functions.core import Clock, RouteKey
from functions.services.ports import Fetcher
from functions.services.routing import Router


@dataclass(kw_only=True, eq=False)
class Lookup:
    """The lookups of one API request, all within one budget that starts when this object is made."""

    router: Router
    direct: Fetcher
    relays: Fetcher
    clock: Clock
    budget_ms: int
    cancel: threading.Event | None = None
    _deadline: int = field(init=False)

    def __post_init__(self) -> None:
        self._deadline = self.clock() + self.budget_ms

    def __call__(self, key: RouteKey, params: BaseModel) -> Any:
        """Fetch `key` with already validated params; raises ApiError or LookupCancelled."""
        spec = spec_for(key)

        def direct(timeout_ms: int) -> Any:
            return self.direct.fetch(spec, params, timeout_ms=timeout_ms)

        def relay(timeout_ms: int) -> Any:
            return self.relays.fetch(spec, params, timeout_ms=timeout_ms)

        # The router raises the timeout error itself when nothing of the budget is left.
        remaining_ms = self._deadline - self.clock()
        return self.router.route_operation(key, direct, relay, budget_ms=remaining_ms, cancel=self.cancel)

    def data(self, key: RouteKey, params: BaseModel) -> Mapping[str, Any]:
        """Fetch `key` and normalize the answer: the API's `data`."""
        return spec_for(key).normalize(self(key, params))
