"""The real Lambda handlers against moto and the simulated retailers and relays, all on 127.0.0.1.

The servers start once per session (per xdist worker) and every test resets them, explicitly and cheaply,
before it runs, so the tests stay independent and run in any order:

- `aws`: moto's server, emptied by moto's own reset; then the verdict table (`table_definition`, as the CDK
  table and the sandbox make it) and the test secret. boto3 clients without an endpoint of their own reach it
  (`AWS_ENDPOINT_URL`). `dynamodb`: a client; `store`: a `DynamoVerdictStore` on it; `secret_id`.
- `upstreams`: the simulated retailers with a reference relay per group in front, taking the `test_secrets`
  relay credentials. `simulator` is reset (`Simulator.reset`: no faults, hanging requests ended, counters
  at zero); the relays keep state by time (quota windows, cached answers), so their clock moves a week on.
- `clock`: a `ManualClock` back at NOW, moving only when a test says so.

And per test: `make_container(**overrides)`, a real container (`build_container`) on moto whose HTTP goes to
the simulator, installed with `set_container` so the real `lambda_handler`s use it; closed after the test,
its background work finished first. `api_event(method, path, ...)`: an API Gateway HTTP API (payload v2)
event at NOW; `lambda_context`: a context as the sandbox makes one.
"""

from __future__ import annotations

import functools
import io
import json
import logging
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import boto3
import httpx
import pytest
from moto.server import ThreadedMotoServer

from functions.adapters.dynamo_store import DynamoVerdictStore, table_definition
from functions.adapters.relay import RelayCredentials
from functions.adapters.secrets import Secrets
from functions.core import RelayGroup
from functions.handlers import wiring
from functions.handlers.settings import ApiSettings
from relay.logs import RelayLog
from sandbox.gateway import LambdaContext
from sandbox.relays import SimulatedUpstreams, start_upstreams
from sandbox.simulator.server import Simulator, loopback_transport
from tests.support import events
from tests.support.clock import ManualClock

TABLE_NAME = "route-health-test"
SECRET_ID = "route-health/test"
NOW = 1_767_225_600_000 + 42_000
"""2026-01-01T00:00:42Z: 42 s into a 5-minute probe slot."""
WEEK_MS = 7 * 24 * 60 * 60 * 1000

TEST_SECRET_VALUES: Mapping[str, str] = {
    "HEALTH_CHECK_SECRET": "hc-secret-Zq81",
    "OY_RELAY_TOKEN": "oy-relay-token-Xk27",
    "OY_ACCESS_CLIENT_ID": "oy-access-id-Lm44",
    "OY_ACCESS_CLIENT_SECRET": "oy-access-secret-Pw09",
    "CONVENIENCE_RELAY_TOKEN": "conv-relay-token-Rt55",
    "CONVENIENCE_ACCESS_CLIENT_ID": "conv-access-id-Hy63",
    "CONVENIENCE_ACCESS_CLIENT_SECRET": "conv-access-secret-Ub71",
    "DTRYX_RELAY_TOKEN": "dtryx-relay-token-Ne38",
    "GS25_API_KEY": "gs25-api-key-Qv12",
}
TEST_SECRETS = Secrets.from_mapping(TEST_SECRET_VALUES, source="test")


class RelayClock:
    """The relays' clock: the tests' clock, a week later for every test started before. Each test meets the
    shared relays in fresh quota windows with nothing cached (no test moves its clock a week on)."""

    def __init__(self, clock: ManualClock) -> None:
        self._clock = clock
        self._offset = 0

    def __call__(self) -> int:
        return self._clock() + self._offset

    def next_test(self) -> None:
        self._offset += WEEK_MS


@pytest.fixture(scope="session")
def moto_url() -> Iterator[str]:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # moto's server logs every request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def aws(moto_url: str, monkeypatch: pytest.MonkeyPatch) -> str:
    httpx.post(f"{moto_url}/moto-api/reset").raise_for_status()
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_url)
    boto3.client("secretsmanager").create_secret(
        Name=SECRET_ID, SecretString=json.dumps(dict(TEST_SECRET_VALUES))
    )
    return moto_url


@pytest.fixture
def dynamodb(aws: str) -> Any:
    client = boto3.client("dynamodb")
    client.create_table(**table_definition(TABLE_NAME))
    return client


@pytest.fixture
def store(dynamodb: Any) -> DynamoVerdictStore:
    return DynamoVerdictStore(TABLE_NAME, dynamodb)


@pytest.fixture
def secret_id(aws: str) -> str:
    return SECRET_ID


@pytest.fixture
def test_secrets() -> Secrets:
    return TEST_SECRETS


@pytest.fixture(scope="session")
def session_clock() -> ManualClock:
    return ManualClock(NOW)


@pytest.fixture
def clock(session_clock: ManualClock) -> ManualClock:
    session_clock.now = NOW
    return session_clock


@pytest.fixture(scope="session")
def relay_clock(session_clock: ManualClock) -> RelayClock:
    return RelayClock(session_clock)


def relay_credentials(secrets: Secrets) -> dict[RelayGroup, RelayCredentials]:
    """The relay credentials in `secrets`, as the sandbox's relays and their fronts expect them."""
    credentials = {}
    for group in RelayGroup:
        values = secrets.relay(group)
        if values.token is None:
            continue
        credentials[group] = RelayCredentials(
            values.token.get_secret_value(),
            values.access_client_id.get_secret_value() if values.access_client_id else None,
            values.access_client_secret.get_secret_value() if values.access_client_secret else None,
            values.api_key.get_secret_value() if values.api_key else None,
        )
    return credentials


@pytest.fixture(scope="session")
def upstreams(relay_clock: RelayClock) -> Iterator[SimulatedUpstreams]:
    credentials = relay_credentials(TEST_SECRETS)
    simulator = Simulator(credentials, hang_limit_s=5.0)
    with start_upstreams(simulator, credentials, clock=relay_clock, log=RelayLog(io.StringIO())) as started:
        yield started


@pytest.fixture
def simulator(upstreams: SimulatedUpstreams, relay_clock: RelayClock) -> Simulator:
    upstreams.simulator.reset()
    relay_clock.next_test()
    return upstreams.simulator


@pytest.fixture
def lambda_context() -> LambdaContext:
    return LambdaContext("route-health-test", timeout_s=30)


@pytest.fixture
def api_event() -> Callable[..., dict[str, Any]]:
    """api_event("GET", "/api/...", headers=..., query=..., body=...): an event at NOW."""
    return functools.partial(events.api_event, now_ms=NOW)


@pytest.fixture
def settings_values(upstreams: SimulatedUpstreams) -> dict[str, str]:
    """Settings for `make_container` by env var name: the table and the three simulated relays."""
    return {
        "ROUTE_HEALTH_TABLE": TABLE_NAME,
        "SNAPSHOT_PREFETCH_SECONDS": "0.3",
        "OY_RELAY_URL": upstreams.relay_url(RelayGroup.OLIVEYOUNG),
        "CONVENIENCE_RELAY_URL": upstreams.relay_url(RelayGroup.CONVENIENCE),
        "DTRYX_RELAY_URL": upstreams.relay_url(RelayGroup.DTRYX),
    }


@pytest.fixture
def make_container(
    dynamodb: Any,
    clock: ManualClock,
    settings_values: dict[str, str],
    upstreams: SimulatedUpstreams,
    simulator: Simulator,
) -> Iterator[Callable[..., wiring.Container]]:
    """Factory: make_container(secrets=..., table=False, dynamodb_client=..., **settings by env var name)."""
    built: list[tuple[wiring.Container, bool]] = []

    def build(
        *,
        secrets: Secrets | None = None,
        table: bool = True,
        dynamodb_client: Any = None,
        **settings: str,
    ) -> wiring.Container:
        values = {**settings_values, **settings}
        if not table:
            values.pop("ROUTE_HEALTH_TABLE", None)
        container = wiring.build_container(
            ApiSettings.from_environment(**values),
            clock=clock,
            dynamodb_client=dynamodb_client or dynamodb,
            http_transport=loopback_transport(upstreams.base_url),
            secrets=secrets if secrets is not None else TEST_SECRETS,
        )
        built.append((container, dynamodb_client is None))
        wiring.set_container(container)
        return container

    yield build
    wiring.set_container(None)
    for container, on_moto in built:
        # Background work on the shared moto ends before the next test empties it (a store of the test's own
        # may hang: its work is dropped, as it cannot reach moto).
        container.executor.shutdown(wait=on_moto, cancel_futures=True)
        container.close()
