"""The snapshot's JSON wire format (the seed's `RouteSnapshot`): camelCase, epoch ms, optional keys omitted.

`{"routes": {key: {key, direct, checkedAt, reason?, failedAt?, blockedUntil?}},
  "relays": {group: {group, healthy, checkedAt, reason?}}}`
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, StrictBool, StrictInt, model_validator
from pydantic.alias_generators import to_camel

from functions.core.model import Reason, RelayCheck, RelayGroup, RouteKey, RouteVerdict, Snapshot


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True)


class _WireRoute(_Wire):
    key: RouteKey
    direct: StrictBool
    checked_at: StrictInt
    reason: Reason | None = None
    failed_at: StrictInt | None = None
    blocked_until: StrictInt | None = None


class _WireRelay(_Wire):
    group: RelayGroup
    healthy: StrictBool
    checked_at: StrictInt
    reason: Reason | None = None


class _WireSnapshot(_Wire):
    routes: dict[RouteKey, _WireRoute]
    relays: dict[RelayGroup, _WireRelay]

    @model_validator(mode="after")
    def _entries_match_their_keys(self) -> _WireSnapshot:
        if any(key != route.key for key, route in self.routes.items()):
            raise ValueError("a route entry's key differs from its map key")
        if any(group != relay.group for group, relay in self.relays.items()):
            raise ValueError("a relay entry's group differs from its map key")
        return self


def snapshot_to_wire(snapshot: Snapshot) -> dict[str, Any]:
    wire = _WireSnapshot(
        routes={
            key: _WireRoute(
                key=v.key,
                direct=v.direct,
                checked_at=v.checked_at,
                reason=v.reason,
                failed_at=v.failed_at,
                blocked_until=v.blocked_until,
            )
            for key, v in snapshot.routes.items()
        },
        relays={
            group: _WireRelay(group=r.group, healthy=r.healthy, checked_at=r.checked_at, reason=r.reason)
            for group, r in snapshot.relays.items()
        },
    )
    return wire.model_dump(mode="json", by_alias=True, exclude_none=True)


def snapshot_from_wire(data: object) -> Snapshot:
    """Parse and validate the wire format; raises ValueError on unknown keys, groups, reasons or fields."""
    wire = _WireSnapshot.model_validate(data)
    return Snapshot(
        routes={
            key: RouteVerdict(
                key=r.key,
                direct=r.direct,
                checked_at=r.checked_at,
                reason=r.reason,
                failed_at=r.failed_at,
                blocked_until=r.blocked_until,
            )
            for key, r in wire.routes.items()
        },
        relays={
            group: RelayCheck(group=r.group, healthy=r.healthy, checked_at=r.checked_at, reason=r.reason)
            for group, r in wire.relays.items()
        },
    )
