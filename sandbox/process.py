"""`route-health sandbox` in a subprocess, for the end-to-end tests and the load benchmark.

It listens on a port the OS picks (`--port 0`); the URL is read from its `ready:` line. Stopped with SIGTERM.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

READY_PREFIX = "ready: "
READY_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 20.0
# Where a deployed or operator setup would point the handlers (the sandbox must use its embedded ones), and
# settings a run must name itself (`settings=`) so that the caller's shell cannot change what it measures.
IGNORED_ENVIRONMENT = (
    "ROUTE_HEALTH_TABLE",
    "ROUTE_HEALTH_SECRET_ID",
    "AWS_PROFILE",
    "DAILY_RATE_LIMIT",
    "DAILY_RATE_LIMIT_PREFIXES",
)


class SandboxProcessError(RuntimeError):
    """The sandbox did not start, or did not stop on SIGTERM."""


@dataclass
class SandboxProcess:
    """A running sandbox: its URL and its captured output."""

    url: str
    process: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path

    def output(self) -> str:
        return self.stdout.read_text(errors="replace") + self.stderr.read_text(errors="replace")

    def stderr_tail(self, chars: int = 4000) -> str:
        return self.stderr.read_text(errors="replace")[-chars:]


def route_health_command() -> str:
    """The installed console script (next to this interpreter, else on PATH)."""
    beside_python = Path(sys.executable).parent / "route-health"
    found = str(beside_python) if beside_python.exists() else shutil.which("route-health")
    if not found:
        raise SandboxProcessError("the route-health console script is not installed (make install)")
    return found


@contextmanager
def sandbox_process(
    workdir: Path,
    *,
    health_check_secret: str,
    ready_timeout_s: float = READY_TIMEOUT_S,
    settings: Mapping[str, str] | None = None,
    edge_cache: bool = True,
) -> Iterator[SandboxProcess]:
    """Starts `route-health sandbox --port 0` in `workdir` (logs there too) and yields once it printed
    `ready:`. On exit sends SIGTERM and waits; `process.returncode` is then its exit code. Raises
    SandboxProcessError if it exits or hangs before `ready:`, or ignores SIGTERM (it is killed then).
    `settings`: extra environment variables for the functions (e.g. DAILY_RATE_LIMIT, RESPONSE_CACHE);
    `edge_cache=False` starts it with `--no-edge-cache`.
    """
    stdout, stderr = workdir / "stdout.log", workdir / "stderr.log"
    inherited = {name: value for name, value in os.environ.items() if name not in IGNORED_ENVIRONMENT}
    environment = {
        **inherited,
        **(settings or {}),
        "HEALTH_CHECK_SECRET": health_check_secret,
        "PYTHONUNBUFFERED": "1",
    }
    with stdout.open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(  # noqa: S603 - our own console script, fixed arguments
            [route_health_command(), "sandbox", "--port", "0", *([] if edge_cache else ["--no-edge-cache"])],
            cwd=workdir,
            env=environment,
            stdout=out,
            stderr=err,
        )
    running = SandboxProcess("", process, stdout, stderr)
    try:
        running.url = _wait_for_ready(running, ready_timeout_s)
        yield running
    finally:
        _stop(process)


def _wait_for_ready(running: SandboxProcess, timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    while True:
        for line in running.stdout.read_text(errors="replace").splitlines(keepends=True):
            if line.startswith(READY_PREFIX) and line.endswith("\n"):
                return line.removeprefix(READY_PREFIX).strip()
        if running.process.poll() is not None:
            raise SandboxProcessError(
                f"sandbox exited with {running.process.returncode}:\n{running.stderr_tail()}"
            )
        if time.monotonic() > deadline:
            raise SandboxProcessError(f"sandbox not ready after {timeout_s} s:\n{running.stderr_tail()}")
        time.sleep(0.05)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise SandboxProcessError(f"sandbox did not stop within {STOP_TIMEOUT_S} s of SIGTERM") from None
