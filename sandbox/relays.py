"""The sandbox's relays: the reference relay (`relay/`) for each group, each on a port of its own on
127.0.0.1, in front of the simulated retailers and on the sandbox clock (docs/design.md#sandbox).

The relays reach the retailers through the simulator's `relay-upstream` entrance, so the simulator tells
their requests (and faults) from the Lambda functions'; the Lambda functions reach the relays through the
simulator's fronts (`/relays/<group>`), where `relay:<group>` faults apply. State directories live in a
temporary directory for the sandbox's lifetime: a restart keeps them (the quota ledger), as a real relay
restart would; the cache and the jobs in flight go with the process.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from functions.adapters.relay import RelayCredentials
from functions.catalog import cgv
from functions.core import Clock, RelayGroup
from relay.config import GroupConfig, RelayConfig
from relay.logs import RelayLog
from relay.server import BackgroundRelay, bound_socket, build_apps
from sandbox.simulator.server import RELAY_UPSTREAM, Simulator, SimulatorServer, loopback_transport

TOKENS_FILE = Path(".sandbox") / "relay-tokens.json"


class SandboxRelays:
    """Starts, restarts and stops one reference relay per group; with CGV's signing key, the Dtryx relay serves
    CGV too (as its process does outside the sandbox), and `cgv` names that relay. Thread-safe."""

    def __init__(
        self,
        tokens: Mapping[RelayGroup, str],
        *,
        clock: Clock,
        upstream: httpx.BaseTransport,
        log: RelayLog,
        cgv_signing_key: str | None = None,
    ) -> None:
        self._tokens = dict(tokens)
        self._cgv_signing_key = cgv_signing_key
        self._clock = clock
        self._upstream = upstream
        self._log = log
        self._state_root = Path(tempfile.mkdtemp(prefix="route-health-relays-"))
        self._lock = threading.Lock()
        self._running: dict[RelayGroup, BackgroundRelay] = {}

    def start(self) -> None:
        with self._lock:
            for group in self._tokens:
                self._start(group, port=0)

    def urls(self) -> dict[RelayGroup, str]:
        """Each group's relay base URL (the relay itself, not its front)."""
        with self._lock:
            urls = {group: relay.url for group, relay in self._running.items()}
        if self._serves_cgv and RelayGroup.DTRYX in urls:
            urls[RelayGroup.CGV] = urls[RelayGroup.DTRYX]
        return urls

    @property
    def _serves_cgv(self) -> bool:
        return self._cgv_signing_key is not None and RelayGroup.DTRYX in self._tokens

    def restart(self, group: RelayGroup) -> str:
        """Stops the group's relay (gracefully) and starts a new one on the same port with the same state
        directory; returns its URL (`cgv`: the Dtryx relay's). Raises KeyError for a group without a relay."""
        if group is RelayGroup.CGV and self._serves_cgv:
            group = RelayGroup.DTRYX
        with self._lock:
            running = self._running.pop(group)
            port = running.port
            running.stop()
            return self._start(group, port=port).url

    def stop(self) -> None:
        with self._lock:
            for relay in self._running.values():
                relay.stop()
            self._running.clear()
        shutil.rmtree(self._state_root, ignore_errors=True)

    def _start(self, group: RelayGroup, *, port: int) -> BackgroundRelay:
        state_dir = self._state_root / group.value
        state_dir.mkdir(mode=0o700, exist_ok=True)
        config = RelayConfig(
            (GroupConfig(group, self._tokens[group], state_dir, port),), cgv_signing_key=self._cgv_signing_key
        )
        (app,) = build_apps(config, log=self._log, clock=self._clock, transport=self._upstream).values()
        relay = BackgroundRelay(app, bound_socket(port=port)).start()
        self._running[group] = relay
        return relay


@dataclass(frozen=True)
class SimulatedUpstreams:
    """The simulated retailers with the reference relays in front of them: what the sandbox, the handler
    tests and the benchmarks run the Lambda code against."""

    simulator: Simulator
    server: SimulatorServer
    relays: SandboxRelays

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def relay_url(self, group: RelayGroup) -> str:
        """The group's relay URL for the Lambda functions (the relay's front, where faults apply)."""
        return self.server.relay_url(group)

    def direct_transport(self) -> httpx.BaseTransport:
        """The Lambda functions' transport: the specs' retailer URLs reach the simulator."""
        return loopback_transport(self.server.base_url)

    def close(self) -> None:
        self.simulator.release()  # ends hanging faults first: the relays wait for their requests
        self.relays.stop()
        self.server.close()

    def __enter__(self) -> SimulatedUpstreams:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def start_upstreams(
    simulator: Simulator,
    credentials: Mapping[RelayGroup, RelayCredentials],
    *,
    clock: Clock,
    log: RelayLog | None = None,
) -> SimulatedUpstreams:
    """Serves `simulator` on 127.0.0.1 and starts a reference relay per group of `credentials` (their
    tokens) behind its fronts; the Dtryx relay serves CGV too when the simulated CGV has a signing key (the
    relay is given the same). `log`: the relays' log (default: stderr)."""
    server = SimulatorServer(simulator).start()
    relays = SandboxRelays(
        {group: creds.token for group, creds in credentials.items() if group is not RelayGroup.CGV},
        clock=clock,
        upstream=loopback_transport(server.base_url, entrance=RELAY_UPSTREAM),
        log=log or RelayLog(),
        cgv_signing_key=simulator.signing_keys.get(cgv.SIGNING_KEY),
    )
    try:
        relays.start()
    except BaseException:
        server.close()
        relays.stop()
        raise
    simulator.connect_relays(relays.urls())
    return SimulatedUpstreams(simulator, server, relays)


def write_tokens_file(tokens: Mapping[RelayGroup, str]) -> None:
    """`.sandbox/relay-tokens.json` (mode 600): each group's relay token, to try the relays by hand."""
    TOKENS_FILE.parent.mkdir(mode=0o700, exist_ok=True)
    descriptor = os.open(TOKENS_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        json.dump({group.value: token for group, token in tokens.items()}, file, indent=2)
        file.write("\n")
    TOKENS_FILE.chmod(0o600)
