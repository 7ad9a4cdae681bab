"""The sandbox's stand-in for the CloudFront distribution in front of the HTTP API (docs/design.md, "Caching"),
as `sandbox/gateway.py` stands in for API Gateway.

It keeps GET lookup answers the way the distribution does: only a 200 whose `Cache-Control` lets a shared cache
keep it (`s-maxage`, else `max-age`; never `no-store`, `private` or `no-cache`), keyed by the path and the query
parameters sorted by name (what the distribution's viewer-request function does, so their order never splits
an entry), on the one sandbox clock. Past its lifetime, within `stale-while-revalidate`, the stored answer is
still served while one background request refreshes it. Every answer for a path it caches says
`X-Cache: Hit from sandbox-edge` or `X-Cache: Miss from sandbox-edge` (CloudFront's header, in its words), and
a hit carries `Age` (seconds since it was stored). A hit never reaches the lookup function. Bounded by bytes
and entries; the least recently used answers go first.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from functions.core.ports import Clock

logger = logging.getLogger(__name__)

X_CACHE = "X-Cache"
HIT = "Hit from sandbox-edge"
MISS = "Miss from sandbox-edge"
MAX_BYTES = 32 * 1024 * 1024
MAX_ENTRIES = 10_000
SECOND_MS = 1000
NOT_SHARED = frozenset({"no-store", "private", "no-cache"})
"""Directives that keep an answer out of a shared cache (no-cache: it would have to be revalidated each time)."""

Headers = Sequence[tuple[str, str]]
Answer = tuple[int, list[tuple[str, str]], bytes]
"""(status, headers, body), as the gateway sends it."""
Fetch = Callable[[], Answer]
Background = Callable[[Callable[[], None]], None]
"""Runs a refresh after the stale answer was served (a thread of its own unless a test runs it)."""


def cached_path(method: str, path: str) -> bool:
    """Whether the edge caches requests for this path: lookups, not the operator API, /mcp or /_sandbox."""
    lookup = path.startswith("/api/") and path != "/api/health" and not path.startswith("/api/health/")
    return method == "GET" and lookup


def cache_key(target: str) -> str:
    """The request target as the edge keys it: the path, then the query parameters sorted by name, as sent (a
    stable sort: repeated names keep their order; nothing is decoded, as the viewer-request function does)."""
    parts = urlsplit(target)
    pairs = sorted((pair for pair in parts.query.split("&") if pair), key=lambda pair: pair.partition("=")[0])
    return f"{parts.path}?{'&'.join(pairs)}" if pairs else parts.path


def cache_directives(headers: Headers) -> dict[str, str | None]:
    """The `Cache-Control` directives of an answer, by lower-case name (the first of a name wins)."""
    found: dict[str, str | None] = {}
    for name, value in headers:
        if name.lower() != "cache-control":
            continue
        for item in value.split(","):
            directive, _, argument = item.strip().partition("=")
            if directive:
                found.setdefault(directive.strip().lower(), argument.strip().strip('"') or None)
    return found


@dataclass(frozen=True)
class Lifetime:
    fresh_ms: int
    stale_ms: int
    """How long past `fresh_ms` it may still be served while it is refreshed (`stale-while-revalidate`)."""


def lifetime(status: int, headers: Headers) -> Lifetime | None:
    """How long the edge may keep an answer, or None when it must not: anything but a 200, an answer a shared
    cache may not keep, and one with no lifetime (`s-maxage`, else `max-age`) above 0."""
    if status != 200:
        return None
    directives = cache_directives(headers)
    if NOT_SHARED & directives.keys():
        return None
    fresh = _seconds(directives.get("s-maxage"))
    if fresh is None:
        fresh = _seconds(directives.get("max-age"))
    if not fresh:
        return None
    stale = _seconds(directives.get("stale-while-revalidate")) or 0
    return Lifetime(fresh * SECOND_MS, stale * SECOND_MS)


def _seconds(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None


@dataclass(frozen=True)
class _Entry:
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    size: int
    stored_at: int
    fresh_until: int
    stale_until: int


def _in_a_thread(work: Callable[[], None]) -> None:
    threading.Thread(target=work, name="sandbox-edge-refresh", daemon=True).start()


class EdgeCache:
    """Thread-safe: the lock guards the table only, never a request to the function."""

    def __init__(
        self,
        *,
        clock: Clock,
        max_bytes: int = MAX_BYTES,
        max_entries: int = MAX_ENTRIES,
        background: Background = _in_a_thread,
    ) -> None:
        self._clock = clock
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self._background = background
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._refreshing: set[str] = set()
        self._lock = threading.Lock()
        self.bytes = 0
        """The size of every stored answer (body and headers), in bytes."""

    def __len__(self) -> int:
        return len(self._entries)

    def serve(self, target: str, fetch: Fetch) -> Answer:
        """The stored answer for this request target while it may be served, else `fetch()`'s (stored when it
        may be). A stale one starts one background refresh per key (single-flight)."""
        key = cache_key(target)
        now = self._clock()
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and now >= entry.stale_until:
                self._discard(key)
                entry = None
            refresh = False
            if entry is not None:
                self._entries.move_to_end(key)
                refresh = now >= entry.fresh_until and key not in self._refreshing
                if refresh:
                    self._refreshing.add(key)
        if entry is None:
            status, headers, body = fetch()
            self._store(key, status, headers, body)
            return status, [*headers, (X_CACHE, MISS)], body
        if refresh:
            self._background(lambda: self._refresh(key, fetch))
        age_s = max(0, now - entry.stored_at) // SECOND_MS
        return entry.status, [*entry.headers, ("Age", str(age_s)), (X_CACHE, HIT)], entry.body

    def _refresh(self, key: str, fetch: Fetch) -> None:
        """An error answer (or none) leaves the stale one in place until its window ends, as CloudFront does."""
        try:
            self._store(key, *fetch())
        except Exception as error:
            logger.warning("edge refresh failed: %s", type(error).__name__)
        finally:
            with self._lock:
                self._refreshing.discard(key)

    def _store(self, key: str, status: int, headers: Headers, body: bytes) -> None:
        life = lifetime(status, headers)
        size = len(body) + sum(len(name) + len(value) for name, value in headers)
        now = self._clock()
        with self._lock:
            if life is None or size > self.max_bytes:
                if status == 200:  # the origin's answer now is one the edge may not keep: drop the old
                    self._discard(key)
                return
            self._discard(key)
            while self._entries and (
                len(self._entries) >= self.max_entries or self.bytes + size > self.max_bytes
            ):
                self._discard(next(iter(self._entries)))
            fresh_until = now + life.fresh_ms
            self._entries[key] = _Entry(
                status=status,
                headers=tuple(headers),
                body=body,
                size=size,
                stored_at=now,
                fresh_until=fresh_until,
                stale_until=fresh_until + life.stale_ms,
            )
            self.bytes += size

    def _discard(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is not None:
            self.bytes -= entry.size
