"""One synthesized Route Health template per test session (a synth takes seconds), plus lookups into it."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

# jsii prints a banner on stderr for Node versions past their end of life; it is noise for these tests.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "18,20")

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Synthesized:
    stack: Any  # infra.stack.RouteHealthStack
    template: dict[str, Any]

    def resources(self, resource_type: str) -> dict[str, dict[str, Any]]:
        return {
            logical_id: resource
            for logical_id, resource in self.template["Resources"].items()
            if resource["Type"] == resource_type
        }

    def only(self, resource_type: str) -> tuple[str, dict[str, Any]]:
        found = self.resources(resource_type)
        assert len(found) == 1, f"expected one {resource_type}, found {sorted(found)}"
        return next(iter(found.items()))

    def functions_by_handler(self) -> dict[str, tuple[str, dict[str, Any]]]:
        return {
            resource["Properties"]["Handler"]: (logical_id, resource["Properties"])
            for logical_id, resource in self.resources("AWS::Lambda::Function").items()
            if "Handler" in resource["Properties"]
            and resource["Properties"]["Handler"].startswith("functions.")
        }

    def role_statements(self, role_logical_id: str) -> list[dict[str, Any]]:
        """Every statement of the inline policies attached to a role."""
        statements: list[dict[str, Any]] = []
        for policy in self.resources("AWS::IAM::Policy").values():
            if {"Ref": role_logical_id} in policy["Properties"]["Roles"]:
                statements.extend(policy["Properties"]["PolicyDocument"]["Statement"])
        return statements


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    from infra.stack import create_app

    # An empty dependencies layer keeps the tests offline; `make synth` builds the real one with pip.
    layer_dir = tmp_path_factory.mktemp("layer")
    (layer_dir / "python").mkdir()
    context = json.loads((REPO_ROOT / "cdk.json").read_text())["context"]
    context.update(layerDir=str(layer_dir), alarmEmail="ops@example.test")

    app, stack = create_app(context, nag=False)
    assembly = app.synth()
    return Synthesized(stack=stack, template=assembly.get_stack_by_name(stack.stack_name).template)
