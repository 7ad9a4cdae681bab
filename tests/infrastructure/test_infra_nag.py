"""cdk-nag (AwsSolutions) through the v3 Validations API: every finding fixed or acknowledged with a reason."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aws_cdk import Validations
from cdk_nag import AwsSolutionsChecks

import infra.suppressions
from infra.stack import create_app

pytestmark = pytest.mark.infra


def _finding_ids(report: Any) -> list[str]:
    return sorted(violation.rule_name for violation in report.violations)


def _acknowledgments(stack: Any) -> dict[str, str]:
    """Rule id -> reason, as recorded in construct metadata by `Validations.of(...).acknowledge`."""
    found: dict[str, str] = {}
    for construct in stack.node.find_all():
        for entry in construct.node.metadata:
            if entry.type == Validations.ACKNOWLEDGED_RULES_METADATA_KEY:
                for rule_id, reason in entry.data.items():
                    found[rule_id.removeprefix("Annotation::")] = reason
    return found


def test_aws_solutions_checks_report_no_unacknowledged_findings(synthesized):
    report = AwsSolutionsChecks().validate_scope(synthesized.stack)

    findings = [
        f"{violation.severity} {violation.rule_name} at "
        + ", ".join(str(resource.construct_path) for resource in violation.violating_resources)
        for violation in report.violations
    ]
    assert findings == []
    assert report.success


def test_every_acknowledgment_has_a_reason(synthesized):
    acknowledged = _acknowledgments(synthesized.stack)
    assert acknowledged
    for rule_id, reason in acknowledged.items():
        assert len(reason.strip()) > 20, rule_id


def test_every_acknowledgment_is_still_needed(synthesized, monkeypatch, tmp_path):
    """Without the acknowledgments, cdk-nag finds exactly the acknowledged rules: none is stale, and the
    checks really run on this stack."""

    class _Ignored:
        @staticmethod
        def of(_construct: object) -> _Ignored:
            return _Ignored()

        def acknowledge(self, *_rules: object) -> None:
            return None

    monkeypatch.setattr(infra.suppressions, "Validations", _Ignored)
    layer_dir = tmp_path / "layer"
    (layer_dir / "python").mkdir(parents=True)
    _, bare_stack = create_app({"layerDir": str(layer_dir)}, nag=False)  # built, not synthesized

    found = set(_finding_ids(AwsSolutionsChecks().validate_scope(bare_stack)))
    acknowledged = {rule for rule in _acknowledgments(synthesized.stack) if rule.startswith("AwsSolutions-")}
    assert found == acknowledged, json.dumps(sorted(found))


def test_cloudformation_validation_at_synth_finds_only_what_is_acknowledged(synthesized):
    """The CDK validates the template against CloudFormation's rules at synth (the
    `validateAgainstDefaultRules` flag); each finding is fixed or acknowledged with a reason."""
    assert synthesized.directory is not None
    report = json.loads((synthesized.directory / "validation-report.json").read_text())
    [plugin] = [p for p in report["pluginReports"] if p["pluginName"] == "CloudFormation Validate"]

    assert plugin["violations"] == []
    suppressed = {f"CloudFormation-Validate::{v['ruleName']}" for v in plugin["suppressedViolations"]}
    acknowledged = {
        r for r in _acknowledgments(synthesized.stack) if r.startswith("CloudFormation-Validate::")
    }
    assert suppressed == acknowledged
