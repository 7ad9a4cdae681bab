"""Call tracing is a deploy option: off by default, so the probe and operator functions never load the X-Ray SDK
(its recorder creates a botocore client on import); on, their handlers run under Powertools' Tracer."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from functions.handlers.tracing import traced
from infra.environment import CALLS_UNTRACED, POWERTOOLS_ENVIRONMENT

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
