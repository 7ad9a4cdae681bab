"""The MCP endpoint over real HTTP on `route-health sandbox` (settled: conftest `fresh`), driven by the official
clients: Python's `mcp.Client` in both of its modes (2026-07-28, and the 2025-11-25 handshake) and the
TypeScript SDK's `Client` over `StreamableHTTPClientTransport` (tests/e2e/mcp_ts_client.mjs). Every tool is
listed, every tool answers what its REST endpoint answers, errors carry the REST code and message, and the
transport's refusals (405, header mismatch) and the daily quota shared with REST hold on the wire."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from functions.lookup_document import lookup_document, lookup_operations
from sandbox.gateway import SOURCE_IP_HEADER
from tests.e2e.conftest import DAILY_RATE_LIMIT
from tests.support.catalog_fixtures import ENDPOINTS
from tests.support.mcp_tools import tool_for

if TYPE_CHECKING:
    from tests.e2e.conftest import Sandbox

pytestmark = pytest.mark.e2e

OPERATIONS = lookup_operations(lookup_document())
TS_CLIENT = Path(__file__).with_name("mcp_ts_client.mjs")
INVALID = ("cuProducts", {"keyword": ""}, "/api/cu/products", {"keyword": ""})
"""A call the API refuses (400 INVALID_INPUT), and its REST form."""


def rest(sandbox: Sandbox, path: str, query: dict[str, Any]) -> httpx.Response:
    return sandbox.http.get(path, params=query)


async def python_session(url: str, mode: str) -> dict[str, Any]:
    """What the Python client sees: the version agreed, the tools, and each endpoint's call and the invalid one."""
    async with Client(f"{url}/mcp", mode=mode) as client:
        tools = (await client.list_tools()).tools
        results = [await client.call_tool(*tool_for(endpoint)) for endpoint in ENDPOINTS]
        invalid = await client.call_tool(INVALID[0], INVALID[1])
        try:
            await client.call_tool("noSuchTool", {})
            unknown = None
        except MCPError as error:
            unknown = error.error.code
        return {
            "version": client.protocol_version,
            "tools": [tool.model_dump(by_alias=True, exclude_none=True) for tool in tools],
            "results": [result.model_dump(by_alias=True, exclude_none=True) for result in results],
            "invalid": invalid.model_dump(by_alias=True, exclude_none=True),
            "unknown": unknown,
        }


def assert_tools_are_the_lookups(tools: list[dict[str, Any]]) -> None:
    assert [tool["name"] for tool in tools] == [operation.name for operation in OPERATIONS]
    for tool, operation in zip(tools, OPERATIONS, strict=True):
        assert tool["inputSchema"] == operation.input_schema()
        assert tool["outputSchema"] == operation.data_schema
        assert tool["annotations"]["readOnlyHint"] is True
        assert tool["annotations"]["openWorldHint"] is True
        assert operation.summary in tool["description"]


def assert_results_are_rest_answers(sandbox: Sandbox, results: list[dict[str, Any]]) -> None:
    for endpoint, result in zip(ENDPOINTS, results, strict=True):
        answer = rest(sandbox, endpoint.path, dict(endpoint.query))
        assert answer.status_code == 200, answer.text
        data = answer.json()["data"]
        assert result.get("isError") is False, (endpoint.path, result)
        assert result["structuredContent"] == data, endpoint.path
        assert [json.loads(content["text"]) for content in result["content"]] == [data]


def assert_the_rest_error(sandbox: Sandbox, result: dict[str, Any]) -> None:
    answer = rest(sandbox, INVALID[2], INVALID[3])
    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"]) == {"status": 400, **answer.json()["error"]}


@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
def test_the_official_python_client(fresh: Sandbox, mode: str, version: str) -> None:
    seen = asyncio.run(python_session(fresh.url, mode))

    assert seen["version"] == version
    assert_tools_are_the_lookups(seen["tools"])
    assert_results_are_rest_answers(fresh, seen["results"])
    assert_the_rest_error(fresh, seen["invalid"])
    assert seen["unknown"] == -32602


def test_the_official_typescript_client(fresh: Sandbox) -> None:
    node = shutil.which("node")
    assert node, "node is needed (package.json pins the TypeScript SDK; make install)"
    calls = [dict(zip(("name", "arguments"), tool_for(endpoint), strict=True)) for endpoint in ENDPOINTS]
    plan = {"url": f"{fresh.url}/mcp", "calls": [*calls, {"name": INVALID[0], "arguments": INVALID[1]}]}
    done = subprocess.run(  # noqa: S603 - node running the tests' own script
        [node, str(TS_CLIENT)],
        input=json.dumps(plan),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)

    assert seen["protocolVersion"] == "2025-11-25"
    assert seen["serverVersion"]["name"] == "route-health"
    assert seen["sessionId"] is None  # stateless: never an Mcp-Session-Id
    assert_tools_are_the_lookups(seen["tools"])
    *results, invalid = seen["results"]
    assert_results_are_rest_answers(fresh, results)  # and the client checked each against its outputSchema
    assert_the_rest_error(fresh, invalid)


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_are_405(sandbox: Sandbox, method: str) -> None:
    answer = sandbox.http.request(method, "/mcp", headers={"accept": "text/event-stream"})
    assert (answer.status_code, answer.headers["allow"]) == (405, "POST")


def rpc(sandbox: Sandbox, method: str, params: dict[str, Any], **headers: str) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return sandbox.http.post(
        "/mcp", json=body, headers={"accept": "application/json, text/event-stream", **headers}
    )


def test_headers_that_disagree_with_the_body_are_400(sandbox: Sandbox) -> None:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"name": "cuProducts", "arguments": {"keyword": "x"}, "_meta": meta}
    routing = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call"}

    mismatch = rpc(sandbox, "tools/call", params, **routing, **{"mcp-name": "cuStores"})
    unsupported = rpc(sandbox, "tools/list", {}, **{"mcp-protocol-version": "2030-01-01"})
    notified = sandbox.http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"})

    assert (mismatch.status_code, mismatch.json()["error"]["code"]) == (400, -32020)
    assert (unsupported.status_code, unsupported.json()["error"]["code"]) == (400, -32022)
    assert (notified.status_code, notified.content) == (202, b"")


def test_the_conformance_suites_dns_rebinding_case(sandbox: Sandbox) -> None:
    """`dns-rebinding-protection`: a page whose name was rebound to the sandbox's address sends that name as
    Host and Origin (4xx); the sandbox's own name is served, `initialize` and then `notifications/initialized`
    (2xx), and so is a client that is not a browser (no Origin)."""
    own = httpx.URL(sandbox.url).netloc.decode()
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }

    def probe(host: str, origin: str | None, method: str = "initialize") -> httpx.Response:
        headers = {
            "host": host,
            "mcp-protocol-version": "2025-11-25",
            **({"origin": origin} if origin else {}),
        }
        if method == "initialize":
            return rpc(sandbox, method, params, **headers)
        return sandbox.http.post("/mcp", json={"jsonrpc": "2.0", "method": method}, headers=headers)

    rebound = probe("evil.example:8080", "http://evil.example:8080")
    assert (rebound.status_code, rebound.json()["error"]["message"]) == (403, "Host not allowed")
    assert probe(own, f"http://{own}").status_code == 200
    assert probe(own, f"http://{own}", "notifications/initialized").status_code == 202
    assert probe(own, None).status_code == 200


def test_the_daily_quota_counts_rest_and_mcp_lookups_of_one_client_together(quota_sandbox: Sandbox) -> None:
    carol = {SOURCE_IP_HEADER: "192.0.2.77"}
    arguments = {"keyword": "레쓰비"}
    statuses = []
    for turn in range(DAILY_RATE_LIMIT):
        if turn % 2:
            statuses.append(
                quota_sandbox.http.get("/api/cu/products", params=arguments, headers=carol).status_code
            )
        else:
            result = rpc(quota_sandbox, "tools/call", {"name": "cuProducts", "arguments": arguments}, **carol)
            statuses.append(200 if result.json()["result"]["isError"] is False else 429)

    over_mcp = rpc(quota_sandbox, "tools/call", {"name": "cuProducts", "arguments": arguments}, **carol)
    over_rest = quota_sandbox.http.get("/api/cu/products", params=arguments, headers=carol)

    assert statuses == [200] * DAILY_RATE_LIMIT
    refused = json.loads(over_mcp.json()["result"]["content"][0]["text"])
    assert over_rest.status_code == 429
    assert refused == {
        "status": 429,
        **over_rest.json()["error"],
        "retryAfter": int(over_rest.headers["retry-after"]),
    }
