"""The real Lambda handlers against moto and the simulated retailers and relays, all on 127.0.0.1.

The servers start once per session (per xdist worker) and every test resets them, explicitly and cheaply,
before it runs, so the tests stay independent and run in any order:

- `aws`: the sandbox's embedded AWS (moto's server), emptied by moto's own reset; then the test secret and
  the verdict table (`table_definition`, as the CDK table and the sandbox make it). boto3 clients without an
  endpoint of their own reach it (`AWS_ENDPOINT_URL`). `dynamodb`: a client; `store`: a `DynamoVerdictStore` on it.
- `upstreams`: the simulated retailers with a reference relay per group in front, taking the test secrets'
  relay credentials. `simulator` is reset (`Simulator.reset`: no faults, hanging requests ended, counters
  at zero); the relays keep state by time (quota windows, cached answers), so their clock moves a week on.
- `clock`: a `ManualClock` back at NOW, moving only when a test says so.

Per test, `lambdas` (`Lambdas`) deploys each function's parts afresh over them and calls the real `lambda_handler`s.
"""

from __future__ import annotations

import contextlib
import io
import json
import socket
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import boto3
import httpx
import pytest
from botocore.config import Config

from functions.adapters.dynamo_store import DynamoVerdictStore, dynamodb_client, table_definition
from functions.adapters.relay import RelayCredentials
from functions.adapters.secrets import Secrets
from functions.catalog import cgv
from functions.core import DIRECT_PROBED, RelayCheck, RelayGroup, RouteCheck, RouteKey
from functions.handlers import api, composition, ops, probe
from functions.handlers.composition import LookupFunction, ProbeFunction
from functions.handlers.ops import ROUTES_PATH
from functions.handlers.settings import ApiSettings, OpsSettings, ProbeSettings
from relay.logs import RelayLog
from sandbox.embedded_aws import REGION, EmbeddedAws
from sandbox.gateway import LambdaContext
from sandbox.relays import SimulatedUpstreams, start_upstreams
from sandbox.scheduler import scheduled_event
from sandbox.simulator.server import Simulator
from tests.support.catalog_fixtures import Endpoint
from tests.support.clock import ManualClock, RelayClock
from tests.support.events import api_event

TABLE_NAME = "route-health-test"
SECRET_ID = "route-health/test"
NOW = 1_767_225_600_000 + 42_000
"""2026-01-01T00:00:42Z: 42 s into a 5-minute probe slot."""

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
    "CGV_SIGNING_KEY": "cgv-signing-key-Jd52",
}
TEST_SECRETS = Secrets.from_mapping(TEST_SECRET_VALUES, source="test")
OPERATOR_SECRET = TEST_SECRET_VALUES["HEALTH_CHECK_SECRET"]
OPERATOR_AUTH = {"Authorization": f"Bearer {OPERATOR_SECRET}"}


class Answer(NamedTuple):
    """A handler's HTTP answer, its body decoded."""

    status: int
    headers: Mapping[str, str]
    body: Any

    def rate_limit(self) -> dict[str, str]:
        return {
            name: value for name, value in self.headers.items() if name.lower().startswith("x-ratelimit-")
        }


def answer_of(result: Mapping[str, Any]) -> Answer:
    return Answer(result["statusCode"], result.get("headers") or {}, json.loads(result["body"]))


def error_body(code: str, message: str) -> dict[str, Any]:
    """The body of every error answer."""
    return {"success": False, "error": {"code": code, "message": message}}


def explode(*_: Any, **__: Any) -> Any:
    """Stands in for a part that fails unexpectedly (with a detail no answer may show)."""
    raise RuntimeError("secret detail /var/task/functions/x.py line 3")


class Lambdas:
    """One test's Lambda functions: each function's parts, deployed afresh (`deploy`, installed so the real
    `lambda_handler`s use them) over the shared servers, and the calls the test makes to their handlers."""

    operator_function: ProbeFunction
    probe_function: ProbeFunction
    """The operator's and the probe's parts, once deployed."""

    def __init__(
        self, clock: ManualClock, dynamodb: Any, simulator: Simulator, upstreams: SimulatedUpstreams
    ) -> None:
        self.clock = clock
        self.dynamodb = dynamodb
        self.store = DynamoVerdictStore(TABLE_NAME, dynamodb)
        self.simulator = simulator
        self.context: Any = LambdaContext("route-health-test", timeout_s=30)  # what the handlers read of one
        self._upstreams = upstreams
        self._built: list[tuple[LookupFunction | ProbeFunction, bool]] = []

    def settings(self) -> dict[str, str]:
        """What `deploy` builds from, by env var name: the table and the three simulated relays."""
        return {
            "ROUTE_HEALTH_TABLE": TABLE_NAME,
            "SNAPSHOT_PREFETCH_SECONDS": "0.3",
            "OY_RELAY_URL": self._upstreams.relay_url(RelayGroup.OLIVEYOUNG),
            "CONVENIENCE_RELAY_URL": self._upstreams.relay_url(RelayGroup.CONVENIENCE),
            "DTRYX_RELAY_URL": self._upstreams.relay_url(RelayGroup.DTRYX),
            # The tests count the upstream calls of repeated lookups; the cache's own tests turn it on.
            "RESPONSE_CACHE": "off",
        }

    def deploy(
        self,
        *,
        secrets: Secrets = TEST_SECRETS,
        table: bool = True,
        dynamodb: Any = None,
        **settings: str,
    ) -> LookupFunction:
        """Each function's real parts on moto (or `dynamodb`), their HTTP reaching the simulator; `settings` by
        env var name override `settings()`; `table=False`: legacy mode. Returns the lookup function's; the
        operator's and the probe's are `operator_function` and `probe_function`."""
        values = {**self.settings(), **settings}
        if not table:
            del values["ROUTE_HEALTH_TABLE"]
        surroundings = composition.Surroundings(
            clock=self.clock,
            dynamodb_client=dynamodb or self.dynamodb,
            http_transport=self._upstreams.direct_transport(),
            secrets=secrets,
        )
        lookups = composition.build_lookup_function(ApiSettings.from_environment(**values), surroundings)
        self.operator_function, self.probe_function = (
            composition.build_probe_function(kind.from_environment(**values), surroundings)
            for kind in (OpsSettings, ProbeSettings)
        )
        composition.LOOKUP_FUNCTION.install(lookups)
        composition.OPERATOR_FUNCTION.install(self.operator_function)
        composition.PROBE_FUNCTION.install(self.probe_function)
        for parts in (lookups, self.operator_function, self.probe_function):
            self._built.append((parts, dynamodb is None))
        return lookups

    def ready(self, **overrides: Any) -> LookupFunction:
        """Every direct route verified and every relay healthy just now, and functions deployed with that loaded."""
        self.write_verdicts()
        return self.loaded(self.deploy(**overrides))

    @staticmethod
    def loaded(lookups: LookupFunction) -> LookupFunction:
        """Waits (bounded) until the lookup function's snapshot is loaded, as after a successful INIT prefetch."""
        assert lookups.snapshots is not None
        assert lookups.snapshots.prefetch(5.0)
        return lookups

    def write_verdicts(
        self, *, direct: bool = True, relays_healthy: bool = True, keys: tuple[RouteKey, ...] = DIRECT_PROBED
    ) -> None:
        now = self.clock()
        relays = [RelayCheck(group, relays_healthy, now) for group in RelayGroup]
        self.store.write_checks([RouteCheck(key, direct, now) for key in keys], relays, now=now)

    def lookup(
        self,
        path: str,
        query: Mapping[str, str] | None = None,
        *,
        method: str = "GET",
        headers: Mapping[str, str] | None = None,
        ip: str | None = None,
    ) -> Answer:
        event = api_event(method, path, query=query, headers=headers, now_ms=NOW)
        if ip is not None:
            event["requestContext"]["http"]["sourceIp"] = ip
        return answer_of(api.lambda_handler(event, self.context))

    def lookup_endpoint(self, endpoint: Endpoint) -> Answer:
        return self.lookup(endpoint.path, endpoint.query)

    def operator(
        self,
        method: str,
        path: str = ROUTES_PATH,
        *,
        headers: Mapping[str, str] = OPERATOR_AUTH,
        body: object = None,
        query: Mapping[str, str] | None = None,
    ) -> Answer:
        """The operator API; a `body` that is not a string or bytes is sent as JSON."""
        raw = body if body is None or isinstance(body, str | bytes) else json.dumps(body)
        event = api_event(method, path, headers=headers, body=raw, query=query, now_ms=NOW)
        return answer_of(ops.lambda_handler(event, self.context))

    def probe(self, at_ms: int | None = None) -> dict[str, Any]:
        """The probe function's answer to the schedule's event for `at_ms` (default: now)."""
        event = scheduled_event(self.clock() if at_ms is None else at_ms, region=REGION)
        result: dict[str, Any] = probe.lambda_handler(event, self.context)
        return result

    def used(self) -> dict[str, int]:
        """The non-zero counts of the functions' calls (not the relays' own calls to the retailers)."""
        calls = self.simulator.calls().items()
        return {name: count for name, count in calls if count and not name.startswith("relay-upstream:")}

    def close(self) -> None:
        for deployed in (
            composition.LOOKUP_FUNCTION,
            composition.OPERATOR_FUNCTION,
            composition.PROBE_FUNCTION,
        ):
            deployed.install(None)
        for parts, on_moto in self._built:
            # Background work on the shared moto ends before the next test's table (a store of the test's
            # own may hang: its work is dropped, as it cannot reach moto).
            parts.upstreams.executor.shutdown(wait=on_moto, cancel_futures=True)
            parts.close()


def relay_credentials(secrets: Secrets) -> dict[RelayGroup, RelayCredentials]:
    """The relay credentials in `secrets`, as the sandbox's relays and their fronts expect them."""
    credentials = {}
    for group in RelayGroup:
        values = secrets.relay(group)
        if values.token is not None:
            credentials[group] = values.credentials()
    return credentials


@pytest.fixture(scope="session")
def embedded_aws() -> Iterator[EmbeddedAws]:
    with EmbeddedAws(TEST_SECRET_VALUES, table_name=TABLE_NAME, secret_id=SECRET_ID) as started:
        yield started


@pytest.fixture(scope="session")
def secretsmanager(embedded_aws: EmbeddedAws) -> Any:
    return embedded_aws.secretsmanager_client()


@pytest.fixture
def aws(embedded_aws: EmbeddedAws, secretsmanager: Any, monkeypatch: pytest.MonkeyPatch) -> EmbeddedAws:
    # moto's backends are the process's: other suites' in-process moto empties them too (tests/support/aws.py).
    moto_url = embedded_aws.secretsmanager_url
    httpx.post(f"{moto_url}/moto-api/reset").raise_for_status()
    secretsmanager.create_secret(
        Name=embedded_aws.secret_id, SecretString=json.dumps(dict(TEST_SECRET_VALUES))
    )
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_url)
    return embedded_aws


@pytest.fixture
def dynamodb(aws: EmbeddedAws) -> Any:
    client = aws.dynamodb_client()
    client.create_table(**table_definition(TABLE_NAME))
    return client


@pytest.fixture
def store(lambdas: Lambdas) -> DynamoVerdictStore:
    return lambdas.store


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


@pytest.fixture(scope="session")
def upstreams(relay_clock: RelayClock) -> Iterator[SimulatedUpstreams]:
    credentials = relay_credentials(TEST_SECRETS)
    signing_keys = {cgv.SIGNING_KEY: TEST_SECRET_VALUES[cgv.SIGNING_KEY]}
    simulator = Simulator(credentials, signing_keys=signing_keys, hang_limit_s=5.0)
    with start_upstreams(simulator, credentials, clock=relay_clock, log=RelayLog(io.StringIO())) as started:
        yield started


@pytest.fixture
def simulator(upstreams: SimulatedUpstreams, relay_clock: RelayClock) -> Simulator:
    upstreams.simulator.reset()
    relay_clock.next_test()
    return upstreams.simulator


@pytest.fixture
def lambdas(
    clock: ManualClock, dynamodb: Any, simulator: Simulator, upstreams: SimulatedUpstreams
) -> Iterator[Lambdas]:
    functions = Lambdas(clock, dynamodb, simulator, upstreams)
    yield functions
    functions.close()


@pytest.fixture
def hung_dynamodb() -> Iterator[Any]:
    """A DynamoDB endpoint that accepts connections and never answers (a client with the store's timeouts)."""
    with contextlib.closing(socket.create_server(("127.0.0.1", 0), backlog=16)) as listener:
        yield dynamodb_client(endpoint_url=f"http://127.0.0.1:{listener.getsockname()[1]}")


@pytest.fixture
def unreachable_dynamodb() -> Any:
    """A DynamoDB client whose endpoint refuses connections (no retry, short timeouts)."""
    return boto3.client(
        "dynamodb",
        endpoint_url="http://127.0.0.1:9",
        config=Config(connect_timeout=0.2, read_timeout=0.2, retries={"total_max_attempts": 1}),
    )
