"""The operator API (GET/POST /api/health/routes) through its real Lambda handler, on moto and the simulator."""

from __future__ import annotations

from typing import Any

import pytest

from functions.adapters.secrets import Secrets
from functions.core import DIRECT_PROBED, PROBE_SLOT_MS, RelayGroup, RouteKey
from functions.handlers import composition, ops
from functions.handlers.operator_auth import presented_secret, secrets_match
from functions.handlers.ops import ROUTES_PATH
from functions.handlers.settings import OpsSettings
from sandbox.embedded_aws import EmbeddedAws
from tests.integration.conftest import OPERATOR_SECRET as SECRET
from tests.integration.conftest import TABLE_NAME, TEST_SECRETS, Lambdas, error_body, explode
from tests.support.events import api_event
from tests.support.secret_values import secret_values
from tests.support.telemetry import TelemetryOutput

ROUTE_HEALTH_FAILED = error_body(
    "ROUTE_HEALTH_FAILED", "The route health state could not be read or updated."
)


def direct_calls(lambdas: Lambdas) -> int:
    return sum(count for name, count in lambdas.simulator.calls().items() if name.startswith("direct:"))


# --- auth ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": f"Bearer {SECRET}"},
        {"Authorization": f"bearer {SECRET}"},
        {"Authorization": f"BEARER   {SECRET}  "},
        {"x-health-check-key": SECRET},
        {"X-Health-Check-Key": SECRET},
        {"Authorization": "Basic abc", "x-health-check-key": SECRET},
    ],
)
def test_the_secret_is_accepted_as_bearer_or_key(lambdas: Lambdas, headers: dict[str, str]) -> None:
    lambdas.deploy()
    status, _, body = lambdas.operator("GET", headers=headers)
    assert (status, body["success"]) == (200, True)


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": f"Basic {SECRET}"},
        {"Authorization": f"Bearer {SECRET}x"},
        {"Authorization": "Bearer "},
        {"x-health-check-key": SECRET[:-1]},
    ],
)
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_missing_or_wrong_secret_is_401(lambdas: Lambdas, headers: dict[str, str], method: str) -> None:
    lambdas.deploy()
    status, answer_headers, body = lambdas.operator(method, headers=headers)
    assert status == 401
    assert answer_headers["WWW-Authenticate"] == "Bearer"
    assert body == error_body("UNAUTHORIZED_HEALTH_CHECK", "A valid health check secret is required.")
    assert direct_calls(lambdas) == 0


@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": "Bearer \ud800"},  # a lone surrogate, as a JSON event's "\\ud800" decodes
        {"Authorization": f"Bearer {SECRET}\udcff"},
        {"x-health-check-key": "\udc80\udc81"},
        {"x-health-check-key": f"{SECRET[:-1]}é"},
        {"x-health-check-key": "\x00\x7f"},
    ],
)
def test_an_unencodable_or_non_ascii_secret_is_401_not_500(lambdas: Lambdas, headers: dict[str, str]) -> None:
    lambdas.deploy()
    status, _, body = lambdas.operator("GET", headers=headers)
    assert (status, body["error"]["code"]) == (401, "UNAUTHORIZED_HEALTH_CHECK")


def test_without_a_configured_secret_every_call_is_503(lambdas: Lambdas) -> None:
    lambdas.deploy(secrets=Secrets.from_mapping({"OY_RELAY_TOKEN": "t"}, source="test"))
    for method in ("GET", "POST"):
        status, _, body = lambdas.operator(method)
        assert (status, body["error"]["code"]) == (503, "HEALTH_CHECK_SECRET_NOT_CONFIGURED")


def test_secret_comparison_helpers() -> None:
    assert presented_secret({"authorization": "Bearer a b"}) == "a b"
    assert presented_secret({"authorization": "Token x"}) is None
    assert presented_secret({"x-health-check-key": "  k "}) == "k"
    assert secrets_match("same", "same")
    assert not secrets_match("same", "samE")
    assert not secrets_match("", "x")


# --- not configured / store errors ---------------------------------------------------------------


def test_without_a_store_the_api_is_503_not_configured_after_auth(lambdas: Lambdas) -> None:
    lambdas.deploy(table=False)
    for method in ("GET", "POST"):
        assert lambdas.operator(method, headers={}).status == 401
        status, _, body = lambdas.operator(method)
        assert (status, body["error"]["code"]) == (503, "ROUTE_HEALTH_NOT_CONFIGURED")
    assert direct_calls(lambdas) == 0


def test_a_store_that_is_down_is_503_route_health_failed_without_a_stack_trace(
    lambdas: Lambdas, unreachable_dynamodb: Any, telemetry: TelemetryOutput
) -> None:
    lambdas.deploy(dynamodb=unreachable_dynamodb, SNAPSHOT_PREFETCH_SECONDS="0.05")
    for method in ("GET", "POST"):
        answer = lambdas.operator(method)
        assert (answer.status, answer.body) == (503, ROUTE_HEALTH_FAILED)
    assert "Traceback" not in telemetry.text()


# --- GET -----------------------------------------------------------------------------------------


def test_get_returns_the_stored_snapshot_in_the_operator_wire_format_and_never_probes(
    lambdas: Lambdas,
) -> None:
    lambdas.deploy()
    status, _, body = lambdas.operator("GET")
    assert (status, body) == (200, {"success": True, "data": {"routes": {}, "relays": {}, "overrides": {}}})
    assert direct_calls(lambdas) == 0

    lambdas.simulator.faults.set("direct:cu-store", "http-429")
    assert lambdas.operator("POST").status == 200
    lambdas.simulator.reset_calls()
    status, _, body = lambdas.operator("GET")

    assert status == 200
    assert direct_calls(lambdas) == 0
    routes, relays = body["data"]["routes"], body["data"]["relays"]
    assert set(routes) == {key.value for key in RouteKey}
    assert set(relays) == {g.value for g in RelayGroup}
    now = lambdas.clock()
    assert routes["cu-store"] == {"key": "cu-store", "direct": False, "checkedAt": now, "reason": "http-429"}
    assert routes["cu-prime"] == {"key": "cu-prime", "direct": True, "checkedAt": now, "reason": "ok"}
    assert routes["gs25-stock"]["reason"] == "pinned-relay"
    assert routes["gs25-stock"]["direct"] is False
    assert relays["dtryx"] == {"group": "dtryx", "healthy": True, "checkedAt": now, "reason": "ok"}


# --- POST ----------------------------------------------------------------------------------------


def test_post_probes_once_per_slot_then_answers_429_with_retry_after_and_the_snapshot(
    lambdas: Lambdas,
) -> None:
    lambdas.deploy()
    status, _, fresh = lambdas.operator("POST")
    assert status == 200
    assert fresh["success"] is True
    assert set(fresh["data"]["routes"]) == {key.value for key in RouteKey}
    assert set(fresh["data"]["relays"]) == {group.value for group in RelayGroup}
    assert direct_calls(lambdas) == len(DIRECT_PROBED)

    lambdas.clock.advance(10_000)  # 52 s into the slot
    status, headers, taken = lambdas.operator("POST")

    assert status == 429
    assert headers["Retry-After"] == str(PROBE_SLOT_MS // 1000 - 52)
    assert taken["success"] is False
    assert taken["error"]["code"] == "PROBE_SLOT_TAKEN"
    assert taken["error"]["retryAfter"] == 248
    assert taken["data"] == fresh["data"]
    assert direct_calls(lambdas) == len(DIRECT_PROBED)  # nothing was called again

    lambdas.clock.advance(248_000)  # the next slot
    assert lambdas.operator("POST").status == 200
    assert direct_calls(lambdas) == 2 * len(DIRECT_PROBED)


def test_post_in_a_slot_the_schedule_already_probed_is_429(lambdas: Lambdas) -> None:
    lambdas.deploy()
    assert lambdas.probe()["ran"]
    status, headers, body = lambdas.operator("POST")
    assert status == 429
    assert int(headers["Retry-After"]) == 258
    assert set(body["data"]["routes"]) == {key.value for key in RouteKey}


@pytest.mark.parametrize(
    "request_input",
    [
        {"body": "{}"},
        {"body": '{"key": "cu-stock"}'},
        {"query": {"key": "cu-stock"}},
        {"query": {"force": ""}},
    ],
)
def test_post_refuses_any_input(lambdas: Lambdas, request_input: dict[str, Any]) -> None:
    lambdas.deploy()
    status, _, body = lambdas.operator("POST", **request_input)
    assert (status, body["error"]["code"]) == (400, "INVALID_INPUT")
    assert direct_calls(lambdas) == 0


def test_an_unexpected_error_is_a_500_that_the_unexpected_errors_alarm_counts(
    lambdas: Lambdas, monkeypatch: pytest.MonkeyPatch, telemetry: TelemetryOutput
) -> None:
    lambdas.deploy()
    monkeypatch.setattr(lambdas.operator_function, "probe", explode)
    status, _, body = lambdas.operator("POST")

    assert (status, body["error"]["code"]) == (500, "INTERNAL_ERROR")
    assert [m["name"] for m in telemetry.metrics() if m["name"] == "UnexpectedError"] == ["UnexpectedError"]


def test_an_unknown_path_is_a_404_envelope(lambdas: Lambdas) -> None:
    lambdas.deploy()
    status, _, body = lambdas.operator("GET", "/api/health/other")
    assert (status, body["success"], body["error"]["code"]) == (404, False, "NOT_FOUND")


# --- logs, secrets, wiring from the environment --------------------------------------------------


def test_logs_carry_the_request_id_and_never_a_secret(lambdas: Lambdas, telemetry: TelemetryOutput) -> None:
    lambdas.deploy()
    event = api_event("POST", ROUTES_PATH, headers={"x-health-check-key": SECRET})
    assert ops.lambda_handler(event, lambdas.context)["statusCode"] == 200
    lambdas.operator("GET", headers={"Authorization": "Bearer not-the-secret"})

    finished = [log for log in telemetry.logs() if log.get("message") == "probe run finished"]
    assert finished
    assert finished[0]["correlation_id"] == event["requestContext"]["requestId"]
    output = telemetry.text()
    assert not [value for value in secret_values(TEST_SECRETS) if value in output]
    assert lambdas.simulator.calls()["leakedSecrets"] == 0


def test_the_operator_function_is_built_from_the_environment_with_the_secrets_manager_secret(
    lambdas: Lambdas, aws: EmbeddedAws, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROUTE_HEALTH_TABLE", TABLE_NAME)
    monkeypatch.setenv("ROUTE_HEALTH_SECRET_ID", aws.secret_id)
    monkeypatch.delenv("HEALTH_CHECK_SECRET", raising=False)
    composition.OPERATOR_FUNCTION.install(None)
    try:
        status, _, body = lambdas.operator("GET")
        operator = composition.OPERATOR_FUNCTION.get()
        assert operator is composition.OPERATOR_FUNCTION.get()  # built once per container
        assert (status, body["success"]) == (200, True)
        assert operator.store is not None
        assert isinstance(operator.upstreams.settings, OpsSettings)
        assert not operator.upstreams.relay_configured(RelayGroup.DTRYX)
    finally:
        operator.close()
        composition.OPERATOR_FUNCTION.install(None)
