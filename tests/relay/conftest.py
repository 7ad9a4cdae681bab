"""The reference relay in-process: its real app (through `httpx.ASGITransport`, on an event loop of its own),
a manual clock, and the simulated retailers behind it as an `httpx.MockTransport` (realistic answers from the
sandbox's payloads)."""

from __future__ import annotations

import functools
import io
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio.from_thread
import httpx
import pytest

from functions.catalog import spec_for
from functions.core import RelayGroup, RouteKey
from relay.app import POLICIES, GroupPolicy, RelayApp
from relay.config import GroupConfig, RelayConfig
from relay.logs import RelayLog
from relay.server import build_apps
from sandbox.simulator.payloads import realistic_payload, request_fields
from sandbox.simulator.routes import retailer_route
from tests.support.clock import ManualClock

TOKENS = {
    RelayGroup.OLIVEYOUNG: "oy-relay-token-0123456789",
    RelayGroup.CONVENIENCE: "cvs-relay-token-0123456789",
    RelayGroup.DTRYX: "dtryx-relay-token-0123456789",
}
TOKENS[RelayGroup.CGV] = TOKENS[RelayGroup.DTRYX]  # the Dtryx relay's process serves CGV, with its token
PROCESS_GROUPS = (RelayGroup.OLIVEYOUNG, RelayGroup.CONVENIENCE, RelayGroup.DTRYX)
"""The groups configured on their own; CGV comes with Dtryx when the relay has CGV's signing key."""
CGV_SIGNING_KEY = "made-up-cgv-key-for-the-relay-tests-0123456"
START_MS = 1_796_000_000_000  # a fixed instant, 20 s into a UTC minute
Answer = Callable[[httpx.Request], httpx.Response]


def probe_body(key: RouteKey) -> dict[str, Any]:
    """The relay body the Lambda sends for the probe's parameters."""
    spec = spec_for(key)
    return dict(spec.relay_body(spec.probe_params(START_MS)))


def auth(group: RelayGroup) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[group]}"}


def path_of(key: RouteKey) -> str:
    from functions.core import group_of

    return f"/v1/{group_of(key)}/{spec_for(key).relay_operation}"


@dataclass
class Retailers:
    """The retailers as the relay sees them. `answers[key]` replaces one operation's answer; while `hold`
    is set, calls wait for `release` (to keep calls in flight)."""

    answers: dict[RouteKey, Answer] = field(default_factory=dict)
    others: dict[str, Answer] = field(default_factory=dict)
    """Answers for URLs that are no lookup operation's (GS25's token renewal)."""
    requests: list[httpx.Request] = field(default_factory=list)
    held: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)
    hold: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            self.requests.append(request)
        if self.hold:
            self.held.set()
            assert self.released.wait(10), "a held retailer call was never released"
        url = str(request.url)
        if url in self.others:
            return self.others[url](request)
        key = retailer_route(request.url.host, request.url.path)
        if key is None:
            return httpx.Response(404)
        if not signed_as_cgv_wants(key, request):
            return httpx.Response(403, text="<html>Forbidden</html>")
        if key in self.answers:
            return self.answers[key](request)
        body = json.loads(request.content) if request.content else None
        return httpx.Response(200, json=realistic_payload(key, request_fields(str(request.url), body)))

    def calls(self, key: RouteKey | None = None) -> int:
        with self._lock:
            return sum(
                1 for r in self.requests if key is None or retailer_route(r.url.host, r.url.path) is key
            )


def signed_as_cgv_wants(key: RouteKey, request: httpx.Request) -> bool:
    """A CGV request must carry the signature of its path at its own timestamp under `CGV_SIGNING_KEY`."""
    signing = spec_for(key).signing
    if signing is None:
        return True
    timestamp = request.headers.get("x-timestamp", "")
    if not timestamp.isdigit():
        return False
    expected = signing.headers(CGV_SIGNING_KEY, request.url.path, int(timestamp) * 1000)
    return bool(request.headers.get("x-signature") == expected["X-SIGNATURE"])


class AppClient:
    """A synchronous, thread-safe client of an ASGI app running on one event loop in a background thread
    (as a server would run it), so that tests can keep several requests in flight."""

    def __init__(self, app: RelayApp, resources: ExitStack) -> None:
        self._portal = resources.enter_context(anyio.from_thread.start_blocking_portal())
        self._client = httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://relay.test")
        resources.callback(self._portal.call, self._client.aclose)

    def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        send = functools.partial(self._client.request, method, path, **kwargs)
        response: httpx.Response = self._portal.call(send)
        return response

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, **kwargs)

    def run(self, function: Callable[[], Any]) -> Any:
        """Runs an async function on the app's event loop."""
        return self._portal.call(function)


@dataclass
class RelayUnderTest:
    client: AppClient
    app: RelayApp
    retailers: Retailers
    clock: ManualClock
    log: io.StringIO
    state_dirs: Mapping[RelayGroup, Path]

    def post(
        self, key: RouteKey, body: object | None = None, headers: Mapping[str, str] | None = None
    ) -> httpx.Response:
        from functions.core import group_of

        payload = probe_body(key) if body is None else body
        return self.client.post(
            path_of(key),
            content=json.dumps(payload, ensure_ascii=False).encode(),
            headers={**auth(group_of(key)), **(headers or {})},
        )

    def log_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.getvalue().splitlines()]

    def health(self, group: RelayGroup) -> dict[str, Any]:
        """The group's health answer (Olive Young's relay serves it at its legacy path)."""
        path = "/health" if group is RelayGroup.OLIVEYOUNG else f"/v1/{group}/health"
        body: dict[str, Any] = self.client.get(path, headers=auth(group)).json()
        return body


def wait_until(condition: Callable[[], bool], what: str) -> None:
    """Waits for background work (a cache fill, a coalesced call) to show, failing after 5 s."""
    deadline = time.monotonic() + 5
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.005)


RelayFactory = Callable[..., RelayUnderTest]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START_MS)


@pytest.fixture
def retailers() -> Iterator[Retailers]:
    found = Retailers()
    yield found
    found.released.set()


@pytest.fixture
def make_relay(tmp_path: Path, clock: ManualClock, retailers: Retailers) -> Iterator[RelayFactory]:
    """Builds the relay app for `groups` (all three, and CGV beside Dtryx, by default, on one port) with a
    client for it."""
    resources = ExitStack()

    def make(
        groups: tuple[RelayGroup, ...] = PROCESS_GROUPS,
        *,
        policies: Mapping[RelayGroup, GroupPolicy] | None = None,
        gs25_api_key: str | None = None,
        gs25_session_file: Path | None = None,
        cgv_signing_key: str | None = CGV_SIGNING_KEY,
        state_root: Path | None = None,
        **policy_changes: Any,
    ) -> RelayUnderTest:
        root = state_root or tmp_path / "state"
        state_dirs = {group: root / group.value for group in groups}
        for directory in state_dirs.values():
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        config = RelayConfig(
            tuple(GroupConfig(group, TOKENS[group], state_dirs[group], 4320) for group in groups),
            gs25_api_key=gs25_api_key,
            gs25_session_file=gs25_session_file,
            cgv_signing_key=cgv_signing_key,
        )
        chosen = dict(policies or POLICIES)
        if policy_changes:
            chosen = {group: replace(policy, **policy_changes) for group, policy in chosen.items()}
        log = io.StringIO()
        apps = build_apps(
            config,
            log=RelayLog(log),
            clock=clock,
            transport=httpx.MockTransport(retailers.handle),
            policies=chosen,
        )
        (app,) = apps.values()
        resources.callback(app.close)
        return RelayUnderTest(AppClient(app, resources), app, retailers, clock, log, state_dirs)

    with resources:
        yield make
        retailers.released.set()


@pytest.fixture
def relay(make_relay: RelayFactory) -> RelayUnderTest:
    return make_relay()
