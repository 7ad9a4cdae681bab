"""Builds the relays from a configuration and serves them with uvicorn, one listener per port, each accepting
through a `ConnectionGate` (relay/connections.py) within one connection budget for the process.

SIGTERM or SIGINT stops every listener: no new connections, requests in flight finish (up to
`GRACEFUL_SHUTDOWN_S`), then each relay closes (and gives its state directory up). The quota ledger is
written on every unit, so nothing is left to flush.
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
from relay.config import ConfigError, ConnectionSettings, RelayConfig, connection_cap, descriptor_limit
from relay.connections import ConnectionBudget, ConnectionGate, HeadDeadlineProtocol
from relay.files import remove_stray_temporaries
from relay.gs25 import Gs25Auth, Gs25Session, SessionFileError, load_session_file
from relay.logs import RelayLog
from relay.quota import LedgerInUse, LedgerUnreadable, QuotaLedger
from relay.upstream import UpstreamCaller

GRACEFUL_SHUTDOWN_S = 20
LISTEN_BACKLOG = 128


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
    Raises `ConfigError` for a ledger, state directory or GS25 session file that cannot be used (and then
    holds no state directory)."""
    client = new_http_client(transport)
    relays: dict[int, list[GroupRelay]] = {}
    ledgers: list[QuotaLedger] = []
    try:
        for group_config in config.groups:
            group = group_config.group
            try:
                ledger = QuotaLedger(group_config.state_dir, policies[group].quota, clock=clock)
            except (LedgerUnreadable, LedgerInUse) as error:
                raise ConfigError(str(error)) from None
            ledgers.append(ledger)
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
                try:
                    cgv = cgv_beside(
                        relay,
                        group_config,
                        upstream=upstream,
                        clock=clock,
                        log=log,
                        policy=policies[RelayGroup.CGV],
                    )
                except LedgerUnreadable as error:
                    raise ConfigError(str(error)) from None
                relays[group_config.port].append(cgv)
    except BaseException:
        for opened in ledgers:
            opened.close()
        raise
    return {port: RelayApp(group_relays, log=log) for port, group_relays in relays.items()}


def _gs25_auth(config: RelayConfig, client: httpx.Client, clock: Clock) -> Gs25Auth:
    session = None
    if config.gs25_session_file is not None:
        path: Path = config.gs25_session_file
        try:
            tokens = load_session_file(path)
        except SessionFileError as error:
            raise ConfigError(str(error)) from None
        remove_stray_temporaries(path)  # a renewal cut short by a kill: tokens that nothing will read
        session = Gs25Session(path, tokens, client=client, clock=clock)
    return Gs25Auth(api_key=config.gs25_api_key, session=session)


class _Listener(uvicorn.Server):
    """A uvicorn server for one listening socket that accepts through a `ConnectionGate` into
    `HeadDeadlineProtocol` connections, and leaves the signals to `serve` (several listeners share one
    process)."""

    def __init__(self, app: RelayApp, *, header_timeout_s: float, budget: ConnectionBudget) -> None:
        super().__init__(
            uvicorn.Config(
                app,
                lifespan="on",
                access_log=False,
                log_config=None,
                log_level="warning",
                http="h11",
                ws="none",
                server_header=False,
                timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
            )
        )
        self._header_timeout_s = header_timeout_s
        self._budget = budget
        self._gates: list[ConnectionGate] = []

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's startup, with the gate in place of `loop.create_server`."""
        await self.lifespan.startup()
        if self.lifespan.should_exit:
            self.should_exit = True
            return
        self.servers = []

        def connection() -> HeadDeadlineProtocol:
            return HeadDeadlineProtocol(
                config=self.config,
                server_state=self.server_state,
                app_state=self.lifespan.state,
                header_timeout_s=self._header_timeout_s,
                budget=self._budget,
            )

        self._gates = [ConnectionGate(sock, connection, self._budget).start() for sock in sockets or []]
        self.started = True

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for gate in self._gates:
            gate.close()
        await asyncio.gather(*(gate.wait_closed() for gate in self._gates))
        await super().shutdown(sockets)


def connection_budget(settings: ConnectionSettings, log: RelayLog) -> ConnectionBudget:
    """The process's budget: `settings.max_connections`, else what the descriptor limit leaves room for.
    Raises `ConfigError`."""
    limit = settings.max_connections or connection_cap(descriptor_limit())
    return ConnectionBudget(limit, log=log, log_interval_s=settings.overload_log_interval_s)


def serve(config: RelayConfig, apps: Mapping[int, RelayApp], *, log: RelayLog) -> int:
    """Serves until SIGTERM/SIGINT; the exit code (1 when a port cannot be listened on)."""
    try:
        budget = connection_budget(config.connections, log)
        sockets = _listen(config.host, apps)
    except ConfigError as error:
        for app in apps.values():
            app.close()
        log.tell("process-startup-failed", str(error))
        return 1
    header_timeout_s = config.connections.header_timeout_s
    listeners = {
        port: _Listener(app, header_timeout_s=header_timeout_s, budget=budget) for port, app in apps.items()
    }

    async def run() -> None:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, _stop_all, list(listeners.values()))
        await asyncio.gather(*(listener.serve([sockets[port]]) for port, listener in listeners.items()))

    for port, app in apps.items():
        log.event("process-starting", port=port, outcome="-".join(app.relays), limit=budget.limit)
    asyncio.run(run())
    log.event("process-stopped")
    return 0 if all(listener.started for listener in listeners.values()) else 1


def _listen(host: str, apps: Mapping[int, RelayApp]) -> dict[int, socket.socket]:
    sockets: dict[int, socket.socket] = {}
    for port in apps:
        try:
            sockets[port] = bound_socket(host, port)
        except OSError as error:
            for opened in sockets.values():
                opened.close()
            raise ConfigError(f"cannot listen on {host} port {port}: {error.strerror or error}") from None
    return sockets


def _stop_all(listeners: list[_Listener]) -> None:
    for listener in listeners:
        listener.should_exit = True


class BackgroundRelay:
    """A relay app served by uvicorn on an already bound socket, from a thread of its own (for tests, the
    sandbox and benchmarks). `stop` ends it the way SIGTERM ends `serve`."""

    def __init__(
        self, app: RelayApp, sock: socket.socket, settings: ConnectionSettings | None = None
    ) -> None:
        settings = settings or ConnectionSettings()
        self.app = app
        self._socket = sock
        self._budget = connection_budget(settings, app.log)
        self._server = _Listener(app, header_timeout_s=settings.header_timeout_s, budget=self._budget)
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._server.serve(sockets=[sock])), name="relay", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._socket.getsockname()[1])

    @property
    def open_connections(self) -> int:
        """Connections accepted and not closed yet."""
        return self._budget.open

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
    """A listening TCP socket (port 0: any free port). Raises OSError."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    return socket.create_server((host, port), family=family, backlog=LISTEN_BACKLOG)
