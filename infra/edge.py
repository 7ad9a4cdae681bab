"""The edge (docs/design.md, "Caching"): a CloudFront distribution in front of the HTTP API, the stack's public
URL while the `EdgeCache` parameter is `on`; with `off` none of this exists.

- Lookups (`GET /api/...`, the default behavior) are cached by the origin's own `Cache-Control` (MinTTL 0, so
  `no-store` and errors are never kept; DefaultTTL 0 for an answer that says nothing), keyed by the whole
  query string, which a viewer-request function sorts by name first (`infra/edge_query.js`).
- `/mcp` and the operator paths pass through uncached, every method.
- The viewer's `Host` never reaches API Gateway (it answers 403 to a foreign one); `CloudFront-Viewer-Address`
  does, with `x-origin-verify`: the stack's generated key, with which the lookup function trusts that address
  for the daily quota (`functions/handlers/viewer.py`). The key lives in the stack's secret; the template only
  holds a `{{resolve:secretsmanager:...}}` reference to it.
"""

from __future__ import annotations

from pathlib import Path

import aws_cdk as cdk
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_cloudfront_origins as origins
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from functions.adapters.secrets import EDGE_ORIGIN_SECRET_KEY
from functions.core.errors import ErrorCode
from functions.handlers.viewer import ORIGIN_VERIFY_HEADER, VIEWER_ADDRESS_HEADER
from functions.mcp.protocol import METHOD_HEADER, NAME_HEADER, VERSION_HEADER
from infra import origin_key
from infra.api import HEALTH_ROUTES_PATH, MCP_PATH, HttpApi
from infra.function import LOG_RETENTION
from infra.parameters import StackParameters
from infra.secret import RouteHealthSecret
from infra.suppressions import acknowledge

QUERY_FUNCTION_CODE = Path(__file__).with_name("edge_query.js")
DAY_S = 24 * 60 * 60
ANSWERED_ERRORS = frozenset({code.status for code in ErrorCode} | {403, 405, 414, 422})
"""Every error status this API answers: its error codes', an upstream's 422 passed on, API Gateway's 403 (a
foreign Host) and 414, and `/mcp`'s 403 and 405."""
CACHEABLE_ERRORS = frozenset({400, 403, 404, 405, 414, 416, 500, 501, 502, 503, 504})
"""The only error statuses CloudFront ever caches (10 s by default, even under `no-store`), and so the only
ones an error response may name; it never caches the others (401, 422, 429)."""
ERROR_STATUSES = tuple(sorted(ANSWERED_ERRORS & CACHEABLE_ERRORS))
"""Each kept 0 s at the edge."""
OPERATOR_PATHS = f"{HEALTH_ROUTES_PATH.rsplit('/', 1)[0]}/*"
LOOKUP_HEADERS = ("x-health-check-key", "User-Agent", VIEWER_ADDRESS_HEADER)
"""Forwarded to a lookup, not keyed: the operator key (a lookup with it is not counted; CloudFront never
forwards `Authorization` on a cached behavior), the client's name for the access log, and its address."""
MCP_HEADERS = (
    "Accept",
    "Content-Type",
    "Origin",
    "User-Agent",
    VERSION_HEADER,
    METHOD_HEADER,
    NAME_HEADER,
    "x-health-check-key",
    VIEWER_ADDRESS_HEADER,
)
"""What `POST /mcp` reads (functions/mcp/protocol.py) and what its lookups' quota reads."""


def longest_max_age() -> int:
    """The longest `max-age` any lookup declares (functions/catalog): the edge keeps nothing longer."""
    from functions.catalog import LOOKUPS

    return max(lookup.freshness.max_age for lookup in LOOKUPS)


def _uncached(
    origin: cloudfront.IOrigin, forwarded: cloudfront.IOriginRequestPolicy
) -> cloudfront.BehaviorOptions:
    """A path that always reaches the API, every method."""
    return cloudfront.BehaviorOptions(
        origin=origin,
        viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowed_methods=cloudfront.AllowedMethods.ALLOW_ALL,
        cache_policy=cloudfront.CachePolicy.CACHING_DISABLED,
        origin_request_policy=forwarded,
    )


class EdgeCache(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        api: HttpApi,
        secret: RouteHealthSecret,
        parameters: StackParameters,
    ) -> None:
        super().__init__(scope, construct_id)
        key = self._origin_key(secret)
        lookups = cloudfront.BehaviorOptions(
            origin=origins.HttpOrigin(
                api.execute_api_domain,
                protocol_policy=cloudfront.OriginProtocolPolicy.HTTPS_ONLY,
                origin_ssl_protocols=[cloudfront.OriginSslPolicy.TLS_V1_2],
                custom_headers={
                    ORIGIN_VERIFY_HEADER: cdk.SecretValue.secrets_manager(
                        secret.secret.secret_arn, json_field=EDGE_ORIGIN_SECRET_KEY
                    ).unsafe_unwrap()  # a dynamic reference: CloudFormation resolves it, the template never holds it
                },
            ),
            viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
            allowed_methods=cloudfront.AllowedMethods.ALLOW_GET_HEAD,
            cache_policy=self._lookup_cache_policy(),
            origin_request_policy=self._forwarded("Lookups", LOOKUP_HEADERS),
            function_associations=[
                cloudfront.FunctionAssociation(
                    function=self._query_function(), event_type=cloudfront.FunctionEventType.VIEWER_REQUEST
                )
            ],
        )
        self.distribution = cloudfront.Distribution(
            self,
            "Distribution",
            comment=f"{cdk.Stack.of(self).stack_name}: the lookup API's edge cache",
            default_behavior=lookups,
            additional_behaviors={
                MCP_PATH: _uncached(lookups.origin, self._forwarded("Mcp", MCP_HEADERS)),
                # Caching disabled, so the managed policy may forward `Authorization` (the operator's Bearer).
                OPERATOR_PATHS: _uncached(
                    lookups.origin, cloudfront.OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER
                ),
            },
            error_responses=[
                cloudfront.ErrorResponse(http_status=status, ttl=cdk.Duration.seconds(0))
                for status in ERROR_STATUSES
            ],
            price_class=cloudfront.PriceClass.PRICE_CLASS_200,  # PriceClass_100 has no Korean edge
            http_version=cloudfront.HttpVersion.HTTP2_AND_3,
        )
        self.distribution.node.add_dependency(key)  # the reference resolves only once the key exists
        self._custom_domain(parameters)
        self._acknowledge()
        for resource in self.node.find_all():
            if isinstance(resource, cdk.CfnResource):
                resource.cfn_options.condition = parameters.edge

    @property
    def domain_name(self) -> str:
        return self.distribution.distribution_domain_name

    def _origin_key(self, secret: RouteHealthSecret) -> cdk.CustomResource:
        """Adds the generated origin key to the stack's secret (infra/origin_key.py) unless it has one."""
        log_group = logs.LogGroup(self, "OriginKeyLogs", retention=LOG_RETENTION)
        role = iam.Role(self, "OriginKeyRole", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
        log_group.grant_write(role)
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["secretsmanager:GetSecretValue", "secretsmanager:PutSecretValue"],
                resources=[secret.secret.secret_arn],
            )
        )
        function = lambda_.Function(
            self,
            "OriginKeyFunction",
            code=lambda_.Code.from_inline(Path(origin_key.__file__).read_text()),
            handler="index.handler",
            runtime=lambda_.Runtime.PYTHON_3_12,
            architecture=lambda_.Architecture.ARM_64,
            description="Route Health: adds the edge's generated origin key to the stack's secret (deploys only)",
            timeout=cdk.Duration.seconds(30),
            role=role,
            log_group=log_group,
        )
        acknowledge(
            function,
            "AwsSolutions-L1",
            "Python 3.12 like every function of the stack; it runs only during deploys, from inline code.",
        )
        return cdk.CustomResource(
            self,
            "OriginKey",
            service_token=function.function_arn,
            properties={"SecretId": secret.secret.secret_arn, "Key": EDGE_ORIGIN_SECRET_KEY},
        )

    def _lookup_cache_policy(self) -> cloudfront.CachePolicy:
        return cloudfront.CachePolicy(
            self,
            "LookupCache",
            comment="Lookups: the origin's Cache-Control decides (MinTTL 0), keyed by the sorted query string",
            min_ttl=cdk.Duration.seconds(0),
            default_ttl=cdk.Duration.seconds(0),
            max_ttl=cdk.Duration.seconds(max(DAY_S, longest_max_age())),
            query_string_behavior=cloudfront.CacheQueryStringBehavior.all(),
            header_behavior=cloudfront.CacheHeaderBehavior.none(),
            cookie_behavior=cloudfront.CacheCookieBehavior.none(),
            enable_accept_encoding_gzip=True,
            enable_accept_encoding_brotli=True,
        )

    def _forwarded(self, construct_id: str, headers: tuple[str, ...]) -> cloudfront.OriginRequestPolicy:
        """Forwarded without keying: these headers (never `Host`) and the query string."""
        return cloudfront.OriginRequestPolicy(
            self,
            f"{construct_id}Forwarded",
            comment=f"{construct_id}: {', '.join(headers)} and the query string; never the viewer's Host",
            header_behavior=cloudfront.OriginRequestHeaderBehavior.allow_list(*headers),
            query_string_behavior=cloudfront.OriginRequestQueryStringBehavior.all(),
            cookie_behavior=cloudfront.OriginRequestCookieBehavior.none(),
        )

    def _query_function(self) -> cloudfront.Function:
        return cloudfront.Function(
            self,
            "SortedQuery",
            code=cloudfront.FunctionCode.from_file(file_path=str(QUERY_FUNCTION_CODE)),
            runtime=cloudfront.FunctionRuntime.JS_2_0,
            comment="Sorts the query string by parameter name: one cache entry whatever the order",
        )

    def _custom_domain(self, parameters: StackParameters) -> None:
        """EdgeDomainName + EdgeCertificateArn: the distribution answers to that name with that certificate
        (TLS 1.2 at least); without them, to its cloudfront.net name with CloudFront's certificate."""
        cfn = self.distribution.node.default_child
        assert isinstance(cfn, cloudfront.CfnDistribution)
        given = parameters.edge_domain.logical_id
        cfn.add_property_override(
            "DistributionConfig.Aliases",
            cdk.Fn.condition_if(given, [parameters.text("EdgeDomainName")], cdk.Aws.NO_VALUE),
        )
        certificate = {
            "AcmCertificateArn": parameters.text("EdgeCertificateArn"),
            "SslSupportMethod": "sni-only",
            "MinimumProtocolVersion": "TLSv1.2_2021",
            "CloudFrontDefaultCertificate": None,
        }
        for name, value in certificate.items():
            cfn.add_property_override(
                f"DistributionConfig.ViewerCertificate.{name}",
                cdk.Fn.condition_if(given, value, cdk.Aws.NO_VALUE)
                if value is not None
                else cdk.Fn.condition_if(given, cdk.Aws.NO_VALUE, True),
            )

    def _acknowledge(self) -> None:
        reasons = {
            "AwsSolutions-CFR1": "A public lookup API for anyone, anywhere: no country is refused.",
            "AwsSolutions-CFR2": "No WAF: a web ACL costs $5+ a month, over the idle budget; API Gateway's "
            "per-route throttles and the per-client daily quota bound the load (docs/deploy.md, 'Capacity').",
            "AwsSolutions-CFR3": "No standard logs: they need an S3 bucket with ACLs enabled; the API's access "
            "log has every request that reaches it, and an edge hit reaches nothing and costs nothing.",
            "AwsSolutions-CFR4": "Without EdgeDomainName/EdgeCertificateArn the distribution can only use "
            "CloudFront's *.cloudfront.net certificate; with them it uses yours and TLSv1.2_2021.",
        }
        for rule, reason in reasons.items():
            acknowledge(self.distribution, rule, reason)

    def dashboard_widgets(self) -> list[cloudwatch.IWidget]:
        """Requests and error rates at the edge: hits included, which reach no function and no metric of ours."""
        return [
            cloudwatch.GraphWidget(
                title="Edge (CloudFront): requests and error rates",
                left=[self.metric("Requests", "requests")],
                right=[
                    self.metric(name, label, statistic="Average")
                    for name, label in (
                        ("4xxErrorRate", "4xx %"),
                        ("5xxErrorRate", "5xx %"),
                        ("TotalErrorRate", "errors %"),
                    )
                ],
                width=24,
            )
        ]

    def metric(self, name: str, label: str, statistic: str = "Sum") -> cloudwatch.Metric:
        """One of CloudFront's free default metrics (us-east-1, `Region=Global`)."""
        return cloudwatch.Metric(
            namespace="AWS/CloudFront",
            metric_name=name,
            dimensions_map={"DistributionId": self.distribution.distribution_id, "Region": "Global"},
            region="us-east-1",
            statistic=statistic,
            label=label,
            period=cdk.Duration.minutes(5),
        )
