"""The HTTP API: routes, integrations, throttling, access logs (docs/design.md, "HTTP API")."""

from __future__ import annotations

import json

import pytest

from infra.api import (
    API_HANDLER,
    LOOKUP_ROUTE,
    MCP_HANDLER,
    MCP_PATH,
    MCP_ROUTES,
    OPS_HANDLER,
    OPS_ROUTES,
    OPS_THROTTLE_BURST_LIMIT,
    OPS_THROTTLE_RATE_LIMIT,
)
from infra.secret import HEALTH_CHECK_SECRET_KEY
from ops_cli.connection import API_URL_OUTPUT, SECRET_ARN_OUTPUT, SECRET_KEY

pytestmark = pytest.mark.infra

# Every lookup path (plus the OpenAPI document) must reach the lookup function.
LOOKUP_PATHS = [
    "/api/openapi.json",
    "/api/oliveyoung/stores",
    "/api/oliveyoung/products",
    "/api/oliveyoung/products/A000000123",
    "/api/oliveyoung/stock",
    "/api/cu/products",
    "/api/cu/stores",
    "/api/gs25/products",
    "/api/gs25/stock",
    "/api/seveneleven/products",
    "/api/seveneleven/stores",
    "/api/seveneleven/popwords",
    "/api/seveneleven/stock",
    "/api/seveneleven/catalog/pages",
    "/api/seveneleven/catalog/issues",
    "/api/seveneleven/catalog/exhibitions",
    "/api/dtryx/movies",
    "/api/dtryx/play-dates",
    "/api/dtryx/timetable",
]


def _route_targets(synthesized) -> dict[str, str]:
    """Route key -> logical id of the function its integration invokes."""
    integrations = synthesized.resources("AWS::ApiGatewayV2::Integration")
    targets = {}
    for route in synthesized.resources("AWS::ApiGatewayV2::Route").values():
        integration_id = route["Properties"]["Target"]["Fn::Join"][1][1]["Ref"]
        uri = integrations[integration_id]["Properties"]["IntegrationUri"]
        targets[route["Properties"]["RouteKey"]] = uri["Fn::GetAtt"][0]
    return targets


def _route_for(method: str, path: str, route_keys: set[str]) -> str:
    """How API Gateway picks a route: an exact match first, else the greedy `{proxy+}` route."""
    if f"{method} {path}" in route_keys:
        return f"{method} {path}"
    greedy = [key for key in route_keys if key.startswith(f"{method} ") and key.endswith("/{proxy+}")]
    matching = [key for key in greedy if path.startswith(key.split(" ", 1)[1].removesuffix("{proxy+}"))]
    assert len(matching) == 1, f"no single route for {method} {path}"
    return matching[0]


def test_routes_go_to_the_right_function(synthesized):
    functions = synthesized.functions_by_handler()
    lookup_id, ops_id = functions[API_HANDLER][0], functions[OPS_HANDLER][0]
    mcp_id = functions[MCP_HANDLER][0]

    assert _route_targets(synthesized) == {
        "POST /mcp": mcp_id,
        "GET /mcp": mcp_id,  # answered 405 by the function, as Streamable HTTP asks
        "DELETE /mcp": mcp_id,
        "GET /api/{proxy+}": lookup_id,
        "GET /api/health/routes": ops_id,
        "POST /api/health/routes": ops_id,
        "PUT /api/health/routes/{key}/override": ops_id,
        "DELETE /api/health/routes/{key}/override": ops_id,
    }


@pytest.mark.parametrize("path", LOOKUP_PATHS)
def test_every_lookup_path_reaches_the_lookup_function(synthesized, path):
    targets = _route_targets(synthesized)
    lookup_id = synthesized.functions_by_handler()[API_HANDLER][0]

    assert targets[_route_for("GET", path, set(targets))] == lookup_id


def test_integrations_use_payload_v2(synthesized):
    for integration in synthesized.resources("AWS::ApiGatewayV2::Integration").values():
        assert integration["Properties"]["IntegrationType"] == "AWS_PROXY"
        assert integration["Properties"]["PayloadFormatVersion"] == "2.0"


def test_each_route_has_its_own_throttle_and_the_stage_writes_json_access_logs(synthesized):
    _, stage = synthesized.deployed().only("AWS::ApiGatewayV2::Stage")
    props = stage["Properties"]
    route_keys = {
        r["Properties"]["RouteKey"] for r in synthesized.resources("AWS::ApiGatewayV2::Route").values()
    }

    assert props["StageName"] == "$default"
    assert props["AutoDeploy"] is True
    # API Gateway applies a throttle to each route on its own: every route is named with its own limit, and
    # one added without one gets the operator routes' tight default, never a second share of the capacity.
    assert set(props["RouteSettings"]) == route_keys
    tight = {"ThrottlingRateLimit": OPS_THROTTLE_RATE_LIMIT, "ThrottlingBurstLimit": OPS_THROTTLE_BURST_LIMIT}
    assert props["DefaultRouteSettings"] == tight
    for route_key in OPS_ROUTES:
        assert props["RouteSettings"][route_key] == tight
    # The stage names its routes: it is created after them.
    routes = synthesized.resources("AWS::ApiGatewayV2::Route")
    stage_id, _ = synthesized.only("AWS::ApiGatewayV2::Stage")
    assert set(routes) <= set(synthesized.template["Resources"][stage_id]["DependsOn"])

    log_groups = synthesized.resources("AWS::Logs::LogGroup")
    destination = props["AccessLogSettings"]["DestinationArn"]["Fn::GetAtt"][0]
    assert log_groups[destination]["Properties"]["RetentionInDays"] == 30
    log_format = json.loads(props["AccessLogSettings"]["Format"])
    assert log_format["requestId"] == "$context.requestId"
    assert not any("header" in value.lower() for value in log_format.values())  # the operator secret


def test_the_ops_cli_finds_the_api_and_its_secret_under_the_names_the_stack_uses(synthesized):
    outputs = synthesized.template["Outputs"]
    assert {API_URL_OUTPUT, SECRET_ARN_OUTPUT} <= set(outputs)
    secret_id, _ = synthesized.only("AWS::SecretsManager::Secret")
    assert outputs[SECRET_ARN_OUTPUT]["Value"] == {"Ref": secret_id}
    assert SECRET_KEY == HEALTH_CHECK_SECRET_KEY


def _route_throttles(synthesized, **parameters: str) -> dict[str, tuple[float, float]]:
    _, stage = synthesized.deployed(**parameters).only("AWS::ApiGatewayV2::Stage")
    return {
        route: (float(limit["ThrottlingRateLimit"]), float(limit["ThrottlingBurstLimit"]))
        for route, limit in stage["Properties"]["RouteSettings"].items()
    }


def _capacity(throttles: dict[str, tuple[float, float]]) -> tuple[float, float]:
    """What reaches the retailers and relays at most: the REST lookups' and the MCP tool calls' routes."""
    routes = (throttles[LOOKUP_ROUTE], throttles[f"POST {MCP_PATH}"])
    return sum(rate for rate, _ in routes), sum(burst for _, burst in routes)


def test_the_throttle_parameters_add_up_to_the_capacity_they_state(synthesized):
    parameters = synthesized.template["Parameters"]
    defaults = {name: float(parameters[name]["Default"]) for name in parameters if "Throttle" in name}

    throttles = _route_throttles(synthesized)
    assert throttles[LOOKUP_ROUTE] == (defaults["ThrottleRateLimit"], defaults["ThrottleBurstLimit"])
    for route in MCP_ROUTES:
        assert throttles[route] == (defaults["McpThrottleRateLimit"], defaults["McpThrottleBurstLimit"])
    assert _capacity(throttles) == (50, 100)  # docs/deploy.md, "Capacity"
    assert "plus McpThrottleRateLimit" in parameters["ThrottleRateLimit"]["Description"]

    raised = _route_throttles(
        synthesized,
        ThrottleRateLimit="200",
        ThrottleBurstLimit="400",
        McpThrottleRateLimit="30",
        McpThrottleBurstLimit="60",
    )
    assert _capacity(raised) == (230, 460)
    assert {route: raised[route] for route in OPS_ROUTES} == {route: throttles[route] for route in OPS_ROUTES}
