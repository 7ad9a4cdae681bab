"""Faults the operator (or a test) injects into the simulated retailers and in front of the relays
(docs/design.md#sandbox).

A target is `direct:<route-key>` (a retailer operation as the Lambda functions see it: a retailer blocking
cloud IP ranges), `relay-upstream:<route-key>` (the same operation as the relay sees it, from the home
network) or `relay:<group>` (in front of a relay: its lookups and its health check). Without a fault a target
answers normally.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from functions.core import RelayGroup, RouteKey

HTTP_FAULTS = frozenset({400, 401, 403, 404, 422, 429, 500, 502, 503})
PLAIN_FAULTS = frozenset({"ok", "timeout", "refuse", "html-200", "invalid-json", "bad-shape", "oversize"})
RESPOND = "respond"
"""`{"fault": "respond", "status": N, "body": "<text>", "contentType": "<type>"}` answers exactly that."""
MAX_SLOW_MS = 60_000
MAX_RESPOND_BODY_BYTES = 1024 * 1024
_SLOW = re.compile(r"slow-(\d{1,6})")
_HTTP = re.compile(r"http-(\d{3})")
_ROUTE_KEYS = frozenset(key.value for key in RouteKey)
_GROUPS = frozenset(group.value for group in RelayGroup)
ROUTE_TARGETS = ("direct", "relay-upstream")
"""The kinds of target naming a route key; `relay` names a group."""


@dataclass(frozen=True, slots=True)
class Fault:
    """One parsed fault: `name` as given; `status` for http-NNN and respond; `delay_ms` for slow-<ms>;
    `body` and `content_type` for respond."""

    name: str
    status: int | None = None
    delay_ms: int | None = None
    body: bytes = b""
    content_type: str = "application/json"


OK = Fault("ok")


def parse_fault(
    text: str, *, status: int | None = None, body: str | None = None, content_type: str | None = None
) -> Fault:
    """The fault named `text` (with `respond`'s status, body and content type); raises ValueError for
    anything outside the documented set."""
    if text == RESPOND:
        if status is None or not 200 <= status <= 599:
            raise ValueError("respond needs a status from 200 to 599")
        encoded = (body or "").encode()
        if len(encoded) > MAX_RESPOND_BODY_BYTES:
            raise ValueError(f"respond's body is limited to {MAX_RESPOND_BODY_BYTES} bytes")
        kind = content_type or "application/json"
        if not kind.isascii() or not kind.isprintable():
            raise ValueError("respond's contentType must be printable ASCII")
        return Fault(RESPOND, status=status, body=encoded, content_type=kind)
    if (status, body, content_type) != (None, None, None):
        raise ValueError("status, body and contentType go only with the respond fault")
    if text in PLAIN_FAULTS:
        return Fault(text)
    if (http := _HTTP.fullmatch(text)) and int(http[1]) in HTTP_FAULTS:
        return Fault(text, status=int(http[1]))
    if (slow := _SLOW.fullmatch(text)) and int(slow[1]) <= MAX_SLOW_MS:
        return Fault(text, delay_ms=int(slow[1]))
    raise ValueError(f"unknown fault {text!r}")


def parse_target(text: str) -> str:
    """`text` if it is `direct:<route-key>`, `relay-upstream:<route-key>` or `relay:<group>`; raises
    ValueError otherwise."""
    kind, _, name = text.partition(":")
    if kind in ROUTE_TARGETS and name in _ROUTE_KEYS:
        return text
    if kind == "relay" and name in _GROUPS:
        return text
    raise ValueError(f"unknown fault target {text!r}")


class FaultRegistry:
    """Thread-safe `target -> fault` map. Setting `ok` removes a target's fault."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: dict[str, Fault] = {}

    def set(self, target: str, fault: str | Fault) -> None:
        """Validates both and stores the fault; raises ValueError on an unknown target or fault."""
        target = parse_target(target)
        parsed = parse_fault(fault) if isinstance(fault, str) else fault
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
