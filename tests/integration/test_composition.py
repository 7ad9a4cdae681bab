"""Composition and telemetry: what each function is built from, the INIT prefetch, relay configuration, metrics."""

from __future__ import annotations

import time
from typing import Any

import pytest

from functions.adapters.relay import RelayConfigError, RelayEndpoint
from functions.adapters.relay_config import relay_endpoints
from functions.adapters.secrets import Secrets, SecretsError, StaticSecrets
from functions.core import DIRECT_PROBED, Path, Reason, RelayGroup, RouteKey, group_of
from functions.handlers import composition
from functions.handlers.composition import LookupFunction
from functions.handlers.settings import ApiSettings, ProbeSettings
from functions.handlers.telemetry import (
    MetricsRoutingEvents,
    emit_snapshot_age,
    report_relay_configuration_invalid,
)
from sandbox.embedded_aws import EmbeddedAws
from tests.integration.conftest import TABLE_NAME, TEST_SECRET_VALUES, TEST_SECRETS, Lambdas
from tests.support.telemetry import TelemetryOutput


def path_chosen(lookups: LookupFunction, group: RelayGroup) -> str:
    """Which path the lookup function's router takes for a (direct-probed) key of `group`."""
    key = next(key for key in DIRECT_PROBED if group_of(key) is group)
    chosen: str = lookups.router.route_operation(key, lambda _ms: "direct", lambda _ms: "relay")
    return chosen


def test_legacy_mode_has_no_store_and_no_snapshots(lambdas: Lambdas) -> None:
    lookups = lambdas.deploy(table=False)
    assert lambdas.probe_function.store is None
    assert lookups.snapshots is None
    assert all(path_chosen(lookups, group) == "relay" for group in RelayGroup)


def test_the_snapshot_is_prefetched_at_init(lambdas: Lambdas) -> None:
    lambdas.write_verdicts(keys=(RouteKey.CU_PRIME,))
    queries: list[str] = []
    lambdas.dynamodb.meta.events.register("before-call.dynamodb.Query", lambda **_: queries.append("Query"))
    lookups = lambdas.deploy()
    assert queries  # INIT started the load (it waits for it up to 0.3 s: the hung-store test's)
    assert lookups.snapshots is not None
    assert lookups.snapshots.prefetch(5.0)  # a busy machine may take longer than 0.3 s to answer it
    cached = lookups.snapshots.peek()
    assert cached is not None
    assert cached.snapshot.routes[RouteKey.CU_PRIME].direct is True


def test_a_hung_store_delays_init_by_at_most_the_prefetch_timeout(
    lambdas: Lambdas, hung_dynamodb: Any
) -> None:
    started = time.monotonic()
    lookups = lambdas.deploy(dynamodb=hung_dynamodb, SNAPSHOT_PREFETCH_SECONDS="0.2")
    assert time.monotonic() - started < 0.2 + 1.0  # the store's own timeout is 2 s; INIT does not wait for it
    assert lookups.snapshots is not None
    assert lookups.snapshots.peek() is None


def test_only_the_lookup_function_reads_the_snapshot_at_init(lambdas: Lambdas) -> None:
    calls: list[str] = []

    def record(model: Any, **_: Any) -> None:
        calls.append(model.name)

    lambdas.dynamodb.meta.events.register("before-call.dynamodb", record)
    try:
        settings = {"ROUTE_HEALTH_TABLE": TABLE_NAME}
        built = composition.Surroundings(lambdas.clock, lambdas.dynamodb, secrets=TEST_SECRETS)
        composition.build_probe_function(ProbeSettings.from_environment(**settings), built).close()
        assert calls == []
        composition.build_lookup_function(ApiSettings.from_environment(**settings), built).close()
        assert calls == ["Query"]
    finally:
        lambdas.dynamodb.meta.events.unregister("before-call.dynamodb", record)


def test_invalid_relay_configuration_is_a_configuration_verdict(lambdas: Lambdas) -> None:
    secrets = Secrets.from_mapping(
        {"HEALTH_CHECK_SECRET": "x", "OY_RELAY_TOKEN": "t", "OY_ACCESS_CLIENT_ID": "only-half"}, source="test"
    )
    lookups = lambdas.deploy(secrets=secrets, DTRYX_RELAY_URL="http://relay.example.test")
    relays = lookups.upstreams.relays
    for group in RelayGroup:
        check = relays.check_health(group, timeout_ms=500, now=lambdas.clock())
        # oliveyoung: half an Access pair; convenience: no token; dtryx: http to a non-loopback host
        assert (check.healthy, check.reason) == (False, Reason.CONFIGURATION)
        assert path_chosen(lookups, group) == "relay"  # set up, if unusable: its lookups answer 503


def endpoints(
    lookups: LookupFunction, secrets: Secrets
) -> dict[RelayGroup, RelayEndpoint | RelayConfigError]:
    return relay_endpoints(
        lookups.upstreams.settings.relay_urls, secrets, on_invalid=report_relay_configuration_invalid
    )


def _cgv_relay(lookups: LookupFunction) -> RelayEndpoint | RelayConfigError | None:
    return endpoints(lookups, lookups.upstreams.secrets).get(RelayGroup.CGV)


def test_without_settings_of_its_own_cgv_uses_the_dtryx_relays_as_a_whole(lambdas: Lambdas) -> None:
    secrets = Secrets.from_mapping(
        {**TEST_SECRET_VALUES, "DTRYX_ACCESS_CLIENT_ID": "d-id", "DTRYX_ACCESS_CLIENT_SECRET": "d-secret"},
        source="test",
    )
    lookups = lambdas.deploy(secrets=secrets)
    cgv, dtryx = (
        _cgv_relay(lookups),
        endpoints(lookups, secrets)[RelayGroup.DTRYX],
    )
    assert isinstance(cgv, RelayEndpoint)
    assert isinstance(dtryx, RelayEndpoint)
    assert (cgv.group, cgv.base_url, cgv.credentials) == (RelayGroup.CGV, dtryx.base_url, dtryx.credentials)
    assert lookups.upstreams.relays.check_health(
        RelayGroup.CGV, timeout_ms=2_000, now=lambdas.clock()
    ).healthy
    assert lambdas.simulator.calls()["relay-health:cgv"] == 1


@pytest.mark.parametrize(
    ("own", "expected"),
    [
        # Its own URL without its own token: never the Dtryx token with it.
        ({"CGV_RELAY_URL": "https://cgv-relay.example.test"}, "cgv relay token is missing"),
        # Its own token without its own URL: no CGV relay, never the Dtryx URL with it.
        ({"CGV_RELAY_TOKEN": "cgv-token"}, None),
        ({"CGV_ACCESS_CLIENT_ID": "cgv-id"}, None),
    ],
)
def test_any_cgv_setting_of_its_own_replaces_the_whole_dtryx_set(
    lambdas: Lambdas, own: dict[str, str], expected: str | None
) -> None:
    url = own.pop("CGV_RELAY_URL", "")
    secrets = Secrets.from_mapping({**TEST_SECRET_VALUES, **own}, source="test")
    lookups = lambdas.deploy(secrets=secrets, CGV_RELAY_URL=url)  # blank: unset
    cgv = _cgv_relay(lookups)
    if expected is None:
        assert cgv is None
        assert path_chosen(lookups, RelayGroup.CGV) == "direct"  # no relay: direct is the only way
    else:
        assert isinstance(cgv, RelayConfigError)
        assert str(cgv) == expected
        check = lookups.upstreams.relays.check_health(RelayGroup.CGV, timeout_ms=500, now=lambdas.clock())
        assert (check.healthy, check.reason) == (False, Reason.CONFIGURATION)
    assert isinstance(endpoints(lookups, secrets)[RelayGroup.DTRYX], RelayEndpoint)


def test_a_full_cgv_set_of_its_own_is_used(lambdas: Lambdas) -> None:
    secrets = Secrets.from_mapping({**TEST_SECRET_VALUES, "CGV_RELAY_TOKEN": "cgv-own-token"}, source="test")
    lookups = lambdas.deploy(secrets=secrets, CGV_RELAY_URL="https://cgv-relay.example.test/base/")
    cgv = _cgv_relay(lookups)
    assert isinstance(cgv, RelayEndpoint)
    assert (cgv.base_url, cgv.credentials.token, cgv.credentials.access_client_id) == (
        "https://cgv-relay.example.test/base",
        "cgv-own-token",
        None,
    )


def test_relays_are_rebuilt_only_when_the_secrets_change(lambdas: Lambdas) -> None:
    lookups = lambdas.deploy(secrets=Secrets.from_mapping({"OY_RELAY_TOKEN": "one"}, source="test"))
    first = lookups.upstreams.relays
    assert lookups.upstreams.relays is first
    lookups.upstreams.secret_source = StaticSecrets(
        Secrets.from_mapping({"OY_RELAY_TOKEN": "two"}, source="test")
    )
    assert lookups.upstreams.relays is not first


def test_a_malformed_secret_fails_the_build_without_echoing_it(lambdas: Lambdas, aws: EmbeddedAws) -> None:
    secrets = aws.secretsmanager_client()
    secrets.create_secret(Name="bad", SecretString='{"HEALTH_CHECK_SECRET": "leak-me"')
    settings = ApiSettings.from_environment(ROUTE_HEALTH_TABLE=TABLE_NAME, ROUTE_HEALTH_SECRET_ID="bad")
    try:
        with pytest.raises(SecretsError) as raised:
            composition.build_lookup_function(
                settings, composition.Surroundings(lambdas.clock, lambdas.dynamodb)
            )
        assert "leak-me" not in str(raised.value)
    finally:
        secrets.delete_secret(SecretId="bad", ForceDeleteWithoutRecovery=True)


def test_routing_events_and_snapshot_age_are_bounded_emf_metrics(
    lambdas: Lambdas, telemetry: TelemetryOutput
) -> None:
    lookups = lambdas.deploy()
    events = MetricsRoutingEvents()
    events.decided(RouteKey.CU_STOCK, Path.RELAY, "stale-snapshot")
    events.answered(RouteKey.CU_STOCK, Path.RELAY)
    events.direct_failed(RouteKey.CU_STOCK, Reason.HTTP_403)
    events.relay_fallback(RouteKey.CU_STOCK)
    lambdas.clock.advance(1_500)
    emit_snapshot_age(lookups.snapshots)
    emit_snapshot_age(None)  # legacy: nothing to report

    found = sorted((m["name"], sorted(m["dimensions"].items()), m["value"]) for m in telemetry.metrics())
    service = {"service": "route-health"}
    expected = [
        ("RelayLookup", service, 1),  # decided relay (the route is in the log line)
        ("Lookups", {**service, "Path": "relay"}, 1),
        ("DirectFailure", service, 1),  # the route and the reason are in the log line
        ("RelayLookup", service, 1),  # the fallback
        ("RelayFallback", service, 1),
        ("SnapshotAge", service, 1_500),
    ]
    assert found == sorted((name, sorted(dims.items()), value) for name, dims, value in expected)
