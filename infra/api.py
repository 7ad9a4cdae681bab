"""The HTTP API (docs/design.md#http-api): lookups go to the api function, `/api/health/routes` and its
overrides (`/api/health/routes/{key}/override`) to the operator function, `/mcp` to the MCP function."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import aws_cdk as cdk
import jsii
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_apigatewayv2 as apigwv2
from aws_cdk import aws_logs as logs
from aws_cdk.aws_apigatewayv2_integrations import HttpLambdaIntegration
from constructs import Construct

from infra.function import LOG_RETENTION, FunctionDefinition, RouteHealthFunction, SharedResources
from infra.parameters import LOOKUP_FUNCTION_TIMEOUT_S
from infra.suppressions import acknowledge

API_HANDLER = "functions.handlers.api.lambda_handler"
OPS_HANDLER = "functions.handlers.ops.lambda_handler"
MCP_HANDLER = "functions.handlers.mcp.lambda_handler"
MCP_PATH = "/mcp"
HEALTH_ROUTES_PATH = "/api/health/routes"
OVERRIDE_PATH = "/api/health/routes/{key}/override"
LOOKUP_PATH = "/api/{proxy+}"
LOOKUP_FUNCTION = FunctionDefinition(
    handler=API_HANDLER,
    description="Route Health lookups (direct or relay)",
    # the lookup budget (LookupBudgetSeconds, 10 s by default, 25 at most); the rest covers INIT and the answer
    timeout_s=LOOKUP_FUNCTION_TIMEOUT_S,
)
MCP_FUNCTION = FunctionDefinition(
    handler=MCP_HANDLER,
    description="Route Health MCP endpoint: every lookup as a tool (POST /mcp)",
    timeout_s=LOOKUP_FUNCTION_TIMEOUT_S,  # a tool call is one lookup, with the lookup function's budget
)
OPS_FUNCTION = FunctionDefinition(
    handler=OPS_HANDLER,
    description="Route Health operator endpoints: GET/POST /api/health/routes, route overrides",
    timeout_s=29,  # POST runs the full probe; HTTP API integrations end at 30 s
)

# API Gateway applies a stage's throttle to each route on its own (DefaultRouteSettings too: every route gets
# that much, they do not share it). So every route is named with its own limit: the two that reach the retailers
# and relays, REST lookups (ThrottleRateLimit/ThrottleBurstLimit) and MCP tool calls (McpThrottle...), add up to
# the service's capacity; the operator routes get a tight fixed one (a POST runs the full probe at most once per
# slot anyway, and the secret must not be brute-forced), as does any route added without a limit of its own.
OPS_THROTTLE_RATE_LIMIT = 1
OPS_THROTTLE_BURST_LIMIT = 5
LOOKUP_ROUTE = f"GET {LOOKUP_PATH}"
MCP_ROUTES = tuple(f"{method} {MCP_PATH}" for method in ("POST", "GET", "DELETE"))
"""POST carries the tool calls; GET and DELETE are answered 405 (no lookup), each with a bucket of that size."""
OPS_ROUTES = (
    *(f"{method} {HEALTH_ROUTES_PATH}" for method in ("GET", "POST")),
    *(f"{method} {OVERRIDE_PATH}" for method in ("PUT", "DELETE")),
)
MCP_ALLOWED_HOSTS_VARIABLE = "MCP_ALLOWED_HOSTS"

# Request metadata only: no headers (they carry the operator secret), no bodies.
ACCESS_LOG_FORMAT = {
    "requestId": "$context.requestId",
    "requestTime": "$context.requestTime",
    "ip": "$context.identity.sourceIp",
    "userAgent": "$context.identity.userAgent",
    "routeKey": "$context.routeKey",
    "path": "$context.path",
    "status": "$context.status",
    "responseLength": "$context.responseLength",
    "responseLatency": "$context.responseLatency",
    "integrationLatency": "$context.integrationLatency",
    "integrationError": "$context.integrationErrorMessage",
}


@dataclass(frozen=True)
class Throttle:
    """One route's limit: requests per second, and at once above that (burst)."""

    rate: float
    burst: float

    def route_settings(self) -> dict[str, float]:
        return {"ThrottlingRateLimit": self.rate, "ThrottlingBurstLimit": self.burst}


OPS_THROTTLE = Throttle(OPS_THROTTLE_RATE_LIMIT, OPS_THROTTLE_BURST_LIMIT)


@jsii.implements(apigwv2.IAccessLogSettings)
class _AccessLogs:
    """JSON access log lines into a log group of our own."""

    def __init__(self, log_group: logs.ILogGroup) -> None:
        self._log_group = log_group

    @property
    def destination(self) -> apigwv2.IAccessLogDestination:
        return apigwv2.LogGroupLogDestination(self._log_group)

    @property
    def format(self) -> apigw.AccessLogFormat:
        return apigw.AccessLogFormat.custom(json.dumps(ACCESS_LOG_FORMAT, separators=(",", ":")))


class HttpApi(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        shared: SharedResources,
        *,
        lookup_throttle: Throttle,
        mcp_throttle: Throttle,
        mcp_extra_hosts: Sequence[str] = (),
        snap_start: bool = False,
    ) -> None:
        """`mcp_extra_hosts`: names the MCP endpoint answers to besides the API's own domain (each may be a
        comma-separated list: a parameter's value, an edge's domain)."""
        super().__init__(scope, construct_id)
        # SnapStart pays only where someone waits on a cold start: the lookups, not the rare operator calls.
        self.lookup = RouteHealthFunction(self, "Lookup", shared, LOOKUP_FUNCTION, snap_start=snap_start)
        self.ops = RouteHealthFunction(self, "Ops", shared, OPS_FUNCTION)
        # The MCP function runs the lookup function's handler in process: the same grants and settings.
        self.mcp = RouteHealthFunction(
            self, "Mcp", shared, MCP_FUNCTION, extra_layers=(shared.packaging.mcp_dependencies,)
        )
        # Lookups read the snapshot, report live direct failures and count the daily quota; the operator POST
        # runs the probe.
        for lookups in (self.lookup.function, self.mcp.function):
            shared.table.grant_read_snapshot(lookups)
            shared.table.grant_report_failures(lookups)
            shared.table.grant_count_lookups(lookups)
            shared.secret.grant_read(lookups)
        shared.table.grant_read_snapshot(self.ops.function)
        shared.table.grant_probe_writes(self.ops.function)
        shared.table.grant_override_writes(self.ops.function)
        shared.secret.grant_read(self.ops.function)

        self.http_api = self._routes()
        self._mcp_hosts = [self.execute_api_domain]
        self.allow_mcp_hosts(*mcp_extra_hosts)
        self.access_logs = logs.LogGroup(self, "AccessLogs", retention=LOG_RETENTION)
        self.stage = self._throttled_stage(
            {LOOKUP_ROUTE: lookup_throttle, **dict.fromkeys(MCP_ROUTES, mcp_throttle)}
        )

    def _routes(self) -> apigwv2.HttpApi:
        http_api = apigwv2.HttpApi(
            self, "HttpApi", description="Route Health lookup and operator API", create_default_stage=False
        )
        # Every lookup path (and /api/openapi.json) is a GET under /api; the handler routes them.
        http_api.add_routes(
            path=LOOKUP_PATH,
            methods=[apigwv2.HttpMethod.GET],
            integration=HttpLambdaIntegration("Lookup", self.lookup.invoked),
        )
        ops = HttpLambdaIntegration("Ops", self.ops.function)
        http_api.add_routes(
            path=HEALTH_ROUTES_PATH,
            methods=[apigwv2.HttpMethod.GET, apigwv2.HttpMethod.POST],
            integration=ops,
        )
        http_api.add_routes(
            path=OVERRIDE_PATH, methods=[apigwv2.HttpMethod.PUT, apigwv2.HttpMethod.DELETE], integration=ops
        )
        # GET and DELETE reach the function too, which answers them 405 as Streamable HTTP asks.
        http_api.add_routes(
            path=MCP_PATH,
            methods=[apigwv2.HttpMethod.POST, apigwv2.HttpMethod.GET, apigwv2.HttpMethod.DELETE],
            integration=HttpLambdaIntegration("Mcp", self.mcp.function),
        )
        for route in http_api.node.find_all():
            if isinstance(route, apigwv2.CfnRoute):
                acknowledge(
                    route,
                    "AwsSolutions-APIG4",
                    "Lookups (REST and MCP) are public by design; the operator routes check the health-check "
                    "secret in the function (Bearer or x-health-check-key, constant time).",
                )
        return http_api

    def _throttled_stage(self, throttles: dict[str, Throttle]) -> apigwv2.HttpStage:
        stage = apigwv2.HttpStage(
            self,
            "DefaultStage",
            http_api=self.http_api,
            stage_name="$default",
            auto_deploy=True,
            throttle=apigwv2.ThrottleSettings(rate_limit=OPS_THROTTLE.rate, burst_limit=OPS_THROTTLE.burst),
            access_log_settings=_AccessLogs(self.access_logs),
        )
        routes = {**dict.fromkeys(OPS_ROUTES, OPS_THROTTLE), **throttles}
        cfn_stage = stage.node.default_child
        assert isinstance(cfn_stage, apigwv2.CfnStage)
        cfn_stage.add_property_override(
            "RouteSettings", {route: throttle.route_settings() for route, throttle in routes.items()}
        )
        # RouteSettings name routes: the stage must come after them.
        for route in self.http_api.node.find_all():
            if isinstance(route, apigwv2.CfnRoute):
                cfn_stage.add_resource_dependency(route)
        return stage

    def allow_mcp_hosts(self, *hosts: str, condition: cdk.CfnCondition | None = None) -> None:
        """More names the MCP function answers to (each may be a comma-separated list, or empty); with a
        condition, only while it holds."""
        allowed = cdk.Fn.join(",", [*self._mcp_hosts, *hosts])
        if condition is None:
            self._mcp_hosts.extend(hosts)
        else:
            allowed = cdk.Token.as_string(
                cdk.Fn.condition_if(condition.logical_id, allowed, cdk.Fn.join(",", self._mcp_hosts))
            )
        # Against DNS rebinding the MCP function answers only to these names (functions/mcp/protocol.py).
        self.mcp.function.add_environment(MCP_ALLOWED_HOSTS_VARIABLE, allowed)

    @property
    def execute_api_domain(self) -> str:
        """The API's own domain name (its URL's host)."""
        stack = cdk.Stack.of(self)
        return f"{self.http_api.api_id}.execute-api.{stack.region}.{stack.url_suffix}"

    @property
    def url(self) -> str:
        url = self.stage.url
        assert url is not None
        return url
