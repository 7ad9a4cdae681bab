"""SnapStart's hooks on the lookup function: a restore is simulated by calling them as the Lambda runtime would,
on its real parts (moto, the simulated retailers and relays, a manual clock)."""

from __future__ import annotations

import json
import random
import sys
import threading
import types
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from functions.adapters.dynamo_store import DynamoVerdictStore
from functions.core import RelayCheck, RelayGroup, RouteCheck, RouteKey
from functions.core.model import MINUTE_MS
from functions.handlers import composition
from functions.handlers.composition import LookupFunction
from functions.handlers.settings import ApiSettings
from sandbox.embedded_aws import EmbeddedAws
from sandbox.relays import SimulatedUpstreams
from sandbox.simulator.server import Simulator
from tests.integration.conftest import Lambdas
from tests.support.clock import ManualClock
from tests.support.waiting import eventually

KEY = RouteKey.CU_STORE  # under the daily quota
PATH, QUERY = "/api/cu/stores", {"lat": "37.5", "lon": "127.0", "itemCd": "8801056018979"}
KEPT_IN_THE_SNAPSHOT_MS = 180 * MINUTE_MS
"""Between publishing a version and a restore from its snapshot: hours, or days."""


def background_threads() -> set[threading.Thread]:
    return {thread for thread in threading.enumerate() if thread.name.startswith("route-health")}


@pytest.fixture
def other_threads() -> set[threading.Thread]:
    """Background threads already there before this test's functions (other tests', ending)."""
    return background_threads()


@pytest.fixture
def secret_id(aws: EmbeddedAws) -> str:
    return aws.secret_id


@pytest.fixture
def lookups(
    other_threads: set[threading.Thread],
    lambdas: Lambdas,
    upstreams: SimulatedUpstreams,
    secret_id: str,
    secretsmanager: Any,
) -> Iterator[LookupFunction]:
    """The lookup function's parts as Lambda's INIT builds them: secrets from Secrets Manager (moto)."""
    built = composition.build_lookup_function(
        ApiSettings.from_environment(**lambdas.settings(), ROUTE_HEALTH_SECRET_ID=secret_id),
        composition.Surroundings(
            clock=lambdas.clock,
            dynamodb_client=lambdas.dynamodb,
            secretsmanager_client=secretsmanager,
            http_transport=upstreams.direct_transport(),
        ),
    )
    composition.LOOKUP_FUNCTION.install(built)
    yield built
    composition.LOOKUP_FUNCTION.install(None)
    built.close()


@pytest.fixture
def lookup(lambdas: Lambdas) -> Callable[[], int]:
    return lambda: lambdas.lookup(PATH, QUERY).status


def direct_works(store: DynamoVerdictStore, now: int) -> None:
    store.write_checks(
        [RouteCheck(KEY, True, now)], [RelayCheck(group, True, now) for group in RelayGroup], now=now
    )


def calls_since(simulator: Simulator, before: Mapping[str, int]) -> dict[str, int]:
    """The Lambda functions' calls (not the relays' own to the retailers) since `before`."""
    return {
        name: count - before.get(name, 0)
        for name, count in simulator.calls().items()
        if count > before.get(name, 0) and not name.startswith("relay-upstream:")
    }


class Gate:
    """Holds one AWS API call of a client until `open()`, and says when the call has started."""

    def __init__(self, client: Any, event: str) -> None:
        self.started = threading.Event()
        self._open = threading.Event()
        client.meta.events.register(event, self._hold)

    def _hold(self, **_: Any) -> None:
        self.started.set()
        assert self._open.wait(5.0), "the test never opened the gate"

    def open(self) -> None:
        self._open.set()


def test_a_restored_container_has_new_threads_and_connections_and_never_waits_for_its_snapshot(
    lookups: LookupFunction,
    lookup: Callable[[], int],
    store: DynamoVerdictStore,
    dynamodb: Any,
    simulator: Simulator,
    clock: ManualClock,
    other_threads: set[threading.Thread],
) -> None:
    assert lookups.snapshots is not None
    assert lookups.limited_lookups is not None
    direct_works(store, clock())
    assert lookups.snapshots.prefetch(5.0)
    before = simulator.calls()
    assert lookup() == 200
    assert calls_since(simulator, before) == {f"direct:{KEY}": 1}
    old_threads = background_threads() - other_threads
    old_clients = (lookups.upstreams.direct_client, lookups.upstreams.relay_client)
    assert old_threads
    quota, in_the_snapshot = lookups.limited_lookups.quota, clock()
    assert quota.admit("a-client", now=in_the_snapshot).remaining == quota.limit - 1

    lookups.before_snapshot()

    assert not any(thread.is_alive() for thread in old_threads)  # nothing is mid-call in the snapshot
    assert all(client.is_closed for client in old_clients)  # and no connection is open

    clock.advance(KEPT_IN_THE_SNAPSHOT_MS)
    direct_works(store, clock())
    query = Gate(dynamodb, "before-call.dynamodb.Query")

    lookups.after_restore()

    assert query.started.wait(5.0)  # the snapshot is reloading in the background
    # No count of the snapshot's copy (it is relearned from the store at the next flush).
    assert quota.admit("a-client", now=in_the_snapshot).remaining == quota.limit - 1
    before = simulator.calls()
    assert lookup() == 200  # answered while the load still waits: no snapshot yet, so relay-first
    assert calls_since(simulator, before) == {f"relay:{KEY}": 1}
    assert lookups.snapshots.peek() is None
    assert not {client for client in (lookups.upstreams.direct_client, lookups.upstreams.relay_client)} & set(
        old_clients
    )
    new_threads = background_threads() - other_threads
    assert new_threads
    assert not new_threads & old_threads

    query.open()
    assert lookups.snapshots.prefetch(5.0)
    before = simulator.calls()
    assert lookup() == 200
    assert calls_since(simulator, before) == {f"direct:{KEY}": 1}  # the reloaded snapshot, on new connections


def test_a_restored_container_re_reads_its_secret_in_the_background(
    lookups: LookupFunction, secretsmanager: Any, secret_id: str
) -> None:
    relays = lookups.upstreams.relays
    values = json.loads(secretsmanager.get_secret_value(SecretId=secret_id)["SecretString"])

    def health_check_secret() -> str:
        value = lookups.upstreams.secrets.health_check_secret
        assert value is not None
        return value.get_secret_value()

    lookups.before_snapshot()
    rotated = {**values, "HEALTH_CHECK_SECRET": "rotated-while-in-the-snapshot"}
    secretsmanager.put_secret_value(SecretId=secret_id, SecretString=json.dumps(rotated))
    read = Gate(secretsmanager, "before-call.secrets-manager.GetSecretValue")

    lookups.after_restore()  # the secret's max age (5 minutes by the monotonic clock) has not passed

    assert read.started.wait(5.0)
    assert health_check_secret() == values["HEALTH_CHECK_SECRET"]  # served at once while the re-read waits
    read.open()
    assert eventually(lambda: health_check_secret() == rotated["HEALTH_CHECK_SECRET"], within_s=5.0)
    assert lookups.upstreams.relays is not relays  # rebuilt on the new client and the new values


def test_each_restored_container_draws_different_random_numbers(lookups: LookupFunction) -> None:
    snapshotted = random.getstate()
    lookups.after_restore()
    first = [random.random() for _ in range(4)]
    random.setstate(snapshotted)  # a second copy of the same snapshot
    lookups.after_restore()
    assert [random.random() for _ in range(4)] != first


@pytest.fixture
def in_lambda(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "route-health-api")
    yield
    composition.LOOKUP_FUNCTION.install(None)


@pytest.mark.usefixtures("in_lambda")
def test_the_hooks_are_registered_where_the_lambda_runtime_offers_them(
    monkeypatch: pytest.MonkeyPatch, lookups: LookupFunction
) -> None:
    registered: dict[str, Callable[[], None]] = {}
    runtime = types.ModuleType("snapshot_restore_py")
    runtime.__dict__.update(
        register_before_snapshot=lambda hook: registered.setdefault("before_snapshot", hook),
        register_after_restore=lambda hook: registered.setdefault("after_restore", hook),
    )
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", runtime)

    composition.prepare_at_init(composition.LOOKUP_FUNCTION)

    assert registered == {
        "before_snapshot": lookups.before_snapshot,
        "after_restore": lookups.after_restore,
    }


@pytest.mark.usefixtures("in_lambda")
def test_without_the_runtime_module_init_registers_nothing_and_still_succeeds(
    monkeypatch: pytest.MonkeyPatch, lookups: LookupFunction
) -> None:
    monkeypatch.setitem(sys.modules, "snapshot_restore_py", None)  # importing it raises ImportError
    composition.prepare_at_init(composition.LOOKUP_FUNCTION)
    assert composition.LOOKUP_FUNCTION.get() is lookups
