"""Wiring and telemetry: what a container is built from, the INIT prefetch, relay configuration, metrics."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import ValidationError

from functions.adapters.secrets import Secrets, SecretsError
from functions.core import DIRECT_PROBED, Path, Reason, RelayGroup, RouteKey, group_of
from functions.handlers import wiring
from functions.handlers.settings import ApiSettings, CommonSettings, ProbeSettings
from functions.handlers.telemetry import MetricsRoutingEvents, emit_snapshot_age
from sandbox.embedded_aws import EmbeddedAws
from tests.integration.conftest import TABLE_NAME, TEST_SECRETS, Lambdas
from tests.support.telemetry import TelemetryOutput


def path_chosen(container: wiring.Container, group: RelayGroup) -> str:
    """Which path the container's router takes for a (direct-probed) key of `group`."""
    key = next(key for key in DIRECT_PROBED if group_of(key) is group)
    chosen: str = container.router.route_operation(key, lambda _ms: "direct", lambda _ms: "relay")
    return chosen


def test_legacy_mode_has_no_store_and_no_snapshots(lambdas: Lambdas) -> None:
    container = lambdas.container(table=False)
    assert container.store is None
    assert container.snapshots is None
    assert all(path_chosen(container, group) == "relay" for group in RelayGroup)


def test_the_snapshot_is_prefetched_at_init(lambdas: Lambdas) -> None:
    lambdas.write_verdicts(keys=(RouteKey.CU_PRIME,))
    queries: list[str] = []
    lambdas.dynamodb.meta.events.register("before-call.dynamodb.Query", lambda **_: queries.append("Query"))
    container = lambdas.container()
    assert queries  # INIT started the load (it waits for it up to 0.3 s: the hung-store test's)
    assert container.snapshots is not None
    assert container.snapshots.prefetch(5.0)  # a busy machine may take longer than 0.3 s to answer it
    cached = container.snapshots.peek()
    assert cached is not None
    assert cached.snapshot.routes[RouteKey.CU_PRIME].direct is True


def test_a_hung_store_delays_init_by_at_most_the_prefetch_timeout(
    lambdas: Lambdas, hung_dynamodb: Any
) -> None:
    started = time.monotonic()
    container = lambdas.container(dynamodb=hung_dynamodb, SNAPSHOT_PREFETCH_SECONDS="0.2")
    assert time.monotonic() - started < 0.2 + 1.0  # the store's own timeout is 2 s; INIT does not wait for it
    assert container.snapshots is not None
    assert container.snapshots.peek() is None


def test_only_the_api_function_prefetches(lambdas: Lambdas) -> None:
    container = wiring.build_container(
        ProbeSettings.from_environment(ROUTE_HEALTH_TABLE=TABLE_NAME),
        clock=lambdas.clock,
        dynamodb_client=lambdas.dynamodb,
        secrets=TEST_SECRETS,
    )
    try:
        assert container.snapshots is not None
        assert container.snapshots.peek() is None
    finally:
        container.close()


def test_invalid_relay_configuration_is_a_configuration_verdict(lambdas: Lambdas) -> None:
    secrets = Secrets.from_mapping(
        {"HEALTH_CHECK_SECRET": "x", "OY_RELAY_TOKEN": "t", "OY_ACCESS_CLIENT_ID": "only-half"}, source="test"
    )
    container = lambdas.container(secrets=secrets, DTRYX_RELAY_URL="http://relay.example.test")
    relays = container.relays
    for group in RelayGroup:
        check = relays.check_health(group, timeout_ms=500, now=lambdas.clock())
        # oliveyoung: half an Access pair; convenience: no token; dtryx: http to a non-loopback host
        assert (check.healthy, check.reason) == (False, Reason.CONFIGURATION)
        assert path_chosen(container, group) == "relay"  # set up, if unusable: its lookups answer 503


def test_relays_are_rebuilt_only_when_the_secrets_change(lambdas: Lambdas) -> None:
    class Rotating:
        def __init__(self, value: Secrets) -> None:
            self.value = value

        def get(self) -> Secrets:
            return self.value

        def expire(self) -> None:
            pass

    source = Rotating(Secrets.from_mapping({"OY_RELAY_TOKEN": "one"}, source="test"))
    container = lambdas.container()
    container.secret_source = source
    first = container.relays
    assert container.relays is first
    source.value = Secrets.from_mapping({"OY_RELAY_TOKEN": "two"}, source="test")
    assert container.relays is not first


def test_a_malformed_secret_fails_the_build_without_echoing_it(lambdas: Lambdas, aws: EmbeddedAws) -> None:
    secrets = aws.secretsmanager_client()
    secrets.create_secret(Name="bad", SecretString='{"HEALTH_CHECK_SECRET": "leak-me"')
    settings = ApiSettings.from_environment(ROUTE_HEALTH_TABLE=TABLE_NAME, ROUTE_HEALTH_SECRET_ID="bad")
    try:
        with pytest.raises(SecretsError) as raised:
            wiring.build_container(settings, clock=lambdas.clock, dynamodb_client=lambdas.dynamodb)
        assert "leak-me" not in str(raised.value)
    finally:
        secrets.delete_secret(SecretId="bad", ForceDeleteWithoutRecovery=True)


def test_routing_events_and_snapshot_age_are_bounded_emf_metrics(
    lambdas: Lambdas, telemetry: TelemetryOutput
) -> None:
    container = lambdas.container()
    events = MetricsRoutingEvents()
    events.decided(RouteKey.CU_STOCK, Path.RELAY, "stale-snapshot")
    events.answered(RouteKey.CU_STOCK, Path.RELAY)
    events.direct_failed(RouteKey.CU_STOCK, Reason.HTTP_403)
    events.relay_fallback(RouteKey.CU_STOCK)
    lambdas.clock.advance(1_500)
    emit_snapshot_age(container.snapshots)
    emit_snapshot_age(None)  # legacy: nothing to report

    found = sorted((m["name"], sorted(m["dimensions"].items()), m["value"]) for m in telemetry.metrics())
    service = {"service": "route-health"}
    expected = [
        ("RelayLookup", {**service, "Route": "cu-stock"}, 1),  # decided relay
        ("Lookups", {**service, "Path": "relay"}, 1),
        ("DirectFailure", {**service, "Route": "cu-stock"}, 1),  # the reason is in the log line
        ("RelayLookup", {**service, "Route": "cu-stock"}, 1),  # the fallback
        ("RelayFallback", service, 1),
        ("SnapshotAge", service, 1_500),
    ]
    assert found == sorted((name, sorted(dims.items()), value) for name, dims, value in expected)


@pytest.fixture
def forget_container() -> Iterator[None]:
    wiring.reset_container()
    yield
    wiring.reset_container()


@pytest.mark.usefixtures("forget_container")
def test_the_container_is_built_during_lambda_init_and_never_at_import_elsewhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("ROUTE_HEALTH_TABLE", "ROUTE_HEALTH_SECRET_ID", "AWS_LAMBDA_FUNCTION_NAME"):
        monkeypatch.delenv(name, raising=False)

    wiring.prepare_container_at_init(ApiSettings)
    assert wiring._containers == {}  # tests, the sandbox and the bench build their own

    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "route-health-api")
    wiring.prepare_container_at_init(ApiSettings)
    built = wiring._containers.get(ApiSettings)
    assert built is not None
    assert wiring.get_container(ApiSettings) is built  # the first request reuses what INIT built


@pytest.mark.usefixtures("forget_container")
def test_a_bad_setting_fails_lambda_init_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "route-health-api")
    monkeypatch.setenv("LOOKUP_BUDGET_SECONDS", "-1")
    with pytest.raises(ValueError, match="LOOKUP_BUDGET_SECONDS"):
        wiring.prepare_container_at_init(ApiSettings)


@pytest.mark.parametrize("blank", ["", "   "])
@pytest.mark.parametrize("settings_type", wiring.FUNCTION_SETTINGS)
def test_a_blank_setting_means_its_default(
    monkeypatch: pytest.MonkeyPatch, settings_type: type[CommonSettings], blank: str
) -> None:
    # Numbers included: LOOKUP_BUDGET_SECONDS="" must not fail INIT with "input should be a valid number".
    optional = {name: field for name, field in settings_type.model_fields.items() if not field.is_required()}
    defaults = {name: field.get_default() for name, field in optional.items()}
    for field in optional.values():
        assert field.alias is not None
        monkeypatch.setenv(field.alias, blank)

    assert settings_type.from_environment().model_dump(include=set(optional)) == defaults


@pytest.mark.parametrize("variable", ["POWERTOOLS_SERVICE_NAME", "POWERTOOLS_METRICS_NAMESPACE"])
@pytest.mark.parametrize("settings_type", wiring.FUNCTION_SETTINGS)
def test_init_fails_naming_a_missing_powertools_variable(
    monkeypatch: pytest.MonkeyPatch, settings_type: type[CommonSettings], variable: str
) -> None:
    # The stack sets them (infra/environment.py); without them metrics would go nowhere, silently.
    monkeypatch.delenv(variable)
    with pytest.raises(ValidationError, match=variable):
        settings_type.from_environment()


@pytest.mark.usefixtures("forget_container")
def test_each_function_has_its_own_container(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ROUTE_HEALTH_TABLE", "ROUTE_HEALTH_SECRET_ID"):
        monkeypatch.delenv(name, raising=False)

    api = wiring.get_container(ApiSettings)
    probe = wiring.get_container(ProbeSettings)

    assert api is not probe
    assert isinstance(api.settings, ApiSettings)
    assert isinstance(probe.settings, ProbeSettings)
    assert wiring.get_container(ApiSettings) is api

    wiring.set_container(probe, ApiSettings)  # the sandbox installs one per function this way
    assert wiring.get_container(ApiSettings) is probe


@pytest.mark.parametrize("settings_type", wiring.FUNCTION_SETTINGS)
def test_settings_come_from_the_environment_and_given_values_win(
    monkeypatch: pytest.MonkeyPatch, settings_type: type[CommonSettings]
) -> None:
    monkeypatch.setenv("ROUTE_HEALTH_TABLE", "from-the-environment")
    monkeypatch.setenv("ROUTE_HEALTH_SECRET_MAX_AGE", "120")

    settings = settings_type.from_environment(ROUTE_HEALTH_TABLE="given")

    assert (settings.route_health_table, settings.secret_max_age_s) == ("given", 120)


def test_the_limited_prefixes_are_read_comma_separated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAILY_RATE_LIMIT_PREFIXES", " /api/cu/ , /api/gs25/,")

    assert ApiSettings.from_environment().daily_rate_limit_prefixes == ("/api/cu/", "/api/gs25/")
