"""The operator API's snapshot format: camelCase, epoch ms, optional keys omitted, plain JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from functions.core import Reason, RelayCheck, RelayGroup, RouteKey, RouteVerdict, Snapshot
from functions.core.model import OverrideMode, RouteOverride
from functions.handlers.wire import OverrideRequest, override_to_wire, snapshot_to_wire

T0 = 1_767_225_600_000
times = st.integers(min_value=0, max_value=2**53)
reasons = st.none() | st.sampled_from(list(Reason))


@st.composite
def snapshots(draw: st.DrawFn) -> Snapshot:
    routes = {
        key: RouteVerdict(
            key,
            draw(st.booleans()),
            draw(times),
            draw(reasons),
            draw(st.none() | times),
            draw(st.none() | times),
        )
        for key in draw(st.sets(st.sampled_from(list(RouteKey))))
    }
    relays = {
        group: RelayCheck(group, draw(st.booleans()), draw(times), draw(reasons))
        for group in draw(st.sets(st.sampled_from(list(RelayGroup))))
    }
    return Snapshot(routes=routes, relays=relays)


WIRE_NAMES = {
    "key": "key",
    "group": "group",
    "direct": "direct",
    "healthy": "healthy",
    "checkedAt": "checked_at",
    "reason": "reason",
    "failedAt": "failed_at",
    "blockedUntil": "blocked_until",
}
"""Every field of the operator format, and the verdict attribute it carries."""


def expected(record: RouteVerdict | RelayCheck) -> dict[str, Any]:
    fields = {wire: getattr(record, name, None) for wire, name in WIRE_NAMES.items()}
    return {wire: value for wire, value in fields.items() if value is not None}


@given(snapshots())
def test_every_field_in_camel_case_through_json(snapshot: Snapshot) -> None:
    wire = json.loads(json.dumps(snapshot_to_wire(snapshot)))
    assert wire == {
        "routes": {key.value: expected(verdict) for key, verdict in snapshot.routes.items()},
        "relays": {group.value: expected(check) for group, check in snapshot.relays.items()},
        "overrides": {},
    }


def test_the_operator_shape_with_optional_keys_omitted() -> None:
    snapshot = Snapshot(
        routes={
            RouteKey.CU_STOCK: RouteVerdict(
                RouteKey.CU_STOCK, False, T0, Reason.UNAVAILABLE, failed_at=T0, blocked_until=T0 + 300_000
            ),
            RouteKey.OY_FIND_STORE: RouteVerdict(RouteKey.OY_FIND_STORE, True, T0, Reason.OK),
        },
        relays={RelayGroup.DTRYX: RelayCheck(RelayGroup.DTRYX, True, T0)},
    )
    assert snapshot_to_wire(snapshot) == {
        "routes": {
            "cu-stock": {
                "key": "cu-stock",
                "direct": False,
                "checkedAt": T0,
                "reason": "unavailable",
                "failedAt": T0,
                "blockedUntil": T0 + 300_000,
            },
            "oy-find-store": {"key": "oy-find-store", "direct": True, "checkedAt": T0, "reason": "ok"},
        },
        "relays": {"dtryx": {"group": "dtryx", "healthy": True, "checkedAt": T0}},
        "overrides": {},
    }


def test_empty_snapshot() -> None:
    assert snapshot_to_wire(Snapshot()) == {"routes": {}, "relays": {}, "overrides": {}}


def test_an_override_shows_in_its_routes_entry_and_nothing_else_changes() -> None:
    verdict = RouteVerdict(RouteKey.CU_STOCK, True, T0, Reason.OK)
    override = RouteOverride(
        RouteKey.CU_STOCK, OverrideMode.FORCE_RELAY, "점검", created_at=T0, expires_at=T0 + 60_000
    )
    plain = snapshot_to_wire(Snapshot(routes={RouteKey.CU_STOCK: verdict}))
    wire = json.loads(
        json.dumps(
            snapshot_to_wire(
                Snapshot(routes={RouteKey.CU_STOCK: verdict}, overrides={RouteKey.CU_STOCK: override})
            )
        )
    )
    assert wire["routes"]["cu-stock"] == {
        **plain["routes"]["cu-stock"],
        "override": {"mode": "force-relay", "reason": "점검", "expiresAt": T0 + 60_000, "createdAt": T0},
    }
    assert json.loads(json.dumps(override_to_wire(override))) == {
        "key": "cu-stock",
        "mode": "force-relay",
        "reason": "점검",
        "expiresAt": T0 + 60_000,
        "createdAt": T0,
    }


def test_an_override_of_a_key_without_a_verdict_is_shown_under_overrides() -> None:
    override = RouteOverride(
        RouteKey.DTRYX_MOVIES,
        OverrideMode.FORCE_DIRECT,
        "relay host moving",
        created_at=T0,
        expires_at=T0 + 1,
    )
    wire = json.loads(json.dumps(snapshot_to_wire(Snapshot(overrides={RouteKey.DTRYX_MOVIES: override}))))
    assert wire == {
        "routes": {},
        "relays": {},
        "overrides": {"dtryx-movies": json.loads(json.dumps(override_to_wire(override)))},
    }


def test_the_override_request_takes_exactly_mode_reason_and_whole_ttl_seconds() -> None:
    request = OverrideRequest.model_validate_json('{"mode": "force-direct", "reason": "r", "ttlSeconds": 60}')
    assert (request.mode, request.reason, request.ttl_seconds) == (OverrideMode.FORCE_DIRECT, "r", 60)
    for whole in ("60.0", "6e1", "600e-1"):  # integers, as JSON Schema counts them
        body = json.dumps({"mode": "force-direct", "reason": "r", "ttlSeconds": "N"}).replace('"N"', whole)
        assert OverrideRequest.model_validate_json(body).ttl_seconds == 60
    for body in (
        '{"mode": "force-direct", "reason": "r", "ttlSeconds": 60.5}',
        '{"mode": "force-direct", "reason": "r", "ttlSeconds": "60"}',
        '{"mode": "force-direct", "reason": "r", "ttlSeconds": true}',
        '{"mode": "force-direct", "reason": 1, "ttlSeconds": 60}',
        '{"mode": "off", "reason": "r", "ttlSeconds": 60}',
        '{"mode": "force-direct", "reason": "r", "ttlSeconds": 60, "key": "cu-stock"}',
    ):
        with pytest.raises(ValidationError):
            OverrideRequest.model_validate_json(body)
