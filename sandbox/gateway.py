"""A local API Gateway (HTTP API, payload 2.0): HTTP requests on 127.0.0.1 in, Lambda events to the real handlers.

The routes are the deployed ones (infra/api.py): `GET|POST /api/health/routes` and
`PUT|DELETE /api/health/routes/{key}/override` to the operator function, `GET /api/{proxy+}` to the lookup
function, `POST|GET|DELETE /mcp` to the MCP function; anything else under `/api/` is API Gateway's 404. `/_sandbox/...` goes to the sandbox controls
(which are never deployed). The `Date` header follows the one sandbox clock, as API Gateway's follows AWS's.
With an `EdgeCache` (sandbox/edge.py) the gateway also plays the CloudFront distribution in front of the API:
a lookup it holds is answered without invoking the lookup function.

`requestContext.http.sourceIp` is the TCP peer, as in API Gateway (which ignores `X-Forwarded-For`). To play
several clients from one machine (the daily quota counts per source IP), a request may name its source IP in
the sandbox-only header `x-sandbox-source-ip`; the header itself is not passed on.
"""

from __future__ import annotations

import base64
import contextlib
import ipaddress
import json
import logging
import re
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from functions.core.ports import Clock
from sandbox.edge import EdgeCache, cached_path
from sandbox.scheduler import ACCOUNT_ID

logger = logging.getLogger(__name__)

API_ID = "sandbox"
HEALTH_PATH = "/api/health/routes"
HEALTH_METHODS = frozenset({"GET", "POST"})
OVERRIDE_ROUTE = "/api/health/routes/{key}/override"
OVERRIDE_METHODS = frozenset({"PUT", "DELETE"})
_OVERRIDE_PATH = re.compile(r"/api/health/routes/(?P<key>[^/]+)/override")
LOOKUP_ROUTE_KEY = "GET /api/{proxy+}"
MCP_PATH = "/mcp"
MCP_METHODS = frozenset({"POST", "GET", "DELETE"})
NOT_FOUND = {"message": "Not Found"}
SOURCE_IP_HEADER = "x-sandbox-source-ip"
MAX_REQUEST_BYTES = 1024 * 1024
"""Larger request bodies are refused (413), as API Gateway would (its limit is higher; nothing here needs more)."""

Handler = Callable[[dict[str, Any], Any], Any]
"""A Lambda entry point: lambda_handler(event, context)."""


@dataclass(frozen=True)
class ControlResponse:
    status: int
    body: object
    headers: Mapping[str, str] = field(default_factory=dict)


ControlHandler = Callable[[str, str, bytes], ControlResponse]
"""Answers a `/_sandbox/...` request: (method, path, body) -> response."""


@dataclass
class LambdaContext:
    """The parts of the Lambda context object that handlers and Powertools read."""

    function_name: str
    timeout_s: float
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 512
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    log_group_name: str = ""
    log_stream_name: str = "sandbox"
    _deadline: float = field(default=0.0, repr=False)

    def __post_init__(self) -> None:
        self._deadline = time.monotonic() + self.timeout_s
        self.log_group_name = f"/aws/lambda/{self.function_name}"

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:ap-northeast-2:{ACCOUNT_ID}:function:{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def _join_values(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """API Gateway v2 joins repeated headers and query parameters with commas."""
    joined: dict[str, str] = {}
    for name, value in pairs:
        joined[name] = f"{joined[name]},{value}" if name in joined else value
    return joined


@dataclass(frozen=True)
class Route:
    """A matched route: its `routeKey` as API Gateway sets it, the function behind it, its path parameters."""

    key: str
    function: str  # "api" (lookups), "ops" (operator) or "mcp"
    path_parameters: Mapping[str, str] | None = None


def match_route(method: str, path: str) -> Route | None:
    """The deployed HTTP API's route for a request, or None where API Gateway answers 404 itself."""
    if path == HEALTH_PATH and method in HEALTH_METHODS:
        return Route(f"{method} {HEALTH_PATH}", "ops")
    override = _OVERRIDE_PATH.fullmatch(path)
    if override is not None and method in OVERRIDE_METHODS:
        return Route(f"{method} {OVERRIDE_ROUTE}", "ops", {"key": override["key"]})
    if path == MCP_PATH and method in MCP_METHODS:
        return Route(f"{method} {MCP_PATH}", "mcp")
    proxy = path.removeprefix("/api/")
    if method == "GET" and path.startswith("/api/") and proxy:
        return Route(LOOKUP_ROUTE_KEY, "api", {"proxy": proxy})
    return None


def http_api_event(
    *,
    route: Route,
    method: str,
    target: str,
    headers: Iterable[tuple[str, str]],
    body: bytes,
    source_ip: str,
    now_ms: int,
) -> dict[str, Any]:
    """The API Gateway HTTP API (payload format 2.0) event for one request. `target` is the request target."""
    parts = urlsplit(target)
    raw_path = parts.path or "/"
    header_map = _join_values((name.lower(), value) for name, value in headers)
    route_key = route.key
    request_id = str(uuid.uuid4())
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": raw_path,
        "rawQueryString": parts.query,
        "headers": header_map,
        "requestContext": {
            "accountId": ACCOUNT_ID,
            "apiId": API_ID,
            "domainName": header_map.get("host", "127.0.0.1"),
            "domainPrefix": API_ID,
            "http": {
                "method": method,
                "path": raw_path,
                "protocol": "HTTP/1.1",
                "sourceIp": source_ip,
                "userAgent": header_map.get("user-agent", ""),
            },
            "requestId": request_id,
            "routeKey": route_key,
            "stage": "$default",
            "time": datetime.fromtimestamp(now_ms / 1000, tz=UTC).strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "timeEpoch": now_ms,
        },
        "isBase64Encoded": False,
    }
    if "cookie" in header_map:
        event["cookies"] = [c.strip() for c in header_map.pop("cookie").split(";") if c.strip()]
    if parts.query:
        event["queryStringParameters"] = _join_values(parse_qsl(parts.query, keep_blank_values=True))
    if route.path_parameters is not None:
        event["pathParameters"] = dict(route.path_parameters)
    if body:
        try:
            event["body"] = body.decode("utf-8")
        except UnicodeDecodeError:
            event["body"] = base64.b64encode(body).decode("ascii")
            event["isBase64Encoded"] = True
    return event


def http_response(result: Any) -> tuple[int, list[tuple[str, str]], bytes]:
    """Turns a handler's return value into an HTTP response the way API Gateway (payload 2.0) does."""
    if not isinstance(result, Mapping) or "statusCode" not in result:
        # Payload 2.0 treats any other value as a 200 JSON body.
        return 200, [("content-type", "application/json")], json.dumps(result).encode()
    headers = [(str(k), str(v)) for k, v in (result.get("headers") or {}).items()]
    for name, values in (result.get("multiValueHeaders") or {}).items():
        headers.extend((str(name), str(v)) for v in values)
    headers.extend(("set-cookie", str(cookie)) for cookie in result.get("cookies") or [])
    raw = result.get("body") or ""
    body = base64.b64decode(raw) if result.get("isBase64Encoded") else str(raw).encode()
    return int(result["statusCode"]), headers, body


def json_response(status: int, payload: object) -> tuple[int, list[tuple[str, str]], bytes]:
    return status, [("content-type", "application/json")], json.dumps(payload).encode()


class Gateway(ThreadingHTTPServer):
    """The HTTP server. Binding happens in the constructor so a taken port fails before anything else starts."""

    daemon_threads = True

    def __init__(
        self,
        port: int,
        *,
        clock: Clock,
        api: Callable[[dict[str, Any]], Any],
        ops: Callable[[dict[str, Any]], Any],
        mcp: Callable[[dict[str, Any]], Any],
        controls: ControlHandler,
        edge: EdgeCache | None = None,
    ) -> None:
        self.clock = clock
        self.edge = edge
        self.functions = {"api": api, "ops": ops, "mcp": mcp}
        self.controls = controls
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", port), _GatewayRequestHandler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Ends idle keep-alive connections so their handler threads exit (clean shutdown)."""
        with self._connections_lock:
            for connection in self._connections:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)

    @property
    def port(self) -> int:
        return int(self.server_address[1])


class _GatewayRequestHandler(BaseHTTPRequestHandler):
    server: Gateway
    protocol_version = "HTTP/1.1"
    server_version = "route-health-sandbox"
    disable_nagle_algorithm = True  # headers and body are separate writes; avoid the 40 ms delayed-ACK stall

    def date_time_string(self, timestamp: float | None = None) -> str:
        return formatdate(self.server.clock() / 1000 if timestamp is None else timestamp, usegmt=True)

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s %s", self.address_string(), format % args)

    def _dispatch(self) -> None:
        try:
            status, headers, body = self._answer()
        except Exception:
            logger.exception("gateway error")
            status, headers, body = json_response(500, {"message": "Internal Server Error"})
        self.send_response(status)
        names = {name.lower() for name, _ in headers}
        for name, value in headers:
            if name.lower() not in {"content-length", "connection", "transfer-encoding"}:
                self.send_header(name, value)
        if "content-type" not in names and body:
            self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def __getattr__(self, name: str) -> Any:
        # Every method is answered the same way: the route table, not the handler, says what a path allows.
        # BaseHTTPRequestHandler looks for `do_<METHOD>` and answers its own 501 HTML page without one; API
        # Gateway answers an unusual method (TRACE, QUERY, ...) as any unmatched route: 404 JSON.
        if name.startswith("do_"):
            return self._dispatch
        raise AttributeError(name)

    def _answer(self) -> tuple[int, list[tuple[str, str]], bytes]:
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_REQUEST_BYTES:
            self.close_connection = True
            return json_response(413, {"message": "Request Entity Too Large"})
        body = self.rfile.read(length) if length > 0 else b""
        path = urlsplit(self.path).path
        if path == "/_sandbox" or path.startswith("/_sandbox/"):
            answer = self.server.controls(self.command, path, body)
            headers = [("content-type", "application/json"), *answer.headers.items()]
            return answer.status, headers, json.dumps(answer.body).encode()
        route = match_route(self.command, path)
        if route is None:
            return json_response(404, NOT_FOUND)
        chosen_ip = self.headers.get(SOURCE_IP_HEADER)
        try:
            source_ip = str(ipaddress.ip_address(chosen_ip.strip())) if chosen_ip else self.client_address[0]
        except ValueError:
            return json_response(400, {"message": f"{SOURCE_IP_HEADER} must be an IP address"})
        method, target, function = self.command, self.path, self.server.functions[route.function]
        headers = [(name, value) for name, value in self.headers.items() if name.lower() != SOURCE_IP_HEADER]

        def invoke() -> tuple[int, list[tuple[str, str]], bytes]:
            event = http_api_event(
                route=route,
                method=method,
                target=target,
                headers=headers,
                body=body,
                source_ip=source_ip,
                now_ms=self.server.clock(),
            )
            return http_response(function(event))

        edge = self.server.edge
        if edge is not None and route.function == "api" and cached_path(method, path):
            return edge.serve(target, invoke)
        return invoke()
