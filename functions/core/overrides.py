"""Operator overrides: force one route key to the relay or to direct for a while (docs/design.md).

An override is a lever over the verdicts, not over the safety rules: the route decision obeys one only from
a fresh snapshot, never sends the pinned key direct, and ignores it without a verdict store. Everything here
is pure: times are epoch milliseconds passed in.
"""

from __future__ import annotations

import dataclasses
import re

from functions.core.input_rules import (
    CONTROL,
    FORMAT_AND_SEPARATORS,
    SURROGATES,
    CrossRule,
    visible_text,
)
from functions.core.model import (
    MAX_CLOCK_SKEW_MS,
    MAX_OVERRIDE_TTL_MS,
    PINNED_TO_RELAY,
    SECOND_MS,
    OverrideMode,
    RouteKey,
    RouteOverride,
    Snapshot,
)

MAX_REASON_CHARS = 200
MAX_TTL_SECONDS = MAX_OVERRIDE_TTL_MS // SECOND_MS
REASON_PATTERN = visible_text([*CONTROL, *FORMAT_AND_SEPARATORS])
"""A reason as sent (stored stripped): control and format characters (bidi overrides, zero-width...) and line
separators could rewrite what an operator's terminal shows, and the reason is shown back to operators, so it
holds none; nor is it blank."""
# The same, and no lone surrogate either: JSON can't carry one to the API, and the pattern can't name one.
_REASON = re.compile(visible_text([*CONTROL, *FORMAT_AND_SEPARATORS, SURROGATES]))
PINNED_NEVER_DIRECT = CrossRule(
    "pinnedNeverDirect", "force-direct is refused on a key pinned to the relay (gs25-stock)"
)
"""Plain text: `route-health ops` shows it in a terminal."""


class OverrideRefused(ValueError):
    """An override request that breaks a rule; `field` names the request field at fault (wire name)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def new_override(
    key: RouteKey, mode: OverrideMode, reason: str, ttl_seconds: int, *, now: int
) -> RouteOverride:
    """The override an operator asks for at `now`, or OverrideRefused.

    It expires `ttl_seconds` after `now`, cut to the whole second (DynamoDB's TTL attribute holds seconds).
    """
    if mode is OverrideMode.FORCE_DIRECT and key in PINNED_TO_RELAY:
        raise OverrideRefused("mode", PINNED_NEVER_DIRECT.text)
    if len(reason) > MAX_REASON_CHARS:
        raise OverrideRefused("reason", f"at most {MAX_REASON_CHARS} characters")
    if not _REASON.fullmatch(reason):
        raise OverrideRefused(
            "reason", "a reason is required, without control, format or line-separator characters"
        )
    reason = reason.strip()
    if not 1 <= ttl_seconds <= MAX_TTL_SECONDS:
        raise OverrideRefused("ttlSeconds", f"between 1 and {MAX_TTL_SECONDS} seconds (24 h)")
    expires_at = (now + ttl_seconds * SECOND_MS) // SECOND_MS * SECOND_MS
    return RouteOverride(key, mode, reason, created_at=now, expires_at=expires_at)


def is_active(override: RouteOverride, now: int) -> bool:
    """Unexpired at `now`, and credible: not created more than 60 s ahead of `now` (a skewed clock) and not
    lasting longer than an override may (a hand edit). Expired overrides stop counting at once, whenever
    DynamoDB's TTL gets to remove them."""
    return (
        override.created_at <= now + MAX_CLOCK_SKEW_MS
        and now < override.expires_at <= override.created_at + MAX_OVERRIDE_TTL_MS
    )


def active_override(snapshot: Snapshot | None, key: RouteKey, now: int) -> RouteOverride | None:
    override = snapshot.overrides.get(key) if snapshot is not None else None
    return override if override is not None and is_active(override, now) else None


def with_active_overrides(snapshot: Snapshot, now: int) -> Snapshot:
    """The snapshot without the overrides that no longer count (what operators are shown)."""
    active = {key: override for key, override in snapshot.overrides.items() if is_active(override, now)}
    return dataclasses.replace(snapshot, overrides=active)
