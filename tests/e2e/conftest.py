"""Starts `route-health sandbox` once per session (on a port the OS picks) and drives it over real HTTP."""

from __future__ import annotations

import secrets
import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from functions.core.model import COOLDOWN_MS, PROBE_SLOT_MS
from sandbox.process import sandbox_process
from sandbox.scheduler import slot_start

SETTLE_PAST_SLOT_START_MS = 1_000


@dataclass
class Sandbox:
    """A running sandbox: its URL, the operator secret, an HTTP client and the captured output."""

    url: str
    secret: str
    http: httpx.Client
    stdout: Path
    stderr: Path
    process: subprocess.Popen[bytes]

    def output(self) -> str:
        return self.stdout.read_text(errors="replace") + self.stderr.read_text(errors="replace")

    def control(self, method: str, path: str, payload: object = None) -> httpx.Response:
        response = self.http.request(method, f"/_sandbox/{path}", json=payload)
        assert response.status_code == 200, response.text
        return response

    def fault(self, target: str, fault: str) -> None:
        self.control("POST", "faults", {"target": target, "fault": fault})

    def clear_faults(self) -> None:
        self.control("DELETE", "faults")

    def calls(self) -> dict[str, int]:
        counts: dict[str, int] = self.control("GET", "calls").json()
        return counts

    def advance(self, ms: int) -> dict[str, Any]:
        moved: dict[str, Any] = self.control("POST", "clock", {"advanceMs": ms}).json()
        return moved

    def probe(self) -> dict[str, Any]:
        summary: dict[str, Any] = self.control("POST", "probe").json()
        return summary

    def now(self) -> int:
        now: int = self.control("GET", "clock").json()["now"]
        return now

    def settle(self) -> None:
        """Moves past every cooldown to just after a slot start (the scheduled probe runs), then waits until
        the lookup container has loaded the new snapshot (its 30 s cache went stale with the move).

        The sandbox clock follows real time, so without the alignment a slot boundary could fall anywhere in
        a test and the background scheduler would probe in the middle of it. Landing 1 s past a slot start
        leaves each test about 299 s of sandbox time before the next boundary (real time barely moves), and
        keeps a test's whole-slot moves (COOLDOWN_MS == PROBE_SLOT_MS) landing 1 s into a slot.
        """
        now = self.now()
        self.advance(slot_start(now + COOLDOWN_MS) + PROBE_SLOT_MS + SETTLE_PAST_SLOT_START_MS - now)
        deadline = time.monotonic() + 10
        while True:
            _, delta = self.lookup("/api/seveneleven/popwords")
            if delta.get("direct:seven-popwords") == 1:
                return
            assert time.monotonic() < deadline, f"the lookup container never went direct again: {delta}"
            time.sleep(0.05)

    def assert_nothing_leaked(self) -> None:
        """No simulated retailer saw a relay token or Access key; the operator secret is not in the output."""
        assert self.calls()["leakedSecrets"] == 0
        output = self.output()
        assert "ready: " in output
        assert self.secret not in output

    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.secret}"}

    def health(self) -> dict[str, Any]:
        response = self.http.get("/api/health/routes", headers=self.auth())
        assert response.status_code == 200, response.text
        data: dict[str, Any] = response.json()["data"]
        return data

    def lookup(
        self,
        path: str,
        params: Mapping[str, str | int | float] | None = None,
        *,
        relay_upstream: bool = False,
    ) -> tuple[httpx.Response, dict[str, int]]:
        """One lookup and the calls the Lambda functions made for it (non-zero deltas of /_sandbox/calls).
        The relays' own requests to the retailers (`relay-upstream:<key>`, which the relay's cache may
        spare) are left out unless `relay_upstream`."""
        before = self.calls()
        response = self.http.get(path, params=params)
        after = self.calls()
        delta = {
            name: after[name] - before.get(name, 0)
            for name in after
            if after[name] != before.get(name, 0)
            and (relay_upstream or not name.startswith("relay-upstream:"))
        }
        return response, delta

    def assert_refused_before_any_call(self, path: str, params: Mapping[str, str | int | float]) -> None:
        """The lookup answers 400 `INVALID_INPUT`, and nothing was called upstream for it."""
        response, calls = self.lookup(path, params)
        assert response.status_code == 400, (params, response.text)
        assert response.json()["error"]["code"] == "INVALID_INPUT"
        assert calls == {}


@contextmanager
def running_sandbox(
    workdir: Path,
    settings: Mapping[str, str] | None = None,
    *,
    secret: str | None = None,
    edge_cache: bool = False,
) -> Iterator[Sandbox]:
    """`route-health sandbox` in a subprocess; yields once it printed `ready:`; checks it stops cleanly.
    `secret`: the operator secret (default: a new random one). The edge cache (`--no-edge-cache` unless
    `edge_cache`) and the functions' answer caches (unless `settings` turn them on) are off: the tests count the
    upstream calls of repeated lookups."""
    secret = secret or secrets.token_urlsafe(24)
    settings = {"RESPONSE_CACHE": "off", **(settings or {})}
    with (
        sandbox_process(
            workdir, health_check_secret=secret, settings=settings, edge_cache=edge_cache
        ) as started,
        httpx.Client(base_url=started.url, timeout=30) as http,
    ):
        yield Sandbox(started.url, secret, http, started.stdout, started.stderr, started.process)
    assert started.process.returncode == 0, started.stderr_tail()


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """The shared sandbox. After the whole session (whatever the test order) nothing may have leaked."""
    with running_sandbox(tmp_path_factory.mktemp("sandbox")) as started:
        yield started
        started.assert_nothing_leaked()
    assert started.secret not in started.output()  # nor in what it printed while stopping


@pytest.fixture
def fresh(sandbox: Sandbox) -> Iterator[Sandbox]:
    """The sandbox with no faults, every block expired and a just-probed, just-loaded snapshot."""
    sandbox.clear_faults()
    sandbox.settle()
    yield sandbox
    sandbox.clear_faults()


DAILY_RATE_LIMIT = 5
"""The daily quota sandbox's limit: small, so a test can use it up quickly."""


@pytest.fixture(scope="session")
def quota_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """A sandbox of its own whose lookup function allows DAILY_RATE_LIMIT lookups per client and day."""
    settings = {"DAILY_RATE_LIMIT": str(DAILY_RATE_LIMIT)}
    with running_sandbox(tmp_path_factory.mktemp("quota-sandbox"), settings) as started:
        yield started
        started.assert_nothing_leaked()


@pytest.fixture
def just_started(tmp_path: Path) -> Iterator[Sandbox]:
    """A sandbox of its own, used right after it printed `ready:` (for start-up behaviour)."""
    with running_sandbox(tmp_path) as started:
        yield started
