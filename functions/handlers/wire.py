"""The operator API's snapshot format: camelCase, epoch ms, optional keys left out (docs/design.md, "Operator
API"); the format existing tooling reads.

`{"routes": {key: {key, direct, checkedAt, reason?, failedAt?, blockedUntil?, override?}},
  "relays": {group: {group, healthy, checkedAt, reason?}}}`

`override` (`{mode, reason, expiresAt, createdAt}`, shown with its route's verdict) is an addition to that
format: an operator override of the route. `PUT /api/health/routes/{key}/override` takes `OverrideRequest`;
it and `DELETE` answer `override_to_wire`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr

from functions.core import OverrideMode, RelayCheck, RouteOverride, RouteVerdict, Snapshot


def snapshot_to_wire(snapshot: Snapshot) -> dict[str, Any]:
    """Route keys, groups and reasons are string enums: they are their codes in JSON."""
    return {
        "routes": {
            key: _route(verdict, snapshot.overrides.get(key)) for key, verdict in snapshot.routes.items()
        },
        "relays": {group: _relay(check) for group, check in snapshot.relays.items()},
    }


def override_to_wire(override: RouteOverride) -> dict[str, Any]:
    """One override as the PUT and DELETE answers show it: `{key, mode, reason, expiresAt, createdAt}`."""
    return {"key": override.key, **_override(override)}


class OverrideRequest(BaseModel):
    """The body of `PUT /api/health/routes/{key}/override`: types only; the rules are the core's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: OverrideMode
    reason: StrictStr
    ttl_seconds: StrictInt = Field(alias="ttlSeconds")


def _route(verdict: RouteVerdict, override: RouteOverride | None) -> dict[str, Any]:
    return _present(
        key=verdict.key,
        direct=verdict.direct,
        checkedAt=verdict.checked_at,
        reason=verdict.reason,
        failedAt=verdict.failed_at,
        blockedUntil=verdict.blocked_until,
        override=None if override is None else _override(override),
    )


def _override(override: RouteOverride) -> dict[str, Any]:
    return {
        "mode": override.mode,
        "reason": override.reason,
        "expiresAt": override.expires_at,
        "createdAt": override.created_at,
    }


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
