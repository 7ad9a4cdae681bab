"""Call tracing is a deploy option: off by default, so the probe and operator functions never load the X-Ray SDK
(its recorder creates a botocore client on import); on, their handlers run under Powertools' Tracer."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from functions.handlers.tracing import traced
from infra.environment import CALLS_UNTRACED, POWERTOOLS_ENVIRONMENT

REPO = Path(__file__).resolve().parents[3]

LOADED_AFTER_IMPORT = """
import sys
import functions.handlers.ops, functions.handlers.probe
print(sorted({name.split(".")[0] for name in sys.modules if name.startswith("aws_xray_sdk")}))
"""


def _sdk_packages_loaded(environment: dict[str, str]) -> list[str]:
    result = subprocess.run(  # noqa: S603 - our own interpreter running a fixed script
        [sys.executable, "-c", LOADED_AFTER_IMPORT],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ["PATH"], "AWS_DEFAULT_REGION": "ap-northeast-2", **environment},
    )
    loaded: list[str] = json.loads(result.stdout.strip().replace("'", '"'))
    return loaded


def test_the_default_deploy_imports_no_xray_sdk_in_the_probe_or_ops_function() -> None:
    assert _sdk_packages_loaded({**POWERTOOLS_ENVIRONMENT, **CALLS_UNTRACED}) == []


def test_with_call_tracing_the_handlers_load_the_tracer() -> None:
    assert _sdk_packages_loaded(dict(POWERTOOLS_ENVIRONMENT)) == ["aws_xray_sdk"]


def test_a_disabled_tracer_leaves_the_handler_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")

    def handler(event: dict[str, str], context: object) -> str:
        return event["id"]

    assert traced(handler) is handler


def test_an_enabled_tracer_wraps_the_handler_and_returns_its_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POWERTOOLS_TRACE_DISABLED", raising=False)

    def handler(event: dict[str, str], context: object) -> str:
        return event["id"]

    wrapped = traced(handler)

    assert wrapped is not handler
    assert wrapped({"id": "evt-1"}, None) == "evt-1"  # outside Lambda the Tracer records nothing


TRACING_MODULE = "functions/handlers/tracing.py"
TRACING_IMPORTS = ("aws_xray_sdk", "aws_lambda_powertools.tracing", "opentelemetry")


def _imports(path: Path) -> list[tuple[str, str]]:
    """(module, name) for every import in a file, names included (`from x import Tracer` -> ("x", "Tracer"))."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found += [(node.module, alias.name) for alias in node.names]
    return found


def test_no_module_but_the_tracing_module_imports_a_tracer_or_the_xray_sdk() -> None:
    sources = [
        path
        for package in ("functions", "relay", "sandbox", "ops_cli", "infra", "bench")
        for path in sorted((REPO / package).rglob("*.py"))
    ]
    offenders = [
        f"{path.relative_to(REPO)}: {module} {name}".strip()
        for path in sources
        if path.relative_to(REPO).as_posix() != TRACING_MODULE
        for module, name in _imports(path)
        if module.startswith(TRACING_IMPORTS) or name == "Tracer"
    ]
    assert len(sources) > 50  # the packages were found
    assert offenders == []
    assert ("aws_lambda_powertools", "Tracer") in _imports(REPO / TRACING_MODULE)
