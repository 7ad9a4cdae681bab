"""Wiring and telemetry: what a container is built from, the INIT prefetch, relay configuration, metrics."""

from __future__ import annotations

import time
from typing import Any

import pytest

from functions.adapters.secrets import Secrets, SecretsError, StaticSecrets
from functions.core import DIRECT_PROBED, Path, Reason, RelayGroup, RouteKey, group_of
from functions.handlers import wiring
from functions.handlers.settings import ApiSettings, ProbeSettings
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
    container = lambdas.container(secrets=Secrets.from_mapping({"OY_RELAY_TOKEN": "one"}, source="test"))
    first = container.relays
    assert container.relays is first
    container.secret_source = StaticSecrets(Secrets.from_mapping({"OY_RELAY_TOKEN": "two"}, source="test"))
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
        ("DirectFailure", service, 1),  # the route and the reason are in the log line
        ("RelayLookup", {**service, "Route": "cu-stock"}, 1),  # the fallback
        ("RelayFallback", service, 1),
        ("SnapshotAge", service, 1_500),
    ]
    assert found == sorted((name, sorted(dims.items()), value) for name, dims, value in expected)
