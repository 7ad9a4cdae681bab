"""The route decision (docs/design.md, "Route decision"): a pure function of the cached verdicts, the local
block and `now`.

An operator override read from a fresh snapshot takes precedence over every verdict rule and the local
block; it never overrides legacy mode (no store), the pin, or a missing or stale snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from functions.core.model import (
    COOLDOWN_MS,
    MAX_CLOCK_SKEW_MS,
    PINNED_TO_RELAY,
    SNAPSHOT_TTL_MS,
    VERDICT_MAX_AGE_MS,
    OverrideMode,
    RelayCheck,
    RelayGroup,
    RouteKey,
    RouteVerdict,
    Snapshot,
    group_of,
)
from functions.core.overrides import active_override


class Path(StrEnum):
    DIRECT = "direct"
    RELAY = "relay"
    UNAVAILABLE = "unavailable"


class Rule(StrEnum):
    """Which rule decided the path; logged and useful in tests, never shown to API callers."""

    LEGACY_RELAY = "legacy-relay"
    LEGACY_DIRECT = "legacy-direct"
    PINNED = "pinned"
    PINNED_NO_RELAY = "pinned-no-relay"
    NO_RELAY = "no-relay"
    NO_SNAPSHOT = "no-snapshot"
    STALE_SNAPSHOT = "stale-snapshot"
    NO_VERDICT = "no-verdict"
    DIRECT_FALSE = "direct-false"
    BLOCKED = "blocked"
    VERDICT_TOO_OLD = "verdict-too-old"
    LOCAL_BLOCK = "local-block"
    BOTH_KNOWN_BAD = "both-known-bad"
    DIRECT_OK = "direct-ok"
    OVERRIDE_DIRECT = "override-direct"
    OVERRIDE_RELAY = "override-relay"
    OVERRIDE_RELAY_UNHEALTHY = "override-relay-unhealthy"


@dataclass(frozen=True, slots=True)
class CachedSnapshot:
    """A snapshot as one container holds it: the verdicts and when they were read (epoch ms)."""

    snapshot: Snapshot
    fetched_at: int


@dataclass(frozen=True, slots=True)
class Decision:
    path: Path
    rule: Rule


def decide(
    key: RouteKey,
    *,
    cached: CachedSnapshot | None,
    local_block_until: int | None,
    now: int,
    store_configured: bool,
    relay_configured: bool,
) -> Decision:
    """Choose direct, relay or unavailable for one lookup without any I/O."""
    pinned = key in PINNED_TO_RELAY
    if not relay_configured:
        # The relay is not an option, so direct is the only way (a pinned key has no way at all).
        if pinned:
            return Decision(Path.UNAVAILABLE, Rule.PINNED_NO_RELAY)
        return Decision(Path.DIRECT, Rule.LEGACY_DIRECT if not store_configured else Rule.NO_RELAY)
    if not store_configured:
        return Decision(Path.RELAY, Rule.LEGACY_RELAY)

    # Only a fresh snapshot is evidence (for an override or a 503): a missing or stale one means "relay now".
    snapshot = fresh_snapshot(cached, now)
    override = None if pinned else active_override(snapshot, key, now)
    if override is not None:
        return _obey(override.mode, key, snapshot, now)
    rule = _reason_not_direct(key, cached, local_block_until, now)
    if rule is None:
        return Decision(Path.DIRECT, Rule.DIRECT_OK)
    locally_blocked = local_block_until is not None and local_block_until > now
    route_bad = pinned or locally_blocked or route_known_bad(snapshot, key, now)
    if route_bad and relay_known_unhealthy(snapshot, group_of(key), now):
        return Decision(Path.UNAVAILABLE, Rule.BOTH_KNOWN_BAD)
    return Decision(Path.RELAY, rule)


def _obey(mode: OverrideMode, key: RouteKey, snapshot: Snapshot | None, now: int) -> Decision:
    """The override's path. A live failure under force-direct still falls back to the relay (routing)."""
    if mode is OverrideMode.FORCE_DIRECT:
        return Decision(Path.DIRECT, Rule.OVERRIDE_DIRECT)
    # Nothing goes direct, so a relay known unhealthy leaves no way at all: 503 without calling anything.
    if relay_known_unhealthy(snapshot, group_of(key), now):
        return Decision(Path.UNAVAILABLE, Rule.OVERRIDE_RELAY_UNHEALTHY)
    return Decision(Path.RELAY, Rule.OVERRIDE_RELAY)


def fresh_snapshot(cached: CachedSnapshot | None, now: int) -> Snapshot | None:
    """The cached snapshot if it was read at most 30 s before `now`, else None (missing or stale)."""
    if cached is None or now - cached.fetched_at > SNAPSHOT_TTL_MS:
        return None
    return cached.snapshot


def _reason_not_direct(
    key: RouteKey, cached: CachedSnapshot | None, local_block_until: int | None, now: int
) -> Rule | None:
    """The first rule that rules direct out, or None when a fresh verdict says direct works."""
    if key in PINNED_TO_RELAY:
        return Rule.PINNED
    if cached is None:
        return Rule.NO_SNAPSHOT
    if now - cached.fetched_at > SNAPSHOT_TTL_MS:
        return Rule.STALE_SNAPSHOT
    verdict = _route_evidence(cached.snapshot, key, now)
    if verdict is None:
        return Rule.NO_VERDICT
    if not verdict.direct:
        return Rule.DIRECT_FALSE
    if verdict.blocked_until is not None and verdict.blocked_until > now:
        return Rule.BLOCKED
    if now - verdict.checked_at > VERDICT_MAX_AGE_MS:
        return Rule.VERDICT_TOO_OLD
    if local_block_until is not None and local_block_until > now:
        return Rule.LOCAL_BLOCK
    return None


def route_known_bad(snapshot: Snapshot | None, key: RouteKey, now: int) -> bool:
    """The stored verdict says direct does not work, from a check or failure within 10 minutes."""
    verdict = _route_evidence(snapshot, key, now)
    if verdict is None:
        return False
    if verdict.blocked_until is not None and verdict.blocked_until > now:
        return True
    return not verdict.direct and now - _last_evidence_at(verdict) <= VERDICT_MAX_AGE_MS


def relay_known_unhealthy(snapshot: Snapshot | None, group: RelayGroup, now: int) -> bool:
    """The group's relay failed its last health check, and that check is within 10 minutes."""
    check = _relay_evidence(snapshot, group, now)
    return check is not None and not check.healthy and now - check.checked_at <= VERDICT_MAX_AGE_MS


def _route_evidence(snapshot: Snapshot | None, key: RouteKey, now: int) -> RouteVerdict | None:
    """The key's verdict, unless it is missing or stamped in the future (a skewed clock or a hand edit).

    A block always ends `COOLDOWN_MS` after its failure, so one ending later than that past the skew
    allowance was stamped in the future too.
    """
    verdict = snapshot.routes.get(key) if snapshot is not None else None
    if verdict is None:
        return None
    latest = now + MAX_CLOCK_SKEW_MS
    if verdict.checked_at > latest or (verdict.failed_at or 0) > latest:
        return None
    if (verdict.blocked_until or 0) > latest + COOLDOWN_MS:
        return None
    return verdict


def _relay_evidence(snapshot: Snapshot | None, group: RelayGroup, now: int) -> RelayCheck | None:
    check = snapshot.relays.get(group) if snapshot is not None else None
    if check is None or check.checked_at > now + MAX_CLOCK_SKEW_MS:
        return None
    return check


def _last_evidence_at(verdict: RouteVerdict) -> int:
    return max(verdict.checked_at, verdict.failed_at or verdict.checked_at)
