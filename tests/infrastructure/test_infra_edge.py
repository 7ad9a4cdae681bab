"""The edge (infra/edge.py): the distribution, its viewer-request function, its policies and error caching, its
behaviors, the origin key, the outputs, the custom domain, and `EdgeCache=off`, which adds nothing."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from functions.core.errors import ErrorCode
from functions.mcp.protocol import METHOD_HEADER, NAME_HEADER, VERSION_HEADER
from infra.api import MCP_HANDLER
from infra.edge import CACHEABLE_ERRORS, ERROR_STATUSES, QUERY_FUNCTION_CODE, longest_max_age

pytestmark = pytest.mark.infra

CACHING_DISABLED = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"
ALL_VIEWER_EXCEPT_HOST_HEADER = "b689b0a8-53d0-40ab-baf2-68738e2966ac"
DOMAIN = "api.example.com"
CERTIFICATE = "arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"


def _config(deployed) -> dict[str, Any]:
    _, distribution = deployed.only("AWS::CloudFront::Distribution")
    config: dict[str, Any] = distribution["Properties"]["DistributionConfig"]
    return config


@pytest.fixture(scope="module")
def config(synthesized) -> dict[str, Any]:
    return _config(synthesized.deployed())


def _behavior(config: dict[str, Any], pattern: str) -> dict[str, Any]:
    behaviors: list[dict[str, Any]] = [b for b in config["CacheBehaviors"] if b["PathPattern"] == pattern]
    (behavior,) = behaviors
    return behavior


def _forwarded_headers(synthesized, behavior: dict[str, Any]) -> list[str]:
    policy = synthesized.template["Resources"][behavior["OriginRequestPolicyId"]["Ref"]]
    headers = policy["Properties"]["OriginRequestPolicyConfig"]["HeadersConfig"]
    assert headers["HeaderBehavior"] == "whitelist"
    names: list[str] = headers["Headers"]
    return names


def test_the_distribution_sits_in_front_of_the_http_api_over_https_only(synthesized, config):
    api_id, _ = synthesized.only("AWS::ApiGatewayV2::Api")
    (origin,) = config["Origins"]

    assert origin["DomainName"] == {
        "Fn::Join": ["", [{"Ref": api_id}, ".execute-api.ap-northeast-2.", {"Ref": "AWS::URLSuffix"}]]
    }
    assert origin["CustomOriginConfig"]["OriginProtocolPolicy"] == "https-only"
    assert origin["CustomOriginConfig"]["OriginSSLProtocols"] == ["TLSv1.2"]
    behaviors = [config["DefaultCacheBehavior"], *config["CacheBehaviors"]]
    assert {b["ViewerProtocolPolicy"] for b in behaviors} == {"redirect-to-https"}
    assert config["PriceClass"] == "PriceClass_200"  # PriceClass_100 has no edge in Korea


def test_the_origin_key_is_a_reference_to_the_stacks_secret_never_its_value(synthesized, config):
    secret_id, _ = synthesized.only("AWS::SecretsManager::Secret")
    (header,) = config["Origins"][0]["OriginCustomHeaders"]

    assert header["HeaderName"] == "x-origin-verify"
    assert header["HeaderValue"] == {
        "Fn::Join": [
            "",
            ["{{resolve:secretsmanager:", {"Ref": secret_id}, ":SecretString:EDGE_ORIGIN_SECRET::}}"],
        ]
    }
    # The custom resource that generates it runs first, and may only read and write that secret.
    key_id, key = synthesized.only("AWS::CloudFormation::CustomResource")
    assert key["Properties"]["SecretId"] == {"Ref": secret_id}
    assert key["Properties"]["Key"] == "EDGE_ORIGIN_SECRET"
    _, distribution = synthesized.only("AWS::CloudFront::Distribution")
    assert key_id in distribution["DependsOn"]
    role = key["Properties"]["ServiceToken"]["Fn::GetAtt"][0]
    function = synthesized.template["Resources"][role]["Properties"]
    statements = synthesized.role_statements(function["Role"]["Fn::GetAtt"][0])
    secret_statements = [s for s in statements if "secretsmanager:PutSecretValue" in str(s["Action"])]
    assert secret_statements == [
        {
            "Action": ["secretsmanager:GetSecretValue", "secretsmanager:PutSecretValue"],
            "Effect": "Allow",
            "Resource": {"Ref": secret_id},
        }
    ]
    assert function["Code"]["ZipFile"] == (QUERY_FUNCTION_CODE.parent / "origin_key.py").read_text()


def test_lookups_are_cached_by_the_origins_headers_keyed_by_the_whole_sorted_query(synthesized, config):
    default = config["DefaultCacheBehavior"]
    assert default["AllowedMethods"] == ["GET", "HEAD"]

    policy = synthesized.template["Resources"][default["CachePolicyId"]["Ref"]]["Properties"][
        "CachePolicyConfig"
    ]
    assert (policy["MinTTL"], policy["DefaultTTL"]) == (
        0,
        0,
    )  # the origin's Cache-Control rules, no-store too
    assert policy["MaxTTL"] >= max(24 * 60 * 60, longest_max_age())
    key = policy["ParametersInCacheKeyAndForwardedToOrigin"]
    assert key["QueryStringsConfig"] == {"QueryStringBehavior": "all"}
    assert key["HeadersConfig"] == {"HeaderBehavior": "none"}
    assert key["CookiesConfig"] == {"CookieBehavior": "none"}

    (association,) = default["FunctionAssociations"]
    assert association["EventType"] == "viewer-request"
    function_id = association["FunctionARN"]["Fn::GetAtt"][0]
    function = synthesized.template["Resources"][function_id]["Properties"]
    assert function["FunctionConfig"]["Runtime"] == "cloudfront-js-2.0"
    assert function["FunctionCode"] == QUERY_FUNCTION_CODE.read_text()
    assert function["AutoPublish"] is True


def test_mcp_and_the_operator_paths_pass_through_uncached_with_every_method(config):
    for pattern in ("/mcp", "/api/health/*"):
        behavior = _behavior(config, pattern)
        assert behavior["CachePolicyId"] == CACHING_DISABLED
        assert set(behavior["AllowedMethods"]) == {"GET", "HEAD", "OPTIONS", "PUT", "PATCH", "POST", "DELETE"}
        assert "FunctionAssociations" not in behavior
    # With caching disabled the managed policy forwards the operator's `Authorization` (and never Host).
    assert _behavior(config, "/api/health/*")["OriginRequestPolicyId"] == ALL_VIEWER_EXCEPT_HOST_HEADER
    assert "/api/health/routes".startswith("/api/health/")
    assert re.fullmatch("/api/health/.*", "/api/health/routes/cu-prime/override")


def test_the_viewer_host_is_never_forwarded_and_the_viewer_address_always_is(synthesized, config):
    lookups = _forwarded_headers(synthesized, config["DefaultCacheBehavior"])
    mcp = _forwarded_headers(synthesized, _behavior(config, "/mcp"))

    for forwarded in (lookups, mcp):
        assert "host" not in {name.lower() for name in forwarded}
        assert "CloudFront-Viewer-Address" in forwarded  # the daily quota's client
        assert "x-origin-verify" not in {name.lower() for name in forwarded}  # CloudFront sets it itself
    assert "x-health-check-key" in lookups  # an operator's lookup is not counted
    # Everything POST /mcp reads (functions/mcp/protocol.py) reaches it.
    assert {"Accept", "Content-Type", "Origin", VERSION_HEADER, METHOD_HEADER, NAME_HEADER} <= set(mcp)


def test_no_error_status_this_api_answers_is_kept_at_the_edge(config):
    ttls = {
        response["ErrorCode"]: response["ErrorCachingMinTTL"] for response in config["CustomErrorResponses"]
    }
    assert set(ttls.values()) == {0}
    assert "ResponsePagePath" not in json.dumps(config["CustomErrorResponses"])  # the API's own error bodies

    answered = {code.status for code in ErrorCode} | {403, 405, 414, 422}
    assert {400, 403, 404, 405, 414, 500, 502, 503, 504} <= set(ttls)
    for status in answered:
        # CloudFront caches only its cacheable statuses (and an error response may name only those): the others
        # (401, 422, 429) are never kept whatever the distribution says.
        assert status in ttls or status not in CACHEABLE_ERRORS, status
    assert tuple(sorted(ttls)) == ERROR_STATUSES


def test_api_url_is_the_edges_and_execute_api_url_the_apis(synthesized):
    api_id, _ = synthesized.only("AWS::ApiGatewayV2::Api")
    distribution_id, _ = synthesized.only("AWS::CloudFront::Distribution")
    execute_api = {
        "Fn::Join": [
            "",
            ["https://", {"Ref": api_id}, ".execute-api.ap-northeast-2.", {"Ref": "AWS::URLSuffix"}, "/"],
        ]
    }
    edge = {"Fn::Join": ["", ["https://", {"Fn::GetAtt": [distribution_id, "DomainName"]}, "/"]]}

    on = synthesized.deployed().template["Outputs"]
    assert on["ApiUrl"]["Value"] == edge
    assert on["ExecuteApiUrl"]["Value"] == execute_api
    assert on["EdgeDistributionDomainName"]["Value"] == {"Fn::GetAtt": [distribution_id, "DomainName"]}
    assert on["EdgeDistributionId"]["Value"] == {"Ref": distribution_id}

    named = synthesized.deployed(EdgeDomainName=DOMAIN, EdgeCertificateArn=CERTIFICATE).template["Outputs"]
    assert named["ApiUrl"]["Value"] == {"Fn::Join": ["", ["https://", DOMAIN, "/"]]}

    off = synthesized.deployed(EdgeCache="off").template["Outputs"]
    assert off["ApiUrl"]["Value"] == execute_api
    assert not {"ExecuteApiUrl", "EdgeDistributionDomainName", "EdgeDistributionId"} & off.keys()


def test_a_domain_of_yours_gets_its_certificate_and_tls_1_2_else_cloudfronts_own(synthesized, config):
    assert config["ViewerCertificate"] == {"CloudFrontDefaultCertificate": True}
    assert "Aliases" not in config

    named = _config(synthesized.deployed(EdgeDomainName=DOMAIN, EdgeCertificateArn=CERTIFICATE))
    assert named["Aliases"] == [DOMAIN]
    assert named["ViewerCertificate"] == {
        "AcmCertificateArn": CERTIFICATE,
        "SslSupportMethod": "sni-only",
        "MinimumProtocolVersion": "TLSv1.2_2021",
    }


def test_the_domain_and_its_certificate_come_together_and_the_certificate_from_us_east_1(synthesized):
    rule = synthesized.template["Rules"]["EdgeDomainNeedsItsCertificate"]
    (assertion,) = rule["Assertions"]
    assert "EdgeDomainName" in json.dumps(assertion)
    assert "EdgeCertificateArn" in json.dumps(assertion)

    domain = synthesized.template["Parameters"]["EdgeDomainName"]["AllowedPattern"]
    certificate = synthesized.template["Parameters"]["EdgeCertificateArn"]["AllowedPattern"]
    assert [
        d
        for d in ("", DOMAIN, "edge.example.co.kr", "https://x.example", "a..b", "x")
        if re.fullmatch(domain, d)
    ] == [
        "",
        DOMAIN,
        "edge.example.co.kr",
    ]
    assert re.fullmatch(certificate, CERTIFICATE)
    assert re.fullmatch(certificate, "")
    assert not re.fullmatch(certificate, CERTIFICATE.replace("us-east-1", "ap-northeast-2"))


def test_the_mcp_function_answers_to_the_edges_names_too(synthesized):
    api_id, _ = synthesized.only("AWS::ApiGatewayV2::Api")
    distribution_id, _ = synthesized.only("AWS::CloudFront::Distribution")
    domain = {"Fn::Join": ["", [{"Ref": api_id}, ".execute-api.ap-northeast-2.", {"Ref": "AWS::URLSuffix"}]]}
    edge = {"Fn::GetAtt": [distribution_id, "DomainName"]}

    def hosts(**parameters: str) -> Any:
        _, props = synthesized.deployed(**parameters).functions_by_handler()[MCP_HANDLER]
        return props["Environment"]["Variables"]["MCP_ALLOWED_HOSTS"]["Fn::Join"]

    assert hosts() == [",", [domain, "", edge, ""]]
    assert hosts(EdgeDomainName=DOMAIN, EdgeCertificateArn=CERTIFICATE) == [",", [domain, "", edge, DOMAIN]]
    assert hosts(EdgeCache="off") == [",", [domain, ""]]


def test_edge_cache_off_adds_nothing(synthesized):
    edge = {
        logical_id
        for logical_id, resource in synthesized.template["Resources"].items()
        if resource.get("Condition") == "EdgeCacheOn"
    }
    assert {synthesized.template["Resources"][r]["Type"] for r in edge} >= {
        "AWS::CloudFront::Distribution",
        "AWS::CloudFront::Function",
        "AWS::CloudFront::CachePolicy",
        "AWS::CloudFront::OriginRequestPolicy",
        "AWS::CloudFormation::CustomResource",
        "AWS::Lambda::Function",
    }
    # Every resource of the edge construct is under the condition, and nothing else of the stack names them.
    conditions = [
        construct.cfn_options.condition
        for construct in synthesized.stack.edge.node.find_all()
        if hasattr(construct, "cfn_options")
    ]
    assert len(conditions) == len(edge)
    assert {condition.node.id for condition in conditions} == {"EdgeCacheOn"}

    off = synthesized.deployed(EdgeCache="off")
    assert not edge & off.template["Resources"].keys()
    text = json.dumps([off.template["Resources"], off.template["Outputs"]])
    assert not [logical_id for logical_id in edge if logical_id in text]
    for _, props in off.functions_by_handler().values():
        assert "EDGE" not in json.dumps(props["Environment"]), "no edge setting reaches a function"
