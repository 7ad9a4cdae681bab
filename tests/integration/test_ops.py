"""The operator API (GET/POST /api/health/routes) through its real Lambda handler, on moto and the simulator."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import boto3
import pytest
from botocore.config import Config

from functions.adapters.secrets import Secrets
from functions.core import DIRECT_PROBED, PROBE_SLOT_MS, RelayGroup, RouteKey
from functions.handlers import wiring
from functions.handlers.operator_auth import presented_secret, secrets_match
from functions.handlers.ops import lambda_handler
from functions.handlers.probe import lambda_handler as probe_handler
from functions.handlers.settings import OpsSettings
from sandbox.simulator.server import Simulator

ContainerFactory = Callable[..., wiring.Container]
EventFactory = Callable[..., dict[str, Any]]
PATH = "/api/health/routes"
SECRET = "hc-secret-Zq81"  # HEALTH_CHECK_SECRET in conftest's test secrets
AUTH = {"Authorization": f"Bearer {SECRET}"}


def call(
    api_event: EventFactory, context: Any, method: str, **kwargs: Any
) -> tuple[int, dict[str, str], Any]:
    response = lambda_handler(api_event(method, kwargs.pop("path", PATH), **kwargs), context)
    return response["statusCode"], response.get("headers") or {}, json.loads(response["body"])


def direct_calls(simulator: Simulator) -> int:
    return sum(count for name, count in simulator.calls().items() if name.startswith("direct:"))


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
def test_the_secret_is_accepted_as_bearer_or_key(
    make_container: ContainerFactory, api_event: EventFactory, lambda_context: Any, headers: dict[str, str]
) -> None:
    make_container()
    status, _, body = call(api_event, lambda_context, "GET", headers=headers)
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
def test_a_missing_or_wrong_secret_is_401(
    make_container: ContainerFactory,
    api_event: EventFactory,
    lambda_context: Any,
    simulator: Simulator,
    headers: dict[str, str],
    method: str,
) -> None:
    make_container()
    status, answer_headers, body = call(api_event, lambda_context, method, headers=headers)
    assert status == 401
    assert answer_headers["WWW-Authenticate"] == "Bearer"
    assert body == {
        "success": False,
        "error": {"code": "UNAUTHORIZED_HEALTH_CHECK", "message": "A valid health check secret is required."},
    }
    assert direct_calls(simulator) == 0


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
def test_an_unencodable_or_non_ascii_secret_is_401_not_500(
    make_container: ContainerFactory, api_event: EventFactory, lambda_context: Any, headers: dict[str, str]
) -> None:
    make_container()
    status, _, body = call(api_event, lambda_context, "GET", headers=headers)
    assert (status, body["error"]["code"]) == (401, "UNAUTHORIZED_HEALTH_CHECK")


def test_without_a_configured_secret_every_call_is_503(
    make_container: ContainerFactory, api_event: EventFactory, lambda_context: Any
) -> None:
    make_container(secrets=Secrets.from_mapping({"OY_RELAY_TOKEN": "t"}, source="test"))
    for method in ("GET", "POST"):
        status, _, body = call(api_event, lambda_context, method, headers=AUTH)
        assert (status, body["error"]["code"]) == (503, "HEALTH_CHECK_SECRET_NOT_CONFIGURED")


def test_secret_comparison_helpers() -> None:
    assert presented_secret({"authorization": "Bearer a b"}) == "a b"
    assert presented_secret({"authorization": "Token x"}) is None
    assert presented_secret({"x-health-check-key": "  k "}) == "k"
    assert secrets_match("same", "same")
    assert not secrets_match("same", "samE")
    assert not secrets_match("", "x")


# --- not configured / store errors ---------------------------------------------------------------


def test_without_a_store_the_api_is_503_not_configured_after_auth(
    make_container: ContainerFactory, api_event: EventFactory, lambda_context: Any, simulator: Simulator
) -> None:
    make_container(table=False)
    for method in ("GET", "POST"):
        assert call(api_event, lambda_context, method)[0] == 401
        status, _, body = call(api_event, lambda_context, method, headers=AUTH)
        assert (status, body["error"]["code"]) == (503, "ROUTE_HEALTH_NOT_CONFIGURED")
    assert direct_calls(simulator) == 0


def test_a_store_that_is_down_is_503_route_health_failed_without_a_stack_trace(
    make_container: ContainerFactory, api_event: EventFactory, lambda_context: Any, telemetry: Any
) -> None:
    unreachable = boto3.client(
        "dynamodb",
        endpoint_url="http://127.0.0.1:9",
        config=Config(connect_timeout=0.2, read_timeout=0.2, retries={"total_max_attempts": 1}),
    )
    make_container(dynamodb_client=unreachable, SNAPSHOT_PREFETCH_SECONDS="0.05")
    for method in ("GET", "POST"):
        status, _, body = call(api_event, lambda_context, method, headers=AUTH)
        assert status == 503
        assert body == {
            "success": False,
            "error": {
                "code": "ROUTE_HEALTH_FAILED",
                "message": "The route health state could not be read or updated.",
            },
        }
    assert "Traceback" not in telemetry.text()


# --- GET -----------------------------------------------------------------------------------------


def test_get_returns_the_stored_snapshot_in_the_operator_wire_format_and_never_probes(
    make_container: ContainerFactory,
    api_event: EventFactory,
    lambda_context: Any,
    simulator: Simulator,
    clock: Any,
) -> None:
    make_container()
    status, _, body = call(api_event, lambda_context, "GET", headers=AUTH)
    assert (status, body) == (200, {"success": True, "data": {"routes": {}, "relays": {}}})
    assert direct_calls(simulator) == 0

    simulator.faults.set("direct:cu-store", "http-429")
    assert call(api_event, lambda_context, "POST", headers=AUTH)[0] == 200
    simulator.reset_calls()
    status, _, body = call(api_event, lambda_context, "GET", headers=AUTH)

    assert status == 200
    assert direct_calls(simulator) == 0
    routes, relays = body["data"]["routes"], body["data"]["relays"]
    assert set(routes) == {key.value for key in RouteKey}
    assert set(relays) == {g.value for g in RelayGroup}
    assert routes["cu-store"] == {
        "key": "cu-store",
        "direct": False,
        "checkedAt": clock(),
        "reason": "http-429",
    }
    assert routes["cu-prime"] == {"key": "cu-prime", "direct": True, "checkedAt": clock(), "reason": "ok"}
    assert routes["gs25-stock"]["reason"] == "pinned-relay"
    assert routes["gs25-stock"]["direct"] is False
    assert relays["dtryx"] == {"group": "dtryx", "healthy": True, "checkedAt": clock(), "reason": "ok"}


# --- POST ----------------------------------------------------------------------------------------


def test_post_probes_once_per_slot_then_answers_429_with_retry_after_and_the_snapshot(
    make_container: ContainerFactory,
    api_event: EventFactory,
    lambda_context: Any,
    simulator: Simulator,
    clock: Any,
) -> None:
    make_container()
    status, _, fresh = call(api_event, lambda_context, "POST", headers=AUTH)
    assert status == 200
    assert fresh["success"] is True
    assert len(fresh["data"]["routes"]) == 20
    assert len(fresh["data"]["relays"]) == 3
    assert direct_calls(simulator) == len(DIRECT_PROBED)

    clock.advance(10_000)  # 52 s into the slot
    status, headers, taken = call(api_event, lambda_context, "POST", headers=AUTH)

    assert status == 429
    assert headers["Retry-After"] == str(PROBE_SLOT_MS // 1000 - 52)
    assert taken["success"] is False
    assert taken["error"]["code"] == "PROBE_SLOT_TAKEN"
    assert taken["error"]["retryAfter"] == 248
    assert taken["data"] == fresh["data"]
    assert direct_calls(simulator) == len(DIRECT_PROBED)  # nothing was called again

    clock.advance(248_000)  # the next slot
    assert call(api_event, lambda_context, "POST", headers=AUTH)[0] == 200
    assert direct_calls(simulator) == 2 * len(DIRECT_PROBED)


def test_post_in_a_slot_the_schedule_already_probed_is_429(
    make_container: ContainerFactory,
    api_event: EventFactory,
    lambda_context: Any,
    simulator: Simulator,
    clock: Any,
) -> None:
    make_container()
    scheduled = datetime.fromtimestamp(clock() // 1000, tz=UTC)
    event = {
        "version": "0",
        "id": "e",
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": "123456789012",
        "time": scheduled.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": "ap-northeast-2",
        "resources": [],
        "detail": {},
    }
    assert probe_handler(event, lambda_context)["ran"]
    status, headers, body = call(api_event, lambda_context, "POST", headers=AUTH)
    assert status == 429
    assert int(headers["Retry-After"]) == 258
    assert len(body["data"]["routes"]) == 20


@pytest.mark.parametrize(
    "request_input",
    [
        {"body": "{}"},
        {"body": '{"key": "cu-stock"}'},
        {"query": {"key": "cu-stock"}},
        {"query": {"force": ""}},
    ],
)
def test_post_refuses_any_input(
    make_container: ContainerFactory,
    api_event: EventFactory,
    lambda_context: Any,
    simulator: Simulator,
    request_input: dict[str, Any],
) -> None:
    make_container()
    status, _, body = call(api_event, lambda_context, "POST", headers=AUTH, **request_input)
    assert (status, body["error"]["code"]) == (400, "INVALID_INPUT")
    assert direct_calls(simulator) == 0


def test_an_unexpected_error_is_a_500_that_the_unexpected_errors_alarm_counts(
    make_container: ContainerFactory,
    api_event: EventFactory,
    lambda_context: Any,
    monkeypatch: pytest.MonkeyPatch,
    telemetry: Any,
) -> None:
    container = make_container()

    def explode(*_: Any, **__: Any) -> Any:
        raise RuntimeError("detail")

    monkeypatch.setattr(container, "probe", explode)
    status, _, body = call(api_event, lambda_context, "POST", headers=AUTH)

    assert (status, body["error"]["code"]) == (500, "INTERNAL_ERROR")
    assert [m["name"] for m in telemetry.metrics() if m["name"] == "UnexpectedError"] == ["UnexpectedError"]


def test_an_unknown_path_is_a_404_envelope(
    make_container: ContainerFactory, api_event: EventFactory, lambda_context: Any
) -> None:
    make_container()
    status, _, body = call(api_event, lambda_context, "GET", path="/api/health/other", headers=AUTH)
    assert (status, body["success"], body["error"]["code"]) == (404, False, "NOT_FOUND")


# --- logs, secrets, wiring from the environment --------------------------------------------------


def test_logs_carry_the_request_id_and_never_a_secret(
    make_container: ContainerFactory,
    api_event: EventFactory,
    lambda_context: Any,
    simulator: Simulator,
    telemetry: Any,
    test_secrets: Secrets,
) -> None:
    make_container()
    event = api_event("POST", PATH, headers={"x-health-check-key": SECRET})
    assert lambda_handler(event, lambda_context)["statusCode"] == 200
    call(api_event, lambda_context, "GET", headers={"Authorization": "Bearer not-the-secret"})

    finished = [log for log in telemetry.logs() if log.get("message") == "probe run finished"]
    assert finished
    assert finished[0]["correlation_id"] == event["requestContext"]["requestId"]
    output = telemetry.text()
    assert not [value for value in test_secrets.all_values() if value in output]
    assert simulator.calls()["leakedSecrets"] == 0


def test_the_container_is_built_from_the_environment_with_the_secrets_manager_secret(
    dynamodb: Any,
    secret_id: str,
    api_event: EventFactory,
    lambda_context: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ROUTE_HEALTH_TABLE", "route-health-test")
    monkeypatch.setenv("ROUTE_HEALTH_SECRET_ID", secret_id)
    monkeypatch.delenv("HEALTH_CHECK_SECRET", raising=False)
    wiring.set_container(None)
    try:
        status, _, body = call(api_event, lambda_context, "GET", headers=AUTH)
        container = wiring.get_container(OpsSettings)
        assert container is wiring.get_container(OpsSettings)  # built once per container
        assert (status, body["success"]) == (200, True)
        assert container.store is not None
        assert wiring.relay_url(container.settings, RelayGroup.DTRYX) is None
    finally:
        wiring.reset_container()
