"""What `route-health ops routes` shows: every route's path now, its verdict, its override; the relays below.

"Path now" is the route decision itself (functions/core) on the snapshot just read, as a lookup container
with a fresh snapshot and no local block of its own would take it; its rule is the `rule` of the lookup
function's "route decided" log lines. Times are the server's clock, shown in local time and relative to now.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, tzinfo

from functions.core import CachedSnapshot, Path, RouteKey, decide
from functions.core.model import MINUTE_MS, SECOND_MS, RelayGroup, Snapshot
from functions.core.overrides import active_override
from ops_cli.untrusted import printable

HOUR_MS = 60 * MINUTE_MS
DAY_MS = 24 * HOUR_MS


def routes_report(snapshot: Snapshot, *, now: int, tz: tzinfo) -> str:
    clock = _Clock(now, tz)
    cached = CachedSnapshot(snapshot, fetched_at=now)
    rows = []
    for key in RouteKey:
        decision = decide(
            key, cached=cached, local_block_until=None, now=now, store_configured=True, relay_configured=True
        )
        verdict = snapshot.routes.get(key)
        override = active_override(snapshot, key, now)
        blocked_until = verdict.blocked_until if verdict is not None else None
        rows.append(
            (
                key.value,
                "503" if decision.path is Path.UNAVAILABLE else decision.path.value,
                decision.rule.value,
                (verdict.reason or "-") if verdict is not None else "no verdict",
                clock.at(verdict.checked_at) if verdict is not None else "-",
                clock.at(verdict.failed_at) if verdict is not None and verdict.failed_at else "-",
                clock.at(blocked_until) if blocked_until is not None and blocked_until > now else "-",
                f"{override.mode.value}, {clock.left(override.expires_at)}" if override is not None else "-",
            )
        )
    relays = [
        (
            group.value,
            "-" if check is None else ("yes" if check.healthy else "NO"),
            "-" if check is None else (check.reason or "-"),
            "never checked" if check is None else clock.at(check.checked_at),
        )
        for group in RelayGroup
        for check in [snapshot.relays.get(group)]
    ]
    sections = [
        _table(
            ("ROUTE", "PATH NOW", "RULE", "REASON", "CHECKED", "FAILED", "BLOCKED UNTIL", "OVERRIDE"), rows
        ),
        _table(("RELAY", "HEALTHY", "REASON", "CHECKED"), relays),
    ]
    overrides = [
        (o.key.value, o.mode.value, clock.at(o.expires_at), clock.at(o.created_at), o.reason)
        for key in RouteKey
        if (o := active_override(snapshot, key, now)) is not None
    ]
    if overrides:
        sections.append(_table(("OVERRIDDEN", "MODE", "UNTIL", "SET", "REASON"), overrides))
    sections.append(
        f"As of {clock.stamp(now)} (server clock). PATH NOW: what a lookup chooses with a fresh snapshot; a "
        "container may act on one up to 30 s old, or on a live failure it saw itself (5 min)."
    )
    return "\n\n".join(sections)


def when(at: int, *, now: int, tz: tzinfo) -> str:
    """`14:03:12 (3 min ago)`: local time (with the date when not today) and how far from `now`."""
    return _Clock(now, tz).at(at)


def duration(ms: int) -> str:
    """`2m 10s`, `45s`, `1h 5m`: a span to come, rounded up to the second."""
    seconds = max(0, -(-ms // SECOND_MS))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    if hours:
        return f"{hours}h {minutes}m" if minutes else f"{hours}h"
    if minutes:
        return f"{minutes}m {seconds}s" if seconds else f"{minutes}m"
    return f"{seconds}s"


class _Clock:
    def __init__(self, now: int, tz: tzinfo) -> None:
        self._now = now
        self._tz = tz

    def _local(self, at: int) -> datetime:
        return datetime.fromtimestamp(at / SECOND_MS, tz=self._tz)

    def stamp(self, at: int) -> str:
        return self._local(at).strftime("%Y-%m-%d %H:%M:%S %Z").strip()

    def at(self, at: int) -> str:
        """Local time (with the date when it is not today's) and how long ago or ahead."""
        local, today = self._local(at), self._local(self._now).date()
        shown = local.strftime("%H:%M:%S") if local.date() == today else local.strftime("%m-%d %H:%M")
        return f"{shown} ({_relative(at - self._now)})"

    def left(self, at: int) -> str:
        return f"{duration(at - self._now)} left"


def _relative(delta_ms: int) -> str:
    # The server's clock comes in whole seconds: less than a second ahead of it is "now", not the future.
    ahead = delta_ms >= SECOND_MS
    span = delta_ms if ahead else max(0, -delta_ms)
    if span < MINUTE_MS:
        amount = f"{span // SECOND_MS} s"
    elif span < HOUR_MS:
        amount = f"{span // MINUTE_MS} min"
    elif span < 2 * DAY_MS:
        minutes = span % HOUR_MS // MINUTE_MS
        amount = f"{span // HOUR_MS} h" + (f" {minutes} min" if minutes else "")
    else:
        amount = f"{span // DAY_MS} d"
    return f"in {amount}" if ahead else f"{amount} ago"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    # Reasons are operators' text as the API sent it: a control character in one shows as an escape.
    cells = [[printable(cell) for cell in row] for row in rows]
    widths = [max(len(cell) for cell in column) for column in zip(header, *cells, strict=True)]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in (header, *cells)
    )
