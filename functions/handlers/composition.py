"""What each Lambda function is made of, built once per container: the composition root (docs/design.md,
"Configuration and secrets").

The lookup function has a `LookupFunction`; the operator and probe functions each have a `ProbeFunction` (the
verdict store and the full check, which the operator function runs on demand). Both stand on `Upstreams`: the
secret values, the direct route and the relays, each on its own HTTP client, and the background threads. A
handler asks its holder (`LOOKUP_FUNCTION`, `OPERATOR_FUNCTION`, `PROBE_FUNCTION`) for its parts: built from the
environment on first use (in Lambda at INIT, `prepare_at_init`) and kept for the container's life. The sandbox,
tests and benchmarks build their own over their own `Surroundings` (`build_lookup_function`,
`build_probe_function`) and `install` them.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar

import httpx

from functions.adapters.direct import DirectTransport
from functions.adapters.dynamo_store import DynamoVerdictStore
from functions.adapters.dynamo_store import dynamodb_client as new_dynamodb_client
from functions.adapters.http import new_http_client
from functions.adapters.relay import RelayTransport
from functions.adapters.relay_config import relay_endpoints, relay_url
from functions.adapters.secrets import Secrets, SecretSource, StaticSecrets, secret_source
from functions.catalog import OperationSpec
from functions.core import Clock, RelayGroup, RouteKey
from functions.core.model import SECOND_MS
from functions.handlers.daily_quota import LimitedLookups, limited_lookups
from functions.handlers.init_collection import resume_after_init
from functions.handlers.settings import ApiSettings, CommonSettings, OpsSettings, ProbeSettings
from functions.handlers.telemetry import (
    MetricsProbeEvents,
    MetricsRelayEvents,
    MetricsRoutingEvents,
    emit_metric,
    logger,
    report_relay_configuration_invalid,
)
from functions.services.reporting import BackgroundFailureReporter
from functions.services.response_cache import ResponseCache
from functions.services.routing import Router
from functions.services.snapshot_cache import SnapshotCache

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_secretsmanager import SecretsManagerClient

    from functions.services.ports import ProbeSummary

BACKGROUND_WORKERS = 4
"""Snapshot and secret refreshes, failure reports and quota flushes: small, they only wait on AWS APIs."""

P = ParamSpec("P")
T = TypeVar("T")
Parts = TypeVar("Parts")


def system_clock() -> int:
    return time.time_ns() // 1_000_000


class BackgroundExecutor(Executor):
    """The container's one pool of background threads. Every component holds this object, so the SnapStart
    hooks can drain the pool before a snapshot and give a restored container new threads without rewiring."""

    def __init__(self) -> None:
        self._pool = self._new_pool()

    @staticmethod
    def _new_pool() -> ThreadPoolExecutor:
        return ThreadPoolExecutor(max_workers=BACKGROUND_WORKERS, thread_name_prefix="route-health")

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        return self._pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)

    def restart(self) -> None:
        """New threads from here on; the old pool is shut down (a no-op when it already was)."""
        old, self._pool = self._pool, self._new_pool()
        old.shutdown(wait=False)


class StoreNotConfigured(Exception):
    """No verdict store in this install (ROUTE_HEALTH_TABLE unset): nothing to probe into or read."""


@dataclass(eq=False)
class Upstreams:
    """The secret values, the direct route and the relays, each route on its own HTTP client (a relay call
    never shares a retailer's pool), and the background threads. The relays are rebuilt only when the secret
    values change (a Secrets Manager rotation seen after the cache's max age)."""

    settings: CommonSettings
    clock: Clock
    secret_source: SecretSource
    executor: BackgroundExecutor
    http_transport: httpx.BaseTransport | None = None
    """Where HTTP goes: the network, or the simulated retailers (sandbox, tests)."""
    direct_client: httpx.Client = field(init=False)
    relay_client: httpx.Client = field(init=False)
    direct: DirectTransport = field(init=False)
    _relays: tuple[Secrets, RelayTransport] | None = field(default=None, init=False, repr=False)
    _relays_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        self._connect()

    @property
    def secrets(self) -> Secrets:
        return self.secret_source.get()

    @property
    def relays(self) -> RelayTransport:
        secrets = self.secrets
        with self._relays_lock:
            if self._relays is None or self._relays[0] is not secrets:
                endpoints = relay_endpoints(
                    self.settings.relay_urls, secrets, on_invalid=report_relay_configuration_invalid
                )
                transport = RelayTransport(
                    self.relay_client, endpoints, clock=self.clock, events=MetricsRelayEvents()
                )
                self._relays = (secrets, transport)
            return self._relays[1]

    def relay_configured(self, group: RelayGroup) -> bool:
        return relay_url(group, self.settings.relay_urls, self.secrets) is not None

    def before_snapshot(self) -> None:
        """SnapStart, before Lambda snapshots this initialized container: background work finishes (no thread
        is mid-call in the snapshot, no count or report is lost) and every HTTP connection is closed."""
        self.executor.shutdown(wait=True)
        self._close_connections()

    def after_restore(self) -> None:
        """SnapStart, in each restored copy: new threads, HTTP clients (the relays are rebuilt on them) and
        `random` seed, and the secret re-read in the background (its values serve meanwhile)."""
        random.seed()  # from os.urandom: every copy would otherwise draw the same numbers
        self.executor.restart()
        self._close_connections()
        self._connect()
        with self._relays_lock:
            self._relays = None
        self.secret_source.expire()
        self.secret_source.get()  # starts the re-read now rather than on the first lookup

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
        self._close_connections()

    def _connect(self) -> None:
        self.direct_client = new_http_client(self.http_transport)
        self.relay_client = new_http_client(self.http_transport)
        # CGV's signing key is read from the current secret values at each request.
        self.direct = DirectTransport(
            self.direct_client, keys=lambda name: self.secrets.value(name), clock=self.clock
        )

    def _close_connections(self) -> None:
        self.direct_client.close()
        self.relay_client.close()


@dataclass(eq=False)
class LookupFunction:
    """The lookup (and MCP) function: the router over the cached verdict snapshot, the routes, each lookup's
    time budget (`LOOKUP_BUDGET_SECONDS`) and the daily quota (None with `DAILY_RATE_LIMIT=0`).

    `snapshots` is None in legacy mode (no table): relay first wherever a relay is configured."""

    upstreams: Upstreams
    router: Router
    snapshots: SnapshotCache | None
    budget_ms: int
    limited_lookups: LimitedLookups | None
    answers: ResponseCache | None
    """The container's cache of lookup answers (None with `RESPONSE_CACHE=off`)."""

    def before_snapshot(self) -> None:
        self.upstreams.before_snapshot()

    def after_restore(self) -> None:
        """SnapStart, in each restored copy: what `Upstreams.after_restore` renews, no daily-quota counts (each
        copy would flush them again), and the verdict snapshot forgotten and reloaded in the background: until
        it lands, lookups route as on a stale snapshot (relay-first). Local direct blocks end by the clock."""
        self.upstreams.after_restore()
        if self.limited_lookups is not None:
            self.limited_lookups.quota.forget()
        if self.snapshots is not None:
            self.snapshots.invalidate()
            self.snapshots.refresh_if_due()

    def close(self) -> None:
        self.upstreams.close()


@dataclass(eq=False)
class ProbeFunction:
    """The probe and operator functions: the verdict store (None without a table) and the full check of every
    route into it."""

    upstreams: Upstreams
    store: DynamoVerdictStore | None

    def probe(
        self, specs: Mapping[RouteKey, OperationSpec[Any, Any]], *, slot_start: int, trigger: str
    ) -> ProbeSummary:
        """One probe run of `specs` (the catalog) for `slot_start` under the slot rule; raises
        StoreNotConfigured or StoreError."""
        store = self.store
        if store is None:
            raise StoreNotConfigured
        # The lookup function never loads the probe's code.
        from functions.services.probe_run import run_probe

        return run_probe(
            specs=specs,
            direct=self.upstreams.direct,
            relays=self.upstreams.relays,
            store=store,
            clock=self.upstreams.clock,
            slot_start=slot_start,
            trigger=trigger,
            events=MetricsProbeEvents(),
            rejected_writes=lambda: store.rejected_writes,
        )

    def close(self) -> None:
        self.upstreams.close()


# --- building --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Surroundings:
    """What a function's parts reach outside this code: by default the system clock, AWS and the network; the
    sandbox, tests and benchmarks give their own (a manual clock, moto, the simulated retailers)."""

    clock: Clock = system_clock
    dynamodb_client: DynamoDBClient | None = None
    http_transport: httpx.BaseTransport | None = None
    secrets: Secrets | SecretSource | None = None
    """Fixed values or a source; by default Secrets Manager when ROUTE_HEALTH_SECRET_ID is set, else the
    environment."""
    secretsmanager_client: SecretsManagerClient | None = None

    def upstreams(self, settings: CommonSettings) -> Upstreams:
        executor = BackgroundExecutor()
        if self.secrets is None:
            source: SecretSource = secret_source(
                settings.route_health_secret_id,
                max_age_s=settings.secret_max_age_s,
                client=self.secretsmanager_client,
                executor=executor,
            )
        elif isinstance(self.secrets, Secrets):
            source = StaticSecrets(self.secrets)
        else:
            source = self.secrets
        source.get()  # fail fast at INIT on an unreadable or malformed secret
        return Upstreams(settings, self.clock, source, executor, self.http_transport)

    def store(self, settings: CommonSettings) -> DynamoVerdictStore | None:
        if settings.route_health_table is None:
            return None
        client = self.dynamodb_client or new_dynamodb_client()
        return DynamoVerdictStore(settings.route_health_table, client, on_rejected=_stale_write_rejected)


DEPLOYED = Surroundings()


def build_lookup_function(settings: ApiSettings, surroundings: Surroundings = DEPLOYED) -> LookupFunction:
    """The lookup function's parts; with a table, the snapshot is prefetched (bounded by
    `SNAPSHOT_PREFETCH_SECONDS`, a failure tolerated) so the first lookups route on it."""
    upstreams = surroundings.upstreams(settings)
    store = surroundings.store(settings)
    clock, executor = surroundings.clock, upstreams.executor
    snapshots: SnapshotCache | None = None
    reporter: BackgroundFailureReporter | None = None
    if store is not None:
        snapshots = SnapshotCache(
            store.read_snapshot, clock=clock, executor=executor, on_error=_snapshot_load_failed
        )
        reporter = BackgroundFailureReporter(store, executor, clock, on_error=_report_failed)
    function = LookupFunction(
        upstreams=upstreams,
        router=Router(
            clock=clock,
            snapshots=snapshots,
            reporter=reporter,
            relay_configured=upstreams.relay_configured,
            events=MetricsRoutingEvents(),
        ),
        snapshots=snapshots,
        budget_ms=int(settings.lookup_budget_s * SECOND_MS),
        limited_lookups=limited_lookups(settings, store=store, executor=executor, clock=clock),
        answers=ResponseCache(
            clock=clock,
            max_bytes=settings.response_cache_max_bytes,
            max_entries=settings.response_cache_max_entries,
        )
        if settings.response_cache == "on"
        else None,
    )
    if snapshots is not None:
        logger.info("snapshot prefetch", extra={"loaded": snapshots.prefetch(settings.snapshot_prefetch_s)})
    return function


def build_probe_function(settings: CommonSettings, surroundings: Surroundings = DEPLOYED) -> ProbeFunction:
    """The probe or operator function's parts."""
    return ProbeFunction(surroundings.upstreams(settings), surroundings.store(settings))


def _stale_write_rejected() -> None:
    # Every function that writes counts its refused writes: the probe's checks, the lookups' failure reports.
    emit_metric("StaleWriteRejected", 1)


def _snapshot_load_failed(error: Exception) -> None:
    # Lookups keep routing (relay-first once the snapshot is stale); operators see the outage here.
    logger.warning(
        "snapshot refresh failed", extra={"operation": "read_snapshot", "error_type": type(error).__name__}
    )
    emit_metric("StoreError", 1)


def _report_failed(error: Exception) -> None:
    logger.warning(
        "failure report not stored", extra={"operation": "record_failure", "error_type": type(error).__name__}
    )
    emit_metric("StoreError", 1)


# --- one per function ------------------------------------------------------------------------------


class Deployed(Generic[Parts]):
    """A function's parts in this container: built from the environment on first use (settings validated
    then), or installed prebuilt (sandbox, tests, benchmarks). In Lambda a process runs one function; the
    sandbox runs all of them in one process, each with its own parts, as AWS would."""

    def __init__(self, build: Callable[[], Parts]) -> None:
        self._build = build
        self._parts: Parts | None = None
        self._lock = threading.Lock()

    def get(self) -> Parts:
        parts = self._parts
        if parts is not None:
            return parts
        with self._lock:
            if self._parts is None:
                self._parts = self._build()
            return self._parts

    def install(self, parts: Parts | None) -> None:
        """Use `parts` from now on; None forgets them, so the next use builds from the environment."""
        with self._lock:
            self._parts = parts


LOOKUP_FUNCTION = Deployed(lambda: build_lookup_function(ApiSettings.from_environment()))
OPERATOR_FUNCTION = Deployed(lambda: build_probe_function(OpsSettings.from_environment()))
PROBE_FUNCTION = Deployed(lambda: build_probe_function(ProbeSettings.from_environment()))


def prepare_at_init(function: Deployed[Parts]) -> None:
    """In Lambda, build the function's parts during INIT (each handler module calls this last).

    INIT runs before the first request with full CPU, so the clients, the secret read and the bounded
    snapshot prefetch cost no request anything, and a bad setting fails INIT with its message. Outside Lambda
    (tests, sandbox, bench) nothing is built at import. Either way INIT ends here, and the garbage collector
    the handler module paused for it runs again.
    """
    try:
        if os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):
            parts = function.get()
            if isinstance(parts, LookupFunction):  # the only function deployed with SnapStart
                register_restore_hooks(parts)
    finally:
        resume_after_init()


def register_restore_hooks(function: LookupFunction) -> None:
    """Registers the SnapStart hooks (docs/deploy.md, "SnapStart") with the Lambda runtime's `snapshot_restore_py`.

    Only Lambda's Python runtimes ship that module (nothing to install); elsewhere there is nothing to
    register. Without SnapStart the runtime never calls the hooks.
    """
    try:
        from snapshot_restore_py import register_after_restore, register_before_snapshot
    except ImportError:
        return
    register_before_snapshot(function.before_snapshot)
    register_after_restore(function.after_restore)
