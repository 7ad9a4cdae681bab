"""Faults the operator (or a test) injects into the simulated retailers and relays (docs/design.md#sandbox).

A target is `direct:<route-key>` (one retailer operation) or `relay:<group>` (a relay: its lookups and its
health check). Without a fault a target answers normally.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from functions.core import RelayGroup, RouteKey

HTTP_FAULTS = frozenset({400, 401, 403, 404, 422, 429, 500, 502, 503})
PLAIN_FAULTS = frozenset({"ok", "timeout", "refuse", "html-200", "invalid-json", "bad-shape", "oversize"})
MAX_SLOW_MS = 60_000
_SLOW = re.compile(r"slow-(\d{1,6})")
_HTTP = re.compile(r"http-(\d{3})")
_ROUTE_KEYS = frozenset(key.value for key in RouteKey)
_GROUPS = frozenset(group.value for group in RelayGroup)


@dataclass(frozen=True, slots=True)
class Fault:
    """One parsed fault: `name` as given; `status` for http-NNN; `delay_ms` for slow-<ms>."""

    name: str
    status: int | None = None
    delay_ms: int | None = None


OK = Fault("ok")


def parse_fault(text: str) -> Fault:
    """The fault named `text`; raises ValueError for anything outside the documented set."""
    if text in PLAIN_FAULTS:
        return Fault(text)
    if (http := _HTTP.fullmatch(text)) and int(http[1]) in HTTP_FAULTS:
        return Fault(text, status=int(http[1]))
    if (slow := _SLOW.fullmatch(text)) and int(slow[1]) <= MAX_SLOW_MS:
        return Fault(text, delay_ms=int(slow[1]))
    raise ValueError(f"unknown fault {text!r}")


def parse_target(text: str) -> str:
    """`text` if it is `direct:<route-key>` or `relay:<group>`; raises ValueError otherwise."""
    kind, _, name = text.partition(":")
    if kind == "direct" and name in _ROUTE_KEYS:
        return text
    if kind == "relay" and name in _GROUPS:
        return text
    raise ValueError(f"unknown fault target {text!r}")


class FaultRegistry:
    """Thread-safe `target -> fault` map. Setting `ok` removes a target's fault."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: dict[str, Fault] = {}

    def set(self, target: str, fault: str) -> None:
        """Validates both and stores the fault; raises ValueError on an unknown target or fault."""
        target, parsed = parse_target(target), parse_fault(fault)
        with self._lock:
            if parsed == OK:
                self._faults.pop(target, None)
            else:
                self._faults[target] = parsed

    def get(self, target: str) -> Fault:
        with self._lock:
            return self._faults.get(target, OK)

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()
