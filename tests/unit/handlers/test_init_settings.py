"""The functions' settings and Lambda INIT, with no server: where the settings come from, what a bad or blank
value does, and what INIT builds for each function."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pydantic import ValidationError

from functions.handlers import composition
from functions.handlers.daily_quota import limited_lookups
from functions.handlers.settings import ApiSettings, CommonSettings, OpsSettings, ProbeSettings
from tests.support.clock import ManualClock
from tests.support.executor import ManualExecutor

FUNCTION_SETTINGS = (ApiSettings, OpsSettings, ProbeSettings)
FUNCTIONS = (composition.LOOKUP_FUNCTION, composition.OPERATOR_FUNCTION, composition.PROBE_FUNCTION)


@pytest.fixture
def forget_functions() -> Iterator[None]:
    yield
    for deployed in FUNCTIONS:
        deployed.get().close()
        deployed.install(None)


def test_a_function_is_built_during_lambda_init_and_never_at_import_elsewhere(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    builds: list[object] = []

    def build() -> object:
        builds.append(object())
        return builds[-1]

    deployed = composition.Deployed(build)

    monkeypatch.delenv("AWS_LAMBDA_FUNCTION_NAME", raising=False)
    composition.prepare_at_init(deployed)
    assert builds == []  # tests, the sandbox and the bench build their own

    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "route-health-api")
    composition.prepare_at_init(deployed)
    assert len(builds) == 1
    assert deployed.get() is builds[0]  # the first request reuses what INIT built


def test_a_bad_setting_fails_lambda_init_naming_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "route-health-api")
    monkeypatch.setenv("LOOKUP_BUDGET_SECONDS", "-1")
    with pytest.raises(ValueError, match="LOOKUP_BUDGET_SECONDS"):
        composition.prepare_at_init(composition.LOOKUP_FUNCTION)


@pytest.mark.parametrize("blank", ["", "   "])
@pytest.mark.parametrize("settings_type", FUNCTION_SETTINGS)
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
@pytest.mark.parametrize("settings_type", FUNCTION_SETTINGS)
def test_init_fails_naming_a_missing_powertools_variable(
    monkeypatch: pytest.MonkeyPatch, settings_type: type[CommonSettings], variable: str
) -> None:
    # The stack sets them (infra/environment.py); without them metrics would go nowhere, silently.
    monkeypatch.delenv(variable)
    with pytest.raises(ValidationError, match=variable):
        settings_type.from_environment()


@pytest.mark.usefixtures("forget_functions")
def test_each_function_builds_its_own_parts_from_its_own_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ROUTE_HEALTH_TABLE", "ROUTE_HEALTH_SECRET_ID"):
        monkeypatch.delenv(name, raising=False)

    lookups, operator, probe = (deployed.get() for deployed in FUNCTIONS)

    assert isinstance(lookups, composition.LookupFunction)
    assert operator is not probe
    assert [type(parts.upstreams.settings) for parts in (lookups, operator, probe)] == list(FUNCTION_SETTINGS)
    assert composition.LOOKUP_FUNCTION.get() is lookups


@pytest.mark.parametrize("settings_type", FUNCTION_SETTINGS)
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


class _CountingQuotaStore:
    def __init__(self) -> None:
        self.calls = 0
        self.total = 0

    def add_daily_lookups(self, day: int, client: str, lookups: int) -> int:
        self.calls += 1
        self.total += lookups
        return self.total


@pytest.mark.parametrize(("flush_seconds", "flushes"), [(None, 2), ("5", 1)])
def test_how_often_a_container_shares_its_counts_is_a_setting(
    flush_seconds: str | None, flushes: int
) -> None:
    # Two lookups a second apart: the default (0.25 s) flushes each; 5 s keeps the second for later.
    variables = {"POWERTOOLS_SERVICE_NAME": "route-health", "POWERTOOLS_METRICS_NAMESPACE": "RouteHealth"}
    if flush_seconds is not None:
        variables["DAILY_RATE_LIMIT_FLUSH_SECONDS"] = flush_seconds
    clock, executor, store = ManualClock(), ManualExecutor(), _CountingQuotaStore()
    limited = limited_lookups(
        ApiSettings.model_validate(variables), store=store, executor=executor, clock=clock
    )
    assert limited is not None

    for _ in range(2):
        limited.quota.admit("client", now=clock())
        executor.run_pending()
        clock.advance(1_000)

    assert store.calls == flushes


@pytest.mark.parametrize("value", ["0.01", "6"])
def test_a_flush_interval_out_of_range_stops_the_function(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("DAILY_RATE_LIMIT_FLUSH_SECONDS", value)
    with pytest.raises(ValidationError, match="DAILY_RATE_LIMIT_FLUSH_SECONDS"):
        ApiSettings.from_environment()
