"""The MCP function's handler with a real container, on moto and the simulated retailers and relays: every tool
answers what its REST endpoint answers, errors carry the REST code and message, the daily quota counts REST
and MCP lookups of one client together, and a tool call writes the lookup's own metrics and log lines."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from functions.adapters.secrets import Secrets
from functions.catalog import LOOKUPS
from functions.core import ErrorCode, RouteKey, group_of
from functions.handlers import mcp
from functions.handlers.api import operation_id
from functions.handlers.openapi import LIMITED_NOTE
from functions.handlers.settings import DAILY_LIMITED_PREFIXES
from sandbox.gateway import LambdaContext
from tests.integration.conftest import OPERATOR_SECRET, TEST_SECRET_VALUES, Lambdas, answer_of, explode
from tests.support.catalog_fixtures import ENDPOINT_OF, ENDPOINTS, Endpoint
from tests.support.events import api_event
from tests.support.mcp_tools import tool_for
from tests.support.telemetry import TelemetryOutput

ALICE, BOB = "198.51.100.7", "198.51.100.8"
SANDBOX_HOST = "127.0.0.1:8080"


def post(lambdas: Lambdas, message: dict[str, Any], *, ip: str = ALICE, **headers: str) -> tuple[int, Any]:
    """One POST /mcp (a handshake-era request unless the headers say otherwise)."""
    event = api_event(
        "POST",
        "/mcp",
        headers={
            "host": SANDBOX_HOST,
            "content-type": "application/json",
            "mcp-protocol-version": "2025-11-25",
            **headers,
        },
        body=json.dumps(message),
    )
    event["requestContext"]["http"]["sourceIp"] = ip
    answer = answer_of(mcp.lambda_handler(event, lambdas.context))
    return answer.status, answer.body


def call_tool(lambdas: Lambdas, name: str, arguments: dict[str, Any], *, ip: str = ALICE) -> dict[str, Any]:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    status, body = post(lambdas, message, ip=ip)
    assert status == 200, body
    result: dict[str, Any] = body["result"]
    return result


def error_text(result: dict[str, Any]) -> dict[str, Any]:
    assert result["isError"] is True
    assert "structuredContent" not in result
    (content,) = result["content"]
    error: dict[str, Any] = json.loads(content["text"])
    return error


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda endpoint: endpoint.path)
def test_every_tool_answers_what_its_rest_endpoint_answers(lambdas: Lambdas, endpoint: Endpoint) -> None:
    lambdas.ready()
    rest = lambdas.lookup_endpoint(endpoint)
    name, arguments = tool_for(endpoint)

    result = call_tool(lambdas, name, arguments)

    assert rest.status == 200
    assert result["isError"] is False
    assert result["structuredContent"] == rest.body["data"]
    assert [(c["type"], json.loads(c["text"])) for c in result["content"]] == [("text", rest.body["data"])]


def test_invalid_arguments_are_an_error_result_with_the_rest_errors_code_message_and_fields(
    lambdas: Lambdas,
) -> None:
    lambdas.ready()
    rest = lambdas.lookup("/api/gs25/stock", {"lat": "91", "lon": "200"})
    result = call_tool(lambdas, "gs25Stock", {"lat": 91, "lon": 200})

    assert rest.status == 400
    assert error_text(result) == {"status": 400, **rest.body["error"]}
    assert (
        rest.body["error"]["message"] == ErrorCode.INVALID_INPUT.message
    )  # what a missing path parameter says too
    missing = error_text(call_tool(lambdas, "oliveyoungGoodsInfo", {}))
    assert missing == {
        "status": 400,
        "code": "INVALID_INPUT",
        "message": ErrorCode.INVALID_INPUT.message,
        "fields": [{"location": "path", "field": "goodsNo", "message": "Field required"}],
    }
    assert lambdas.used() == {}


@pytest.mark.parametrize("keyword", [["a", "b"], {"a": "b"}, True])
def test_a_wrongly_typed_argument_is_refused_before_the_lookup_and_spends_no_quota(
    lambdas: Lambdas, keyword: object
) -> None:
    lambdas.ready(DAILY_RATE_LIMIT="1")

    refused = [error_text(call_tool(lambdas, "cuProducts", {"keyword": keyword})) for _ in range(3)]

    field = {"location": "query", "field": "keyword", "message": "Input should be a valid string"}
    assert (
        refused
        == [
            {
                "status": 400,
                "code": "INVALID_INPUT",
                "message": ErrorCode.INVALID_INPUT.message,
                "fields": [field],
            }
        ]
        * 3
    )
    assert lambdas.used() == {}  # nothing searched
    assert call_tool(lambdas, "cuProducts", {"keyword": "레쓰비"})["isError"] is False  # the one unit is left
    spent = error_text(call_tool(lambdas, "cuProducts", {"keyword": "레쓰비"}))
    assert spent["code"] == "DAILY_RATE_LIMIT_EXCEEDED"


def rebinding_probe(lambdas: Lambdas, host: str, origin: str | None) -> tuple[int, Any]:
    """The conformance suite's `dns-rebinding-protection` request (`initialize`) with this Host and Origin."""
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    return post(lambdas, message, host=host, **({"origin": origin} if origin else {}))


def test_a_dns_rebinding_page_is_refused_and_the_sandboxs_names_are_served(lambdas: Lambdas) -> None:
    lambdas.ready()

    status, body = rebinding_probe(lambdas, "evil.example:8080", "http://evil.example:8080")
    assert (status, body["error"]["message"]) == (403, "Host not allowed")
    assert rebinding_probe(lambdas, SANDBOX_HOST, f"http://{SANDBOX_HOST}")[0] == 200
    assert rebinding_probe(lambdas, SANDBOX_HOST, None)[0] == 200  # a client that is not a browser
    assert rebinding_probe(lambdas, SANDBOX_HOST, "http://evil.example:8080")[0] == 403


@pytest.fixture
def deployed_names(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The MCP function as the stack configures it: its API's domain and an edge domain only."""
    api_host = "abc123.execute-api.ap-northeast-2.amazonaws.com"
    monkeypatch.setenv("MCP_ALLOWED_HOSTS", f"{api_host},edge.example")
    mcp.served.cache_clear()
    yield api_host
    mcp.served.cache_clear()


def test_a_deployed_function_answers_only_to_its_configured_names(
    lambdas: Lambdas, deployed_names: str
) -> None:
    lambdas.ready()

    assert rebinding_probe(lambdas, deployed_names, f"https://{deployed_names}")[0] == 200
    assert rebinding_probe(lambdas, deployed_names, "https://edge.example")[0] == 200
    assert rebinding_probe(lambdas, "edge.example", None)[0] == 200
    assert rebinding_probe(lambdas, SANDBOX_HOST, None)[0] == 403  # loopback is the sandbox's default only
    assert rebinding_probe(lambdas, "evil.example:8080", "http://evil.example:8080")[0] == 403


@pytest.mark.parametrize(
    ("environment", "limited"),
    [
        ({}, set(DAILY_LIMITED_PREFIXES)),
        ({"DAILY_RATE_LIMIT_PREFIXES": "/api/cu/"}, {"/api/cu/"}),
        ({"DAILY_RATE_LIMIT": "0"}, set()),
    ],
)
def test_the_tools_say_which_lookups_the_functions_own_daily_limit_counts(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], limited: set[str]
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    mcp.served.cache_clear()
    try:
        _, tools = mcp.served()
    finally:
        mcp.served.cache_clear()

    noted = {tool["name"] for tool in tools.definitions if LIMITED_NOTE in tool["description"]}
    assert noted == {operation_id(query) for query in LOOKUPS if query.path.startswith(tuple(limited))}
    assert noted or not limited


@pytest.mark.parametrize(
    ("fault", "status", "code"),
    [("bad-shape", 502, "UPSTREAM_BAD_RESPONSE"), ("http-404", 404, "UPSTREAM_NOT_FOUND")],
)
def test_upstream_failures_are_error_results_as_rest_answers_them(
    lambdas: Lambdas, fault: str, status: int, code: str
) -> None:
    key = RouteKey.SEVEN_POPWORDS
    lambdas.ready()
    lambdas.simulator.faults.set(f"direct:{key}", fault)
    lambdas.simulator.faults.set(f"relay:{group_of(key)}", fault)
    rest = lambdas.lookup_endpoint(ENDPOINT_OF[key])

    error = error_text(call_tool(lambdas, "sevenelevenPopwords", {}))

    assert (rest.status, rest.body["error"]["code"]) == (status, code)
    assert error == {"status": status, **rest.body["error"]}


def test_an_unavailable_route_is_the_rest_503(lambdas: Lambdas) -> None:
    lambdas.write_verdicts(direct=False, relays_healthy=False)
    lambdas.loaded(lambdas.deploy())
    lambdas.clock.advance(5_000)
    rest = lambdas.lookup_endpoint(ENDPOINT_OF[RouteKey.DTRYX_MOVIES])

    error = error_text(call_tool(lambdas, "dtryxMovies", {"brandCode": "indieart", "cinemaCode": "000067"}))

    assert error == {"status": 503, **rest.body["error"]}
    assert error["code"] == "UPSTREAM_ROUTE_UNAVAILABLE"


def test_a_relay_quota_refusal_carries_when_to_retry(lambdas: Lambdas) -> None:
    lambdas.write_verdicts(direct=False)
    lambdas.loaded(lambdas.deploy())
    lambdas.simulator.faults.set("relay:dtryx", "http-429")

    error = error_text(call_tool(lambdas, "dtryxMovies", {"brandCode": "indieart", "cinemaCode": "000067"}))

    assert (error["status"], error["code"], error["retryAfter"]) == (429, "RELAY_QUOTA_EXCEEDED", 30)


def test_the_daily_quota_counts_a_clients_rest_and_mcp_lookups_together(lambdas: Lambdas) -> None:
    lambdas.ready(DAILY_RATE_LIMIT="3")
    cu = {"keyword": "레쓰비"}
    assert lambdas.lookup("/api/cu/products", cu, ip=ALICE).status == 200
    assert call_tool(lambdas, "cuProducts", cu)["isError"] is False
    assert lambdas.lookup("/api/cu/products", cu, ip=ALICE).status == 200

    refused = error_text(call_tool(lambdas, "cuProducts", cu))
    rest = lambdas.lookup("/api/cu/products", cu, ip=ALICE)

    assert refused["code"] == rest.body["error"]["code"] == "DAILY_RATE_LIMIT_EXCEEDED"
    assert refused == {"status": 429, **rest.body["error"], "retryAfter": int(rest.headers["Retry-After"])}
    assert call_tool(lambdas, "cuProducts", cu, ip=BOB)["isError"] is False  # another client


def test_behind_the_edge_a_tool_call_counts_for_the_viewer_with_the_origin_key_only(lambdas: Lambdas) -> None:
    edge_key = "edge-origin-key-Mc21"
    lambdas.ready(
        secrets=Secrets.from_mapping({**TEST_SECRET_VALUES, "EDGE_ORIGIN_SECRET": edge_key}, source="test"),
        DAILY_RATE_LIMIT="1",
    )
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "cuProducts", "arguments": {"keyword": "레쓰비"}},
    }

    def via_the_edge(viewer: str, key: str) -> bool:
        """Whether the tool call CloudFront forwards for `viewer` is refused by the daily quota."""
        status, body = post(
            lambdas,
            message,
            ip="130.176.0.9",  # the edge server, the same for both viewers
            **{"x-origin-verify": key, "cloudfront-viewer-address": f"{viewer}:443"},
        )
        assert status == 200, body
        return bool(body["result"]["isError"])

    assert [via_the_edge(ALICE, edge_key), via_the_edge(ALICE, edge_key)] == [False, True]
    assert via_the_edge(BOB, edge_key) is False  # another viewer of the same edge
    assert (
        lambdas.lookup("/api/cu/products", {"keyword": "레쓰비"}, ip=BOB).status == 429
    )  # REST: the same Bob
    # A wrong key: the claimed viewers are the edge's own address, which has one unit left.
    assert [via_the_edge("192.0.2.1", "wrong"), via_the_edge("192.0.2.2", "wrong")] == [False, True]


def test_a_tool_call_writes_the_lookups_own_metrics(lambdas: Lambdas, telemetry: TelemetryOutput) -> None:
    lambdas.ready()
    endpoint = ENDPOINT_OF[RouteKey.OY_PRODUCT_SEARCH]
    telemetry.text()  # forget what building the container wrote
    assert lambdas.lookup_endpoint(endpoint).status == 200
    rest = [(m["name"], m["dimensions"]) for m in telemetry.metrics()]
    telemetry.text()

    call_tool(lambdas, *tool_for(endpoint))
    call_tool(lambdas, "oliveyoungProducts", {"keyword": ""})

    metrics = [(m["name"], m["dimensions"]) for m in telemetry.metrics()]
    assert metrics[: len(rest)] == rest
    assert ("LookupError", {"service": "route-health", "Code": "INVALID_INPUT"}) in metrics


def test_a_tool_calls_log_lines_carry_the_mcp_requests_id(
    lambdas: Lambdas, telemetry: TelemetryOutput
) -> None:
    lambdas.ready()
    lambdas.simulator.faults.set(f"direct:{RouteKey.GS25_PRODUCTS}", "http-403")
    params = {"name": "gs25Products", "arguments": {"keyword": "콜라"}}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    headers = {"host": SANDBOX_HOST, "content-type": "application/json"}
    event = api_event("POST", "/mcp", headers=headers, body=json.dumps(message))

    assert mcp.lambda_handler(event, lambdas.context)["statusCode"] == 200

    (failed,) = [log for log in telemetry.logs() if log["message"] == "direct failed"]
    assert failed["route"] == RouteKey.GS25_PRODUCTS
    assert failed["correlation_id"] == event["requestContext"]["requestId"]


def test_an_unexpected_failure_is_a_json_rpc_internal_error_that_shows_nothing_of_it(
    lambdas: Lambdas, monkeypatch: pytest.MonkeyPatch, telemetry: TelemetryOutput
) -> None:
    lambdas.ready()
    _, tools = mcp.served()
    monkeypatch.setattr(tools, "_lookup", explode)
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "gs25Products"}}

    status, body = post(lambdas, message)

    assert status == 500
    assert body == {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "Internal error"}}
    assert "UnexpectedError" in {m["name"] for m in telemetry.metrics()}
    assert "secret detail" not in json.dumps(body)


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_are_405(lambdas: Lambdas, method: str) -> None:
    event = api_event(method, "/mcp", headers={"host": SANDBOX_HOST, "accept": "text/event-stream"})
    response = mcp.lambda_handler(event, lambdas.context)
    assert (response["statusCode"], response["headers"]) == (
        405,
        {"Allow": "POST", "Cache-Control": "no-store"},
    )


def test_a_base64_body_is_read(lambdas: Lambdas) -> None:
    headers = {"host": SANDBOX_HOST, "content-type": "application/json"}
    event = api_event("POST", "/mcp", headers=headers, body="x")
    event["body"] = (
        "eyJqc29ucnBjIjoiMi4wIiwiaWQiOjEsIm1ldGhvZCI6InBpbmcifQ=="  # {"jsonrpc":"2.0","id":1,"method":"ping"}
    )
    event["isBase64Encoded"] = True
    response = mcp.lambda_handler(event, lambdas.context)
    assert json.loads(response["body"]) == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_a_lookup_out_of_time_is_the_rest_504(lambdas: Lambdas) -> None:
    lambdas.ready()
    key = RouteKey.SEVEN_POPWORDS
    lambdas.simulator.faults.set(f"direct:{key}", "timeout")
    lambdas.simulator.faults.set(f"relay:{group_of(key)}", "timeout")
    lambdas.context = LambdaContext("route-health-test", timeout_s=0.8)  # 0.3 s of lookup budget left

    rest = lambdas.lookup_endpoint(ENDPOINT_OF[key])
    lambdas.context = LambdaContext("route-health-test", timeout_s=0.8)
    error = error_text(call_tool(lambdas, "sevenelevenPopwords", {}))

    assert (rest.status, rest.body["error"]["code"]) == (504, "UPSTREAM_TIMEOUT")
    assert error == {"status": 504, **rest.body["error"]}


def test_the_operator_key_bypasses_the_quota_for_tool_calls_as_for_rest(lambdas: Lambdas) -> None:
    lambdas.ready(DAILY_RATE_LIMIT="1")
    cu = {"keyword": "레쓰비"}
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "cuProducts", "arguments": cu},
    }

    key = {"x-health-check-key": OPERATOR_SECRET}
    refused = [post(lambdas, message, **key)[1]["result"]["isError"] for _ in range(3)]

    assert refused == [False, False, False]
    assert call_tool(lambdas, "cuProducts", cu)["isError"] is False  # the key's calls were not counted
    assert error_text(call_tool(lambdas, "cuProducts", cu))["code"] == "DAILY_RATE_LIMIT_EXCEEDED"
