"""The relay's JSON log lines: one per request, plus process events.

Only whitelisted fields are ever written: identifiers and outcomes as short codes, and non-negative numbers.
Search words, coordinates, bodies, headers, tokens, keys, IP addresses, consumer ids, exception and upstream
texts have no field to go into.
"""

from __future__ import annotations

import json
import math
import re
import sys
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TextIO

SERVICE = "route-health-relay"
CODE_FIELDS = frozenset(
    {"event", "group", "requestId", "operation", "stage", "outcome", "cache", "quotaReason", "errorType"}
)
NUMBER_FIELDS = frozenset({"status", "durationMs", "dailyRemaining", "minuteRemaining", "port"})
_CODE = re.compile(r"[A-Za-z0-9_-]{1,64}")


class RelayLog:
    """Writes whitelisted events as JSON lines; counts them for the health body. Never raises."""

    def __init__(self, stream: TextIO | None = None, *, now: Callable[[], datetime] | None = None) -> None:
        self._stream = stream
        self._now = now or (lambda: datetime.now(UTC))
        self._lock = threading.Lock()
        self._written = 0
        self._errors = 0

    def event(self, event: str, **fields: object) -> None:
        record: dict[str, object] = {
            "time": self._now().isoformat(timespec="milliseconds"),
            "service": SERVICE,
            "event": event,
        }
        for name, value in fields.items():
            is_code = name in CODE_FIELDS and isinstance(value, str) and _CODE.fullmatch(value)
            if is_code or (name in NUMBER_FIELDS and _is_count(value)):
                record[name] = value
        line = json.dumps(record, separators=(",", ":"))
        try:
            stream = self._stream or sys.stderr
            with self._lock:
                stream.write(line + "\n")
                stream.flush()
                self._written += 1
        except (OSError, ValueError):  # a closed or full stream must never fail a request
            with self._lock:
                self._errors += 1

    def stats(self) -> dict[str, object]:
        """The health body's `logging`: lines are written synchronously, so nothing queues or drops."""
        with self._lock:
            return {
                "queued": 0,
                "written": self._written,
                "dropped": 0,
                "errors": self._errors,
                "lowSpace": False,
            }


def _is_count(value: object) -> bool:
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    )
