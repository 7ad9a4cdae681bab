"""The whole Route Health stack on 127.0.0.1: embedded AWS, simulated retailers with the reference relays in
front of them, the real handlers behind a local API Gateway, and an EventBridge-like scheduler, all on one
`SandboxClock` (docs/design.md#sandbox).
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, TypeVar

import httpx

from functions.adapters.relay import RelayCredentials
from functions.catalog import cgv
from functions.core import Clock
from functions.core.model import RelayGroup
from infra.environment import DEFAULT_LOG_LEVEL, POWERTOOLS_ENVIRONMENT
from sandbox.clock import SandboxClock
from sandbox.controls import ControlError, RelayControl, SandboxControls, SimulatorControl
from sandbox.edge import EdgeCache
from sandbox.embedded_aws import REGION, EmbeddedAws
from sandbox.gateway import Gateway, Handler, LambdaContext
from sandbox.relays import start_upstreams, write_tokens_file
from sandbox.scheduler import ProbeScheduler
from sandbox.simulator.faults import Fault
from sandbox.simulator.server import Simulator

if TYPE_CHECKING:
    from functions.handlers.composition import Deployed, LookupFunction, ProbeFunction

logger = logging.getLogger(__name__)
FunctionParts = TypeVar("FunctionParts", "LookupFunction", "ProbeFunction")

RELAY_ENV_PREFIX = {
    RelayGroup.OLIVEYOUNG: "OY",
    RelayGroup.CONVENIENCE: "CONVENIENCE",
    RelayGroup.DTRYX: "DTRYX",
}
"""The groups with a relay process of their own. CGV's is the Dtryx relay's, whose URL and credentials the
CGV routes use unless `CGV_RELAY_URL` or CGV's own credentials are set (only with --upstream real)."""
RELAY_URL_ENV = {**RELAY_ENV_PREFIX, RelayGroup.CGV: "CGV"}
SECRET_KEYS = (
    "HEALTH_CHECK_SECRET",
    *(
        f"{p}_{suffix}"
        for p in RELAY_URL_ENV.values()
        for suffix in ("RELAY_TOKEN", "ACCESS_CLIENT_ID", "ACCESS_CLIENT_SECRET")
    ),
    "GS25_API_KEY",
    cgv.SIGNING_KEY,
)
# Quiet, local defaults for what Powertools reads; an operator's own environment wins.
POWERTOOLS_DEFAULTS = {
    **POWERTOOLS_ENVIRONMENT,
    "POWERTOOLS_METRICS_DISABLED": "true",  # EMF lines would drown the log; CloudWatch is not here
    "POWERTOOLS_TRACE_DISABLED": "true",  # no X-Ray daemon locally
    "POWERTOOLS_LOG_LEVEL": DEFAULT_LOG_LEVEL,
}
STARTUP_SNAPSHOT_TIMEOUT_S = 2.0
FUNCTION_TIMEOUT_S = {"api": 15.0, "ops": 60.0, "probe": 60.0, "mcp": 15.0}


class Upstream(StrEnum):
    SIM = "sim"
    REAL = "real"


@dataclass(frozen=True)
class Simulated:
    """The running simulator and relays: how the Lambda functions reach the retailers, how to steer both."""

    transport: httpx.BaseTransport
    control: SimulatorControl
    relays: RelayControl
    relay_urls: Mapping[RelayGroup, str]
    """Each relay process's URL for the Lambda functions (its front); CGV uses the Dtryx relay's."""


def generated_relay_secrets() -> dict[str, str]:
    """Fresh relay tokens, Access keys and GS25 key for the sandbox's relays (never printed)."""
    values: dict[str, str] = {}
    for prefix in RELAY_ENV_PREFIX.values():
        values[f"{prefix}_RELAY_TOKEN"] = secrets.token_urlsafe(24)
        values[f"{prefix}_ACCESS_CLIENT_ID"] = f"{secrets.token_hex(8)}.access"
        values[f"{prefix}_ACCESS_CLIENT_SECRET"] = secrets.token_hex(24)
    # The convenience relay has no GS25 session or key of its own: GS25 stock works with this key only,
    # which the Lambda functions send (`apiKey`) and the simulated GS25 checks.
    values["GS25_API_KEY"] = secrets.token_urlsafe(24)
    # A made-up CGV signing key (43 characters, like CGV's own): the simulated CGV checks every signature
    # with it, and the Lambda functions and the Dtryx relay sign with it.
    values[cgv.SIGNING_KEY] = secrets.token_urlsafe(32)
    return values


def relay_secrets_from_environment() -> dict[str, str]:
    """With --upstream real the relays' credentials come from the operator's environment."""
    return {
        key: os.environ[key] for key in SECRET_KEYS if key != "HEALTH_CHECK_SECRET" and os.environ.get(key)
    }


class _SimulatorControl:
    """The controls' view of the simulator (implements SimulatorControl)."""

    def __init__(self, simulator: Simulator) -> None:
        self._simulator = simulator

    def set_fault(self, target: str, fault: Fault) -> None:
        try:
            self._simulator.faults.set(target, fault)
        except ValueError as error:
            raise ControlError(str(error)) from None

    def clear_faults(self) -> None:
        self._simulator.faults.clear()

    def calls(self) -> Mapping[str, int]:
        return self._simulator.calls()


def start_simulator(relay_values: Mapping[str, str], clock: Clock) -> tuple[Simulated, Callable[[], None]]:
    """Serves the simulated retailers on 127.0.0.1 (a free port) with a reference relay per group in front,
    using `relay_values`; writes the relay tokens to `.sandbox/relay-tokens.json`."""
    credentials = {
        group: RelayCredentials(
            token=relay_values[f"{prefix}_RELAY_TOKEN"],
            access_client_id=relay_values.get(f"{prefix}_ACCESS_CLIENT_ID"),
            access_client_secret=relay_values.get(f"{prefix}_ACCESS_CLIENT_SECRET"),
            api_key=relay_values.get("GS25_API_KEY") if group is RelayGroup.CONVENIENCE else None,
        )
        for group, prefix in RELAY_ENV_PREFIX.items()
    }
    signing_keys = {cgv.SIGNING_KEY: relay_values[cgv.SIGNING_KEY]} if cgv.SIGNING_KEY in relay_values else {}
    simulator = Simulator(credentials, signing_keys=signing_keys)
    upstreams = start_upstreams(simulator, credentials, clock=clock)
    write_tokens_file({group: creds.token for group, creds in credentials.items()})
    simulated = Simulated(
        upstreams.direct_transport(),
        _SimulatorControl(simulator),
        upstreams.relays,
        {group: upstreams.relay_url(group) for group in RELAY_ENV_PREFIX},
    )
    return simulated, upstreams.close


class SandboxStack:
    """Starts every part in order (the gateway's port first, so a taken port fails before anything else) and
    stops them in reverse. `start` runs the first probe; the caller prints `ready:` afterwards.
    """

    def __init__(
        self,
        *,
        port: int,
        upstream: Upstream,
        health_check_secret: str,
        edge_cache: bool = True,
    ) -> None:
        """`edge_cache`: the gateway plays the CloudFront distribution's cache too (sandbox/edge.py)."""
        self.clock = SandboxClock()
        self._upstream = upstream
        self._health_check_secret = health_check_secret
        self._resources = ExitStack()
        # One invocation at a time per function, as in one Lambda execution environment: the handlers'
        # module-level state (the Powertools resolver's current event, for one) is per invocation.
        self._function_locks = {function: threading.Lock() for function in FUNCTION_TIMEOUT_S}
        self._serving: threading.Thread | None = None
        self._handlers: dict[str, Handler] = {}
        # Binding now: raises OSError (EADDRINUSE) before anything else is started.
        self.gateway = Gateway(
            port,
            clock=self.clock,
            api=self._invoke_api,
            ops=self._invoke_ops,
            mcp=self._invoke_mcp,
            controls=self._controls,
            edge=EdgeCache(clock=self.clock) if edge_cache else None,
        )
        self._resources.callback(self.gateway.server_close)
        self.controls: SandboxControls | None = None
        self.scheduler: ProbeScheduler | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.gateway.port}"

    def start(self) -> None:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> None:
        simulated: Simulated | None = None
        if self._upstream is Upstream.SIM:
            relay_values = generated_relay_secrets()
            simulated = self._simulator(relay_values)
            relay_urls = dict(simulated.relay_urls)
        else:
            relay_values = relay_secrets_from_environment()
            relay_urls = {
                group: url
                for group, prefix in RELAY_URL_ENV.items()
                if (url := os.environ.get(f"{prefix}_RELAY_URL"))
            }

        aws = EmbeddedAws({"HEALTH_CHECK_SECRET": self._health_check_secret, **relay_values})
        aws.start()
        self._resources.callback(aws.stop)

        self._configure_environment(aws.environment(), relay_urls)
        lookups = self._build_functions(None if simulated is None else simulated.transport)
        self._handlers = _load_handlers()

        self.scheduler = ProbeScheduler(self.clock, self._invoke_probe, region=REGION)
        self.controls = SandboxControls(
            clock=self.clock,
            store=aws,
            simulator=None if simulated is None else simulated.control,
            fire_probe=self.scheduler.fire_now,
            advance_clock=self.scheduler.advance,
            relays=None if simulated is None else simulated.relays,
        )
        self.scheduler.run_due()
        # The lookup function was built (and its snapshot prefetched) before the first probe wrote any verdict:
        # read them now so that "ready" means steady state, not 30 s of relay-first lookups.
        if lookups.snapshots is not None:
            lookups.snapshots.prefetch(STARTUP_SNAPSHOT_TIMEOUT_S)
        self.scheduler.start()
        self._resources.callback(self.scheduler.stop)

        self._serving = threading.Thread(target=self.gateway.serve_forever, name="gateway", daemon=True)
        self._serving.start()
        self._resources.callback(self._stop_serving)

    def stop(self) -> None:
        self._resources.close()

    def _stop_serving(self) -> None:
        self.gateway.shutdown()
        self.gateway.close_connections()
        if self._serving is not None:
            self._serving.join()

    def _simulator(self, relay_values: Mapping[str, str]) -> Simulated:
        simulated, stop = start_simulator(relay_values, self.clock)
        self._resources.callback(stop)
        return simulated

    def _configure_environment(
        self, aws_environment: Mapping[str, str], relay_urls: Mapping[RelayGroup, str]
    ) -> None:
        os.environ.update(aws_environment)
        for group, prefix in RELAY_URL_ENV.items():
            os.environ.pop(f"{prefix}_RELAY_URL", None)
            if group in relay_urls:
                os.environ[f"{prefix}_RELAY_URL"] = relay_urls[group]
        # The handlers read secrets from the embedded Secrets Manager only, as deployed.
        for key in SECRET_KEYS:
            os.environ.pop(key, None)
        for name, value in POWERTOOLS_DEFAULTS.items():
            os.environ.setdefault(name, value)

    def _build_functions(self, transport: httpx.BaseTransport | None) -> LookupFunction:
        """Each function's own parts, as in AWS (same clock and upstreams); returns the lookup function's."""
        from functions.handlers import composition
        from functions.handlers.settings import ApiSettings, OpsSettings, ProbeSettings

        surroundings = composition.Surroundings(clock=self.clock, http_transport=transport)
        lookups = composition.build_lookup_function(ApiSettings.from_environment(), surroundings)
        self._install(composition.LOOKUP_FUNCTION, lookups)
        for deployed, settings in (
            (composition.OPERATOR_FUNCTION, OpsSettings),
            (composition.PROBE_FUNCTION, ProbeSettings),
        ):
            self._install(
                deployed, composition.build_probe_function(settings.from_environment(), surroundings)
            )
        return lookups

    def _install(self, deployed: Deployed[FunctionParts], parts: FunctionParts) -> None:
        deployed.install(parts)
        self._resources.callback(parts.close)
        self._resources.callback(deployed.install, None)

    def _controls(self, method: str, path: str, body: bytes) -> Any:
        assert self.controls is not None
        return self.controls(method, path, body)

    def _invoke(self, function: str, event: dict[str, Any]) -> Any:
        with self._function_locks[function]:
            context = LambdaContext(f"route-health-{function}", FUNCTION_TIMEOUT_S[function])
            return self._handlers[function](event, context)

    def _invoke_api(self, event: dict[str, Any]) -> Any:
        return self._invoke("api", event)

    def _invoke_ops(self, event: dict[str, Any]) -> Any:
        return self._invoke("ops", event)

    def _invoke_mcp(self, event: dict[str, Any]) -> Any:
        # The MCP function runs the lookup function's handler in process. Here both share this process's one
        # copy of that module (its resolver holds the current event), so a tool call waits for a REST lookup
        # as the lookup function's own invocations do; in AWS each function has its own copy.
        with self._function_locks["api"]:
            return self._invoke("mcp", event)

    def _invoke_probe(self, event: dict[str, Any]) -> Mapping[str, Any]:
        """One probe invocation; a failed one (store down...) answers `ran: false` with the error's type."""
        try:
            result = self._invoke("probe", event)
        except Exception as error:
            logger.warning("probe invocation failed: %s", type(error).__name__)
            return {"ran": False, "error": type(error).__name__}
        return result if isinstance(result, Mapping) else {"ran": False, "result": result}


def _load_handlers() -> dict[str, Handler]:
    """The real entry points, imported only once the environment points at the embedded services."""
    from functions.handlers import api, mcp, ops, probe

    return {
        "api": api.lambda_handler,
        "ops": ops.lambda_handler,
        "probe": probe.lambda_handler,
        "mcp": mcp.lambda_handler,
    }
