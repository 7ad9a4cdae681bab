"""The operator API's wire models: camelCase, epoch ms, optional keys omitted, plain JSON; read back exactly,
or leniently with READ_NEWER."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from functions import core
from functions.core import Reason, RelayCheck, RelayGroup, RouteKey, RouteVerdict, Snapshot
from functions.core.model import OverrideMode
from functions.handlers.wire import READ_NEWER, OverrideRequestBody, RouteHealth, RouteOverride

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


def snapshot_to_wire(snapshot: Snapshot) -> dict[str, Any]:
    return RouteHealth.from_snapshot(snapshot).to_json()


def override_to_wire(override: core.RouteOverride) -> dict[str, Any]:
    return RouteOverride.of(override).to_json()


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
    override = core.RouteOverride(
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
    override = core.RouteOverride(
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
    request = OverrideRequestBody.model_validate_json(
        '{"mode": "force-direct", "reason": "r", "ttlSeconds": 60}', by_name=False
    )
    assert (request.mode, request.reason, request.ttl_seconds) == (OverrideMode.FORCE_DIRECT, "r", 60)
    for whole in ("60.0", "6e1", "600e-1"):  # integers, as JSON Schema counts them
        body = json.dumps({"mode": "force-direct", "reason": "r", "ttlSeconds": "N"}).replace('"N"', whole)
        assert OverrideRequestBody.model_validate_json(body, by_name=False).ttl_seconds == 60
    for body in (
        '{"mode": "force-direct", "reason": "r", "ttlSeconds": 60.5}',
        '{"mode": "force-direct", "reason": "r", "ttlSeconds": "60"}',
        '{"mode": "force-direct", "reason": "r", "ttlSeconds": true}',
        '{"mode": "force-direct", "reason": 1, "ttlSeconds": 60}',
        '{"mode": "off", "reason": "r", "ttlSeconds": 60}',
        '{"mode": "force-direct", "reason": "r", "ttlSeconds": 60, "key": "cu-stock"}',
        '{"mode": "force-direct", "reason": "r", "ttl_seconds": 60}',
    ):
        with pytest.raises(ValidationError):
            OverrideRequestBody.model_validate_json(body, by_name=False)


def test_answers_keep_their_key_order_byte_for_byte() -> None:
    override = core.RouteOverride(
        RouteKey.CU_STOCK, OverrideMode.FORCE_RELAY, "점검", created_at=T0, expires_at=T0 + 60_000
    )
    verdict = RouteVerdict(
        RouteKey.CU_STOCK, False, T0, Reason.UNAVAILABLE, failed_at=T0, blocked_until=T0 + 1
    )
    snapshot = Snapshot(
        routes={RouteKey.CU_STOCK: verdict},
        relays={RelayGroup.DTRYX: RelayCheck(RelayGroup.DTRYX, True, T0, Reason.OK)},
        overrides={RouteKey.CU_STOCK: override},
    )
    times = f'"createdAt":{T0},"expiresAt":{T0 + 60_000}'
    shown = f'"mode":"force-relay","reason":"점검",{times}'
    assert json.dumps(override_to_wire(override), ensure_ascii=False, separators=(",", ":")) == (
        f'{{"key":"cu-stock",{shown}}}'
    )
    assert json.dumps(snapshot_to_wire(snapshot), ensure_ascii=False, separators=(",", ":")) == (
        '{"routes":{"cu-stock":{"key":"cu-stock","direct":false,'
        f'"checkedAt":{T0},"reason":"unavailable","failedAt":{T0},"blockedUntil":{T0 + 1},'
        f'"override":{{{shown}}}}}}},'
        f'"relays":{{"dtryx":{{"group":"dtryx","healthy":true,"checkedAt":{T0},"reason":"ok"}}}},'
        f'"overrides":{{"cu-stock":{{"key":"cu-stock",{shown}}}}}}}'
    )


def newer_answer() -> dict[str, Any]:
    """An answer with what a newer API might add: a field, a route key, a relay group and a reason code."""
    verdict = RouteVerdict(RouteKey.CU_STOCK, True, T0, Reason.OK)
    wire = snapshot_to_wire(Snapshot(routes={RouteKey.CU_STOCK: verdict}))
    wire["routes"]["cu-stock"]["latencyMs"] = 12
    wire["routes"]["cu-stock"]["reason"] = "http-418"
    wire["routes"]["daiso-stock"] = {"key": "daiso-stock", "direct": True, "checkedAt": T0}
    wire["relays"]["lotte"] = {"group": "lotte", "healthy": True, "checkedAt": T0}
    return wire


def test_read_exactly_by_default_anything_unknown_is_refused() -> None:
    with pytest.raises(ValidationError) as refused:
        RouteHealth.model_validate(newer_answer(), by_name=False)
    assert {error["loc"][:2] for error in refused.value.errors()} >= {
        ("routes", "cu-stock"),
        ("routes", "daiso-stock"),
        ("relays", "lotte"),
    }


def test_read_newer_leaves_out_what_this_version_does_not_know() -> None:
    read = RouteHealth.model_validate(newer_answer(), context=READ_NEWER, by_name=False)
    assert read.to_json() == {
        "routes": {"cu-stock": {"key": "cu-stock", "direct": True, "checkedAt": T0}},
        "relays": {},
        "overrides": {},
    }


@pytest.mark.parametrize(
    ("field", "value"),
    [("checkedAt", "1767225600000"), ("checkedAt", 1.5), ("direct", 1), ("direct", "true")],
)
def test_read_newer_still_refuses_a_wrong_type(field: str, value: object) -> None:
    wire = newer_answer()
    wire["routes"]["cu-stock"][field] = value
    with pytest.raises(ValidationError):
        RouteHealth.model_validate(wire, context=READ_NEWER, by_name=False)


def test_the_override_request_is_sent_as_it_is_read() -> None:
    request = {"mode": OverrideMode.FORCE_RELAY, "reason": "점검", "ttlSeconds": 600}
    body = OverrideRequestBody.model_validate(request).to_json()
    assert body == {"mode": "force-relay", "reason": "점검", "ttlSeconds": 600}
    assert OverrideRequestBody.model_validate_json(json.dumps(body), by_name=False).ttl_seconds == 600
