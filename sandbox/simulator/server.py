"""The simulated retailers and relays: one small HTTP app, served on 127.0.0.1 or called in-process.

Layout of the simulator's URL space (P = its port):

- `http://127.0.0.1:P/<retailer-host>/<original path>?<query>`: the retailer APIs of the 19 direct operations
  (`loopback_transport` sends the specs' real `https://<retailer-host>/...` URLs here unchanged otherwise);
- `http://127.0.0.1:P/relays/<group>`: a relay base URL (e.g. `OY_RELAY_URL`), speaking the relay protocol:
  Bearer auth (401 `{"error":"Unauthorized"}`), `POST /v1/<group>/<operation>` with the real relays' input
  rules (400/413 for a body they would refuse), and the group's health URL. Like a relay without a GS25
  session, the convenience relay serves gs25-stock only with the GS25 API key in the body (`apiKey`); GS25's
  refusal of any other key it passes on as 403 `{"error":"Relay request failed"}`.

`Simulator.handle` is the whole app (usable without sockets); `SimulatorServer` serves it over HTTP.
"""

from __future__ import annotations

import hmac
import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

import httpx

from functions.adapters.http import PerHostTransport
from functions.adapters.relay import RELAY_FAILURE_BODY, RelayCredentials
from functions.catalog.relay_inputs import RelayInputRejected, read_relay_input
from functions.core import MAX_BODY_BYTES, RelayGroup, RouteKey
from sandbox.simulator.faults import Fault, FaultRegistry
from sandbox.simulator.routes import RELAY_HEALTH_PATHS, relay_route, retailer_route

RELAYS_PREFIX = "/relays/"
HANG_LIMIT_S = 30.0
"""A `timeout` fault holds the request at most this long (or until the server shuts down)."""
CREDENTIAL_HEADERS = frozenset({"authorization", "cf-access-client-id", "cf-access-client-secret"})
HTML_PAGE = (
    b"<!DOCTYPE html><html><head><title>Security verification</title></head>"
    b"<body>Checking your browser before accessing the site.</body></html>"
)
INVALID_JSON = b'{"status": "SUCCESS", "data": {"storeList": ['
STATUS_MESSAGES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    422: "Unprocessable Entity",
    429: "Relay quota exceeded",
    500: "Internal Server Error",
    502: "Upstream unavailable",
    503: "Relay busy",
}
RETRY_AFTER_S = "30"


@dataclass(frozen=True, slots=True)
class SimRequest:
    method: str
    target: str
    """Path and query as sent, e.g. `/www.pocketcu.co.kr/api/store` or `/relays/dtryx/v1/dtryx/movies`."""
    headers: Mapping[str, str]
    """Lower-cased names."""
    body: bytes = b""


@dataclass(frozen=True, slots=True)
class SimResponse:
    status: int
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=lambda: {"Content-Type": "application/json"})


def json_response(status: int, body: object, headers: Mapping[str, str] | None = None) -> SimResponse:
    return SimResponse(
        status,
        json.dumps(body, ensure_ascii=False).encode(),
        {"Content-Type": "application/json; charset=utf-8", **(headers or {})},
    )


def oversize_body() -> bytes:
    """A valid JSON document of exactly 2 MiB + 1 byte."""
    shell = b'{"padding":""}'
    return b'{"padding":"' + b"a" * (MAX_BODY_BYTES + 1 - len(shell)) + b'"}'


class Simulator:
    """The simulated upstreams' state (faults, call counts, relay credentials) and request handling.

    `relay_credentials` are what each relay accepts (the convenience relay's `api_key`: the GS25 key GS25
    accepts); their values are also what leak detection looks for in requests to retailers. A group without
    credentials answers every relay request with 401.
    """

    def __init__(
        self,
        relay_credentials: Mapping[RelayGroup, RelayCredentials],
        *,
        hang_limit_s: float = HANG_LIMIT_S,
        realistic: Callable[[RouteKey, Mapping[str, Any]], object] | None = None,
        bad_shape: Callable[[RouteKey], object] | None = None,
    ) -> None:
        self._realistic = realistic
        self._bad_shape_payload = bad_shape
        self.faults = FaultRegistry()
        self._credentials = dict(relay_credentials)
        self._hang_limit_s = hang_limit_s
        self._released = threading.Event()
        self._lock = threading.Lock()
        self._calls = self._zero_calls()
        self._in_flight = 0
        self._max_in_flight = 0
        self._secrets = tuple(
            value
            for creds in relay_credentials.values()
            for value in (creds.token, creds.access_client_id, creds.access_client_secret, creds.api_key)
            if value
        )

    # --- observation -------------------------------------------------------------------------

    def calls(self) -> dict[str, int]:
        """Flat request counts since start (or the last reset): `direct:<key>`, `relay:<key>`,
        `relay-health:<group>` and `leakedSecrets`."""
        with self._lock:
            return dict(self._calls)

    def reset_calls(self) -> None:
        with self._lock:
            self._calls = self._zero_calls()

    def max_in_flight(self) -> int:
        """The most requests the simulator was handling at the same time since start (or the last reset)."""
        with self._lock:
            return self._max_in_flight

    def reset_max_in_flight(self) -> None:
        with self._lock:
            self._max_in_flight = self._in_flight

    def release(self) -> None:
        """Ends every hanging or slow request now and from now on (called on shutdown)."""
        self._released.set()

    # --- handling ----------------------------------------------------------------------------

    def handle(self, request: SimRequest) -> SimResponse | None:
        """The response to send, or None to close the connection without any response."""
        with self._lock:
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
        try:
            path = urlsplit(request.target).path
            if path.startswith(RELAYS_PREFIX):
                return self._relay(request, path.removeprefix(RELAYS_PREFIX))
            return self._retailer(request, path)
        finally:
            with self._lock:
                self._in_flight -= 1

    def _retailer(self, request: SimRequest, path: str) -> SimResponse | None:
        host, _, rest = path.lstrip("/").partition("/")
        key = retailer_route(host, "/" + rest)
        if key is None:
            return json_response(404, {"error": STATUS_MESSAGES[404]})
        self._count(f"direct:{key}")
        if self._carries_secret(request):
            self._count("leakedSecrets")
        fault = self.faults.get(f"direct:{key}")
        return self._apply(
            fault, key, relay=False, answer=lambda: json_response(200, self._payload(key, _input_of(request)))
        )

    def _relay(self, request: SimRequest, rest: str) -> SimResponse | None:
        group_name, _, path = rest.partition("/")
        if group_name not in {group.value for group in RelayGroup}:
            return json_response(404, {"error": STATUS_MESSAGES[404]})
        group = RelayGroup(group_name)
        path = "/" + path
        if path == RELAY_HEALTH_PATHS[group]:
            if request.method != "GET":
                return json_response(405, {"error": STATUS_MESSAGES[405]})
            self._count(f"relay-health:{group}")
            return self._refusal(group, request) or self._apply(
                self.faults.get(f"relay:{group}"),
                None,
                relay=True,
                answer=lambda: json_response(200, _healthy_body(group)),
            )
        operation = path.removeprefix(f"/v1/{group}/")
        key = relay_route(group, operation) if operation != path else None
        if key is None:
            return json_response(404, {"error": STATUS_MESSAGES[404]})
        if request.method != "POST":
            return json_response(405, {"error": STATUS_MESSAGES[405]})
        self._count(f"relay:{key}")
        denied = self._refusal(group, request)
        if denied:
            return denied
        return self._apply(
            self.faults.get(f"relay:{group}"),
            key,
            relay=True,
            answer=lambda: self._relay_answer(key, request),
        )

    def _relay_answer(self, key: RouteKey, request: SimRequest) -> SimResponse:
        """The relay's own answer: its input rules first, then GS25's check of the key, then the retailer's."""
        try:
            body = read_relay_input(key, request.body)
        except RelayInputRejected as rejected:
            return json_response(rejected.status, rejected.body)
        api_key = body.pop("apiKey", None)  # the relay sends it to GS25 as a header, never as a parameter
        if key is RouteKey.GS25_STOCK and not self._gs25_accepts(api_key):
            return json_response(403, RELAY_FAILURE_BODY)
        return json_response(200, self._payload(key, body))

    def _gs25_accepts(self, api_key: object) -> bool:
        creds = self._credentials.get(RelayGroup.CONVENIENCE)
        expected = creds.api_key if creds is not None else None
        return (
            expected is not None
            and isinstance(api_key, str)
            and hmac.compare_digest(api_key.encode("utf-8", "surrogatepass"), expected.encode())
        )

    def _refusal(self, group: RelayGroup, request: SimRequest) -> SimResponse | None:
        """None when the request carries the group's credentials; else the relay's refusal."""
        creds = self._credentials.get(group)
        presented = request.headers.get("authorization", "").encode()
        if creds is None or not hmac.compare_digest(presented, f"Bearer {creds.token}".encode()):
            return json_response(401, {"error": "Unauthorized"})
        if creds.access_client_id and creds.access_client_secret:
            access_ok = hmac.compare_digest(
                request.headers.get("cf-access-client-id", "").encode(), creds.access_client_id.encode()
            ) & hmac.compare_digest(
                request.headers.get("cf-access-client-secret", "").encode(),
                creds.access_client_secret.encode(),
            )
            if not access_ok:  # what Cloudflare Access answers in front of the relay
                return SimResponse(403, b"Forbidden", {"Content-Type": "text/plain"})
        return None

    def _apply(
        self, fault: Fault, key: RouteKey | None, *, relay: bool, answer: Callable[[], SimResponse]
    ) -> SimResponse | None:
        """The response under `fault`; `answer()` builds the normal response. `key` None: a health check."""
        if fault.delay_ms is not None:
            self._released.wait(fault.delay_ms / 1000)
        if fault.status is not None:
            headers = {"Retry-After": RETRY_AFTER_S} if fault.status == 429 else {}
            if fault.status == 429 and relay:
                headers["x-relay-quota-reason"] = "minute"
            return json_response(fault.status, {"error": STATUS_MESSAGES[fault.status]}, headers)
        if fault.name == "timeout":
            self._released.wait(self._hang_limit_s)
            return None
        if fault.name == "refuse":
            return None
        if fault.name == "html-200":
            return SimResponse(200, HTML_PAGE, {"Content-Type": "text/html; charset=utf-8"})
        if fault.name == "invalid-json":
            return SimResponse(200, INVALID_JSON)
        if fault.name == "oversize":
            return SimResponse(200, oversize_body())
        if fault.name == "bad-shape":
            return json_response(200, _unready_body() if key is None else self._bad_shape(key))
        return answer()

    def _payload(self, key: RouteKey, request_input: Mapping[str, Any]) -> object:
        if self._realistic is not None:
            return self._realistic(key, request_input)
        from sandbox.simulator import payloads  # imports the whole catalog: only when first needed

        return payloads.realistic_payload(key, request_input)

    def _bad_shape(self, key: RouteKey) -> object:
        if self._bad_shape_payload is not None:
            return self._bad_shape_payload(key)
        from sandbox.simulator import payloads

        return payloads.bad_shape_payload(key)

    def _carries_secret(self, request: SimRequest) -> bool:
        if CREDENTIAL_HEADERS.intersection(request.headers):
            return True
        haystack = " ".join(
            [
                request.target,
                unquote(request.target),
                *request.headers.values(),
                request.body.decode("utf-8", "replace"),
            ]
        )
        return any(secret in haystack for secret in self._secrets)

    def _count(self, name: str) -> None:
        with self._lock:
            self._calls[name] = self._calls.get(name, 0) + 1

    @staticmethod
    def _zero_calls() -> dict[str, int]:
        calls = {f"direct:{key}": 0 for key in RouteKey}
        calls.update({f"relay:{key}": 0 for key in RouteKey})
        calls.update({f"relay-health:{group}": 0 for group in RelayGroup})
        calls["leakedSecrets"] = 0
        return calls


def _input_of(request: SimRequest) -> dict[str, Any]:
    """What the retailer received: its query parameters, overlaid by a JSON object body if any."""
    merged: dict[str, Any] = dict(parse_qsl(urlsplit(request.target).query, keep_blank_values=True))
    if request.body:
        try:
            body = json.loads(request.body)
        except ValueError:
            body = None
        if isinstance(body, dict):
            merged.update(body)
    return merged


def _healthy_body(group: RelayGroup) -> dict[str, object]:
    if group is RelayGroup.OLIVEYOUNG:
        return {
            "state": "ready",
            "transport": "http",
            "browserRequired": False,
            "active": 0,
            "outstanding": 0,
        }
    return {"status": "ok", "active": 0, "outstanding": 0, "queued": 0}


def _unready_body() -> dict[str, object]:
    """A health body that is well-formed but not the documented healthy one (for `bad-shape`)."""
    return {"state": "starting", "status": "degraded"}


# --- HTTP server ---------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        request = SimRequest(
            self.command, self.path, {name.lower(): value for name, value in self.headers.items()}, body
        )
        response = self.server.simulator.handle(request)
        if response is None:  # a `refuse` or `timeout` fault: drop the connection without answering
            self.close_connection = True
            return
        try:
            self.send_response(response.status)
            for name, value in response.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(response.body)))
            self.end_headers()
            self.wfile.write(response.body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (deadline, size cap)
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _serve

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: request lines would only repeat the call counts."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 128  # the default 5 drops bursts of connections (1 s SYN retries) no retailer drops

    def __init__(self, address: tuple[str, int], simulator: Simulator) -> None:
        self.simulator = simulator
        super().__init__(address, _Handler)


class SimulatorServer:
    """Serves a `Simulator` on 127.0.0.1 (port 0 picks a free one) from a background thread."""

    def __init__(self, simulator: Simulator, *, port: int = 0) -> None:
        self.simulator = simulator
        self._server = _Server(("127.0.0.1", port), simulator)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="simulator", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def relay_url(self, group: RelayGroup) -> str:
        """The base URL to configure as the group's relay (e.g. `OY_RELAY_URL`)."""
        return f"{self.base_url}/relays/{group}"

    def start(self) -> SimulatorServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self.simulator.release()
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> SimulatorServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


# --- client-side redirection ---------------------------------------------------------------------


class LoopbackTransport(httpx.BaseTransport):
    """Sends requests for `https://<retailer-host>/<path>` to `<simulator>/<retailer-host>/<path>` via `inner`.

    Requests already addressed to the simulator (the relays) pass through unchanged.
    """

    def __init__(self, sim_base_url: str, inner: httpx.BaseTransport) -> None:
        self._base = httpx.URL(sim_base_url)
        self._inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if (url.host, url.port) != (self._base.host, self._base.port):
            url = self._base.copy_with(raw_path=f"/{url.host}{url.raw_path.decode('ascii')}".encode("ascii"))
            headers = httpx.Headers(request.headers)
            headers["Host"] = self._base.netloc.decode("ascii")
            request = httpx.Request(
                request.method, url, headers=headers, stream=request.stream, extensions=request.extensions
            )
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()


def loopback_transport(sim_base_url: str) -> httpx.BaseTransport:
    """An httpx transport that makes the unchanged specs reach the simulator at `sim_base_url`.

    Each upstream host keeps its own connection pool with the production limits, as deployed: the simulator
    is one host, and a single pool for it would hide what one slow upstream does to the others.
    """
    return PerHostTransport(wrap=lambda pool: LoopbackTransport(sim_base_url, pool))
