"""The MCP function: its cold import and INIT, and a warm `tools/call` against the same lookup over REST.

- `cold_import_ratio_vs_boto3`: `import functions.handlers.mcp` (which imports the lookup function's handler)
  over `import boto3`, fresh interpreters interleaved, as `cold_import` times the other functions. Beside it,
  the same for the import the official SDK's server would add (`mcp.server.lowlevel.server` and its
  Streamable HTTP session manager, on top of the lookup handler): the figure that kept that package out.
- `cold_init_ratio`: INIT as `cold_init` runs it (`AWS_LAMBDA_FUNCTION_NAME` set: the lookup container and
  the tools from the lookup document are built at import), over the same baseline function.
- `call_ratio_vs_rest`: the median time of a warm `tools/call` through `functions.handlers.mcp.lambda_handler`
  over the median time of the same lookup through `functions.handlers.api.lambda_handler`, both in process,
  event in and response out, one container on moto and the same instant upstream (bench/cases/handler.py),
  interleaved batches; the worse of the two protocol revisions, each in `detail` (with the calling thread's CPU
  time beside the wall time: other processes on a shared machine barely move it).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from bench.cases.cold_import import lambda_like_environment, medians_of, timed_ms
from bench.cases.cold_init import SAMPLES, _embedded_store, _environment, sampled
from bench.cases.handler import ENDPOINT, NOW, QUERY, _services, _settings, _time_batch, _WholeTimeLeft
from bench.common import api_event, median, on_moto, progress
from sandbox.gateway import http_api_event, match_route

IMPORTS = {
    "mcp": "import functions.handlers.mcp",
    "boto3": "import boto3",
    "sdk_server": "import functions.handlers.api, mcp.server.lowlevel.server, mcp.server.streamable_http_manager",
}
INITS = {"mcp": "import functions.handlers.mcp", "baseline": "import boto3; boto3.client('dynamodb')"}
TOOL = ("oliveyoungProducts", dict(QUERY))
"""The tool of bench/cases/handler.py's lookup, with the same query."""
WARMUP = 300
REPEATS = 15
PER_BATCH = 100
MODERN = "2026-07-28"
HANDSHAKE = "2025-11-25"


def run() -> dict[str, Any]:
    imports = _cold_imports()
    inits = _cold_inits()
    progress("mcp: warm tools/call against the same lookup over REST, one container on moto")
    with on_moto():
        calls = _calls()
    ratio = max(calls["ratio_per_revision"].values())
    progress(
        f"mcp: cold import {imports['ratio']}x boto3 (the SDK's server would be {imports['sdk_ratio']}x), "
        f"INIT {inits['ratio']}x, tools/call {ratio:.2f}x REST {calls['ratio_per_revision']}"
    )
    return {
        "mcp": {
            "cold_import_ratio_vs_boto3": imports["ratio"],
            "cold_init_ratio": inits["ratio"],
            "call_ratio_vs_rest": round(ratio, 2),
            "detail": {"cold_import": imports, "cold_init": inits, "call": calls},
        }
    }


def _cold_imports() -> dict[str, Any]:
    environment = lambda_like_environment()
    writes_bytecode = {k: v for k, v in environment.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for code in IMPORTS.values():
        timed_ms(code, writes_bytecode)
    wall, cpu = medians_of(sampled(IMPORTS, dict.fromkeys(IMPORTS, environment), "mcp cold import"))
    return {
        **_against(wall, cpu, "boto3"),
        "sdk_ratio": round(wall["sdk_server"] / wall["boto3"], 2),
        "sdk_cpu_ratio": round(cpu["sdk_server"] / cpu["boto3"], 2),
        "sdk_server_import": IMPORTS["sdk_server"],
    }


def _cold_inits() -> dict[str, Any]:
    with _embedded_store() as endpoint_url:
        environments = {name: _environment(endpoint_url, name) for name in INITS}
        for name, code in INITS.items():
            timed_ms(code, environments[name])
        samples = sampled(INITS, environments, "mcp cold init")
    wall, cpu = medians_of(samples)
    return {**_against(wall, cpu, "baseline"), "baseline": INITS["baseline"]}


def _against(wall: dict[str, float], cpu: dict[str, float], baseline: str) -> dict[str, Any]:
    """The MCP function's medians and its wall and CPU ratios to `baseline`'s."""
    return {
        "ratio": round(wall["mcp"] / wall[baseline], 2),
        "cpu_ratio": round(cpu["mcp"] / cpu[baseline], 2),
        "ms_median": wall,
        "cpu_ms_median": cpu,
        "samples_per_target": SAMPLES,
    }


def _calls() -> dict[str, Any]:
    from functions.handlers import api, mcp
    from functions.handlers.composition import LOOKUP_FUNCTION

    services = _services()
    lookups = services.lookup_function(_settings())
    LOOKUP_FUNCTION.install(lookups)
    context = _WholeTimeLeft("route-health-mcp", timeout_s=15.0)
    try:
        calls = {"rest": _invoking(api.lambda_handler, api_event(ENDPOINT, QUERY, now_ms=NOW), context)}
        for revision in (HANDSHAKE, MODERN):
            calls[revision] = _invoking(mcp.lambda_handler, _tool_call_event(revision), context)
        expected = json.loads(calls["rest"]()["body"])["data"]
        for revision in (HANDSHAKE, MODERN):
            answer = json.loads(calls[revision]()["body"])["result"]
            assert answer["structuredContent"] == expected, revision
        for call in calls.values():
            _time_batch(call, WARMUP)
        batches: dict[str, list[tuple[float, float]]] = {name: [] for name in calls}
        for _ in range(REPEATS):
            for name, call in calls.items():
                batches[name].append(_time_batch(call, PER_BATCH))
    finally:
        LOOKUP_FUNCTION.install(None)
        lookups.close()
    us = {name: round(median([wall for wall, _ in values]), 1) for name, values in batches.items()}
    cpu = {name: round(median([cpu for _, cpu in values]), 1) for name, values in batches.items()}
    revisions = (HANDSHAKE, MODERN)
    return {
        "us_median": us,
        "ratio_per_revision": {revision: round(us[revision] / us["rest"], 2) for revision in revisions},
        "cpu_us_median": cpu,
        "cpu_ratio_per_revision": {revision: round(cpu[revision] / cpu["rest"], 2) for revision in revisions},
        "tool": TOOL[0],
        "rest": f"GET {ENDPOINT}?keyword=...",
        "repeats": REPEATS,
        "calls_per_batch": PER_BATCH,
    }


def _invoking(
    handler: Callable[[dict[str, Any], Any], Any], event: dict[str, Any], context: Any
) -> Callable[[], Any]:
    return lambda: handler(event, context)


def _tool_call_event(revision: str) -> dict[str, Any]:
    name, arguments = TOOL
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    # The sandbox's name: the MCP function answers only to its own names (MCP_ALLOWED_HOSTS).
    headers = [
        ("host", "127.0.0.1"),
        ("content-type", "application/json"),
        ("mcp-protocol-version", revision),
    ]
    if revision == MODERN:
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        headers += [("mcp-method", "tools/call"), ("mcp-name", name)]
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).encode()
    route = match_route("POST", "/mcp")
    assert route is not None
    return http_api_event(
        route=route,
        method="POST",
        target="/mcp",
        headers=headers,
        body=body,
        source_ip="127.0.0.1",
        now_ms=NOW,
    )
