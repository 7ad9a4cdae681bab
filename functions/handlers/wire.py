"""The operator API's wire format (docs/design.md, "Operator API"): camelCase, epoch ms, optional keys left
out. One set of models: the operator function answers with them, the OpenAPI document shows them, and
`route-health ops` reads them back (ops_cli/snapshot.py).

Read exactly by default; under the validation context `READ_NEWER` (an answer of a possibly newer API), what
this version does not know (fields, keys, groups, reason codes) is left out instead of refused. Types stay
strict either way.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Final, Self

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationInfo,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic.json_schema import SkipJsonSchema

from functions import core
from functions.core import OverrideMode, Reason, RelayGroup, RouteKey
from functions.core.input_rules import whole_number
from functions.core.overrides import MAX_REASON_CHARS, MAX_TTL_SECONDS, REASON_PATTERN

READ_NEWER: Final = {"read_newer": True}
"""The validation context for reading an answer of a newer API: unknown fields, keys and codes left out."""


def _reading_newer(info: ValidationInfo) -> bool:
    return isinstance(info.context, dict) and bool(info.context.get("read_newer"))


def _known(codes: type[StrEnum]) -> BeforeValidator:
    """Reading newer: a map's entries under keys that are not `codes`, or a code that is not one, left out."""
    values = frozenset(code.value for code in codes)

    def known(value: object, info: ValidationInfo) -> object:
        if not _reading_newer(info):
            return value
        if isinstance(value, dict):
            return {key: entry for key, entry in value.items() if key in values}
        return None if isinstance(value, str) and value not in values else value

    return BeforeValidator(known)


class _Wire(BaseModel):
    # Python names build a model; JSON is read by the wire names only (`by_name=False`).
    model_config = ConfigDict(alias_generator=to_camel, validate_by_name=True, extra="forbid", frozen=True)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data by the wire names; an optional field without a value is left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


class _Answer(_Wire):
    """Part of an answer: what a reader gets from the API, maybe from a newer version."""

    @model_validator(mode="before")
    @classmethod
    def _known_fields(cls, data: Any, info: ValidationInfo) -> Any:
        if not isinstance(data, dict) or not _reading_newer(info):
            return data
        names = {field.alias for field in cls.model_fields.values()}
        return {name: value for name, value in data.items() if name in names}

    @classmethod
    def of(cls, record: object) -> Self:
        """The core's record (the same fields by their Python names) as shown on the wire."""
        return cls.model_validate(record, from_attributes=True)


# The reason is the core's to check (stripped first, with its own messages): documented, not validated here.
OverrideReason = Annotated[
    StrictStr, Field(json_schema_extra={"minLength": 1, "maxLength": MAX_REASON_CHARS})
]
OptionalReason = Annotated[Reason | SkipJsonSchema[None], _known(Reason)]
OptionalTime = StrictInt | SkipJsonSchema[None]


class OverrideRequestBody(_Wire):
    """The body of PUT: the reason is shown to every operator (never a secret), without the whitespace around
    it. Read by its wire names only, also by Powertools' validation (which has no `by_name=False`)."""

    model_config = ConfigDict(validate_by_name=False)

    mode: OverrideMode
    reason: Annotated[
        StrictStr,
        Field(json_schema_extra={"minLength": 1, "maxLength": MAX_REASON_CHARS, "pattern": REASON_PATTERN}),
    ]
    # JSON Schema's integer: `60` or `60.0` (never `60.5`, `"60"` or `true`).
    ttl_seconds: Annotated[
        StrictInt,
        BeforeValidator(whole_number),
        Field(json_schema_extra={"minimum": 1, "maximum": MAX_TTL_SECONDS}),
    ]


class ActiveOverride(_Answer):
    """An operator override that counts now. Times: epoch ms."""

    mode: OverrideMode
    reason: OverrideReason
    created_at: StrictInt
    expires_at: StrictInt


class _OfKey(_Answer):
    key: RouteKey


class RouteOverride(ActiveOverride, _OfKey):  # `_OfKey` last: its key comes first, as answers always had it
    """The override a PUT stored or a DELETE removed."""


class RouteVerdict(_Answer):
    """A route's stored verdict; optional keys are left out, never null. Times: epoch ms."""

    key: RouteKey
    direct: StrictBool
    checked_at: StrictInt
    reason: OptionalReason = None
    failed_at: OptionalTime = None
    blocked_until: OptionalTime = None
    override: ActiveOverride | SkipJsonSchema[None] = None


class RelayVerdict(_Answer):
    group: RelayGroup
    healthy: StrictBool
    checked_at: StrictInt
    reason: OptionalReason = None


class RouteHealth(_Answer):
    """The stored verdicts (a key or group without one is absent) and every override that counts now, with or
    without a verdict for its key."""

    # Always sent: `overrides` defaults only for a reader of an API older than the map.
    model_config = ConfigDict(json_schema_serialization_defaults_required=True)

    routes: Annotated[dict[RouteKey, RouteVerdict], _known(RouteKey)]
    relays: Annotated[dict[RelayGroup, RelayVerdict], _known(RelayGroup)]
    overrides: Annotated[dict[RouteKey, RouteOverride], _known(RouteKey)] = Field(default_factory=dict)

    @classmethod
    def from_snapshot(cls, snapshot: core.Snapshot) -> RouteHealth:
        """Each override shows with its route's verdict and again under `overrides`, which also holds those of
        keys without a verdict yet (an override steers lookups whether or not the probe has checked its key)."""
        overrides = snapshot.overrides
        return cls(
            routes={key: _route(verdict, overrides.get(key)) for key, verdict in snapshot.routes.items()},
            relays={group: RelayVerdict.of(check) for group, check in snapshot.relays.items()},
            overrides={key: RouteOverride.of(override) for key, override in overrides.items()},
        )


def _route(verdict: core.RouteVerdict, override: core.RouteOverride | None) -> RouteVerdict:
    shown = RouteVerdict.of(verdict)
    return shown if override is None else shown.model_copy(update={"override": ActiveOverride.of(override)})
