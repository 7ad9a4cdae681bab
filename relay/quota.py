"""The quota ledger: upstream calls per UTC minute and per UTC day, one ledger per relay group.

`<state dir>/quota.json` (a group served beside another in its process, CGV beside Dtryx: its own file in
the other's state directory, `cgv-quota.json`) holds `{"day", "minute", "dayCount", "minuteCount"}` (`day` = epoch ms // 86,400,000,
`minute` = epoch ms // 60,000). A restart, or new limits, never resets the counts; a clock that goes back
restores nothing (each window is the later of the stored one and now). A unit is counted in memory first and
then written (a temporary file, fsync, rename, directory fsync): a failed write answers 503 and the unit stays
spent.

A ledger holds `<state dir>/relay.lock` (an exclusive `flock`, the holder's pid inside) from start to `close`:
a second relay on the same directory would overwrite the first one's counts, so it refuses to start. Under
the lock, the temporary files a killed relay left behind are removed. A ledger `beside` another shares
its lock (and gives it up with it).
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Literal

from functions.core import Clock
from relay.files import remove_stray_temporaries, write_private_file

MINUTE_MS = 60_000
DAY_MS = 86_400_000
LEDGER_FILE = "quota.json"
LOCK_FILE = "relay.lock"
_FIELDS = ("day", "minute", "dayCount", "minuteCount")

QuotaReason = Literal["minute", "daily"]


class LedgerUnreadable(Exception):
    """The ledger file exists but is not a ledger: the relay must not start (its counts would be lost)."""


class LedgerInUse(Exception):
    """Another relay (process) holds the state directory's lock."""


class LedgerUnavailable(Exception):
    """The ledger could not be written; the unit is spent all the same."""


@dataclass(frozen=True, slots=True)
class QuotaDenied:
    reason: QuotaReason
    retry_after_s: int
    """Seconds until the window that blocks resets (at least 1)."""


@dataclass(frozen=True, slots=True)
class QuotaLimits:
    per_minute: int
    per_day: int


class QuotaLedger:
    """Thread-safe; `take` is serialized. Health reads `status()`, which never writes. Raises `LedgerInUse`
    or `LedgerUnreadable`; `close` gives the state directory up."""

    def __init__(
        self, state_dir: Path, limits: QuotaLimits, *, clock: Clock, file_name: str = LEDGER_FILE
    ) -> None:
        self._directory_lock: BinaryIO | None = _lock_directory(state_dir)
        try:
            self._open(state_dir / file_name, limits, clock)
        except BaseException:
            self.close()
            raise

    @classmethod
    def beside(cls, owner: QuotaLedger, file_name: str, limits: QuotaLimits) -> QuotaLedger:
        """A ledger of its own in `owner`'s state directory, under `owner`'s lock (its `close` leaves the lock
        to `owner`). Raises `LedgerUnreadable`."""
        ledger = cls.__new__(cls)
        ledger._directory_lock = None
        ledger._open(owner.path.parent / file_name, limits, owner._clock)
        return ledger

    def _open(self, path: Path, limits: QuotaLimits, clock: Clock) -> None:
        self.path = path
        self.limits = limits
        self._clock = clock
        self._lock = threading.Lock()
        remove_stray_temporaries(self.path)
        self._day, self._minute, self._day_count, self._minute_count = _load(self.path)

    def close(self) -> None:
        if self._directory_lock is not None:
            self._directory_lock.close()

    def __enter__(self) -> QuotaLedger:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def take(self) -> QuotaDenied | None:
        """Spends one unit, or answers why not (nothing written then). Raises `LedgerUnavailable`."""
        with self._lock:
            self._advance(self._clock())
            blocked = self._blocked_by()
            if blocked is not None:
                return QuotaDenied(blocked, max(self._retry_after(blocked, self._clock()), 1))
            self._day_count += 1
            self._minute_count += 1
            try:
                self._write()
            except OSError:
                raise LedgerUnavailable from None
            return None

    def status(self) -> dict[str, object]:
        """Remaining units, when each window resets (epoch ms), and what blocks (`daily` wins) and for how long."""
        with self._lock:
            now = self._clock()
            day, minute = max(self._day, now // DAY_MS), max(self._minute, now // MINUTE_MS)
            day_count = self._day_count if day == self._day else 0
            minute_count = self._minute_count if minute == self._minute else 0
            daily_left = max(self.limits.per_day - day_count, 0)
            minute_left = max(self.limits.per_minute - minute_count, 0)
            blocked: QuotaReason | None = "daily" if not daily_left else "minute" if not minute_left else None
            return {
                "dailyRemaining": daily_left,
                "minuteRemaining": minute_left,
                "resetAt": {"daily": (day + 1) * DAY_MS, "minute": (minute + 1) * MINUTE_MS},
                "blockedBy": blocked,
                "retryAfter": 0 if blocked is None else max(self._reset_in_s(blocked, day, minute, now), 0),
            }

    def _advance(self, now: int) -> None:
        day, minute = now // DAY_MS, now // MINUTE_MS
        if day > self._day:
            self._day, self._day_count = day, 0
        if minute > self._minute:
            self._minute, self._minute_count = minute, 0

    def _blocked_by(self) -> QuotaReason | None:
        if self._day_count >= self.limits.per_day:
            return "daily"
        if self._minute_count >= self.limits.per_minute:
            return "minute"
        return None

    def _retry_after(self, reason: QuotaReason, now: int) -> int:
        return self._reset_in_s(reason, self._day, self._minute, now)

    @staticmethod
    def _reset_in_s(reason: QuotaReason, day: int, minute: int, now: int) -> int:
        reset_at = (day + 1) * DAY_MS if reason == "daily" else (minute + 1) * MINUTE_MS
        return math.ceil((reset_at - now) / 1000)

    def _write(self) -> None:
        record = dict(
            zip(_FIELDS, (self._day, self._minute, self._day_count, self._minute_count), strict=True)
        )
        write_private_file(self.path, json.dumps(record, separators=(",", ":")).encode())


def _lock_directory(state_dir: Path) -> BinaryIO:
    path = state_dir / LOCK_FILE
    try:
        file = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT, 0o600), "r+b")
    except OSError as error:
        raise LedgerUnreadable(f"cannot open {path}: {error.strerror}") from None
    try:
        fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = file.read(16).strip()
        file.close()
        pid = f" (pid {holder.decode()})" if holder.isdigit() else ""
        raise LedgerInUse(
            f"another relay process{pid} is using the state directory {state_dir}: "
            "one relay process per state directory"
        ) from None
    file.truncate(0)
    file.write(f"{os.getpid()}\n".encode())
    file.flush()
    return file


def _load(path: Path) -> tuple[int, int, int, int]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return 0, 0, 0, 0
    except OSError as error:
        raise LedgerUnreadable(f"cannot read {path}: {error.strerror}") from None
    try:
        record = json.loads(raw)
    except ValueError:
        raise LedgerUnreadable(
            f"{path} is not JSON; restore it or remove it to start counting anew"
        ) from None
    if not isinstance(record, dict) or set(record) != set(_FIELDS):
        raise LedgerUnreadable(f"{path} does not hold exactly {', '.join(_FIELDS)}")
    values = [record[name] for name in _FIELDS]
    if not all(type(value) is int and 0 <= value <= 2**53 - 1 for value in values):
        raise LedgerUnreadable(f"{path} holds a value that is not a non-negative integer")
    day, minute, day_count, minute_count = values
    return day, minute, day_count, minute_count
