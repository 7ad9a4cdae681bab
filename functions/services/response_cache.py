"""One bounded cache of lookup answers per container (docs/design.md, "Caching"): a repeated question inside
its answer's `max-age` is answered from memory, with no upstream call and no relay quota spent.

Keyed by the lookup's name and its validated query (defaults applied, so `?page=1` and no `page` are one
entry); shared by every REST lookup and MCP tool call the container serves. Least recently used entries go
first when either cap (bytes, entries) would be passed; an expired entry is never served. Only successful,
complete answers are stored: a fetch that raises stores nothing, nor does one that returns an `Unshared`
answer (a comparison missing a retailer). Identical misses at the same time make one upstream call
(single-flight); the others wait for it and share its stored answer.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from functions.core import Clock


@dataclass(frozen=True)
class CachedAnswer:
    body: str
    """The answer's JSON text, as sent."""
    age_ms: int
    """How long ago it was fetched: 0 for the caller that fetched it."""
    hit: bool
    reusable: bool = True
    """False for an `Unshared` answer: its caller's alone, not for any cache."""


@dataclass(frozen=True)
class Unshared:
    """A fetched answer good for its own caller only (one that lacks part of what was asked): returned to it,
    neither stored nor handed to callers waiting for the same key (they fetch for themselves)."""

    body: str


def fetched(body: str | Unshared) -> CachedAnswer:
    """A fetch's answer as its caller gets it (a miss): reusable unless `Unshared`."""
    if isinstance(body, Unshared):
        return CachedAnswer(body=body.body, age_ms=0, hit=False, reusable=False)
    return CachedAnswer(body=body, age_ms=0, hit=False)


@dataclass(frozen=True, slots=True)
class _Entry:
    body: bytes
    """UTF-8, what the byte cap counts: a `str` holding Korean takes 2-4 bytes a character in memory."""
    size: int
    stored_at: int
    expires_at: int


class ResponseCache:
    """Thread-safe: the lock guards the table only, never an upstream call."""

    def __init__(self, *, clock: Clock, max_bytes: int, max_entries: int) -> None:
        self._clock = clock
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._in_flight: dict[Hashable, threading.Event] = {}
        self._lock = threading.Lock()
        self.bytes = 0
        """The size of every stored answer's text, in UTF-8 bytes."""

    def __len__(self) -> int:
        return len(self._entries)

    def get_or_fetch(
        self, key: Hashable, max_age_ms: int, fetch: Callable[[], str | Unshared]
    ) -> CachedAnswer:
        """The fresh stored answer for `key`, else `fetch()`'s (stored for `max_age_ms` unless `Unshared`). A
        fetch that raises stores nothing and raises to its own caller; a caller that waited for it (or for an
        unshared answer) then fetches for itself."""
        with self._lock:
            hit = self._fresh(key)
            if hit is not None:
                return hit
            waiting = self._in_flight.get(key)
            if waiting is None:
                self._in_flight[key] = threading.Event()
        if waiting is not None:
            waiting.wait()
            with self._lock:
                hit = self._fresh(key)
            return hit if hit is not None else self._fetch(key, max_age_ms, fetch, leader=False)
        return self._fetch(key, max_age_ms, fetch, leader=True)

    def _fetch(
        self, key: Hashable, max_age_ms: int, fetch: Callable[[], str | Unshared], *, leader: bool
    ) -> CachedAnswer:
        try:
            answer = fetched(fetch())
            if answer.reusable:
                self._store(key, answer.body, max_age_ms)
            return answer
        finally:
            if leader:
                with self._lock:
                    self._in_flight.pop(key).set()

    def _fresh(self, key: Hashable) -> CachedAnswer | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        now = self._clock()
        if now >= entry.expires_at:
            self._drop(key)
            return None
        self._entries.move_to_end(key)
        return CachedAnswer(body=entry.body.decode(), age_ms=max(0, now - entry.stored_at), hit=True)

    def _store(self, key: Hashable, text: str, max_age_ms: int) -> None:
        body = text.encode()
        size = len(body)
        if max_age_ms <= 0 or size > self.max_bytes or self.max_entries < 1:
            return
        now = self._clock()
        with self._lock:
            if key in self._entries:
                self._drop(key)
            while self._entries and (
                len(self._entries) >= self.max_entries or self.bytes + size > self.max_bytes
            ):
                self._drop(next(iter(self._entries)))
            self._entries[key] = _Entry(body=body, size=size, stored_at=now, expires_at=now + max_age_ms)
            self.bytes += size

    def _drop(self, key: Hashable) -> None:
        self.bytes -= self._entries.pop(key).size
