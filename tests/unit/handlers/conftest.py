"""Fixtures for handler tests (shared by the probe, ops and lookup API tests).

- `clock`: a `ManualClock` (tests.support) at NOW, moving only when a test says so.
- `aws`: moto's in-process AWS for the test; `dynamodb`: a client with the verdict table created from
  `table_definition` (the schema the CDK table and the sandbox use); `store`: a `DynamoVerdictStore` on it.
- `test_secrets`: every secret value set, each a distinctive string (leak checks search for them);
  `secret_id`: the same values stored as the one Secrets Manager JSON secret.
- `simulator_server`: the simulated retailers served on 127.0.0.1 (a free port) with a reference relay per
  group in front, taking the `test_secrets` relay credentials and following `clock`; `simulator` is its
  `Simulator` (faults, call counts, max in flight, leakedSecrets). Hanging faults are released when the test
  ends.
- `make_container(**overrides)`: a real container (`build_container`) on moto whose HTTP goes to the
  simulator (its `loopback_transport`, relay URLs pointing at it), installed with `set_container` so the real
  `lambda_handler`s use it; forgotten and closed after the test.
- `telemetry`: the functions' captured log lines and EMF metrics (for metric and no-secret-leak asserts).
- `api_event(method, path, ...)`: an API Gateway HTTP API (payload v2) event; `lambda_context`: a context.
"""

from __future__ import annotations

import functools
import io
import json
import logging
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto import mock_aws

from functions.adapters.dynamo_store import DynamoVerdictStore, table_definition
from functions.adapters.relay import RelayCredentials
from functions.adapters.secrets import Secrets
from functions.core import RelayGroup
from functions.handlers import telemetry as telemetry_module
from functions.handlers import wiring
from functions.handlers.settings import ApiSettings
from relay.logs import RelayLog
from sandbox.relays import start_upstreams
from sandbox.simulator.server import Simulator, SimulatorServer, loopback_transport
from tests.support import events
from tests.support.clock import ManualClock

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
}


@dataclass(frozen=True)
class FakeLambdaContext:
    function_name: str = "route-health-test"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 256
    invoked_function_arn: str = "arn:aws:lambda:ap-northeast-2:123456789012:function:route-health-test"
    aws_request_id: str = "11111111-2222-3333-4444-555555555555"

    def get_remaining_time_in_millis(self) -> int:
        return 30_000


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(NOW)


@pytest.fixture
def aws() -> Iterator[None]:
    with mock_aws():
        yield


@pytest.fixture
def dynamodb(aws: None) -> Any:
    client = boto3.client("dynamodb")
    client.create_table(**table_definition(TABLE_NAME))
    return client


@pytest.fixture
def store(dynamodb: Any) -> DynamoVerdictStore:
    return DynamoVerdictStore(TABLE_NAME, dynamodb)


@pytest.fixture
def test_secrets() -> Secrets:
    return Secrets.from_mapping(TEST_SECRET_VALUES, source="test")


@pytest.fixture
def secret_id(aws: None) -> str:
    boto3.client("secretsmanager").create_secret(
        Name=SECRET_ID, SecretString=json.dumps(dict(TEST_SECRET_VALUES))
    )
    return SECRET_ID


@pytest.fixture
def lambda_context() -> FakeLambdaContext:
    return FakeLambdaContext()


@pytest.fixture
def api_event() -> Callable[..., dict[str, Any]]:
    """api_event("GET", "/api/...", headers=..., query=..., body=...): an event at conftest's NOW."""
    return functools.partial(events.api_event, now_ms=NOW)


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


@pytest.fixture
def simulator_server(test_secrets: Secrets, clock: ManualClock) -> Iterator[SimulatorServer]:
    credentials = relay_credentials(test_secrets)
    simulator = Simulator(credentials, hang_limit_s=5.0)
    upstreams = start_upstreams(simulator, credentials, clock=clock, log=RelayLog(io.StringIO()))
    yield upstreams.server
    upstreams.close()


@pytest.fixture
def simulator(simulator_server: SimulatorServer) -> Simulator:
    return simulator_server.simulator


@pytest.fixture
def settings_values(simulator_server: SimulatorServer) -> dict[str, str]:
    """Settings for `make_container` by env var name: the table and the three simulated relays."""
    return {
        "ROUTE_HEALTH_TABLE": TABLE_NAME,
        "SNAPSHOT_PREFETCH_SECONDS": "0.3",
        "OY_RELAY_URL": simulator_server.relay_url(RelayGroup.OLIVEYOUNG),
        "CONVENIENCE_RELAY_URL": simulator_server.relay_url(RelayGroup.CONVENIENCE),
        "DTRYX_RELAY_URL": simulator_server.relay_url(RelayGroup.DTRYX),
    }


@pytest.fixture
def make_container(
    dynamodb: Any,
    clock: ManualClock,
    test_secrets: Secrets,
    settings_values: dict[str, str],
    simulator_server: SimulatorServer,
) -> Iterator[Callable[..., wiring.Container]]:
    """Factory: make_container(secrets=..., table=False, dynamodb_client=..., **settings by env var name)."""
    built: list[wiring.Container] = []

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
            http_transport=loopback_transport(simulator_server.base_url),
            secrets=secrets if secrets is not None else test_secrets,
        )
        built.append(container)
        wiring.set_container(container)
        return container

    yield build
    wiring.set_container(None)
    for container in built:
        container.close()


class TelemetryOutput:
    """Everything the functions wrote: Powertools log lines (JSON) and EMF metric lines (stdout)."""

    def __init__(self, capsys: pytest.CaptureFixture[str], log_stream: io.StringIO) -> None:
        self._capsys = capsys
        self._log_stream = log_stream
        self._stdout: list[str] = []

    def text(self) -> str:
        captured = self._capsys.readouterr()
        self._stdout.append(captured.out + captured.err)
        return "".join(self._stdout) + self._log_stream.getvalue()

    def metrics(self) -> list[dict[str, Any]]:
        """Each metric of each EMF line as {"namespace", "name", "value", "dimensions"} (a line may hold
        several directives, one per dimension set: `one_metrics_document`)."""
        found = []
        for line in self.text().splitlines():
            if not line.startswith("{") or '"_aws"' not in line:
                continue
            blob = json.loads(line)
            for directive in blob["_aws"]["CloudWatchMetrics"]:
                (dimension_names,) = directive["Dimensions"]
                dimensions = {name: blob[name] for name in dimension_names}
                for metric in directive["Metrics"]:
                    value = blob[metric["Name"]]
                    found.append(
                        {
                            "namespace": directive["Namespace"],
                            "name": metric["Name"],
                            "value": value[0] if isinstance(value, list) else value,
                            "dimensions": dimensions,
                        }
                    )
        return found

    def logs(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self._log_stream.getvalue().splitlines() if line.strip()]


@pytest.fixture
def telemetry(capsys: pytest.CaptureFixture[str]) -> Iterator[TelemetryOutput]:
    """Captures the functions' logs (the Powertools logger's own JSON formatter) and EMF metric lines."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(telemetry_module.logger.registered_formatter)
    powertools_logger = logging.getLogger(telemetry_module.logger.name)
    powertools_logger.addHandler(handler)
    try:
        yield TelemetryOutput(capsys, stream)
    finally:
        powertools_logger.removeHandler(handler)
