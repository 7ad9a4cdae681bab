"""The relay's response cache: validated successes only, per-operation TTLs, at most 256 entries and 16 MiB.

Keys are the operation with the request body's top-level keys sorted (`apiKey` included, so callers with
different GS25 keys never share an answer). Least recently used entries go first; an entry larger than the
whole budget is not kept; expired entries are dropped on every access.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from functions.core import Clock

MAX_ENTRIES = 256
MAX_BYTES = 16 * 1024 * 1024


def cache_key(operation: str, body: Mapping[str, Any]) -> str:
    return json.dumps([operation, sorted(body.items())], ensure_ascii=False, separators=(",", ":"))


@dataclass(slots=True)
class _Entry:
    body: bytes
    expires_at: int
    size: int


class ResponseCache:
    """Not thread-safe: the relay uses it from its event loop only."""

    def __init__(self, *, clock: Clock, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
        self._clock = clock
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._bytes = 0
        self.hits = self.misses = self.expired = self.evicted = 0

    def get(self, key: str) -> bytes | None:
        self._prune()
        entry = self._entries.get(key)
        if entry is None:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return entry.body

    def put(self, key: str, body: bytes, ttl_ms: int) -> None:
        self._prune()
        size = len(key.encode()) + len(body)
        if size > self.max_bytes:
            return
        self._drop(key)
        self._entries[key] = _Entry(body, self._clock() + ttl_ms, size)
        self._bytes += size
        while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
            self._drop(next(iter(self._entries)))
            self.evicted += 1

    def stats(self) -> dict[str, int]:
        self._prune()
        return {
            "entries": len(self._entries),
            "bytes": self._bytes,
            "maxEntries": self.max_entries,
            "maxBytes": self.max_bytes,
            "hits": self.hits,
            "misses": self.misses,
            "expired": self.expired,
            "evicted": self.evicted,
        }

    def _prune(self) -> None:
        now = self._clock()
        for key in [key for key, entry in self._entries.items() if entry.expires_at <= now]:
            self._drop(key)
            self.expired += 1

    def _drop(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self._bytes -= entry.size
