"""Builds the relays from a configuration and serves them with uvicorn, one listener per port.

SIGTERM or SIGINT stops every listener: no new connections, requests in flight finish (up to
`GRACEFUL_SHUTDOWN_S`), then each relay closes. The quota ledger is written on every unit, so nothing is
left to flush.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import httpx
import uvicorn

from functions.adapters.http import new_http_client
from functions.core import Clock, RelayGroup
from relay.app import POLICIES, GroupPolicy, GroupRelay, RelayApp
from relay.cgv import cgv_beside
from relay.config import ConfigError, RelayConfig
from relay.gs25 import Gs25Auth, Gs25Session, SessionFileError, load_session_file
from relay.logs import RelayLog
from relay.quota import LedgerUnreadable, QuotaLedger
from relay.upstream import UpstreamCaller

GRACEFUL_SHUTDOWN_S = 20


def system_clock() -> int:
    return time.time_ns() // 1_000_000


def build_apps(
    config: RelayConfig,
    *,
    log: RelayLog,
    clock: Clock = system_clock,
    transport: httpx.BaseTransport | None = None,
    policies: Mapping[RelayGroup, GroupPolicy] = POLICIES,
) -> dict[int, RelayApp]:
    """One app per port (the Dtryx relay's with CGV beside it when `config` has CGV's signing key).
    `transport` carries the retailer calls (tests and the sandbox redirect it).
    Raises `ConfigError` for a ledger or GS25 session file that cannot be used."""
    client = new_http_client(transport)
    relays: dict[int, list[GroupRelay]] = {}
    for group_config in config.groups:
        group = group_config.group
        try:
            ledger = QuotaLedger(group_config.state_dir, policies[group].quota, clock=clock)
        except LedgerUnreadable as error:
            raise ConfigError(str(error)) from None
        gs25 = _gs25_auth(config, client, clock) if group is RelayGroup.CONVENIENCE else None
        upstream = UpstreamCaller(client, gs25=gs25, keys=config.signing_key, clock=clock)
        relay = GroupRelay(
            group,
            group_config.token,
            ledger=ledger,
            upstream=upstream,
            clock=clock,
            log=log,
            policy=policies[group],
        )
        relays.setdefault(group_config.port, []).append(relay)
        if group is RelayGroup.DTRYX and config.cgv_signing_key is not None:
            cgv = cgv_beside(
                relay, group_config, upstream=upstream, clock=clock, log=log, policy=policies[RelayGroup.CGV]
            )
            relays[group_config.port].append(cgv)
    return {port: RelayApp(group_relays, log=log) for port, group_relays in relays.items()}


def _gs25_auth(config: RelayConfig, client: httpx.Client, clock: Clock) -> Gs25Auth:
    session = None
    if config.gs25_session_file is not None:
        path: Path = config.gs25_session_file
        try:
            tokens = load_session_file(path)
        except SessionFileError as error:
            raise ConfigError(str(error)) from None
        session = Gs25Session(path, tokens, client=client, clock=clock)
    return Gs25Auth(api_key=config.gs25_api_key, session=session)


class _Listener(uvicorn.Server):
    """A uvicorn server that leaves the signals to `serve` (several listeners share one process)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def serve(config: RelayConfig, apps: Mapping[int, RelayApp], *, log: RelayLog) -> int:
    """Serves until SIGTERM/SIGINT; the exit code."""
    listeners = [
        _Listener(
            uvicorn.Config(
                app,
                host=config.host,
                port=port,
                lifespan="on",
                access_log=False,
                log_config=None,
                log_level="warning",
                server_header=False,
                timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
            )
        )
        for port, app in apps.items()
    ]

    async def run() -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, _stop_all, listeners)
        await asyncio.gather(*(listener.serve() for listener in listeners))

    for port, app in apps.items():
        log.event("process-starting", port=port, outcome="-".join(app.relays))
    asyncio.run(run())
    log.event("process-stopped")
    return 0 if all(listener.started for listener in listeners) else 1


def _stop_all(listeners: list[_Listener]) -> None:
    for listener in listeners:
        listener.should_exit = True


class BackgroundRelay:
    """A relay app served by uvicorn on an already bound socket, from a thread of its own (for tests, the
    sandbox and benchmarks). `stop` ends it the way SIGTERM ends `serve`."""

    def __init__(self, app: RelayApp, sock: socket.socket) -> None:
        self.app = app
        self._socket = sock
        self._server = _Listener(
            uvicorn.Config(app, lifespan="on", access_log=False, log_config=None, log_level="warning")
        )
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._server.serve(sockets=[sock])), name="relay", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._socket.getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://{self._socket.getsockname()[0]}:{self.port}"

    def start(self) -> BackgroundRelay:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the relay did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(GRACEFUL_SHUTDOWN_S + 5)
        self._socket.close()


def bound_socket(host: str = "127.0.0.1", port: int = 0) -> socket.socket:
    """A listening TCP socket (port 0: any free port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    return sock
