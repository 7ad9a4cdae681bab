"""The relay's JSON log lines: one per request, plus process events.

Only whitelisted fields are ever written: identifiers and outcomes as short codes, and non-negative numbers.
Search words, coordinates, bodies, headers, tokens, keys, IP addresses, consumer ids, exception and upstream
texts have no field to go into. The one sentence there is, `message`, is the relay's own text for its
operator (a configuration error, a warning), written by `RelayLog.tell`.

`route_process_output` makes every other line the process would write to stderr one of these too: the
libraries' log records (uvicorn's "Invalid HTTP request received.", asyncio's errors), warnings and uncaught
exceptions, each reduced to codes (the record's template, never its arguments; the exception's type, never
its text or traceback).
"""

from __future__ import annotations

import json
import logging
import math
import re
import sys
import threading
import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from types import TracebackType
from typing import TextIO

SERVICE = "route-health-relay"
CODE_FIELDS = frozenset(
    {
        "event",
        "group",
        "requestId",
        "operation",
        "stage",
        "outcome",
        "cache",
        "quotaReason",
        "errorType",
        "level",
        "logger",
        "template",
    }
)
NUMBER_FIELDS = frozenset(
    {"status", "durationMs", "dailyRemaining", "minuteRemaining", "port", "refused", "closed", "limit"}
)
_CODE = re.compile(r"[A-Za-z0-9_-]{1,64}")
_TEMPLATE_TEXT = re.compile(r"[A-Za-z .,()_-]*")
"""The start of a log template that can hold no value: where a digit, quote, `%`, `=` or `<` begins, the
rest is cut (addresses, reprs and arguments start there)."""


class RelayLog:
    """Writes whitelisted events as JSON lines; counts them for the health body. Never raises."""

    def __init__(self, stream: TextIO | None = None, *, now: Callable[[], datetime] | None = None) -> None:
        self._stream = stream
        self._now = now or (lambda: datetime.now(UTC))
        self._lock = threading.Lock()
        self._written = 0
        self._errors = 0

    def event(self, event: str, **fields: object) -> None:
        self._write(self._record(event, fields))

    def tell(self, event: str, message: str, **fields: object) -> None:
        """An event with a sentence for the operator: the relay's own text (a configuration error names the
        variable, never its secret value), never anything a caller or retailer sent."""
        self._write({**self._record(event, fields), "message": message})

    def _record(self, event: str, fields: dict[str, object]) -> dict[str, object]:
        record: dict[str, object] = {
            "time": self._now().isoformat(timespec="milliseconds"),
            "service": SERVICE,
            "event": event,
        }
        for name, value in fields.items():
            is_code = name in CODE_FIELDS and isinstance(value, str) and _CODE.fullmatch(value)
            if is_code or (name in NUMBER_FIELDS and _is_count(value)):
                record[name] = value
        return record

    def _write(self, record: dict[str, object]) -> None:
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


def template_code(template: object) -> str | None:
    """A log template as a code: its leading plain words, lowercased and joined by `-` (None if none)."""
    if not isinstance(template, str):
        return None
    plain = _TEMPLATE_TEXT.match(template)
    words = re.findall(r"[a-z]+", plain.group().lower() if plain else "")
    return "-".join(words)[:64].strip("-") or None


class JsonLogHandler(logging.Handler):
    """Library log records as `library-log` events: level, logger, the template as a code, the type of the
    exception it carries."""

    def __init__(self, log: RelayLog) -> None:
        super().__init__(logging.WARNING)
        self._log = log

    def emit(self, record: logging.LogRecord) -> None:
        error = record.exc_info[0] if record.exc_info else None
        self._log.event(
            "library-log",
            level=record.levelname.lower(),
            logger=record.name.replace(".", "-"),
            template=template_code(record.msg),
            errorType=None if error is None else error.__name__,
        )


def route_process_output(log: RelayLog) -> None:
    """For the relay's own process: everything that would reach stderr goes through `log` as JSON."""
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.addHandler(JsonLogHandler(log))
    root.setLevel(logging.WARNING)

    def show_warning(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        log.event("warning", errorType=category.__name__)

    def uncaught(kind: type[BaseException], error: BaseException, traceback: TracebackType | None) -> None:
        log.event("process-failed", errorType=kind.__name__)

    def uncaught_in_thread(args: threading.ExceptHookArgs) -> None:
        log.event("thread-failed", errorType=args.exc_type.__name__)

    warnings.showwarning = show_warning
    sys.excepthook = uncaught
    threading.excepthook = uncaught_in_thread
