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
    directory: Path | None = None
    """The cloud assembly's directory (with the synth's validation-report.json)."""

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

    def deployed(self, **parameters: str) -> Synthesized:
        """The template as CloudFormation would deploy it with these parameter values (the others at their
        defaults): parameters and conditions resolved, resources whose condition is false left out."""
        values = {
            name: str(parameters.get(name, definition.get("Default", "")))
            for name, definition in self.template.get("Parameters", {}).items()
        }
        unknown = parameters.keys() - values.keys()
        assert not unknown, f"no such parameters: {sorted(unknown)}"
        conditions: dict[str, bool] = {}
        for name, expression in self.template.get("Conditions", {}).items():
            conditions[name] = bool(_resolve(expression, values, conditions))
        resources = {
            logical_id: _resolve(resource, values, conditions)
            for logical_id, resource in self.template["Resources"].items()
            if conditions.get(resource.get("Condition", ""), True)
        }
        outputs = {
            name: _resolve(output, values, conditions)
            for name, output in self.template.get("Outputs", {}).items()
            if conditions.get(output.get("Condition", ""), True)
        }
        return Synthesized(
            stack=self.stack, template={**self.template, "Resources": resources, "Outputs": outputs}
        )

    def role_statements(self, role_logical_id: str) -> list[dict[str, Any]]:
        """Every statement of the inline policies attached to a role."""
        statements: list[dict[str, Any]] = []
        for policy in self.resources("AWS::IAM::Policy").values():
            if {"Ref": role_logical_id} in policy["Properties"]["Roles"]:
                statements.extend(policy["Properties"]["PolicyDocument"]["Statement"])
        return statements


_NO_VALUE = object()


def _resolve(value: Any, parameters: dict[str, str], conditions: dict[str, bool]) -> Any:
    """Refs to parameters, Fn::If/Equals/And/Or/Not and conditions; other intrinsics are left as they are."""
    if isinstance(value, list):
        items = [_resolve(item, parameters, conditions) for item in value]
        return [item for item in items if item is not _NO_VALUE]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        ((key, argument),) = value.items()
        if key == "Ref" and argument in parameters:
            return parameters[argument]
        if key == "Ref" and argument == "AWS::NoValue":
            return _NO_VALUE
        if key == "Condition" and isinstance(argument, str):
            return conditions[argument]
        if key == "Fn::If":
            name, when_true, when_false = argument
            return _resolve(when_true if conditions[name] else when_false, parameters, conditions)
        if key == "Fn::Equals":
            left, right = (_resolve(item, parameters, conditions) for item in argument)
            return left == right
        if key == "Fn::And":
            return all(_resolve(item, parameters, conditions) for item in argument)
        if key == "Fn::Or":
            return any(_resolve(item, parameters, conditions) for item in argument)
        if key == "Fn::Not":
            return not _resolve(argument[0], parameters, conditions)
    resolved = {key: _resolve(item, parameters, conditions) for key, item in value.items()}
    return {key: item for key, item in resolved.items() if item is not _NO_VALUE}


@pytest.fixture(scope="session")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> Synthesized:
    from infra.stack import create_app

    # An empty dependencies layer keeps the tests offline; `make synth` builds the real one with pip.
    layer_dir = tmp_path_factory.mktemp("layer")
    (layer_dir / "python").mkdir()
    context = json.loads((REPO_ROOT / "cdk.json").read_text())["context"]
    context.update(layerDir=str(layer_dir))

    app, stack = create_app(context, nag=False)
    assembly = app.synth()
    return Synthesized(
        stack=stack,
        template=assembly.get_stack_by_name(stack.stack_name).template,
        directory=Path(assembly.directory),
    )
