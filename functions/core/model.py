"""Route keys, relay groups, reason codes and the verdict records (docs/design.md, "Route keys and relay
groups").

All times are epoch milliseconds. Nothing here reads a clock or does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

SECOND_MS = 1_000
MINUTE_MS = 60 * SECOND_MS

SNAPSHOT_TTL_MS = 30 * SECOND_MS
"""A container's cached snapshot older than this is not used to choose direct."""
VERDICT_MAX_AGE_MS = 10 * MINUTE_MS
"""A check older than this is not evidence for direct (nor for "known bad")."""
COOLDOWN_MS = 5 * MINUTE_MS
"""A live direct failure blocks direct for this long."""
MAX_CLOCK_SKEW_MS = 60 * SECOND_MS
"""A timestamp more than this far ahead of `now` is no evidence: writers refuse it, readers ignore it."""
PROBE_SLOT_MS = 5 * MINUTE_MS
"""At most one probe run per slot of this length."""
DIRECT_TIMEOUT_MS = 3 * SECOND_MS
"""Cap on one direct attempt (lookup or probe): connect and body."""
LOOKUP_BUDGET_MS = 10 * SECOND_MS
"""Default time budget of one whole lookup."""
MAX_BODY_BYTES = 2 * 1024 * 1024
"""Stop reading an upstream body past this size."""
MAX_OVERRIDE_TTL_MS = 24 * 60 * MINUTE_MS
"""An operator override lasts at most this long (its expiry is required)."""


class RouteKey(StrEnum):
    OY_FIND_STORE = "oy-find-store"
    OY_PRODUCT_SEARCH = "oy-product-search"
    OY_GOODS_INFO = "oy-goods-info"
    OY_STOCK_STORES = "oy-stock-stores"
    CU_PRIME = "cu-prime"
    CU_STOCK = "cu-stock"
    CU_STORE = "cu-store"
    GS25_PRODUCTS = "gs25-products"
    GS25_STOCK = "gs25-stock"
    SEVEN_GOODS = "seven-goods"
    SEVEN_STORE = "seven-store"
    SEVEN_POPWORDS = "seven-popwords"
    SEVEN_STOCK_META = "seven-stock-meta"
    SEVEN_STOCK = "seven-stock"
    SEVEN_PAGES = "seven-pages"
    SEVEN_ISSUES = "seven-issues"
    SEVEN_EXHIBITIONS = "seven-exhibitions"
    DTRYX_MOVIES = "dtryx-movies"
    DTRYX_PLAY_DATES = "dtryx-play-dates"
    DTRYX_TIMETABLE = "dtryx-timetable"
    CGV_THEATERS = "cgv-theaters"
    CGV_MOVIES = "cgv-movies"
    CGV_TIMETABLE = "cgv-timetable"
    CGV_TIMETABLE_MOVIE = "cgv-timetable-movie"


class RelayGroup(StrEnum):
    OLIVEYOUNG = "oliveyoung"
    CONVENIENCE = "convenience"
    DTRYX = "dtryx"
    CGV = "cgv"
    """Served by the Dtryx relay's process (its token, quota ledger and logs), at `/v1/cgv/`."""


class Reason(StrEnum):
    """The fixed diagnostic codes; nothing else is ever stored (never a body, cookie or token)."""

    OK = "ok"
    HTTP_401 = "http-401"
    HTTP_403 = "http-403"
    HTTP_429 = "http-429"
    HTTP_5XX = "http-5xx"
    HTTP_ERROR = "http-error"
    TIMEOUT = "timeout"
    NETWORK_ERROR = "network-error"
    INVALID_RESPONSE = "invalid-response"
    SHAPE = "shape"
    RESPONSE_TOO_LARGE = "response-too-large"
    PINNED_RELAY = "pinned-relay"
    CONFIGURATION = "configuration"
    UNAVAILABLE = "unavailable"
    INVALID_INPUT = "invalid-input"


PINNED_TO_RELAY: frozenset[RouteKey] = frozenset({RouteKey.GS25_STOCK})
DIRECT_PROBED: tuple[RouteKey, ...] = tuple(key for key in RouteKey if key not in PINNED_TO_RELAY)


def group_of(key: RouteKey) -> RelayGroup:
    if key.value.startswith("oy-"):
        return RelayGroup.OLIVEYOUNG
    if key.value.startswith("dtryx-"):
        return RelayGroup.DTRYX
    if key.value.startswith("cgv-"):
        return RelayGroup.CGV
    return RelayGroup.CONVENIENCE


@dataclass(frozen=True, slots=True)
class RouteCheck:
    """One probe result for one route key's direct path."""

    key: RouteKey
    direct: bool
    checked_at: int
    reason: Reason | None = None


@dataclass(frozen=True, slots=True)
class RelayCheck:
    """One probe result (or stored verdict) for a relay group's health."""

    group: RelayGroup
    healthy: bool
    checked_at: int
    reason: Reason | None = None


@dataclass(frozen=True, slots=True)
class RouteVerdict:
    """The stored verdict for one route key: the last accepted check plus any live-failure block."""

    key: RouteKey
    direct: bool
    checked_at: int
    reason: Reason | None
    failed_at: int | None = None
    blocked_until: int | None = None


class OverrideMode(StrEnum):
    FORCE_RELAY = "force-relay"
    FORCE_DIRECT = "force-direct"


@dataclass(frozen=True, slots=True)
class RouteOverride:
    """An operator's override of the verdicts for one route key, until `expires_at` (epoch ms, exclusive)."""

    key: RouteKey
    mode: OverrideMode
    reason: str
    created_at: int
    expires_at: int


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Every stored verdict (and operator override) at one moment: what a container caches and routes from."""

    routes: Mapping[RouteKey, RouteVerdict] = field(default_factory=dict)
    relays: Mapping[RelayGroup, RelayCheck] = field(default_factory=dict)
    overrides: Mapping[RouteKey, RouteOverride] = field(default_factory=dict)
