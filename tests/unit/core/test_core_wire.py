"""The snapshot wire format: the seed's camelCase shape, optional keys omitted, strict on the way in."""

from __future__ import annotations

import json
from typing import Any

import pytest
from core_fakes import T0, relay, route, snapshot_of
from hypothesis import given
from hypothesis import strategies as st

from functions.core import (
    Reason,
    RelayCheck,
    RelayGroup,
    RouteKey,
    RouteVerdict,
    Snapshot,
    snapshot_from_wire,
    snapshot_to_wire,
)

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


@given(snapshots())
def test_round_trip_through_json(snapshot: Snapshot) -> None:
    wire = json.loads(json.dumps(snapshot_to_wire(snapshot)))
    assert snapshot_from_wire(wire) == snapshot


def test_the_seed_shape_with_optional_keys_omitted() -> None:
    snapshot = snapshot_of(
        route(
            RouteKey.CU_STOCK,
            direct=False,
            reason=Reason.UNAVAILABLE,
            failed_at=T0,
            blocked_until=T0 + 300_000,
        ),
        route(RouteKey.OY_FIND_STORE),
        RelayCheck(RelayGroup.DTRYX, True, T0),
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
    }


def test_empty_snapshot() -> None:
    assert snapshot_to_wire(Snapshot()) == {"routes": {}, "relays": {}}
    assert snapshot_from_wire({"routes": {}, "relays": {}}) == Snapshot()


def valid_wire() -> dict[str, Any]:
    return snapshot_to_wire(snapshot_of(route(RouteKey.CU_STOCK), relay(RelayGroup.CONVENIENCE)))


@pytest.mark.parametrize(
    "corrupt",
    [
        pytest.param(
            lambda w: w["routes"].update({"daiso-stock": {"key": "daiso-stock"}}), id="unknown-route-key"
        ),
        pytest.param(
            lambda w: w["relays"].update({"mars": w["relays"].pop("convenience")}), id="unknown-group"
        ),
        pytest.param(lambda w: w["routes"]["cu-stock"].update(reason="teapot"), id="unknown-reason"),
        pytest.param(lambda w: w["relays"]["convenience"].update(reason="http"), id="legacy-reason"),
        pytest.param(lambda w: w["routes"]["cu-stock"].update(body="<html>"), id="unknown-field"),
        pytest.param(lambda w: w.update(extra={}), id="unknown-top-level-key"),
        pytest.param(lambda w: w.pop("relays"), id="missing-relays"),
        pytest.param(lambda w: w["routes"]["cu-stock"].pop("checkedAt"), id="missing-checked-at"),
        pytest.param(lambda w: w["routes"]["cu-stock"].update(direct="true"), id="string-bool"),
        pytest.param(lambda w: w["routes"]["cu-stock"].update(checkedAt="1700000000000"), id="string-time"),
        pytest.param(lambda w: w["routes"]["cu-stock"].update(key="cu-store"), id="mismatched-key"),
        pytest.param(lambda w: w["relays"]["convenience"].update(group="dtryx"), id="mismatched-group"),
    ],
)
def test_from_wire_rejects(corrupt: Any) -> None:
    wire = valid_wire()
    corrupt(wire)
    with pytest.raises(ValueError):  # noqa: PT011 - pydantic's ValidationError is a ValueError
        snapshot_from_wire(wire)


def test_from_wire_rejects_a_non_object() -> None:
    with pytest.raises(ValueError):  # noqa: PT011
        snapshot_from_wire([])
