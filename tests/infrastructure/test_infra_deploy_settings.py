"""What a deploy takes and keeps: the one source of the Powertools settings, the relay URLs and the log level as
stack parameters, tracing, the CDK's recommended feature flags, and cdk-nag acknowledgements that cite real
documents. (Every other parameter: test_infra_parameters.py.)"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import aws_cdk
import pytest

from infra.environment import CALLS_UNTRACED, POWERTOOLS_ENVIRONMENT, RUNTIME_ENVIRONMENT
from infra.parameters import LEGACY_CONTEXT, LOG_LEVELS, RELAY_URLS
from infra.stack import create_app

pytestmark = pytest.mark.infra

REPO_ROOT = Path(__file__).resolve().parents[2]


def _recommended_feature_flags() -> dict[str, Any]:
    """The flags `cdk init` writes for the installed aws-cdk-lib (shipped inside its jsii bundle)."""
    [bundle] = (Path(aws_cdk.__file__).parent / "_jsii").glob("aws-cdk-lib@*.jsii.tgz")
    with tarfile.open(bundle) as archive:
        member = archive.extractfile("package/recommended-feature-flags.json")
        assert member is not None
        flags: dict[str, Any] = json.load(member)
    return flags


def test_every_recommended_feature_flag_is_set_in_cdk_json():
    context = json.loads((REPO_ROOT / "cdk.json").read_text())["context"]
    recommended = _recommended_feature_flags()

    assert len(recommended) > 50  # the list was found, not an empty stand-in
    unset = sorted(flag for flag in recommended if flag not in context)
    different = sorted(
        flag for flag, value in recommended.items() if flag in context and context[flag] != value
    )
    assert unset == [], "add these recommended flags to cdk.json"
    assert different == [], "these flags differ from the recommended value"


def test_every_function_gets_the_powertools_service_and_namespace_from_the_one_source(synthesized):
    for _, props in synthesized.deployed().functions_by_handler().values():
        variables = props["Environment"]["Variables"]
        assert {name: variables[name] for name in POWERTOOLS_ENVIRONMENT} == dict(POWERTOOLS_ENVIRONMENT)
        assert variables["POWERTOOLS_LOG_LEVEL"] == "INFO"


def test_no_function_looks_for_pydantic_plugins(synthesized):
    for _, props in synthesized.functions_by_handler().values():
        variables = props["Environment"]["Variables"]
        assert {name: variables.get(name) for name in RUNTIME_ENVIRONMENT} == {
            "PYDANTIC_DISABLE_PLUGINS": "__all__"
        }


def test_the_relay_urls_are_stack_parameters_that_every_function_reads(synthesized):
    parameters = synthesized.template["Parameters"]
    for relay_url in RELAY_URLS:
        assert parameters[relay_url.name]["Type"] == "String"
        assert parameters[relay_url.name]["Default"] == ""  # no relay until a deploy names one
        for _, props in synthesized.functions_by_handler().values():
            assert props["Environment"]["Variables"][relay_url.variable] == {"Ref": relay_url.name}


def _template(context: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    layer = tmp_path / "layer"
    (layer / "python").mkdir(parents=True, exist_ok=True)
    app, stack = create_app({**context, "layerDir": str(layer)}, nag=False)
    template: dict[str, Any] = app.synth().get_stack_by_name(stack.stack_name).template
    return template


def test_a_later_deploy_without_relay_urls_keeps_the_previous_values():
    # The URLs live in the running stack's parameters; the pinned CDK CLI reuses a parameter's previous
    # value when a deploy does not name it, so such a deploy cannot remove a relay.
    result = subprocess.run(  # noqa: S603 - the CLI pinned in package.json, fixed arguments
        [str(REPO_ROOT / "node_modules" / ".bin" / "cdk"), "deploy", "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ, "CDK_DISABLE_VERSION_CHECK": "1", "CDK_DISABLE_CLI_TELEMETRY": "true"},
    )
    option = result.stdout[result.stdout.index("--previous-parameters") :]
    option = option[: option.index("\n  --")]
    assert "[default: true]" in option


@pytest.mark.parametrize(("legacy_key", "parameter"), sorted(LEGACY_CONTEXT.items()))
def test_an_old_context_key_is_refused_with_the_parameter_to_deploy_with(tmp_path, legacy_key, parameter):
    with pytest.raises(ValueError, match=rf"--parameters {parameter}="):
        _template({legacy_key: "value"}, tmp_path)


def test_the_log_level_is_a_parameter_every_function_reads(synthesized):
    assert synthesized.template["Parameters"]["LogLevel"]["AllowedValues"] == list(LOG_LEVELS)
    debug = synthesized.deployed(LogLevel="DEBUG").functions_by_handler().values()
    assert {props["Environment"]["Variables"]["POWERTOOLS_LOG_LEVEL"] for _, props in debug} == {"DEBUG"}


def test_calls_are_untraced_and_invocations_traced_by_default(synthesized):
    for _, props in synthesized.deployed().functions_by_handler().values():
        variables = props["Environment"]["Variables"]
        assert {name: variables.get(name) for name in CALLS_UNTRACED} == dict(CALLS_UNTRACED)
        assert props["TracingConfig"] == {"Mode": "Active"}


def test_trace_calls_turns_powertools_tracer_on_in_every_function(synthesized):
    every_function = synthesized.deployed(TraceCalls="true").functions_by_handler().values()

    assert len(every_function) >= 3
    assert all(
        props["Environment"]["Variables"]["POWERTOOLS_TRACE_DISABLED"] == "false"
        for _, props in every_function
    )


def test_tracing_off_records_nothing_whatever_trace_calls_says(synthesized):
    every_function = synthesized.deployed(Tracing="off", TraceCalls="true").functions_by_handler().values()

    for _, props in every_function:
        assert props["TracingConfig"] == {"Mode": "PassThrough"}  # nothing upstream sends a sampled trace
        assert props["Environment"]["Variables"]["POWERTOOLS_TRACE_DISABLED"] == "true"


# --- documents cited by acknowledgements and alarms ---------------------------------------------------


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors_of(document: Path) -> set[str]:
    return {github_anchor(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", document.read_text(), re.M)}


# `README.md, "Section"` / `README.md, 'Section'` or `docs/design.md#anchor`
DOCUMENT_REFERENCE = re.compile(r"((?:docs/)?[\w-]+\.md)(?:, ['\"]([^'\"]+)['\"]|#([\w-]+))?")


def test_every_document_the_infrastructure_cites_exists_with_that_section():
    cited = [
        (match.group(1), match.group(2), match.group(3))
        for source in sorted((REPO_ROOT / "infra").glob("*.py"))
        for match in DOCUMENT_REFERENCE.finditer(source.read_text())
    ]
    assert ("docs/deploy.md", "Set the relay secrets", None) in cited  # the secret's cdk-nag acknowledgement
    for document, section, anchor in cited:
        path = REPO_ROOT / document
        assert path.is_file(), f"{document} does not exist"
        headings = anchors_of(path)
        if anchor is not None:
            assert anchor in headings, f"{document} has no #{anchor}"
        if section is not None:  # a heading's name, or the start of it
            wanted = github_anchor(section)
            assert any(h.startswith(wanted) for h in headings), f"{document} has no section {section!r}"
