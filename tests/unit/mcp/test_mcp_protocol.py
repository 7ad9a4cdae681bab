"""Streamable HTTP as the MCP endpoint speaks it, stateless, JSON answers: both revisions' rules, every refusal
with its HTTP status and JSON-RPC code, and results that pass the official SDK's own surface for each version
(`mcp_types.methods.validate_server_result`). Tool calls here answer a fixed result: what a call does is
tests/integration/test_mcp.py's."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import mcp_types
import pytest
from mcp_types.methods import validate_server_result
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from functions.handlers.settings import LOOPBACK_HOSTS
from functions.lookup_document import lookup_document, lookup_operations
from functions.mcp.protocol import HostAllowList, HttpAnswer, HttpRequest, McpServer, RequestFailed
from functions.mcp.tools import LookupTools, server_description

MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"
API_HOST = "abc123.execute-api.ap-northeast-2.amazonaws.com"
ALLOWED_HOSTS = (API_HOST, "edge.example", *LOOPBACK_HOSTS)
JSON_HEADERS = {
    "host": API_HOST,
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
}
RESULT = {"content": [{"type": "text", "text": "{}"}], "structuredContent": {}, "isError": False}
calls: list[tuple[str, Mapping[str, Any]]] = []


def call_tool(name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    calls.append((name, arguments))
    return dict(RESULT)


DOCUMENT = lookup_document()
SERVER = McpServer(
    server_description(DOCUMENT, LookupTools(lookup_operations(DOCUMENT), lambda event, c: {})),
    allowed_hosts=ALLOWED_HOSTS,
)


def post(body: object, headers: Mapping[str, str] | None = None, *, raw: str | None = None) -> HttpAnswer:
    text = raw if raw is not None else json.dumps(body)
    return SERVER.answer(HttpRequest("POST", {**JSON_HEADERS, **(headers or {})}, text), call_tool)


def modern(method: str, params: dict[str, Any] | None = None, **headers: str) -> HttpAnswer:
    """A 2026-07-28 request with its envelope and matching headers (any header can be overridden)."""
    meta = {mcp_types.PROTOCOL_VERSION_META_KEY: MODERN, mcp_types.CLIENT_CAPABILITIES_META_KEY: {}}
    body_params = {**(params or {}), "_meta": meta}
    routing = {"mcp-protocol-version": MODERN, "mcp-method": method}
    if "name" in body_params:
        routing["mcp-name"] = body_params["name"]
    routing.update({name.replace("_", "-"): value for name, value in headers.items()})
    return post({"jsonrpc": "2.0", "id": 7, "method": method, "params": body_params}, routing)


def handshake(
    method: str, params: dict[str, Any] | None = None, version: str | None = HANDSHAKE
) -> HttpAnswer:
    headers = {"mcp-protocol-version": version} if version else {}
    return post({"jsonrpc": "2.0", "id": "a", "method": method, "params": params or {}}, headers)


def error_of(answer: HttpAnswer) -> dict[str, Any]:
    body = json.loads(answer.body)
    assert "result" not in body
    error: dict[str, Any] = body["error"]
    return error


def result_of(answer: HttpAnswer) -> dict[str, Any]:
    assert answer.status == 200, answer.body
    result: dict[str, Any] = json.loads(answer.body)["result"]
    return result


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
def test_only_post_is_served(method: str) -> None:
    answer = SERVER.answer(
        HttpRequest(method, {"host": API_HOST, "accept": "text/event-stream"}, ""), call_tool
    )
    assert (answer.status, answer.headers, answer.body) == (405, {"Allow": "POST"}, "")


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"content-type": "text/plain"}, 415),
        ({"accept": "text/event-stream"}, 406),
    ],
)
def test_transport_refusals(headers: dict[str, str], status: int) -> None:
    answer = post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers)
    assert answer.status == status
    assert error_of(answer)["code"] == mcp_types.INVALID_REQUEST


def test_a_client_without_accept_is_served() -> None:
    answer = SERVER.answer(
        HttpRequest(
            "POST",
            {"host": API_HOST, "content-type": "application/json; charset=utf-8"},
            '{"jsonrpc":"2.0","id":1,"method":"ping"}',
        ),
        call_tool,
    )
    assert answer.status == 200


# --- DNS rebinding: Host and Origin against the server's names ------------------------------------


def rebinding_probe(version: str, host: str | None, origin: str | None) -> HttpAnswer:
    """The conformance suite's `dns-rebinding-protection` request: what any server of the revision serves
    without setup (`initialize`; 2026-07-28: `server/discover`), with the Host and Origin under test."""
    names = {"host": host, "origin": origin}
    headers = {name: value for name, value in names.items() if value is not None}
    if version == MODERN:
        return modern("server/discover", None, **headers)
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    return SERVER.answer(
        HttpRequest(
            "POST",
            {**{k: v for k, v in JSON_HEADERS.items() if k != "host"}, **headers},
            json.dumps(message),
        ),
        call_tool,
    )


@pytest.mark.parametrize("version", [HANDSHAKE, MODERN])
def test_a_rebound_page_is_refused_and_the_servers_own_names_are_served(version: str) -> None:
    rebound = rebinding_probe(version, "evil.example:8080", "http://evil.example:8080")
    assert rebound.status == 403
    assert (error_of(rebound)["code"], error_of(rebound)["message"]) == (
        mcp_types.INVALID_REQUEST,
        "Host not allowed",
    )

    assert rebinding_probe(version, "127.0.0.1:8080", "http://127.0.0.1:8080").status == 200
    assert rebinding_probe(version, "localhost:3000", "http://localhost:3000").status == 200
    assert rebinding_probe(version, "[::1]:8080", "http://[::1]:8080").status == 200
    assert rebinding_probe(version, API_HOST, f"https://{API_HOST}").status == 200
    assert rebinding_probe(version, API_HOST, "https://edge.example").status == 200  # the edge's page
    assert rebinding_probe(version, API_HOST, None).status == 200  # not a browser: no Origin


@pytest.mark.parametrize(
    ("host", "origin", "refusal"),
    [
        (API_HOST, "https://evil.example", "Origin not allowed"),  # a page elsewhere, through the right name
        (API_HOST, "null", "Origin not allowed"),  # an opaque origin (a sandboxed frame, a file)
        (API_HOST, f"ftp://{API_HOST}", "Origin not allowed"),
        ("127.0.0.1:8080", "http://127.0.0.1.evil.example:8080", "Origin not allowed"),
        ("evil.example", None, "Host not allowed"),
        (None, None, "Host not allowed"),  # HTTP/1.1 always sends one
        (f"{API_HOST}:8443", None, "Host not allowed"),  # the API's name is allowed without a port only
        ("localhost:abc", None, "Host not allowed"),
        ("[::1]x", None, "Host not allowed"),
    ],
)
def test_other_names_are_refused_before_anything_is_read(
    host: str | None, origin: str | None, refusal: str
) -> None:
    calls.clear()
    answer = rebinding_probe(HANDSHAKE, host, origin)
    assert (answer.status, error_of(answer)["message"], json.loads(answer.body)["id"]) == (403, refusal, None)
    get = SERVER.answer(
        HttpRequest("GET", {"host": host or "", **({"origin": origin} if origin else {})}, ""), call_tool
    )
    assert get.status == 403  # whatever the method
    assert calls == []


def test_host_names_match_exactly_or_with_any_port_and_ignore_case() -> None:
    names = HostAllowList(["API.example", "localhost:*", "[::1]:*", "edge.example:8443", " "])
    assert [names.allows(host) for host in ("api.example", "Api.Example", "api.example:443")] == [
        True,
        True,
        False,
    ]
    assert [names.allows(host) for host in ("localhost", "localhost:1", "localhost:65535")] == [True] * 3
    assert [names.allows(host) for host in ("[::1]", "[::1]:80", "[::2]:80", "::1")] == [
        True,
        True,
        False,
        False,
    ]
    assert [names.allows(host) for host in ("edge.example:8443", "edge.example", "")] == [True, False, False]
    assert names.allows_origin("HTTP://LOCALHOST:5173")
    assert not names.allows_origin("localhost:5173")


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("{not json", mcp_types.PARSE_ERROR),
        (
            '[{"jsonrpc":"2.0","id":1,"method":"ping"}]',
            mcp_types.INVALID_REQUEST,
        ),  # batches are not in these revisions
        ('{"jsonrpc":"1.0","method":"ping"}', mcp_types.INVALID_REQUEST),
        ('{"jsonrpc":"2.0","id":true,"method":"ping"}', mcp_types.INVALID_REQUEST),
        ('{"jsonrpc":"2.0","method":7}', mcp_types.INVALID_REQUEST),  # a malformed notification
        ("3", mcp_types.INVALID_REQUEST),
    ],
)
def test_malformed_json_rpc_gets_json_rpc_errors_with_400(raw: str, code: int) -> None:
    answer = post(None, raw=raw)
    assert answer.status == 400
    assert json.loads(answer.body)["id"] is None  # no id could be read
    assert error_of(answer)["code"] == code


def test_an_invalid_request_whose_id_was_read_echoes_it() -> None:
    answer = post(None, raw='{"jsonrpc":"1.0","id":"r-1","method":"ping"}')
    assert (answer.status, json.loads(answer.body)["id"]) == (400, "r-1")
    assert error_of(answer)["code"] == mcp_types.INVALID_REQUEST


@pytest.mark.parametrize("request_id", [7, "r-7"])
def test_an_unexpected_failure_carries_the_requests_id_to_its_internal_error(request_id: int | str) -> None:
    def failing(name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        raise LookupError("secret detail")

    message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": "cuProducts"}}
    with pytest.raises(RequestFailed) as failed:
        SERVER.answer(HttpRequest("POST", JSON_HEADERS, json.dumps(message)), failing)
    assert failed.value.request_id == request_id
    assert isinstance(failed.value.cause, LookupError)


@pytest.mark.parametrize("version", [None, HANDSHAKE, MODERN])
def test_a_notification_is_accepted_without_a_body(version: str | None) -> None:
    headers = {"mcp-protocol-version": version} if version else {}
    answer = post({"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
    assert (answer.status, answer.body) == (202, "")


def test_an_unsupported_version_is_refused_with_the_versions_served() -> None:
    answer = handshake("tools/list", version="2099-01-01")
    assert answer.status == 400
    error = error_of(answer)
    assert error["code"] == mcp_types.UNSUPPORTED_PROTOCOL_VERSION
    assert error["data"]["requested"] == "2099-01-01"
    assert {MODERN, *HANDSHAKE_PROTOCOL_VERSIONS} == set(error["data"]["supported"])


# --- the handshake revisions ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("offered", "agreed"), [(HANDSHAKE, HANDSHAKE), ("2025-03-26", "2025-03-26"), ("2024-10-07", HANDSHAKE)]
)
def test_initialize_agrees_a_version_and_never_issues_a_session(offered: str, agreed: str) -> None:
    params = {"protocolVersion": offered, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    answer = handshake("initialize", params, version=None)
    result = result_of(answer)

    assert result["protocolVersion"] == agreed
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result["serverInfo"] == {"name": "route-health", "title": "Route Health", "version": "1.0.0"}
    assert "Olive Young" in result["instructions"]
    assert not any(name.lower() == "mcp-session-id" for name in answer.headers)
    validate_server_result("initialize", agreed, result)


@pytest.mark.parametrize("version", [None, *HANDSHAKE_PROTOCOL_VERSIONS])
def test_handshake_era_tools_list_and_call(version: str | None) -> None:
    listed = result_of(handshake("tools/list", version=version))
    calls.clear()
    called = result_of(
        handshake("tools/call", {"name": "cuProducts", "arguments": {"keyword": "x"}}, version=version)
    )

    assert [tool["name"] for tool in listed["tools"]] == [
        operation.name for operation in lookup_operations(DOCUMENT)
    ]
    assert called == RESULT
    assert calls == [("cuProducts", {"keyword": "x"})]
    for method, result in (("tools/list", listed), ("tools/call", called)):
        validate_server_result(method, version or "2025-03-26", result)
    assert result_of(handshake("ping", version=version)) == {}


@pytest.mark.parametrize(
    ("method", "params", "code"),
    [
        ("server/discover", {}, mcp_types.METHOD_NOT_FOUND),  # 2026-07-28 only
        (
            "resources/list",
            {},
            mcp_types.METHOD_NOT_FOUND,
        ),  # a method of the protocol this server does not serve
        ("no/such", {}, mcp_types.METHOD_NOT_FOUND),
        ("tools/call", {"name": "noSuchTool"}, mcp_types.INVALID_PARAMS),
        ("tools/call", {"arguments": {}}, mcp_types.INVALID_PARAMS),  # no name
        ("tools/call", {"name": "cuProducts", "arguments": ["x"]}, mcp_types.INVALID_PARAMS),
        ("tools/list", {"_meta": "x"}, mcp_types.INVALID_PARAMS),
        (
            "initialize",
            {"protocolVersion": HANDSHAKE, "capabilities": {}},
            mcp_types.INVALID_PARAMS,
        ),  # no clientInfo
    ],
)
def test_handshake_era_dispatch_errors_are_json_rpc_errors_with_200(
    method: str, params: dict[str, Any], code: int
) -> None:
    calls.clear()
    answer = handshake(method, params)
    assert answer.status == 200
    assert error_of(answer)["code"] == code
    assert calls == []


# --- 2026-07-28 --------------------------------------------------------------------------------


def test_discover_describes_the_server() -> None:
    result = result_of(modern("server/discover"))
    assert result["supportedVersions"] == [MODERN]
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert result[("_meta")][mcp_types.SERVER_INFO_META_KEY]["name"] == "route-health"
    assert (result["resultType"], result["cacheScope"]) == ("complete", "public")
    validate_server_result("server/discover", MODERN, result)


def test_modern_tools_list_and_call() -> None:
    listed = result_of(modern("tools/list"))
    calls.clear()
    called = result_of(modern("tools/call", {"name": "gs25Stock", "arguments": {"keyword": "콜라"}}))

    assert len(listed["tools"]) == len(lookup_operations(DOCUMENT))
    assert called["resultType"] == "complete"
    assert called["_meta"][mcp_types.SERVER_INFO_META_KEY]["version"] == "1.0.0"
    assert calls == [("gs25Stock", {"keyword": "콜라"})]
    validate_server_result("tools/list", MODERN, listed)
    validate_server_result("tools/call", MODERN, called)


@pytest.mark.parametrize(
    ("method", "params", "headers", "code", "status"),
    [
        ("tools/list", {}, {"mcp_protocol_version": "2025-11-25"}, mcp_types.HEADER_MISMATCH, 400),
        ("tools/list", {}, {"mcp_method": "tools/call"}, mcp_types.HEADER_MISMATCH, 400),
        ("tools/call", {"name": "cuProducts"}, {"mcp_name": "cuStores"}, mcp_types.HEADER_MISMATCH, 400),
        ("initialize", {}, {}, mcp_types.METHOD_NOT_FOUND, 404),  # no handshake in 2026-07-28
        ("ping", {}, {}, mcp_types.METHOD_NOT_FOUND, 404),
        ("tools/call", {"name": "noSuchTool"}, {}, mcp_types.INVALID_PARAMS, 400),
    ],
)
def test_modern_refusals(
    method: str, params: dict[str, Any], headers: dict[str, str], code: int, status: int
) -> None:
    calls.clear()
    answer = modern(method, params, **headers)
    assert (answer.status, error_of(answer)["code"]) == (status, code)
    assert json.loads(answer.body)["id"] == 7
    assert calls == []


@pytest.mark.parametrize("header", [HANDSHAKE, None])
def test_a_handshake_revision_in_header_and_meta_is_never_served_a_2026_07_28_method(
    header: str | None,
) -> None:
    meta = {mcp_types.PROTOCOL_VERSION_META_KEY: HANDSHAKE, mcp_types.CLIENT_CAPABILITIES_META_KEY: {}}
    headers = {"mcp-method": "server/discover", **({"mcp-protocol-version": header} if header else {})}
    answer = post(
        {"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {"_meta": meta}}, headers
    )

    assert answer.status == 200  # the handshake era's status for a dispatch error
    assert (json.loads(answer.body)["id"], error_of(answer)["code"]) == (3, mcp_types.METHOD_NOT_FOUND)
    listed = post({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": meta}}, headers)
    assert "resultType" not in result_of(listed)  # a handshake-era result


def test_a_modern_request_without_its_envelope_is_invalid() -> None:
    headers = {"mcp-protocol-version": MODERN, "mcp-method": "tools/list"}
    answer = post({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}, headers)
    assert answer.status == 400
    assert error_of(answer)["code"] == mcp_types.INVALID_PARAMS
