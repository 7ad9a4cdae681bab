"""The sandbox's EventBridge: fires the probe at start and at each 5-minute slot boundary of the sandbox clock."""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from functions.core.model import PROBE_SLOT_MS
from sandbox.clock import SandboxClock

ACCOUNT_ID = "123456789012"
PROBE_RULE_NAME = "route-health-probe"

logger = logging.getLogger(__name__)

ProbeInvoker = Callable[[dict[str, Any]], Mapping[str, Any]]
"""Invokes the probe function with an event and returns its result."""


def slot_start(now_ms: int) -> int:
    return now_ms - now_ms % PROBE_SLOT_MS


def iso_z(epoch_ms: int) -> str:
    """EventBridge's time format: second precision, UTC, `Z`."""
    return datetime.fromtimestamp(epoch_ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def scheduled_event(slot_start_ms: int, *, region: str) -> dict[str, Any]:
    """The event an EventBridge schedule rule delivers for the slot starting at `slot_start_ms`."""
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": ACCOUNT_ID,
        "time": iso_z(slot_start_ms),
        "region": region,
        "resources": [f"arn:aws:events:{region}:{ACCOUNT_ID}:rule/{PROBE_RULE_NAME}"],
        "detail": {},
    }


class ProbeScheduler:
    """Fires `invoke` once per slot of `clock`: from a background thread as real time passes, and synchronously
    from `advance` when the clock is moved (so a clock move returns only after the probe it made due).
    """

    def __init__(
        self, clock: SandboxClock, invoke: ProbeInvoker, *, region: str, poll_interval_s: float = 0.5
    ) -> None:
        self._clock = clock
        self._invoke = invoke
        self._region = region
        self._poll_interval_s = poll_interval_s
        self._lock = threading.Lock()  # one firing at a time; also orders run_due against the thread
        self._last_slot: int | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def run_due(self) -> Mapping[str, Any] | None:
        """Fires the probe if the clock entered a slot not fired yet; returns its result, else None.

        If the background thread is firing that slot right now, this waits for it to finish.
        """
        with self._lock:
            return self._run_due_locked()

    def advance(self, ms: int) -> Mapping[str, Any] | None:
        """Moves the clock forward by `ms` and fires the probe if that entered a new slot; returns its result,
        else None. Move and firing happen under one lock, so the background thread cannot take the slot the
        move made due (which would leave this caller without the probe's result).
        """
        with self._lock:
            self._clock.advance(ms)
            return self._run_due_locked()

    def _run_due_locked(self) -> Mapping[str, Any] | None:
        current = slot_start(self._clock())
        if self._last_slot is not None and current <= self._last_slot:
            return None
        self._last_slot = current
        return self._invoke(scheduled_event(current, region=self._region))

    def fire_now(self) -> Mapping[str, Any]:
        """Fires the probe for the current slot as a (re)delivery would; the probe's slot rule decides."""
        with self._lock:
            current = slot_start(self._clock())
            if self._last_slot is None or current > self._last_slot:
                self._last_slot = current
            return self._invoke(scheduled_event(current, region=self._region))

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="probe-scheduler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _loop(self) -> None:
        while not self._stopping.wait(self._poll_interval_s):
            try:
                self.run_due()
            except Exception:  # a failed run must not stop the schedule, as with EventBridge
                logger.exception("scheduled probe failed")
