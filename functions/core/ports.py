"""The core's interfaces to the outside world: the clock and where verdicts (and overrides) are kept.

The services' own interfaces (transports, the router's and the probe's events, the quota store) are in
`functions/services/ports.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from functions.core.model import RelayCheck, RouteCheck, RouteKey, Snapshot

Clock = Callable[[], int]
"""Returns the current time in epoch milliseconds. Injected everywhere; the core never reads a clock."""


class VerdictStore(Protocol):
    """Where probe verdicts and live failures are kept (docs/design.md, "Verdict store").

    Implementations enforce the ordering invariants themselves (conditional writes); a rejected write is
    normal and is not raised. Any other failure raises `StoreError`.
    """

    def read_snapshot(self) -> Snapshot: ...

    def write_checks(
        self, routes: Sequence[RouteCheck], relays: Sequence[RelayCheck], *, now: int
    ) -> None: ...

    def record_failure(self, key: RouteKey, *, at: int, now: int) -> None: ...

    def claim_probe_slot(self, slot_start: int, *, trigger: str, now: int) -> bool: ...
