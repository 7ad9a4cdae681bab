"""SnapStart as a deployment option (`-c snapStart=true`): the lookup function publishes a version with
SnapStart and the HTTP API invokes its alias; off (the default) the stack is exactly the stack without the
option."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aws_cdk.assertions import Match, Template
from cdk_nag import AwsSolutionsChecks

from infra.api import API_HANDLER, OPS_HANDLER
from infra.function import LIVE_ALIAS
from infra.probe import PROBE_HANDLER
from infra.stack import RouteHealthStack, create_app

pytestmark = pytest.mark.infra


@pytest.fixture(scope="module")
def layer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    layer = tmp_path_factory.mktemp("layer")
    (layer / "python").mkdir()
    return layer


def synth(layer_dir: Path, **context: str) -> tuple[RouteHealthStack, dict[str, Any]]:
    app, stack = create_app({**context, "layerDir": str(layer_dir)}, nag=False)
    template: dict[str, Any] = app.synth().get_stack_by_name(stack.stack_name).template
    return stack, template


@pytest.fixture(scope="module")
def snap_start(layer_dir: Path) -> tuple[RouteHealthStack, dict[str, Any]]:
    return synth(layer_dir, snapStart="true")


def functions_by_handler(template: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    return {
        resource["Properties"]["Handler"]: (logical_id, resource["Properties"])
        for logical_id, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Lambda::Function"
        and str(resource["Properties"].get("Handler", "")).startswith("functions.")
    }


def lookup_integration_uri(template: Template) -> Any:
    [integration] = [
        props["Properties"]["IntegrationUri"]
        for props in template.find_resources("AWS::ApiGatewayV2::Integration").values()
        if "Lookup" in str(props)
    ]
    return integration


def test_off_by_default_the_stack_is_unchanged(layer_dir: Path) -> None:
    _, default = synth(layer_dir)
    _, off = synth(layer_dir, snapStart="false")
    assert off == default

    template = Template.from_json(default)
    template.resource_count_is("AWS::Lambda::Version", 0)
    template.resource_count_is("AWS::Lambda::Alias", 0)
    assert all("SnapStart" not in props for _, props in functions_by_handler(default).values())
    lookup_id, _ = functions_by_handler(default)[API_HANDLER]
    assert lookup_integration_uri(template) == {"Fn::GetAtt": [lookup_id, "Arn"]}


def test_with_snap_start_the_api_invokes_an_alias_of_a_published_snap_start_version(
    snap_start: tuple[RouteHealthStack, dict[str, Any]],
) -> None:
    _, raw = snap_start
    template = Template.from_json(raw)
    functions = functions_by_handler(raw)
    lookup_id, lookup = functions[API_HANDLER]

    assert lookup["SnapStart"] == {"ApplyOn": "PublishedVersions"}
    for handler in (PROBE_HANDLER, OPS_HANDLER):  # cold starts there keep nobody waiting
        assert "SnapStart" not in functions[handler][1]

    [(version_id, version)] = template.find_resources("AWS::Lambda::Version").items()
    assert version["Properties"]["FunctionName"] == {"Ref": lookup_id}
    assert version.get("DeletionPolicy", "Delete") == "Delete"  # no old version keeps a cached snapshot
    [(alias_id, alias)] = template.find_resources("AWS::Lambda::Alias").items()
    assert alias["Properties"] == {
        "FunctionName": {"Ref": lookup_id},
        "FunctionVersion": {"Fn::GetAtt": [version_id, "Version"]},
        "Name": LIVE_ALIAS,
    }
    assert lookup_integration_uri(template) == {"Ref": alias_id}
    permissions = template.find_resources(
        "AWS::Lambda::Permission", {"Properties": {"Principal": "apigateway.amazonaws.com"}}
    )
    invoked = {str(permission["Properties"]["FunctionName"]) for permission in permissions.values()}
    assert str({"Ref": alias_id}) in invoked
    assert str({"Fn::GetAtt": [lookup_id, "Arn"]}) not in invoked  # the unpublished $LATEST is not public


def test_with_snap_start_alarms_and_dashboard_still_read_the_function_by_name(
    snap_start: tuple[RouteHealthStack, dict[str, Any]],
) -> None:
    # Lambda's metrics by FunctionName alone aggregate every version and alias of the function.
    _, raw = snap_start
    lookup_id, _ = functions_by_handler(raw)[API_HANDLER]
    template = Template.from_json(raw)
    named = {"Properties": {"AlarmName": Match.string_like_regexp("-function-errors$")}}
    [alarm] = template.find_resources("AWS::CloudWatch::Alarm", named).values()
    read = [
        query["MetricStat"]["Metric"]["Dimensions"]
        for query in alarm["Properties"]["Metrics"]
        if "MetricStat" in query
    ]
    assert [{"Name": "FunctionName", "Value": {"Ref": lookup_id}}] in read
    dashboard = str(template.find_resources("AWS::CloudWatch::Dashboard"))
    assert str({"Ref": lookup_id}) in dashboard
    assert "Resource" not in dashboard  # no graph narrowed to one version or alias


def test_with_snap_start_cdk_nag_finds_nothing(snap_start: tuple[RouteHealthStack, dict[str, Any]]) -> None:
    stack, _ = snap_start
    report = AwsSolutionsChecks().validate_scope(stack)
    assert [violation.rule_name for violation in report.violations] == []
    assert report.success


def test_an_unknown_snap_start_value_is_refused_at_synth(layer_dir: Path) -> None:
    with pytest.raises(ValueError, match="snapStart"):
        synth(layer_dir, snapStart="yes")
