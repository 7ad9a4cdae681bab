"""The operator API's snapshot format: camelCase, epoch ms, optional keys left out (docs/design.md, "Operator
API"); the format existing tooling reads.

`{"routes": {key: {key, direct, checkedAt, reason?, failedAt?, blockedUntil?, override?}},
  "relays": {group: {group, healthy, checkedAt, reason?}}}`

`override` (`{mode, reason, expiresAt, createdAt}`, shown with its route's verdict) is an addition to that
format: an operator override of the route. `PUT /api/health/routes/{key}/override` takes `OverrideRequest`;
it and `DELETE` answer `override_to_wire`.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, StrictStr
from pydantic.alias_generators import to_camel

from functions.core import OverrideMode, RelayCheck, RouteOverride, RouteVerdict, Snapshot
from functions.core.input_rules import whole_number

WholeSeconds = Annotated[StrictInt, BeforeValidator(whole_number)]
"""An integer as JSON Schema has them: `60` or `60.0` (never `60.5`, `"60"` or `true`)."""


def snapshot_to_wire(snapshot: Snapshot) -> dict[str, Any]:
    """Route keys, groups and reasons are string enums: they are their codes in JSON.

    Each override shows with its route's verdict and again under `overrides`, which also holds those of keys
    without a verdict yet (an override steers lookups whether or not the probe has checked its key).
    """
    return {
        "routes": {
            key: _route(verdict, snapshot.overrides.get(key)) for key, verdict in snapshot.routes.items()
        },
        "relays": {group: _camel_case(check) for group, check in snapshot.relays.items()},
        "overrides": {key: override_to_wire(override) for key, override in snapshot.overrides.items()},
    }


def override_to_wire(override: RouteOverride) -> dict[str, Any]:
    """One override as the PUT and DELETE answers show it: `{key, mode, reason, createdAt, expiresAt}`."""
    return _camel_case(override)


class OverrideRequest(BaseModel):
    """The body of `PUT /api/health/routes/{key}/override`: types only; the rules are the core's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: OverrideMode
    reason: StrictStr
    ttl_seconds: WholeSeconds = Field(alias="ttlSeconds")


def _route(verdict: RouteVerdict, override: RouteOverride | None) -> dict[str, Any]:
    """A route's verdict, with the override of it that counts (without repeating the key)."""
    wire = _camel_case(verdict)
    if override is not None:
        wire["override"] = {name: value for name, value in _camel_case(override).items() if name != "key"}
    return wire


def _camel_case(record: RouteVerdict | RelayCheck | RouteOverride) -> dict[str, Any]:
    """The record's fields by their camelCase names; an optional one without a value is left out, never null."""
    return {to_camel(name): value for name, value in asdict(record).items() if value is not None}
