"""Starts `route-health sandbox` once per session on a free 127.0.0.1 port and drives it over real HTTP."""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from functions.core.model import COOLDOWN_MS

READY_TIMEOUT_S = 90.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _route_health_command() -> str:
    beside_python = Path(sys.executable).parent / "route-health"
    found = str(beside_python) if beside_python.exists() else shutil.which("route-health")
    assert found, "the route-health console script is not installed (make install)"
    return found


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

    def settle(self) -> None:
        """Moves past every cooldown into a new slot (the scheduled probe runs), then waits until the lookup
        container has loaded the new snapshot (its 30 s cache went stale with the move)."""
        self.advance(COOLDOWN_MS + 1_000)
        deadline = time.monotonic() + 10
        while True:
            _, delta = self.lookup("/api/seveneleven/popwords")
            if delta.get("direct:seven-popwords") == 1:
                return
            assert time.monotonic() < deadline, f"the lookup container never went direct again: {delta}"
            time.sleep(0.05)

    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.secret}"}

    def health(self) -> dict[str, Any]:
        response = self.http.get("/api/health/routes", headers=self.auth())
        assert response.status_code == 200, response.text
        data: dict[str, Any] = response.json()["data"]
        return data

    def lookup(
        self, path: str, params: Mapping[str, str | int | float] | None = None
    ) -> tuple[httpx.Response, dict[str, int]]:
        """One lookup and the upstream calls it caused (non-zero deltas of /_sandbox/calls)."""
        before = self.calls()
        response = self.http.get(path, params=params)
        after = self.calls()
        delta = {
            name: after[name] - before.get(name, 0) for name in after if after[name] != before.get(name, 0)
        }
        return response, delta


@contextmanager
def running_sandbox(workdir: Path) -> Iterator[Sandbox]:
    """`route-health sandbox` on a free port in a subprocess; yields once it printed `ready:`."""
    port = _free_port()
    secret = secrets.token_urlsafe(24)
    stdout, stderr = workdir / "stdout.log", workdir / "stderr.log"
    environment = {**os.environ, "HEALTH_CHECK_SECRET": secret, "PYTHONUNBUFFERED": "1"}
    for name in ("ROUTE_HEALTH_TABLE", "ROUTE_HEALTH_SECRET_ID", "AWS_PROFILE"):
        environment.pop(name, None)
    with stdout.open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(  # noqa: S603 - our own console script, fixed arguments
            [_route_health_command(), "sandbox", "--port", str(port)],
            cwd=workdir,
            env=environment,
            stdout=out,
            stderr=err,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + READY_TIMEOUT_S
    while f"ready: {url}" not in stdout.read_text(errors="replace"):
        if process.poll() is not None:
            pytest.fail(
                f"sandbox exited with {process.returncode}:\n{stderr.read_text(errors='replace')[-4000:]}"
            )
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail(
                f"sandbox not ready after {READY_TIMEOUT_S}s:\n{stderr.read_text(errors='replace')[-4000:]}"
            )
        time.sleep(0.05)
    with httpx.Client(base_url=url, timeout=30) as http:
        yield Sandbox(url, secret, http, stdout, stderr, process)
    process.send_signal(signal.SIGTERM)
    try:
        code = process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail("sandbox did not stop within 20 s of SIGTERM")
    assert code == 0, stderr.read_text(errors="replace")[-4000:]


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    with running_sandbox(tmp_path_factory.mktemp("sandbox")) as started:
        yield started


@pytest.fixture
def fresh(sandbox: Sandbox) -> Iterator[Sandbox]:
    """The sandbox with no faults, every block expired and a just-probed, just-loaded snapshot."""
    sandbox.clear_faults()
    sandbox.settle()
    yield sandbox
    sandbox.clear_faults()


@pytest.fixture
def just_started(tmp_path: Path) -> Iterator[Sandbox]:
    """A sandbox of its own, used right after it printed `ready:` (for start-up behaviour)."""
    with running_sandbox(tmp_path) as started:
        yield started
