"""Builds the container's clients and adapters once, and hands them to the handlers (the composition root).

`get_container()` builds everything from the environment on first use and keeps it for the container's
life; nothing is built at import time. The sandbox and tests build their own with `build_container(...)`
(injecting the clock, a DynamoDB client, the simulator's HTTP transport, secrets) and install it with
`set_container(...)`.

With SnapStart (README.md, "SnapStart"), Lambda snapshots the container after INIT and restores copies of it,
possibly days later, into many execution environments: `Container.before_snapshot` and
`Container.after_restore` are registered as the runtime's hooks where the runtime offers them.
"""

from __future__ import annotations

import functools
import os
import random
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import httpx

from functions.adapters.direct import DirectTransport
from functions.adapters.dynamo_store import DynamoVerdictStore
from functions.adapters.dynamo_store import dynamodb_client as new_dynamodb_client
from functions.adapters.http import new_http_client
from functions.adapters.relay import (
    RelayConfigError,
    RelayCredentials,
    RelayEndpoint,
    RelayTransport,
)
from functions.adapters.secrets import Secrets, SecretSource, StaticSecrets, secret_source
from functions.catalog import CATALOG
from functions.core import DIRECT_TIMEOUT_MS, LOOKUP_BUDGET_MS, Clock, RelayGroup, VerdictStore
from functions.core.model import SECOND_MS
from functions.core.ports import OverrideStore
from functions.handlers.daily_quota import LimitedLookups, limited_lookups
from functions.handlers.init_collection import resume_after_init
from functions.handlers.settings import ApiSettings, CommonSettings, OpsSettings, ProbeSettings
from functions.handlers.telemetry import (
    MetricsProbeEvents,
    MetricsRelayEvents,
    MetricsRoutingEvents,
    emit_metric,
    logger,
)
from functions.services.reporting import BackgroundFailureReporter
from functions.services.routing import Router
from functions.services.snapshot_cache import SnapshotCache

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_secretsmanager import SecretsManagerClient

    from functions.services.probe_run import ProbeSummary

BACKGROUND_WORKERS = 4
"""Snapshot and secret refreshes, failure reports and quota flushes: small, they only wait on AWS APIs."""

P = ParamSpec("P")
T = TypeVar("T")


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
class Container:
    """Everything a handler needs, built once per Lambda container.

    `store`, `overrides` and `snapshots` are None in legacy mode (no table). `relays` is rebuilt only when the secret
    values change (Secrets Manager rotation seen after the cache's max age).
    """

    clock: Clock
    settings: CommonSettings
    store: VerdictStore | None
    snapshots: SnapshotCache | None
    router: Router
    direct: DirectTransport
    secret_source: SecretSource
    executor: BackgroundExecutor
    new_http_client: Callable[[], httpx.Client]
    direct_client: httpx.Client
    relay_client: httpx.Client
    rejected_writes: Callable[[], int] = lambda: 0
    lookup_budget_ms: int = LOOKUP_BUDGET_MS
    """The lookup function's budget per request (`LOOKUP_BUDGET_SECONDS`)."""
    limited_lookups: LimitedLookups | None = None
    """The lookup function's daily quota (None elsewhere, or with DAILY_RATE_LIMIT=0)."""
    overrides: OverrideStore | None = None
    probe_timeout_ms: int = DIRECT_TIMEOUT_MS
    """Per probe check (3 s); tests shorten it to keep hang scenarios quick."""
    _relays: tuple[Secrets, RelayTransport] | None = field(default=None, repr=False)
    _relays_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def secrets(self) -> Secrets:
        return self.secret_source.get()

    @property
    def relays(self) -> RelayTransport:
        secrets = self.secrets
        with self._relays_lock:
            if self._relays is None or self._relays[0] is not secrets:
                endpoints = relay_endpoints(self.settings, secrets)
                transport = RelayTransport(
                    self.relay_client, endpoints, clock=self.clock, events=MetricsRelayEvents()
                )
                self._relays = (secrets, transport)
            return self._relays[1]

    def probe(self, *, slot_start: int, trigger: str) -> ProbeSummary:
        """One probe run for `slot_start` under the slot rule; raises StoreNotConfigured or StoreError."""
        if self.store is None:
            raise StoreNotConfigured
        # The probe and operator functions import it at INIT (their handlers do); the lookup function never.
        from functions.services.probe_run import run_probe

        return run_probe(
            specs=CATALOG,
            direct=self.direct,
            relays=self.relays,
            store=self.store,
            clock=self.clock,
            slot_start=slot_start,
            trigger=trigger,
            events=MetricsProbeEvents(),
            rejected_writes=self.rejected_writes,
            timeout_ms=self.probe_timeout_ms,
        )

    def before_snapshot(self) -> None:
        """SnapStart, before Lambda snapshots this initialized container: background work finishes (no thread
        is mid-call in the snapshot, no count or report is lost) and every HTTP connection is closed."""
        self.executor.shutdown(wait=True)
        self._close_connections()

    def after_restore(self) -> None:
        """SnapStart, in each container restored from the snapshot: re-create what must not be shared by every
        copy or outlive the snapshot's age, without making the first lookup wait for AWS.

        New threads and HTTP clients (the relays are rebuilt on them), a new `random` seed, no daily-quota
        counts (each copy would flush them again), the secret re-read in the background (its values serve
        meanwhile), and the verdict snapshot forgotten and reloaded in the background: until it lands, lookups
        route as on a stale snapshot (relay-first). Local direct blocks stay: they end by the clock.
        """
        random.seed()  # from os.urandom: every copy would otherwise draw the same numbers
        self.executor.restart()
        self._close_connections()
        self.direct_client = self.new_http_client()
        self.relay_client = self.new_http_client()
        self.direct = DirectTransport(self.direct_client)
        with self._relays_lock:
            self._relays = None
        if self.limited_lookups is not None:
            self.limited_lookups.quota.forget()
        self.secret_source.expire()
        self.secret_source.get()  # starts the re-read now rather than on the first lookup
        if self.snapshots is not None:
            self.snapshots.invalidate()
            self.snapshots.refresh_if_due()

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)
        self._close_connections()

    def _close_connections(self) -> None:
        self.direct_client.close()
        self.relay_client.close()


_RELAY_URL_FIELD: Mapping[RelayGroup, str] = {
    RelayGroup.OLIVEYOUNG: "oy_relay_url",
    RelayGroup.CONVENIENCE: "convenience_relay_url",
    RelayGroup.DTRYX: "dtryx_relay_url",
}


def relay_url(settings: CommonSettings, group: RelayGroup) -> str | None:
    url: str | None = getattr(settings, _RELAY_URL_FIELD[group])
    return url


def relay_endpoints(
    settings: CommonSettings, secrets: Secrets
) -> dict[RelayGroup, RelayEndpoint | RelayConfigError]:
    """Each group with a relay URL: its endpoint, or why it is unusable (its verdict is then `configuration`)."""
    endpoints: dict[RelayGroup, RelayEndpoint | RelayConfigError] = {}
    for group in RelayGroup:
        url = relay_url(settings, group)
        if url is None:
            continue
        values = secrets.relay(group)
        credentials = RelayCredentials(
            token=values.token.get_secret_value() if values.token else "",
            access_client_id=values.access_client_id.get_secret_value() if values.access_client_id else None,
            access_client_secret=(
                values.access_client_secret.get_secret_value() if values.access_client_secret else None
            ),
            api_key=values.api_key.get_secret_value() if values.api_key else None,
        )
        try:
            endpoints[group] = RelayEndpoint.parse(group, url, credentials)
        except RelayConfigError as error:
            logger.warning("relay configuration invalid", extra={"group": group.value, "problem": str(error)})
            endpoints[group] = error
    return endpoints


def build_container(
    settings: CommonSettings,
    *,
    clock: Clock = system_clock,
    dynamodb_client: DynamoDBClient | None = None,
    http_transport: httpx.BaseTransport | None = None,
    secrets: Secrets | SecretSource | None = None,
    secretsmanager_client: SecretsManagerClient | None = None,
    prefetch: bool = True,
) -> Container:
    """Build the container's adapters. Only `ApiSettings` prefetches the snapshot (INIT, bounded, tolerated).

    `secrets`: fixed values (tests, sandbox) or a source; by default from Secrets Manager when
    ROUTE_HEALTH_SECRET_ID is set, else from the environment.
    """
    executor = BackgroundExecutor()
    if secrets is None:
        source: SecretSource = secret_source(
            settings.route_health_secret_id,
            max_age_s=settings.secret_max_age_s,
            client=secretsmanager_client,
            executor=executor,
        )
    elif isinstance(secrets, Secrets):
        source = StaticSecrets(secrets)
    else:
        source = secrets
    source.get()  # fail fast at INIT on an unreadable or malformed secret

    store: DynamoVerdictStore | None = None
    snapshots: SnapshotCache | None = None
    if settings.route_health_table is not None:
        store = DynamoVerdictStore(
            settings.route_health_table,
            dynamodb_client or new_dynamodb_client(),
            on_rejected=_stale_write_rejected,
        )
        snapshots = SnapshotCache(
            store.read_snapshot, clock=clock, executor=executor, on_error=_snapshot_load_failed
        )

    http_client = functools.partial(new_http_client, http_transport)
    direct_client = http_client()
    container = Container(
        clock=clock,
        settings=settings,
        store=store,
        snapshots=snapshots,
        router=Router(
            clock=clock,
            snapshots=snapshots,
            reporter=_failure_reporter(store, executor, clock),
            relay_configured=lambda group: relay_url(settings, group) is not None,
            events=MetricsRoutingEvents(),
        ),
        direct=DirectTransport(direct_client),
        secret_source=source,
        executor=executor,
        new_http_client=http_client,
        direct_client=direct_client,
        relay_client=http_client(),  # its own: relay calls never share a retailer's pool
    )
    if store is not None:
        verdict_store = store
        container.rejected_writes = lambda: verdict_store.rejected_writes
        container.overrides = store
    if isinstance(settings, ApiSettings):
        container.lookup_budget_ms = int(settings.lookup_budget_s * SECOND_MS)
        container.limited_lookups = limited_lookups(settings, store=store, executor=executor, clock=clock)
        if prefetch and snapshots is not None:
            loaded = snapshots.prefetch(settings.snapshot_prefetch_s)
            logger.info("snapshot prefetch", extra={"loaded": loaded})
    return container


def _stale_write_rejected() -> None:
    # Every function that writes counts its refused writes: the probe's checks, the lookups' failure reports.
    emit_metric("StaleWriteRejected", 1)


def _snapshot_load_failed(error: Exception) -> None:
    # Lookups keep routing (relay-first once the snapshot is stale); operators see the outage here.
    logger.warning(
        "snapshot refresh failed", extra={"operation": "read_snapshot", "error_type": type(error).__name__}
    )
    emit_metric("StoreError", 1)


def _failure_reporter(
    store: VerdictStore | None, executor: Executor, clock: Clock
) -> BackgroundFailureReporter | None:
    if store is None:
        return None

    def on_error(error: Exception) -> None:
        logger.warning(
            "failure report not stored",
            extra={"operation": "record_failure", "error_type": type(error).__name__},
        )
        emit_metric("StoreError", 1)

    return BackgroundFailureReporter(store, executor, clock, on_error=on_error)


_containers: dict[type[CommonSettings], Container] = {}
"""One container per function: in Lambda a process runs one function, so this holds one entry; the sandbox
runs all three functions in one process and gives each its own, as AWS would."""
_container_lock = threading.Lock()
FUNCTION_SETTINGS: tuple[type[CommonSettings], ...] = (ApiSettings, OpsSettings, ProbeSettings)


def get_container(settings_type: type[CommonSettings] = ApiSettings) -> Container:
    """This function's Container, built from the environment on first use (settings validated then)."""
    container = _containers.get(settings_type)
    if container is not None:
        return container
    with _container_lock:
        if settings_type not in _containers:
            _containers[settings_type] = build_container(settings_type.from_environment())
        return _containers[settings_type]


def prepare_container_at_init(settings_type: type[CommonSettings]) -> None:
    """In Lambda, build the container during INIT (each handler module calls this on import).

    INIT runs before the first request with full CPU, so the clients, the secret read and the bounded
    snapshot prefetch cost no request anything, and a bad setting fails INIT with its message.
    Outside Lambda (tests, sandbox, bench) nothing is built at import. Either way INIT ends here, and the
    garbage collector the handler module paused for it runs again.
    """
    try:
        if os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):
            register_restore_hooks(get_container(settings_type))
    finally:
        resume_after_init()


def register_restore_hooks(container: Container) -> None:
    """Registers the container's SnapStart hooks with the Lambda runtime's `snapshot_restore_py`.

    Only Lambda's Python runtimes ship that module (nothing to install); elsewhere there is nothing to
    register. Without SnapStart the runtime never calls the hooks.
    """
    try:
        from snapshot_restore_py import register_after_restore, register_before_snapshot
    except ImportError:
        return
    register_before_snapshot(container.before_snapshot)
    register_after_restore(container.after_restore)


def set_container(container: Container | None, settings_type: type[CommonSettings] | None = None) -> None:
    """Install a prebuilt container for one function (by its settings type), or for all three (tests).

    None forgets it, so the next use rebuilds from the environment.
    """
    with _container_lock:
        for function in FUNCTION_SETTINGS if settings_type is None else (settings_type,):
            if container is None:
                _containers.pop(function, None)
            else:
                _containers[function] = container


def reset_container() -> None:
    """Forget and close every installed container (tests)."""
    with _container_lock:
        old = {id(container): container for container in _containers.values()}
        _containers.clear()
    for container in old.values():
        container.close()
