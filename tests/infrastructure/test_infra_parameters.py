"""Every operator setting is a stack parameter with a default, a description and validation; the functions
accept what CloudFormation lets through; the switches shape the stack; docs/configuration.md's table is the parameters."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import ValidationError

from functions.handlers.settings import ApiSettings, CommonSettings, McpSettings
from infra.api import API_HANDLER, MCP_HANDLER
from infra.environment import POWERTOOLS_ENVIRONMENT
from infra.parameters import LOOKUP_FUNCTION, PARAMETERS
from tests.infrastructure.test_infra_deploy_settings import REPO_ROOT

pytestmark = pytest.mark.infra

CDK_OWN = {"BootstrapVersion"}
"""The parameter the CDK adds for its bootstrap check; no operator setting."""


def _parameters(synthesized) -> dict[str, dict[str, Any]]:
    return {
        name: definition
        for name, definition in synthesized.template["Parameters"].items()
        if name not in CDK_OWN
    }


def test_every_parameter_has_a_default_a_description_and_validation(synthesized):
    parameters = _parameters(synthesized)

    assert set(parameters) == set(PARAMETERS)
    for name, definition in parameters.items():
        assert "Default" in definition, name
        assert len(definition["Description"]) > 20, name
        validated = {"AllowedValues", "AllowedPattern", "MinValue", "MaxValue"} & definition.keys()
        assert validated, f"{name} accepts anything"
        if definition["Type"] == "Number":
            assert {"MinValue", "MaxValue"} <= definition.keys(), name


def _text(number: float | None) -> str:
    """A number as an operator types it (and CloudFormation passes it on)."""
    assert number is not None
    return str(int(number)) if float(number).is_integer() else str(number)


def _lookup_settings(**variables: str) -> ApiSettings:
    return ApiSettings.model_validate({**POWERTOOLS_ENVIRONMENT, **variables})


@pytest.mark.parametrize("parameter", [p for p in PARAMETERS.values() if p.variable is not None], ids=str)
def test_the_functions_accept_every_value_the_parameter_lets_through(parameter):
    # The default and, for numbers, both bounds: CloudFormation's validation is never looser than INIT's.
    values = [parameter.default]
    if parameter.number:
        values += [_text(parameter.min_value), _text(parameter.max_value)]
    values += list(parameter.allowed_values)
    for value in values:
        assert _lookup_settings(**{str(parameter.variable): value}), value


@pytest.mark.parametrize(
    ("variable", "value"),
    [("LOOKUP_BUDGET_SECONDS", "0"), ("DAILY_RATE_LIMIT", "-1"), ("DAILY_RATE_LIMIT_FLUSH_SECONDS", "0.01")],
)
def test_a_value_below_the_parameters_minimum_would_stop_the_function_too(variable, value):
    parameter = next(p for p in PARAMETERS.values() if p.variable == variable)
    assert parameter.min_value is not None
    assert float(value) < parameter.min_value
    with pytest.raises(ValidationError, match=variable):
        _lookup_settings(**{variable: value})


def test_the_lookup_settings_reach_the_lookup_functions_only(synthesized):
    lookup_only = {str(parameter.variable) for parameter in LOOKUP_FUNCTION}
    for handler, (_, props) in synthesized.deployed().functions_by_handler().items():
        variables = props["Environment"]["Variables"]
        if handler in (API_HANDLER, MCP_HANDLER):  # a tool call is a lookup
            assert {name: variables[name] for name in sorted(lookup_only)} == {
                "DAILY_RATE_LIMIT": "3000",
                "DAILY_RATE_LIMIT_FLUSH_SECONDS": "0.25",
                "DAILY_RATE_LIMIT_PREFIXES": "/api/oliveyoung/,/api/cu/,/api/gs25/,/api/cgv/,/api/dtryx/,/api/compare/",
                "LOOKUP_BUDGET_SECONDS": "10",
                "RESPONSE_CACHE": "on",
            }
        else:
            assert not lookup_only & variables.keys(), handler


def test_every_function_reads_the_secret_max_age_parameter(synthesized):
    for _, props in synthesized.deployed(SecretMaxAgeSeconds="60").functions_by_handler().values():
        value = props["Environment"]["Variables"]["ROUTE_HEALTH_SECRET_MAX_AGE"]
        settings = CommonSettings.model_validate(
            {**POWERTOOLS_ENVIRONMENT, "ROUTE_HEALTH_SECRET_MAX_AGE": value}
        )
        assert settings.secret_max_age_s == 60


ACCEPTED_VALUES = {
    "OyRelayUrl": {
        "": True,
        "https://oy-relay.example.com": True,
        "https://relay.example.com/base": True,
        "http://relay.example.com": False,
        "https://user:pw@relay.example.com": False,
        "https://relay.example.com/?a=1": False,
        "https://relay.example.com/#top": False,
        "https://relay example.com": False,
    },
    "DailyRateLimitPrefixes": {
        "/api/oliveyoung/,/api/cu/,/api/gs25/": True,
        "/api/cu/": True,
        "/api/cu/, /api/gs25/": False,
        "api/cu/": False,
        "/api/cu/,": False,
        "": False,
    },
    "McpAllowedHosts": {
        "": True,
        "mcp.example.com": True,
        "d111111abcdef8.cloudfront.net,mcp.example.com:8443": True,
        "https://mcp.example.com": False,
        "mcp.example.com/mcp": False,
        "a.example, b.example": False,
        "a.example,": False,
    },
    "AlarmEmail": {
        "": True,
        "ops@example.com": True,
        "ops": False,
        "ops@example": False,
        "a b@example.com": False,
    },
}
"""What a parameter's pattern lets through: a relay URL only as a usable base URL, the prefixes only as API
paths, the alarm email only as an address or nothing."""


@pytest.mark.parametrize(
    ("parameter", "value", "allowed"),
    [
        pytest.param(parameter, value, allowed, id=f"{parameter}={value!r}")
        for parameter, values in ACCEPTED_VALUES.items()
        for value, allowed in values.items()
    ],
)
def test_a_parameter_pattern_accepts_only_usable_values(synthesized, parameter, value, allowed):
    pattern = synthesized.template["Parameters"][parameter]["AllowedPattern"]
    assert (re.fullmatch(pattern, value) is not None) is allowed


def test_the_alarm_email_subscribes_only_when_given(synthesized):
    assert synthesized.deployed().resources("AWS::SNS::Subscription") == {}

    _, subscription = synthesized.deployed(AlarmEmail="ops@example.com").only("AWS::SNS::Subscription")
    assert subscription["Properties"]["Protocol"] == "email"
    assert subscription["Properties"]["Endpoint"] == "ops@example.com"


def test_the_mcp_function_answers_to_the_apis_domain_and_the_names_given(synthesized):
    api_id, _ = synthesized.only("AWS::ApiGatewayV2::Api")
    for given, extra in [
        ("", ()),
        ("mcp.example.com,edge.example:8443", ("mcp.example.com", "edge.example:8443")),
    ]:
        off = synthesized.deployed(McpAllowedHosts=given, EdgeCache="off")
        _, props = off.functions_by_handler()[MCP_HANDLER]
        joined = props["Environment"]["Variables"]["MCP_ALLOWED_HOSTS"]["Fn::Join"]
        domain = {
            "Fn::Join": ["", [{"Ref": api_id}, ".execute-api.ap-northeast-2.", {"Ref": "AWS::URLSuffix"}]]
        }
        assert joined == [",", [domain, given]]
        # As Lambda would get it (an API id, the URL suffix): what the function accepts at INIT.
        value = f"abc123.execute-api.ap-northeast-2.amazonaws.com,{given}"
        settings = McpSettings.model_validate({**POWERTOOLS_ENVIRONMENT, "MCP_ALLOWED_HOSTS": value})
        assert settings.mcp_allowed_hosts == ("abc123.execute-api.ap-northeast-2.amazonaws.com", *extra)


def test_dashboard_off_leaves_no_dashboard_and_no_dashboard_url(synthesized):
    assert len(synthesized.deployed().resources("AWS::CloudWatch::Dashboard")) == 1

    off = synthesized.deployed(Dashboard="off")
    assert off.resources("AWS::CloudWatch::Dashboard") == {}
    assert "DashboardUrl" not in off.template["Outputs"]
    assert len(off.resources("AWS::CloudWatch::Alarm")) == len(
        synthesized.resources("AWS::CloudWatch::Alarm")
    )


def test_the_alarm_topic_key_can_be_switched_off(synthesized):
    _, encrypted = synthesized.deployed().only("AWS::SNS::Topic")
    key_id, _ = synthesized.deployed().only("AWS::KMS::Key")
    assert encrypted["Properties"]["KmsMasterKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}

    plain = synthesized.deployed(AlarmTopicEncryption="none")
    assert plain.resources("AWS::KMS::Key") == {}
    assert "KmsMasterKeyId" not in plain.only("AWS::SNS::Topic")[1]["Properties"]


def test_the_probe_reserves_no_concurrency_when_told_none(synthesized):
    from infra.probe import PROBE_HANDLER

    _, probe = synthesized.deployed(ProbeReservedConcurrency="none").functions_by_handler()[PROBE_HANDLER]
    assert "ReservedConcurrentExecutions" not in probe
    pattern = synthesized.template["Parameters"]["ProbeReservedConcurrency"]["AllowedPattern"]
    assert [value for value in ("none", "1", "10", "0", "-1", "x") if re.fullmatch(pattern, value)] == [
        "none",
        "1",
        "10",
    ]


# --- docs/configuration.md's table --------- -------------------------------------------------------------------

PARAMETER_CELL = re.compile(r"^parameter `(\w+)`$")


def _configuration_rows() -> list[dict[str, str]]:
    page = (REPO_ROOT / "docs/configuration.md").read_text()
    table = page[page.index("| setting | where you change it |") :]
    rows = []
    for line in table.splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().removeprefix("|").removesuffix("|").split("|")]
        assert len(cells) == 4, f"not a row of four cells: {line}"
        rows.append(dict(zip(("setting", "where", "default", "meaning"), cells, strict=True)))
    return rows


def _readme_default(cell: str) -> str:
    return "" if cell == "empty" else cell.strip("`")


def test_the_readme_configuration_table_is_the_stacks_parameters(synthesized):
    parameters = _parameters(synthesized)
    rows = _configuration_rows()
    documented = {}
    for row in rows:
        match = PARAMETER_CELL.match(row["where"])
        if match:
            documented[match.group(1)] = row

    assert set(documented) == set(parameters), "one docs/configuration.md row per stack parameter"
    for name, row in documented.items():
        assert _readme_default(row["default"]) == str(parameters[name]["Default"]), name
        variable = PARAMETERS[name].variable
        if variable is not None:
            assert row["setting"] == f"`{variable}`", name
    others = [row["where"] for row in rows if not PARAMETER_CELL.match(row["where"])]
    assert others, "the table also says where the settings that are not parameters live"
