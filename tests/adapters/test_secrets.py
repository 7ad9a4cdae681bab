"""Secrets: one Secrets Manager JSON secret (moto) with a bounded cache, or the environment; never echoed."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from moto.core.models import MockAWS
from mypy_boto3_secretsmanager import SecretsManagerClient

from functions.adapters.secrets import (
    Secrets,
    SecretsError,
    SecretsManagerSource,
    StaticSecrets,
    secret_source,
)
from functions.core import RelayGroup
from tests.support.aws import handler_on
from tests.support.clock import ManualClock
from tests.support.executor import ManualExecutor
from tests.support.secret_values import secret_values

SECRET_ID = "route-health/secrets"
VALUES = {
    "HEALTH_CHECK_SECRET": "hc-value-123",
    "OY_RELAY_TOKEN": "oy-token-456",
    "OY_ACCESS_CLIENT_ID": "oy-id-789",
    "OY_ACCESS_CLIENT_SECRET": "oy-secret-abc",
    "DTRYX_RELAY_TOKEN": "dtryx-token-def",
}


@pytest.fixture
def client(secretsmanager: SecretsManagerClient) -> SecretsManagerClient:
    """Secrets Manager holding the secret with every value."""
    secretsmanager.create_secret(Name=SECRET_ID, SecretString=json.dumps(VALUES))
    return secretsmanager


def refreshed_in_the_background(
    client: SecretsManagerClient,
) -> tuple[SecretsManagerSource, ManualExecutor, ManualClock]:
    """A source that refreshes on `executor`, once its 300 s are up on `clock` (seconds)."""
    executor, clock = ManualExecutor(), ManualClock(1000)
    source = SecretsManagerSource(SECRET_ID, max_age_s=300, client=client, executor=executor, monotonic=clock)
    return source, executor, clock


def test_a_json_secret_is_read_and_every_value_is_hidden(client: SecretsManagerClient) -> None:

    secrets = SecretsManagerSource(SECRET_ID, max_age_s=300, client=client).get()

    assert secrets.health_check_secret is not None
    assert secrets.health_check_secret.get_secret_value() == "hc-value-123"
    oy = secrets.relay(RelayGroup.OLIVEYOUNG)
    assert oy.token is not None
    assert oy.token.get_secret_value() == "oy-token-456"
    assert oy.access_client_secret is not None
    assert oy.access_client_secret.get_secret_value() == "oy-secret-abc"
    convenience = secrets.relay(RelayGroup.CONVENIENCE)
    assert convenience.token is None
    assert convenience.access_client_id is None
    shown = repr(secrets) + str(secrets) + repr(oy)
    assert not any(value in shown for value in VALUES.values())
    assert sorted(secret_values(secrets)) == sorted(VALUES.values())


def test_the_secret_is_cached_for_max_age_and_a_failed_refresh_keeps_the_last_value(
    client: SecretsManagerClient,
) -> None:
    cached = SecretsManagerSource(SECRET_ID, max_age_s=300, client=client)
    uncached = SecretsManagerSource(SECRET_ID, max_age_s=0, client=client)
    first = cached.get()
    assert uncached.get() == first

    client.put_secret_value(
        SecretId=SECRET_ID, SecretString=json.dumps({**VALUES, "HEALTH_CHECK_SECRET": "rotated"})
    )
    assert cached.get() is first  # still within max_age: no new read
    rotated = uncached.get().health_check_secret
    assert rotated is not None
    assert rotated.get_secret_value() == "rotated"

    client.delete_secret(SecretId=SECRET_ID, ForceDeleteWithoutRecovery=True)
    assert uncached.get().health_check_secret == rotated  # unreadable now: the last good value stays


def test_with_an_executor_an_expired_secret_is_served_at_once_and_refreshed_in_the_background(
    client: SecretsManagerClient,
) -> None:
    source, executor, clock = refreshed_in_the_background(client)
    first = source.get()  # the first read waits (INIT)
    client.put_secret_value(
        SecretId=SECRET_ID, SecretString=json.dumps({**VALUES, "HEALTH_CHECK_SECRET": "rotated"})
    )

    clock.advance(301)
    calls: list[str] = []
    with handler_on(client, "before-call.secrets-manager", lambda **kw: calls.append(kw["model"].name)):
        assert source.get() is first  # expired: still answered at once, without a call
        assert source.get() is first
        assert calls == []
        assert len(executor.pending) == 1  # one background refresh, not one per caller

        executor.run_pending()

    assert calls == ["GetSecretValue"]
    refreshed = source.get().health_check_secret
    assert refreshed is not None
    assert refreshed.get_secret_value() == "rotated"
    assert executor.pending == []


def test_an_expired_secret_is_re_read_in_the_background_within_its_max_age(
    client: SecretsManagerClient,
) -> None:
    # SnapStart: a restored container's monotonic clock need not have counted the time in the snapshot.
    source, executor, _ = refreshed_in_the_background(client)
    first = source.get()
    client.put_secret_value(
        SecretId=SECRET_ID, SecretString=json.dumps({**VALUES, "HEALTH_CHECK_SECRET": "rotated"})
    )

    source.expire()

    assert source.get() is first  # served at once
    assert executor.run_pending() == 1
    refreshed = source.get().health_check_secret
    assert refreshed is not None
    assert refreshed.get_secret_value() == "rotated"
    assert executor.pending == []  # fresh again for max_age


def test_fixed_secrets_have_nothing_to_expire() -> None:
    secrets = Secrets.from_mapping(VALUES, source="test")
    source = StaticSecrets(secrets)
    source.expire()
    assert source.get() is secrets


def test_a_missing_secret_fails_clearly(secretsmanager: SecretsManagerClient) -> None:
    source = SecretsManagerSource("no-such-secret", max_age_s=60, client=secretsmanager)
    with pytest.raises(SecretsError, match="could not be read"):
        source.get()


@pytest.mark.parametrize(
    "secret_string",
    [
        '{"HEALTH_CHECK_SECRET": "leaky-value-1", ',
        '["leaky-value-1"]',
        '{"HEALTH_CHECK_SECRET": ["leaky-value-1"]}',
    ],
)
def test_a_malformed_secret_fails_without_echoing_any_value(
    secretsmanager: SecretsManagerClient, secret_string: str
) -> None:
    secretsmanager.create_secret(Name=SECRET_ID, SecretString=secret_string)
    with pytest.raises(SecretsError) as raised:
        SecretsManagerSource(SECRET_ID, max_age_s=60, client=secretsmanager).get()
    assert "leaky-value-1" not in str(raised.value)
    # No chained exception either: a traceback would print the JSON decoder's document.
    assert raised.value.__cause__ is None
    assert raised.value.__context__ is None or raised.value.__suppress_context__


def test_without_a_secret_id_the_values_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HEALTH_CHECK_SECRET", "env-hc")
    monkeypatch.setenv("CONVENIENCE_RELAY_TOKEN", "env-conv")
    monkeypatch.setenv("DTRYX_RELAY_TOKEN", "   ")  # blank means unset
    source = secret_source(None, max_age_s=60)

    assert isinstance(source, StaticSecrets)
    secrets = source.get()
    assert secrets.health_check_secret is not None
    assert secrets.health_check_secret.get_secret_value() == "env-hc"
    token = secrets.relay(RelayGroup.CONVENIENCE).token
    assert token is not None
    assert token.get_secret_value() == "env-conv"
    assert secrets.relay(RelayGroup.DTRYX).token is None


def both_sources(
    secretsmanager: SecretsManagerClient,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    *,
    manager: str,
    environment: str,
) -> list[tuple[Secrets, str]]:
    """The secrets as read from Secrets Manager and from the environment, each with its own value of `name`."""
    secretsmanager.create_secret(Name=SECRET_ID, SecretString=json.dumps({**VALUES, name: manager}))
    monkeypatch.setenv(name, environment)
    from_manager = SecretsManagerSource(SECRET_ID, max_age_s=300, client=secretsmanager).get()
    return [(from_manager, manager), (secret_source(None, max_age_s=60).get(), environment)]


def _gs25_api_key(secrets: Secrets) -> str | None:
    api_key = secrets.relay(RelayGroup.CONVENIENCE).api_key
    return None if api_key is None else api_key.get_secret_value()


@pytest.mark.parametrize(
    ("name", "read"),
    [("GS25_API_KEY", _gs25_api_key), ("CGV_SIGNING_KEY", lambda secrets: secrets.value("CGV_SIGNING_KEY"))],
)
def test_a_secret_value_comes_from_secrets_manager_or_the_environment_and_is_never_shown(
    secretsmanager: SecretsManagerClient,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    read: Callable[[Secrets], str | None],
) -> None:
    sources = both_sources(secretsmanager, monkeypatch, name, manager=f"{name}-sm", environment=f"{name}-env")
    for secrets, expected in sources:
        assert read(secrets) == expected
        assert expected in secret_values(secrets)
        assert expected not in repr(secrets) + str(secrets) + repr(secrets.relay(RelayGroup.CONVENIENCE))
        assert secrets.value("NOT_A_SECRET") is None


def test_the_gs25_api_key_is_the_convenience_relays_own(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GS25_API_KEY", "gs25-key")
    secrets = secret_source(None, max_age_s=60).get()
    assert _gs25_api_key(secrets) == "gs25-key"
    assert secrets.relay(RelayGroup.OLIVEYOUNG).api_key is None
    assert secrets.relay(RelayGroup.DTRYX).api_key is None


def test_a_blank_secret_value_is_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GS25_API_KEY", "  ")
    assert secret_source(None, max_age_s=60).get().relay(RelayGroup.CONVENIENCE).api_key is None
    assert Secrets.from_mapping({"CGV_SIGNING_KEY": " "}, source="test").value("CGV_SIGNING_KEY") is None


@pytest.mark.parametrize(
    ("values", "own"),
    [
        ({}, False),
        ({"DTRYX_RELAY_TOKEN": "d"}, False),
        ({"CGV_RELAY_TOKEN": ""}, False),  # blank is unset
        ({"CGV_RELAY_TOKEN": "c"}, True),
        ({"CGV_ACCESS_CLIENT_ID": "id"}, True),
        ({"CGV_ACCESS_CLIENT_SECRET": "secret"}, True),
    ],
)
def test_whether_the_cgv_relay_has_credentials_of_its_own(values: dict[str, str], own: bool) -> None:
    assert Secrets.from_mapping(values, source="test").has_own_relay(RelayGroup.CGV) is own


def test_with_a_secret_id_the_source_is_secrets_manager(aws: MockAWS) -> None:
    assert isinstance(secret_source(SECRET_ID, max_age_s=60), SecretsManagerSource)


def test_unknown_keys_are_ignored_and_no_value_is_ever_in_an_error() -> None:
    secrets = Secrets.from_mapping({"SOMETHING_ELSE": "x", "OY_RELAY_TOKEN": "t"}, source="test")
    assert secrets.relay(RelayGroup.OLIVEYOUNG).token is not None
    with pytest.raises(SecretsError) as raised:
        Secrets.from_mapping({"OY_RELAY_TOKEN": {"nested": "leaky-value-2"}}, source="test")
    assert "leaky-value-2" not in str(raised.value)
    assert "OY_RELAY_TOKEN" in str(raised.value)


def test_a_failed_background_refresh_waits_before_trying_again(client: SecretsManagerClient) -> None:
    source, executor, clock = refreshed_in_the_background(client)
    first = source.get()
    client.delete_secret(SecretId=SECRET_ID, ForceDeleteWithoutRecovery=True)  # Secrets Manager "down"

    clock.advance(301)
    assert source.get() is first
    executor.run_pending()  # the refresh fails; the last good value stays
    assert source.get() is first
    assert executor.pending == []  # no new read right away: no retry storm during an outage

    clock.advance(31)
    assert source.get() is first
    assert len(executor.pending) == 1
