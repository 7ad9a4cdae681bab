"""Operator overrides through the real ops and probe handlers, on moto: PUT/DELETE, GET, audit, the gauge."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

import pytest

from functions.adapters.secrets import Secrets
from functions.core import DIRECT_PROBED
from functions.core.model import SECOND_MS
from functions.core.overrides import PINNED_NEVER_DIRECT
from tests.integration.conftest import OPERATOR_AUTH, TEST_SECRET_VALUES, Lambdas, error_body
from tests.support.telemetry import TelemetryOutput

OVERRIDE = "/api/health/routes/cu-stock/override"
RELAY_FOR_AN_HOUR = {"mode": "force-relay", "reason": "CU 점검 02:00-04:00", "ttlSeconds": 3600}


@pytest.fixture
def ops(lambdas: Lambdas) -> Callable[..., tuple[int, Any]]:
    """ops(method, path=OVERRIDE, body=None, **operator) -> (status, JSON body), on a container built here."""
    lambdas.deploy()

    def call(method: str, path: str = OVERRIDE, body: object = None, **operator: Any) -> tuple[int, Any]:
        answer = lambdas.operator(method, path, body=body, **operator)
        return answer.status, answer.body

    return call


def no_override_shown(data: dict[str, Any]) -> bool:
    return data["overrides"] == {} and not any("override" in route for route in data["routes"].values())


# --- PUT and DELETE ------------------------------------------------------------------------------------


def test_put_stores_the_override_and_answers_it(ops: Any, clock: Any) -> None:
    status, body = ops("PUT", body=RELAY_FOR_AN_HOUR)
    assert status == 200
    assert body == {
        "success": True,
        "data": {
            "key": "cu-stock",
            "mode": "force-relay",
            "reason": "CU 점검 02:00-04:00",
            "createdAt": clock(),
            "expiresAt": clock() + 3600 * SECOND_MS,  # the tests' NOW is a whole second
        },
    }


@pytest.mark.parametrize("ttl_seconds", ["2793.0", "2.793e3", "2793"])
def test_ttl_seconds_is_any_number_json_schema_calls_an_integer(
    ops: Any, clock: Any, ttl_seconds: str
) -> None:
    body = json.dumps({**RELAY_FOR_AN_HOUR, "reason": "  padded  "}).replace(
        '"ttlSeconds": 3600', f'"ttlSeconds": {ttl_seconds}'
    )
    status, answer = ops("PUT", body=body)
    assert status == 200, answer
    assert answer["data"]["expiresAt"] == clock() + 2793 * SECOND_MS
    assert answer["data"]["reason"] == "padded"  # stored without the whitespace around it


def test_get_shows_the_override_with_its_route_until_it_expires(ops: Any, clock: Any) -> None:
    assert ops("POST", "/api/health/routes")[0] == 200  # verdicts for every route
    _, before = ops("GET", "/api/health/routes")
    ops("PUT", body={**RELAY_FOR_AN_HOUR, "ttlSeconds": 60})

    _, during = ops("GET", "/api/health/routes")
    routes = during["data"]["routes"]
    assert routes["cu-stock"] == {
        **before["data"]["routes"]["cu-stock"],
        "override": {
            "mode": "force-relay",
            "reason": "CU 점검 02:00-04:00",
            "expiresAt": clock() + 60 * SECOND_MS,
            "createdAt": clock(),
        },
    }
    assert {key: route for key, route in routes.items() if key != "cu-stock"} == {
        key: route for key, route in before["data"]["routes"].items() if key != "cu-stock"
    }

    clock.advance(60 * SECOND_MS)
    _, after = ops("GET", "/api/health/routes")
    assert after["data"]["routes"]["cu-stock"] == before["data"]["routes"]["cu-stock"]


def test_get_shows_an_override_of_a_key_the_probe_has_not_checked_yet(ops: Any, clock: Any) -> None:
    _, stored = ops("PUT", body=RELAY_FOR_AN_HOUR)  # no probe has run: no verdicts at all
    _, shown = ops("GET", "/api/health/routes")
    assert shown["data"] == {"routes": {}, "relays": {}, "overrides": {"cu-stock": stored["data"]}}


def test_delete_removes_the_override_then_answers_404(ops: Any) -> None:
    _, stored = ops("PUT", body=RELAY_FOR_AN_HOUR)
    assert ops("DELETE") == (200, stored)
    status, body = ops("DELETE")
    assert (status, body["error"]["code"]) == (404, "NO_OVERRIDE")


def test_delete_of_an_expired_override_is_404(ops: Any, clock: Any) -> None:
    ops("PUT", body={**RELAY_FOR_AN_HOUR, "ttlSeconds": 5})
    clock.advance(5 * SECOND_MS)
    assert ops("DELETE")[0] == 404


@pytest.mark.parametrize("method", ["PUT", "DELETE"])
def test_an_unknown_route_key_is_404(ops: Any, method: str) -> None:
    status, body = ops(
        method, "/api/health/routes/daiso-stock/override", RELAY_FOR_AN_HOUR if method == "PUT" else None
    )
    assert status == 404
    assert body == error_body("UNKNOWN_ROUTE_KEY", "No such route key.")


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        (None, [None]),
        ("", [None]),
        ("not json", [None]),
        (b"\xff\x1d\xfe", [None]),  # not UTF-8: API Gateway passes it on base64-encoded
        ("[]", [None]),
        ({}, ["mode", "reason", "ttlSeconds"]),
        ({**RELAY_FOR_AN_HOUR, "mode": "force-sideways"}, ["mode"]),
        ({**RELAY_FOR_AN_HOUR, "ttlSeconds": "3600"}, ["ttlSeconds"]),
        ({**RELAY_FOR_AN_HOUR, "ttlSeconds": True}, ["ttlSeconds"]),
        ({**RELAY_FOR_AN_HOUR, "ttlSeconds": 1.5}, ["ttlSeconds"]),
        ({**RELAY_FOR_AN_HOUR, "ttlSeconds": 2793.5}, ["ttlSeconds"]),
        ({**RELAY_FOR_AN_HOUR, "ttlSeconds": 0}, ["ttlSeconds"]),
        ({**RELAY_FOR_AN_HOUR, "ttlSeconds": 86_401}, ["ttlSeconds"]),
        ({**RELAY_FOR_AN_HOUR, "reason": ""}, ["reason"]),
        ({**RELAY_FOR_AN_HOUR, "reason": "x" * 201}, ["reason"]),
        ({**RELAY_FOR_AN_HOUR, "reason": " " + "x" * 200}, ["reason"]),  # 201 as sent
        ({**RELAY_FOR_AN_HOUR, "reason": " \u3000 "}, ["reason"]),  # blank
        ({**RELAY_FOR_AN_HOUR, "reason": "two\nlines"}, ["reason"]),
        ({**RELAY_FOR_AN_HOUR, "reason": 7}, ["reason"]),
        ({**RELAY_FOR_AN_HOUR, "until": "tomorrow"}, ["until"]),
        (
            {"mode": "force-relay", "reason": "r", "ttl_seconds": 60},
            ["ttlSeconds", "ttl_seconds"],
        ),  # wire names
    ],
)
def test_a_bad_body_is_400_with_the_field_errors_and_stores_nothing(
    ops: Any, body: object, fields: list[str | None]
) -> None:
    status, answer = ops("PUT", body=body)
    assert status == 400
    assert answer["success"] is False
    assert answer["error"]["code"] == "INVALID_INPUT"
    assert [field["field"] for field in answer["error"]["fields"]] == fields
    assert all(field["location"] == "body" and field["message"] for field in answer["error"]["fields"])
    assert no_override_shown(ops("GET", "/api/health/routes")[1]["data"])


def test_force_direct_on_the_pinned_key_is_400_on_mode(ops: Any) -> None:
    status, body = ops(
        "PUT", "/api/health/routes/gs25-stock/override", {**RELAY_FOR_AN_HOUR, "mode": "force-direct"}
    )
    assert status == 400
    assert body["error"]["fields"] == [
        {
            "location": "body",
            "field": "mode",
            "message": PINNED_NEVER_DIRECT.text,
        }
    ]
    assert ops("PUT", "/api/health/routes/gs25-stock/override", RELAY_FOR_AN_HOUR)[0] == 200


@pytest.mark.parametrize(
    ("method", "event"),
    [("PUT", {"query": {"ttl": "1"}}), ("DELETE", {"query": {"all": "1"}}), ("DELETE", {"body": "{}"})],
)
def test_query_strings_and_a_delete_body_are_refused(ops: Any, method: str, event: dict[str, Any]) -> None:
    body = event.pop("body", json.dumps(RELAY_FOR_AN_HOUR) if method == "PUT" else None)
    status, answer = ops(method, body=body, **event)
    assert (status, answer["error"]["code"]) == (400, "INVALID_INPUT")


@pytest.mark.parametrize("method", ["PUT", "DELETE"])
def test_overrides_need_the_operator_secret(ops: Any, method: str) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        status, body = ops(method, body=RELAY_FOR_AN_HOUR if method == "PUT" else None, headers=headers)
        assert (status, body["error"]["code"]) == (401, "UNAUTHORIZED_HEALTH_CHECK")
    assert no_override_shown(ops("GET", "/api/health/routes")[1]["data"])


@pytest.mark.parametrize("body", ["not json", {"mode": "sideways"}, RELAY_FOR_AN_HOUR])
def test_the_secret_and_the_key_are_checked_before_the_body(ops: Any, body: object) -> None:
    status, answer = ops("PUT", body=body, headers={"Authorization": "Bearer wrong"})
    assert (status, answer["error"]["code"]) == (401, "UNAUTHORIZED_HEALTH_CHECK")
    status, answer = ops("PUT", "/api/health/routes/daiso-stock/override", body)
    assert (status, answer["error"]["code"]) == (404, "UNKNOWN_ROUTE_KEY")


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]
)
def test_the_body_is_read_as_json_whatever_its_content_type(ops: Any, content_type: str) -> None:
    headers = {**OPERATOR_AUTH, "content-type": content_type}
    assert ops("PUT", body=json.dumps(RELAY_FOR_AN_HOUR), headers=headers)[0] == 200
    status, answer = ops("PUT", body="mode=force-relay", headers=headers)
    assert (status, [field["field"] for field in answer["error"]["fields"]]) == (400, [None])


def test_without_a_store_overrides_are_503_not_configured(lambdas: Lambdas) -> None:
    lambdas.deploy(table=False)
    answer = lambdas.operator("PUT", OVERRIDE, body=RELAY_FOR_AN_HOUR)
    assert (answer.status, answer.body["error"]["code"]) == (503, "ROUTE_HEALTH_NOT_CONFIGURED")


def test_a_store_that_is_down_is_503_route_health_failed(lambdas: Lambdas, unreachable_dynamodb: Any) -> None:
    lambdas.deploy(dynamodb=unreachable_dynamodb, SNAPSHOT_PREFETCH_SECONDS="0.05")
    for method, body in (("PUT", RELAY_FOR_AN_HOUR), ("DELETE", None)):
        answer = lambdas.operator(method, OVERRIDE, body=body)
        assert (answer.status, answer.body["error"]["code"]) == (503, "ROUTE_HEALTH_FAILED")


# --- audit and metrics ------------------------------------------------------------------------------------


def test_each_change_is_one_audit_line_with_the_callers_ip_hash_and_one_metric(
    ops: Any, telemetry: TelemetryOutput
) -> None:
    _, stored = ops("PUT", body=RELAY_FOR_AN_HOUR)
    ops("DELETE")
    ops("DELETE")  # nothing to clear: no change, no audit

    audits = [log for log in telemetry.logs() if log.get("audit") == "route-override"]
    caller = hashlib.sha256(b"127.0.0.1").hexdigest()  # the events' sourceIp
    expected = {
        "route": "cu-stock",
        "mode": "force-relay",
        "reason": "CU 점검 02:00-04:00",
        "createdAt": stored["data"]["createdAt"],
        "expiresAt": stored["data"]["expiresAt"],
        "callerIpSha256": caller,
    }
    assert [{name: log[name] for name in (*expected, "action")} for log in audits] == [
        {**expected, "action": "set"},
        {**expected, "action": "clear"},
    ]
    assert "127.0.0.1" not in json.dumps(audits)
    changes = [m["dimensions"]["Mode"] for m in telemetry.metrics() if m["name"] == "OverrideChange"]
    assert changes == ["force-relay", "clear"]


@pytest.mark.parametrize(("key", "caller"), [("edge-key-Op55", "203.0.113.9"), ("wrong", "127.0.0.1")])
def test_behind_the_edge_the_audit_names_the_viewer_only_with_the_origin_key(
    lambdas: Lambdas, telemetry: TelemetryOutput, key: str, caller: str
) -> None:
    lambdas.deploy(
        secrets=Secrets.from_mapping(
            {**TEST_SECRET_VALUES, "EDGE_ORIGIN_SECRET": "edge-key-Op55"}, source="test"
        )
    )
    headers = {**OPERATOR_AUTH, "x-origin-verify": key, "CloudFront-Viewer-Address": "203.0.113.9:40111"}

    assert lambdas.operator("PUT", OVERRIDE, body=RELAY_FOR_AN_HOUR, headers=headers).status == 200

    (audit,) = [log for log in telemetry.logs() if log.get("audit") == "route-override"]
    assert audit["callerIpSha256"] == hashlib.sha256(caller.encode()).hexdigest()
    assert key not in json.dumps(telemetry.logs())


def test_the_probe_checks_overridden_routes_and_reports_the_active_overrides(
    ops: Any, lambdas: Lambdas, telemetry: TelemetryOutput
) -> None:
    ops("PUT", body=RELAY_FOR_AN_HOUR)
    ops("PUT", "/api/health/routes/oy-find-store/override", {**RELAY_FOR_AN_HOUR, "mode": "force-direct"})
    ops("PUT", "/api/health/routes/cu-prime/override", {**RELAY_FOR_AN_HOUR, "ttlSeconds": 1})
    lambdas.clock.advance(SECOND_MS)  # the cu-prime override has expired

    assert lambdas.probe()["ran"] is True

    assert lambdas.simulator.calls()["direct:cu-stock"] == 1
    assert lambdas.simulator.calls()["direct:oy-find-store"] == 1
    metrics = telemetry.metrics()
    checked = {log["route"] for log in telemetry.logs() if str(log.get("message")).startswith("probe check")}
    assert checked == {key.value for key in DIRECT_PROBED}  # gs25-stock is pinned: never checked
    assert [m["value"] for m in metrics if m["name"] == "OverridesActive"] == [2]
    active = [log for log in telemetry.logs() if log.get("message") == "operator overrides active"]
    assert active[0]["overrides"] == {"cu-stock": "force-relay", "oy-find-store": "force-direct"}
