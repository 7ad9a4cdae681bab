"""Every setting an operator may change, as a CloudFormation parameter of the stack (docs/configuration.md, "Configuration").

Parameters, not context: the running stack keeps them, and a later `cdk deploy` that does not name one
reuses its previous value (the CDK CLI's `--previous-parameters`, on by default), so a deploy from another
checkout never silently resets a limit or removes a relay. Each has a default, a description and the
validation CloudFormation applies before anything changes; the functions validate their variables again at
INIT (functions/handlers/settings.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import cast

import aws_cdk as cdk

from functions.handlers.settings import DAILY_LIMITED_PREFIXES, SECRET_MAX_AGE_S
from functions.services.quota import FLUSH_INTERVAL_MS
from infra.environment import DEFAULT_LOG_LEVEL

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
RELAY_URL_PATTERN = r"^(https://[^\s/?#@]+(/[^\s?#@]*)?)?$"
"""https, no userinfo, query or fragment (the relay adapter checks the rest), or empty for no relay."""
PREFIXES_PATTERN = r"^/api/[^,\s]*(,/api/[^,\s]*)*$"
EMAIL_PATTERN = r"^([^\s@]+@[^\s@]+\.[^\s@]+)?$"
HOSTS_PATTERN = r"^([A-Za-z0-9.-]+(:[0-9]{1,5})?(,[A-Za-z0-9.-]+(:[0-9]{1,5})?)*)?$"
DOMAIN_PATTERN = r"^(([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63})?$"
CERTIFICATE_PATTERN = r"^(arn:aws[a-z-]*:acm:us-east-1:[0-9]{12}:certificate/[0-9a-f-]{36})?$"
"""CloudFront takes certificates from ACM in us-east-1 only, whatever the stack's region."""
LOOKUP_FUNCTION_TIMEOUT_S = 29
"""The lookup function's timeout: under the HTTP API's 30 s integration limit."""
MAX_LOOKUP_BUDGET_S = 25
"""The largest lookup budget that still leaves a cold start's INIT and the answer inside that timeout."""


@dataclass(frozen=True)
class Parameter:
    """One operator setting. `variable`: the function environment variable it sets (None: it shapes a
    resource instead)."""

    name: str
    description: str
    default: str
    variable: str | None = None
    number: bool = False
    allowed_values: tuple[str, ...] = ()
    allowed_pattern: str | None = None
    constraint: str | None = None
    min_value: float | None = None
    max_value: float | None = None

    def add_to(self, scope: cdk.Stack) -> cdk.CfnParameter:
        return cdk.CfnParameter(
            scope,
            self.name,
            type="Number" if self.number else "String",
            default=self.default,
            description=self.description,
            allowed_values=list(self.allowed_values) or None,
            allowed_pattern=self.allowed_pattern,
            constraint_description=self.constraint,
            min_value=self.min_value,
            max_value=self.max_value,
        )


def _relay_url(name: str, variable: str, group: str) -> Parameter:
    return Parameter(
        name,
        f"{variable}: the {group} relay's base URL (https, no userinfo, query or fragment); empty: no relay",
        "",
        variable=variable,
        allowed_pattern=RELAY_URL_PATTERN,
        constraint="an https:// base URL without userinfo, query or fragment, or empty",
    )


RELAY_URLS = (
    _relay_url("OyRelayUrl", "OY_RELAY_URL", "Olive Young"),
    _relay_url("ConvenienceRelayUrl", "CONVENIENCE_RELAY_URL", "CU, GS25 and 7-Eleven"),
    _relay_url("DtryxRelayUrl", "DTRYX_RELAY_URL", "Dtryx"),
    # Empty: CGV uses the Dtryx relay (docs/design.md, "Relay protocol").
    _relay_url("CgvRelayUrl", "CGV_RELAY_URL", "CGV"),
)
EVERY_FUNCTION = (
    *RELAY_URLS,
    Parameter(
        "LogLevel",
        "POWERTOOLS_LOG_LEVEL of every function; DEBUG logs each route decision with its rule",
        DEFAULT_LOG_LEVEL,
        variable="POWERTOOLS_LOG_LEVEL",
        allowed_values=LOG_LEVELS,
    ),
    Parameter(
        "SecretMaxAgeSeconds",
        "ROUTE_HEALTH_SECRET_MAX_AGE: seconds a secret read is reused before a background refresh",
        str(SECRET_MAX_AGE_S),
        variable="ROUTE_HEALTH_SECRET_MAX_AGE",
        number=True,
        min_value=0,
        max_value=3600,
    ),
)
LOOKUP_FUNCTION = (
    Parameter(
        "LookupBudgetSeconds",
        f"LOOKUP_BUDGET_SECONDS: a lookup's whole time budget (a direct attempt gets at most 3 s of it; "
        f"the lookup function's timeout is {LOOKUP_FUNCTION_TIMEOUT_S} s)",
        "10",
        variable="LOOKUP_BUDGET_SECONDS",
        number=True,
        min_value=1,
        max_value=MAX_LOOKUP_BUDGET_S,
    ),
    Parameter(
        "DailyRateLimit",
        "DAILY_RATE_LIMIT: lookups per client per Korea day under the limited prefixes; 0 turns it off",
        "3000",
        variable="DAILY_RATE_LIMIT",
        number=True,
        min_value=0,
        max_value=1_000_000,
    ),
    Parameter(
        "DailyRateLimitPrefixes",
        "DAILY_RATE_LIMIT_PREFIXES: comma-separated path prefixes whose lookups count, each under /api/",
        ",".join(DAILY_LIMITED_PREFIXES),
        variable="DAILY_RATE_LIMIT_PREFIXES",
        allowed_pattern=PREFIXES_PATTERN,
        constraint="comma-separated paths starting with /api/, without spaces",
    ),
    Parameter(
        "DailyRateLimitFlushSeconds",
        "DAILY_RATE_LIMIT_FLUSH_SECONDS: how often a container shares its counts at most; lower it when "
        "you raise the throttle (the overshoot past the limit grows with both)",
        str(FLUSH_INTERVAL_MS / 1000),
        variable="DAILY_RATE_LIMIT_FLUSH_SECONDS",
        number=True,
        min_value=0.05,
        max_value=5,
    ),
    Parameter(
        "ResponseCache",
        "RESPONSE_CACHE: on: the lookup and MCP functions answer a repeated lookup from memory while it is "
        "fresh (each lookup's max-age); off: every lookup reaches its upstream",
        "on",
        variable="RESPONSE_CACHE",
        allowed_values=("on", "off"),
    ),
)
STACK_SHAPE = (
    # API Gateway throttles each route on its own: these are the two routes that reach the retailers and relays,
    # and together they are the service's capacity (infra/api.py; docs/deploy.md, "Capacity").
    Parameter(
        "ThrottleRateLimit",
        "Requests per second the REST lookups accept (GET /api/...; API Gateway throttles each route on its own, "
        "so the service's capacity is this plus McpThrottleRateLimit)",
        "40",
        number=True,
        min_value=1,
        max_value=10_000,
    ),
    Parameter(
        "ThrottleBurstLimit",
        "Requests the REST lookups accept at once above their steady rate (burst; the service's is this plus "
        "McpThrottleBurstLimit)",
        "80",
        number=True,
        min_value=1,
        max_value=5_000,
    ),
    Parameter(
        "McpThrottleRateLimit",
        "Requests per second the MCP endpoint accepts (POST /mcp, each one tool call at most; GET and DELETE "
        "/mcp, answered 405, get as much each)",
        "10",
        number=True,
        min_value=1,
        max_value=10_000,
    ),
    Parameter(
        "McpThrottleBurstLimit",
        "Requests the MCP endpoint accepts at once above its steady rate (burst)",
        "20",
        number=True,
        min_value=1,
        max_value=5_000,
    ),
    Parameter(
        "McpAllowedHosts",
        "Names the MCP endpoint answers to besides the API's own execute-api domain (Host and a browser's "
        "Origin, against DNS rebinding): comma-separated, name or name:port, e.g. a custom or CloudFront "
        "domain in front of the API; empty: the API's domain only",
        "",
        allowed_pattern=HOSTS_PATTERN,
        constraint="comma-separated host names (name or name:port), without spaces, or empty",
    ),
    Parameter(
        "EdgeCache",
        "on: a CloudFront distribution in front of the API is its public URL (ApiUrl) and answers repeated "
        "lookups from its cache while they are fresh; off: no distribution, ApiUrl is the execute-api URL",
        "on",
        allowed_values=("on", "off"),
    ),
    Parameter(
        "EdgeDomainName",
        "With EdgeCache=on, a domain name of yours for the distribution (with EdgeCertificateArn; point its "
        "DNS at the EdgeDistributionDomainName output); empty: the distribution's own cloudfront.net name",
        "",
        allowed_pattern=DOMAIN_PATTERN,
        constraint="a lower-case domain name such as api.example.com, or empty",
    ),
    Parameter(
        "EdgeCertificateArn",
        "With EdgeDomainName, the ARN of an ACM certificate for it in us-east-1 (CloudFront's region); empty "
        "with an empty EdgeDomainName",
        "",
        allowed_pattern=CERTIFICATE_PATTERN,
        constraint="an ACM certificate ARN in us-east-1, or empty",
    ),
    Parameter(
        "AlarmEmail",
        "The address the alarm topic e-mails (confirm the subscription); empty: no e-mail subscription",
        "",
        allowed_pattern=EMAIL_PATTERN,
        constraint="an e-mail address, or empty",
    ),
    Parameter(
        "Tracing",
        "xray: Lambda's active X-Ray tracing of every invocation; off: no traces at all",
        "xray",
        allowed_values=("xray", "off"),
    ),
    Parameter(
        "TraceCalls",
        "true: with Tracing=xray, an X-Ray subsegment per AWS and upstream call of the probe and operator "
        "functions (about 140 ms of CPU per cold start of each)",
        "false",
        allowed_values=("false", "true"),
    ),
    Parameter(
        "Dashboard",
        "on: the CloudWatch dashboard (about $3 a month); off: none (alarms and saved queries stay)",
        "on",
        allowed_values=("on", "off"),
    ),
    Parameter(
        "AlarmTopicEncryption",
        "kms: the alarm topic is encrypted with a customer key (about $1 a month); none: SNS without "
        "server-side encryption",
        "kms",
        allowed_values=("kms", "none"),
    ),
    Parameter(
        "ProbeReservedConcurrency",
        "Concurrency reserved for the probe (1: runs never pile up); none: no reservation, for accounts "
        "whose concurrency quota cannot reserve any",
        "1",
        allowed_pattern=r"^(none|[1-9][0-9]{0,2})$",
        constraint="none, or a number from 1 to 999",
    ),
)
PARAMETERS: Mapping[str, Parameter] = MappingProxyType(
    {parameter.name: parameter for parameter in (*EVERY_FUNCTION, *LOOKUP_FUNCTION, *STACK_SHAPE)}
)

LEGACY_CONTEXT: Mapping[str, str] = MappingProxyType(
    {
        "oyRelayUrl": "OyRelayUrl",
        "convenienceRelayUrl": "ConvenienceRelayUrl",
        "dtryxRelayUrl": "DtryxRelayUrl",
        "logLevel": "LogLevel",
        "alarmEmail": "AlarmEmail",
        "traceCalls": "TraceCalls",
        "probeReservedConcurrency": "ProbeReservedConcurrency",
    }
)
"""Context keys of earlier versions that are stack parameters now: a deploy naming one is refused."""


class StackParameters:
    """The stack's parameters and the conditions the resource-shaping ones decide, both added to the stack
    itself, so their names stay as docs/configuration.md gives them."""

    def __init__(self, stack: cdk.Stack) -> None:
        self._stack = stack
        for key, parameter in LEGACY_CONTEXT.items():
            if stack.node.try_get_context(key) is not None:
                raise ValueError(
                    f"-c {key} is no longer read: it is the stack parameter {parameter}, which later deploys "
                    f"keep; deploy with --parameters {parameter}=<value> (docs/configuration.md)"
                )
        self.values = {name: parameter.add_to(stack) for name, parameter in PARAMETERS.items()}
        self.tracing = self._equals("TracingOn", "Tracing", "xray")
        self.calls_traced = cdk.CfnCondition(
            stack,
            "CallsTraced",
            expression=cdk.Fn.condition_and(
                _expression(self.tracing), _expression(self._equals("TraceCallsOn", "TraceCalls", "true"))
            ),
        )
        self.dashboard = self._equals("DashboardOn", "Dashboard", "on")
        self.topic_key = self._equals("AlarmTopicKeyOn", "AlarmTopicEncryption", "kms")
        self.alarm_email = cdk.CfnCondition(
            stack,
            "AlarmEmailGiven",
            expression=cdk.Fn.condition_not(cdk.Fn.condition_equals(self.text("AlarmEmail"), "")),
        )
        self.probe_unreserved = self._equals("ProbeUnreserved", "ProbeReservedConcurrency", "none")
        self.edge = self._equals("EdgeCacheOn", "EdgeCache", "on")
        self.edge_domain = cdk.CfnCondition(
            stack,
            "EdgeDomainGiven",
            expression=cdk.Fn.condition_and(
                _expression(self.edge),
                cdk.Fn.condition_not(cdk.Fn.condition_equals(self.text("EdgeDomainName"), "")),
            ),
        )
        """EdgeCache=on with a domain of the operator's: its aliases and certificate."""
        # A domain without its certificate (or the reverse) is refused before anything changes.
        no_domain = cdk.Fn.condition_equals(self.text("EdgeDomainName"), "")
        no_certificate = cdk.Fn.condition_equals(self.text("EdgeCertificateArn"), "")
        cdk.CfnRule(
            stack,
            "EdgeDomainNeedsItsCertificate",
            assertions=[
                cdk.CfnRuleAssertion(
                    assert_=cdk.Fn.condition_or(
                        cdk.Fn.condition_and(no_domain, no_certificate),
                        cdk.Fn.condition_and(
                            cdk.Fn.condition_not(no_domain), cdk.Fn.condition_not(no_certificate)
                        ),
                    ),
                    assert_description="EdgeDomainName and EdgeCertificateArn are given together, or neither",
                )
            ],
        )

    def _equals(self, condition_id: str, name: str, value: str) -> cdk.CfnCondition:
        return cdk.CfnCondition(
            self._stack, condition_id, expression=cdk.Fn.condition_equals(self.text(name), value)
        )

    def text(self, name: str) -> str:
        """The parameter's value as text (a Number parameter's too: `Ref` gives its text)."""
        return cdk.Token.as_string(self.values[name].value)

    def number(self, name: str) -> float:
        return self.values[name].value_as_number

    def environment(self, parameters: tuple[Parameter, ...]) -> dict[str, str]:
        """The variables these parameters set."""
        return {p.variable: self.text(p.name) for p in parameters if p.variable is not None}


def _expression(condition: cdk.CfnCondition) -> cdk.ICfnConditionExpression:
    # A CfnCondition is a condition expression (it renders as {"Condition": id}); its Python type says less.
    return cast(cdk.ICfnConditionExpression, condition)


def only_if(condition: cdk.CfnCondition, value: object) -> cdk.IResolvable:
    """`value` when the condition holds, else the property left out."""
    return cdk.Fn.condition_if(condition.logical_id, value, cdk.Aws.NO_VALUE)
