"""The small interfaces the core needs from the outside world (hexagonal ports).

The services' own ports (transports, probe checkers, probe events) are in `functions/services/ports.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from functions.core.decision import Path
from functions.core.model import Reason, RelayCheck, RouteCheck, RouteKey, RouteOverride, Snapshot

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


class QuotaStore(Protocol):
    """Where the per-client daily lookup counts are shared by every container (implemented beside
    VerdictStore by the same store).
    """

    def add_daily_lookups(self, day: int, client: str, lookups: int) -> int:
        """Atomically add `lookups` to `client`'s count for Korea day `day` (days since 1970-01-01 in Seoul)
        and return the new total. Failures raise `StoreError`."""
        ...


class OverrideStore(Protocol):
    """Where operator overrides are kept: beside the verdicts, so `read_snapshot` returns them too.

    Any failure raises `StoreError`.
    """

    def put_override(self, override: RouteOverride) -> None: ...

    def clear_override(self, key: RouteKey, *, now: int) -> RouteOverride | None:
        """Remove the key's override; the removed one if it still counted at `now`, else None."""


class FailureReporter(Protocol):
    """Hands a live direct failure to the store without the caller waiting for it."""

    def report(self, key: RouteKey, at: int) -> None: ...


class RoutingEvents(Protocol):
    """What the router tells the outside world (logs and metrics); must not raise or block."""

    def decided(self, key: RouteKey, path: Path, rule: str) -> None: ...

    def answered(self, key: RouteKey, path: Path) -> None:
        """Once per lookup when it ends: the decided path, or UNAVAILABLE for any 503 answer."""

    def direct_failed(self, key: RouteKey, reason: Reason) -> None: ...

    def relay_fallback(self, key: RouteKey) -> None: ...
