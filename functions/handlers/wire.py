"""The operator API's snapshot format: camelCase, epoch ms, optional keys left out (docs/design.md, "Operator
API"); the format existing tooling reads.

`{"routes": {key: {key, direct, checkedAt, reason?, failedAt?, blockedUntil?}},
  "relays": {group: {group, healthy, checkedAt, reason?}}}`
"""

from __future__ import annotations

from typing import Any

from functions.core import RelayCheck, RouteVerdict, Snapshot


def snapshot_to_wire(snapshot: Snapshot) -> dict[str, Any]:
    """Route keys, groups and reasons are string enums: they are their codes in JSON."""
    return {
        "routes": {key: _route(verdict) for key, verdict in snapshot.routes.items()},
        "relays": {group: _relay(check) for group, check in snapshot.relays.items()},
    }


def _route(verdict: RouteVerdict) -> dict[str, Any]:
    return _present(
        key=verdict.key,
        direct=verdict.direct,
        checkedAt=verdict.checked_at,
        reason=verdict.reason,
        failedAt=verdict.failed_at,
        blockedUntil=verdict.blocked_until,
    )


def _relay(check: RelayCheck) -> dict[str, Any]:
    return _present(
        group=check.group,
        healthy=check.healthy,
        checkedAt=check.checked_at,
        reason=check.reason,
    )


def _present(**fields: Any) -> dict[str, Any]:
    """Only the fields that have a value: an optional key is left out, never null."""
    return {name: value for name, value in fields.items() if value is not None}
