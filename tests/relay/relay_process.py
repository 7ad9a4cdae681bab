"""`route-health relay` as a real process on 127.0.0.1, for the tests whose behaviour is the server's:
connections, descriptors, signals, stderr, memory. No retailer is ever reached (each test refuses or answers
from state before any upstream call)."""

from __future__ import annotations

import json
import resource
import socket
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from functions.core import RelayGroup
from sandbox.process import route_health_command
from tests.support.waiting import eventually

PROCESS_TOKENS = {group: f"{group.value}-process-token-".ljust(40, "7") for group in RelayGroup}
ENV_PREFIX = {RelayGroup.OLIVEYOUNG: "OY", RelayGroup.CONVENIENCE: "CONVENIENCE", RelayGroup.DTRYX: "DTRYX"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class RelayProcess:
    process: subprocess.Popen[bytes]
    ports: Mapping[RelayGroup, int]
    state_dirs: Mapping[RelayGroup, Path]
    stderr_path: Path
    opened: list[socket.socket] = field(default_factory=list)
    """Connections the test opened, closed by `stop`."""

    def stderr_lines(self) -> list[str]:
        return self.stderr_path.read_text(errors="replace").splitlines()

    def log_lines(self) -> list[dict[str, Any]]:
        """Every stderr line as JSON (a line that is not one fails the test here)."""
        return [json.loads(line) for line in self.stderr_lines()]

    def events(self, name: str) -> list[dict[str, Any]]:
        return [line for line in self.log_lines() if line["event"] == name]

    def rss_kb(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        (line,) = [text for text in status.splitlines() if text.startswith("VmRSS:")]
        return int(line.split()[1])

    def connect(self, group: RelayGroup) -> socket.socket:
        self.opened.append(socket.create_connection(("127.0.0.1", self.ports[group]), timeout=5))
        return self.opened[-1]

    def request(self, group: RelayGroup, head: str, body: bytes = b"") -> int:
        """One request on a connection of its own; the answer's status (0: closed without an answer)."""
        with self.connect(group) as connection:
            connection.sendall(head.encode() + body)
            return status_of(read_until_closed(connection))

    def health(self, group: RelayGroup) -> int:
        path = "/health" if group is RelayGroup.OLIVEYOUNG else f"/v1/{group}/health"
        return self.request(
            group, f"GET {path} HTTP/1.1\r\nHost: relay\r\n{bearer(group)}Connection: close\r\n\r\n"
        )

    def stop(self) -> int:
        for connection in self.opened:
            connection.close()
        if self.process.poll() is None:
            self.process.terminate()
        return self.process.wait(30)


def bearer(group: RelayGroup) -> str:
    return f"Authorization: Bearer {PROCESS_TOKENS[group]}\r\n"


def read_until_closed(connection: socket.socket) -> bytes:
    """What the relay sent until it closed the connection (a reset ends it too)."""
    received = b""
    try:
        while chunk := connection.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    return received


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0


def closed_by_relay(connection: socket.socket) -> bool:
    """Whether the relay has closed `connection` (without waiting)."""
    connection.setblocking(False)
    try:
        return connection.recv(65536) == b""
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True
    finally:
        connection.setblocking(True)


def spawn(
    tmp_path: Path,
    groups: tuple[RelayGroup, ...],
    *,
    environment: Mapping[str, str] | None = None,
    arguments: tuple[str, ...] = (),
    open_files: int | None = None,
    state_dirs: Mapping[RelayGroup, Path] | None = None,
) -> RelayProcess:
    """Starts the relay for `groups` (each on a port of its own) without waiting for it. `open_files`: the
    child's descriptor limit (soft and hard)."""
    ports = {group: free_port() for group in groups}
    directories = dict(state_dirs or {group: tmp_path / f"state-{group.value}" for group in groups})
    env = {"PATH": "/usr/bin:/bin"}
    for group in groups:
        directories[group].mkdir(mode=0o700, parents=True, exist_ok=True)
        prefix = ENV_PREFIX[group]
        env |= {
            f"{prefix}_RELAY_TOKEN": PROCESS_TOKENS[group],
            f"{prefix}_RELAY_STATE_DIR": str(directories[group]),
            f"{prefix}_RELAY_PORT": str(ports[group]),
        }
    stderr_path = tmp_path / f"relay-{len(list(tmp_path.glob('relay-*.stderr')))}.stderr"

    def limit_descriptors() -> None:
        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    with stderr_path.open("wb") as stderr:
        process = subprocess.Popen(  # noqa: S603 - our own console script
            [route_health_command(), "relay", *(group.value for group in groups), *arguments],
            env={**env, **(environment or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            preexec_fn=limit_descriptors,  # the child's own limit, set before exec
        )
    return RelayProcess(process, ports, directories, stderr_path)


@contextmanager
def running_relay(
    tmp_path: Path, groups: tuple[RelayGroup, ...] = (RelayGroup.DTRYX,), **options: Any
) -> Iterator[RelayProcess]:
    """The relay, started and ready (every listener's lifespan done); stopped with SIGTERM afterwards."""
    relay = spawn(tmp_path, groups, **options)
    try:
        ready = eventually(lambda: _ready(relay, len(groups)), within_s=60)
        assert ready, f"the relay did not start: {relay.stderr_lines()[-5:]}"
        yield relay
    finally:
        relay.stop()


def _ready(relay: RelayProcess, listeners: int) -> bool:
    assert relay.process.poll() is None, f"the relay exited: {relay.stderr_lines()[-5:]}"
    return sum('"event":"process-ready"' in line for line in relay.stderr_lines()) >= listeners
