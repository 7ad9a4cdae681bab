"""The simulated retailers, and the fronts of the sandbox's relays: one small HTTP app, served on 127.0.0.1 or
called in-process.

Layout of the simulator's URL space (P = its port):

- `http://127.0.0.1:P/<retailer-host>/<original path>?<query>`: the retailer APIs of the 23 direct operations
  as the Lambda functions reach them (`loopback_transport` sends the specs' real `https://<retailer-host>/...`
  URLs here), counted and faulted as `direct:<key>`;
- `http://127.0.0.1:P/relay-upstream/<retailer-host>/...`: the same retailers as the relays reach them
  (`loopback_transport(..., entrance=RELAY_UPSTREAM)`), counted and faulted as `relay-upstream:<key>`. GS25
  stock answers only with the GS25 key in its `Api-Key` header (403 otherwise);
- `http://127.0.0.1:P/relays/<group>`: a relay base URL for the Lambda functions (e.g. `OY_RELAY_URL`): what
  Cloudflare's edge is in front of a real relay. It checks the Access keys (403 without them), counts
  `relay:<key>` and `relay-health:<group>`, applies `relay:<group>` faults and otherwise forwards the request
  unchanged to the group's reference relay (`connect_relays`), which answers everything else.

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
from functions.adapters.relay import RelayCredentials
from functions.catalog import spec_for
from functions.core import MAX_BODY_BYTES, RelayGroup, RouteKey
from sandbox.simulator.faults import RESPOND, Fault, FaultRegistry
from sandbox.simulator.routes import RELAY_HEALTH_PATHS, relay_route, retailer_route

RELAYS_PREFIX = "/relays/"
RELAY_UPSTREAM = "relay-upstream"
"""The entrance (and call-count and fault prefix) of the relays' own requests to the retailers."""
DIRECT = "direct"
HANG_LIMIT_S = 30.0
"""A `timeout` fault holds the request at most this long (or until the server shuts down)."""
RELAY_WAIT_S = 30.0
"""How long the front waits for a relay's answer (the relays end every request within 15 s)."""
CREDENTIAL_HEADERS = frozenset({"authorization", "cf-access-client-id", "cf-access-client-secret"})
HOP_BY_HOP = frozenset({"host", "content-length", "connection", "transfer-encoding", "keep-alive"})
RELAY_ANSWER_HEADERS = (
    "content-type",
    "cache-control",
    "x-request-id",
    "x-relay-cache",
    "x-relay-quota-reason",
    "retry-after",
)
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
    """The simulated retailers' and relay fronts' state (faults, call counts, credentials) and request handling.

    `relay_credentials` are what Cloudflare Access in front of each relay requires (its Access pair, if any)
    and, for the convenience group, the GS25 key GS25 accepts (`api_key`). Their tokens and Access keys are
    what leak detection looks for in requests to retailers (the GS25 key belongs there, in `Api-Key`).
    """

    def __init__(
        self,
        relay_credentials: Mapping[RelayGroup, RelayCredentials],
        *,
        signing_keys: Mapping[str, str] | None = None,
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
        self._idle = threading.Condition(self._lock)
        self._calls = self._zero_calls()
        self._in_flight = 0
        self._max_in_flight = 0
        self._relays: dict[RelayGroup, str] = {}
        self._relay_client = httpx.Client(timeout=RELAY_WAIT_S, trust_env=False)
        self.signing_keys: Mapping[str, str] = dict(signing_keys or {})
        """The keys the signing retailers (CGV) check signatures with, by secret name (`CGV_SIGNING_KEY`);
        the sandbox's relays are given the same. A key itself must never reach a retailer."""
        self._secrets = (
            *(
                value
                for creds in relay_credentials.values()
                for value in (creds.token, creds.access_client_id, creds.access_client_secret)
                if value
            ),
            *self.signing_keys.values(),
        )

    def connect_relays(self, base_urls: Mapping[RelayGroup, str]) -> None:
        """Where each group's relay listens: its front forwards there."""
        with self._lock:
            self._relays.update(base_urls)

    # --- observation -------------------------------------------------------------------------

    def calls(self) -> dict[str, int]:
        """Flat request counts since start (or the last reset): `direct:<key>`, `relay-upstream:<key>`,
        `relay:<key>`, `relay-health:<group>` and `leakedSecrets`."""
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
        self._relay_client.close()

    def reset(self, *, timeout_s: float = 5.0) -> None:
        """Back to how it started, still serving: no faults, the hanging or slow requests end now (waited
        for, up to `timeout_s`), and every counter at zero."""
        self.faults.clear()
        with self._idle:
            hanging, self._released = self._released, threading.Event()
        hanging.set()
        with self._idle:
            self._idle.wait_for(lambda: self._in_flight == 0, timeout_s)
            self._calls = self._zero_calls()
            self._max_in_flight = self._in_flight

    # --- handling ----------------------------------------------------------------------------

    def handle(self, request: SimRequest) -> SimResponse | None:
        """The response to send, or None to close the connection without any response."""
        with self._lock:
            self._in_flight += 1
            self._max_in_flight = max(self._max_in_flight, self._in_flight)
        try:
            path = urlsplit(request.target).path
            if path.startswith(RELAYS_PREFIX):
                return self._relay_front(request, path.removeprefix(RELAYS_PREFIX))
            if path.startswith(f"/{RELAY_UPSTREAM}/"):
                return self._retailer(request, path.removeprefix(f"/{RELAY_UPSTREAM}"), RELAY_UPSTREAM)
            return self._retailer(request, path, DIRECT)
        finally:
            with self._idle:
                self._in_flight -= 1
                self._idle.notify_all()

    def _retailer(self, request: SimRequest, path: str, caller: str) -> SimResponse | None:
        host, _, rest = path.lstrip("/").partition("/")
        key = retailer_route(host, "/" + rest)
        if key is None:
            return json_response(404, {"error": STATUS_MESSAGES[404]})
        self._count(f"{caller}:{key}")
        if self._carries_secret(request):
            self._count("leakedSecrets")
        return self._apply(
            self.faults.get(f"{caller}:{key}"),
            key,
            answer=lambda: self._retailer_answer(key, request, "/" + rest),
        )

    def _retailer_answer(self, key: RouteKey, request: SimRequest, path: str) -> SimResponse:
        if key is RouteKey.GS25_STOCK and not self._gs25_accepts(request.headers.get("api-key")):
            return json_response(403, {"message": "Forbidden"})  # GS25 without its key
        if not self._signature_accepted(key, request, path):
            # CGV's edge: no browser User-Agent, or a signature under another key (a rotated one).
            return SimResponse(403, HTML_PAGE, {"Content-Type": "text/html; charset=utf-8"})
        return json_response(200, self._payload(key, _input_of(request)))

    def _signature_accepted(self, key: RouteKey, request: SimRequest, path: str) -> bool:
        """A signed operation's request (CGV) needs a browser User-Agent and a signature of `path` at its
        `X-TIMESTAMP` under the simulated retailer's key. Any timestamp is accepted (CGV's tolerance is
        unknown, and the sandbox's clock can be moved)."""
        signing = spec_for(key).signing
        if signing is None:
            return True
        signing_key = self.signing_keys.get(signing.secret)
        timestamp = request.headers.get("x-timestamp", "")
        if not (signing_key and timestamp.isascii() and timestamp.isdigit()):
            return False
        if not request.headers.get("user-agent", "").startswith("Mozilla/5.0 "):
            return False
        expected = signing.headers(signing_key, path, int(timestamp) * 1000)
        return expected["X-TIMESTAMP"] == timestamp and hmac.compare_digest(
            expected["X-SIGNATURE"].encode(), request.headers.get("x-signature", "").encode()
        )

    def _gs25_accepts(self, api_key: str | None) -> bool:
        creds = self._credentials.get(RelayGroup.CONVENIENCE)
        expected = creds.api_key if creds is not None else None
        return (
            expected is not None
            and api_key is not None
            and hmac.compare_digest(api_key.encode("utf-8", "surrogatepass"), expected.encode())
        )

    def _relay_front(self, request: SimRequest, rest: str) -> SimResponse | None:
        group_name, _, path = rest.partition("/")
        if group_name not in {group.value for group in RelayGroup}:
            return json_response(404, {"error": STATUS_MESSAGES[404]})
        group = RelayGroup(group_name)
        path = "/" + path
        # A `/v1/<group>/` path names its own group: CGV's go through the Dtryx relay's URL by default.
        called = next((g for g in RelayGroup if path.startswith(f"/v1/{g}/")), group)
        key = None
        if path == RELAY_HEALTH_PATHS[called]:
            self._count(f"relay-health:{called}")
        elif (key := relay_route(called, path.removeprefix(f"/v1/{called}/"))) is not None:
            self._count(f"relay:{key}")
        denied = self._access_refusal(group, request)
        if denied:
            return denied
        return self._apply(
            self.faults.get(f"relay:{group}"),
            key,
            relay=True,
            answer=lambda: self._forward(group, request, path),
        )

    def _forward(self, group: RelayGroup, request: SimRequest, path: str) -> SimResponse | None:
        """The group's relay's own answer to the request, unchanged; None (the connection dropped) when the
        relay is unreachable, as Cloudflare's edge would fail."""
        with self._lock:
            base = self._relays.get(group)
        if base is None:
            return json_response(502, {"error": f"no relay connected for {group}"})
        query = urlsplit(request.target).query
        try:
            answer = self._relay_client.request(
                request.method,
                f"{base}{path}" + (f"?{query}" if query else ""),
                headers={name: value for name, value in request.headers.items() if name not in HOP_BY_HOP},
                content=request.body,
            )
        except httpx.HTTPError:
            return None
        headers = {name: answer.headers[name] for name in RELAY_ANSWER_HEADERS if name in answer.headers}
        return SimResponse(answer.status_code, answer.content, headers)

    def _access_refusal(self, group: RelayGroup, request: SimRequest) -> SimResponse | None:
        """What Cloudflare Access answers in front of a relay whose Access pair the request lacks."""
        creds = self._credentials.get(group)
        if creds is None or not (creds.access_client_id and creds.access_client_secret):
            return None
        access_ok = hmac.compare_digest(
            request.headers.get("cf-access-client-id", "").encode(), creds.access_client_id.encode()
        ) & hmac.compare_digest(
            request.headers.get("cf-access-client-secret", "").encode(), creds.access_client_secret.encode()
        )
        return None if access_ok else SimResponse(403, b"Forbidden", {"Content-Type": "text/plain"})

    def _apply(
        self,
        fault: Fault,
        key: RouteKey | None,
        *,
        answer: Callable[[], SimResponse | None],
        relay: bool = False,
    ) -> SimResponse | None:
        """The response under `fault`; `answer()` builds the normal response. `key` None: a health check."""
        if fault.delay_ms is not None:
            self._released.wait(fault.delay_ms / 1000)
        if fault.name == RESPOND:
            assert fault.status is not None
            return SimResponse(fault.status, fault.body, {"Content-Type": fault.content_type})
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
        calls = {f"{kind}:{key}": 0 for kind in (DIRECT, RELAY_UPSTREAM, "relay") for key in RouteKey}
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
    """Sends requests for `https://<retailer-host>/<path>` to `<simulator>[/<entrance>]/<retailer-host>/<path>`
    via `inner`. Requests already addressed to the simulator (the relay fronts) pass through unchanged.
    """

    def __init__(self, sim_base_url: str, inner: httpx.BaseTransport, *, entrance: str | None = None) -> None:
        self._base = httpx.URL(sim_base_url)
        self._inner = inner
        self._prefix = f"/{entrance}" if entrance else ""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if (url.host, url.port) != (self._base.host, self._base.port):
            path = f"{self._prefix}/{url.host}{url.raw_path.decode('ascii')}"
            url = self._base.copy_with(raw_path=path.encode("ascii"))
            headers = httpx.Headers(request.headers)
            headers["Host"] = self._base.netloc.decode("ascii")
            request = httpx.Request(
                request.method, url, headers=headers, stream=request.stream, extensions=request.extensions
            )
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()


def loopback_transport(sim_base_url: str, *, entrance: str | None = None) -> httpx.BaseTransport:
    """An httpx transport that makes the unchanged specs reach the simulator at `sim_base_url` (through
    `entrance`: `RELAY_UPSTREAM` for the relays' own calls; none for the Lambda functions').

    Each upstream host keeps its own connection pool with the production limits, as deployed: the simulator
    is one host, and a single pool for it would hide what one slow upstream does to the others.
    """
    return PerHostTransport(wrap=lambda pool: LoopbackTransport(sim_base_url, pool, entrance=entrance))
