"""The operator API's snapshot (written by functions/handlers/wire.py) read back into the core's `Snapshot`.

Lenient where a newer API may say more (unknown fields, keys, groups or reason codes are left out), strict
where a wrong type would mislead (times, booleans).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, StrictBool, StrictInt, StrictStr, ValidationError
from pydantic.alias_generators import to_camel

from functions.core.model import (
    OverrideMode,
    Reason,
    RelayCheck,
    RelayGroup,
    RouteKey,
    RouteOverride,
    RouteVerdict,
    Snapshot,
)
from ops_cli.connection import CliError

_REASONS = {reason.value: reason for reason in Reason}


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, frozen=True)


class _Override(_Wire):
    mode: OverrideMode
    reason: StrictStr
    expires_at: StrictInt
    created_at: StrictInt


class _Route(_Wire):
    direct: StrictBool
    checked_at: StrictInt
    reason: StrictStr | None = None
    failed_at: StrictInt | None = None
    blocked_until: StrictInt | None = None
    override: _Override | None = None


class _Relay(_Wire):
    healthy: StrictBool
    checked_at: StrictInt
    reason: StrictStr | None = None


class _Snapshot(_Wire):
    routes: dict[str, _Route]
    relays: dict[str, _Relay]
    overrides: dict[str, _Override] = {}
    """Every active override, also of keys without a verdict (absent from an API older than this CLI)."""


def snapshot_from_wire(data: object) -> Snapshot:
    try:
        wire = _Snapshot.model_validate(data)
    except ValidationError:
        raise CliError(
            "the API answered a snapshot this CLI cannot read (is the CLI older than the API?)"
        ) from None
    routes = {RouteKey(name): route for name, route in wire.routes.items() if name in set(RouteKey)}
    return Snapshot(
        routes={
            key: RouteVerdict(
                key,
                r.direct,
                r.checked_at,
                _reason(r.reason),
                failed_at=r.failed_at,
                blocked_until=r.blocked_until,
            )
            for key, r in routes.items()
        },
        relays={
            RelayGroup(name): RelayCheck(RelayGroup(name), r.healthy, r.checked_at, _reason(r.reason))
            for name, r in wire.relays.items()
            if name in set(RelayGroup)
        },
        overrides={
            key: RouteOverride(key, o.mode, o.reason, created_at=o.created_at, expires_at=o.expires_at)
            for key, o in _overrides(wire).items()
        },
    )


def _overrides(wire: _Snapshot) -> dict[RouteKey, _Override]:
    with_verdicts = {key: o for key, route in wire.routes.items() if (o := route.override) is not None}
    every = {**with_verdicts, **wire.overrides}
    return {RouteKey(key): o for key, o in every.items() if key in set(RouteKey)}


def _reason(code: str | None) -> Reason | None:
    return None if code is None else _REASONS.get(code)
