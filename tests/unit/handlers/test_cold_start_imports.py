"""A function's INIT imports only what its invocations use. None loads pydantic-settings (the settings are plain
pydantic models) or, as deployed by default, the X-Ray SDK; the lookup function loads neither the document's
correction step (the first `GET /api/openapi.json` does) nor the probe's code; only the MCP function loads the
MCP protocol. INIT never runs the garbage collector."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from infra.environment import CALLS_UNTRACED, POWERTOOLS_ENVIRONMENT

NEVER_AT_INIT = ("pydantic_settings", "aws_xray_sdk")
NOT_IN_THE_LOOKUP_FUNCTION = ("functions.handlers.openapi", "functions.services.probe_run")
LOADED = 'print(" ".join(sorted(name for name in sys.modules if name in {names!r})))'


def _loaded(script: str, names: tuple[str, ...]) -> list[str]:
    """The lines `script` printed, each the `names` in sys.modules where it said LOADED."""
    result = subprocess.run(  # noqa: S603 - our own interpreter running a fixed script
        [sys.executable, "-c", script.replace("LOADED", LOADED.format(names=set(names)))],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ["PATH"], **POWERTOOLS_ENVIRONMENT, **CALLS_UNTRACED},
    )
    return result.stdout.splitlines()


@pytest.mark.parametrize("function", ["api", "probe", "ops", "mcp"])
def test_no_function_imports_pydantic_settings_or_the_xray_sdk(function: str) -> None:
    assert _loaded(f"import sys, functions.handlers.{function}\nLOADED", NEVER_AT_INIT) == [""]


def test_the_lookup_function_loads_the_openapi_builder_only_to_serve_the_document() -> None:
    script = "import sys\nimport functions.handlers.api as api\nLOADED\napi.openapi_json(())\nLOADED"

    at_init, after_document = _loaded(script, NOT_IN_THE_LOOKUP_FUNCTION)

    assert at_init == ""
    assert after_document == "functions.handlers.openapi"


@pytest.mark.parametrize("function", ["api", "probe", "ops"])
def test_only_the_mcp_function_loads_the_mcp_protocol(function: str) -> None:
    names = ("mcp_types", "functions.mcp", "functions.lookup_document")
    assert _loaded(f"import sys, functions.handlers.{function}\nLOADED", names) == [""]
    assert _loaded("import sys, functions.handlers.mcp\nLOADED", names) == [" ".join(sorted(names))]


@pytest.mark.parametrize("function", ["api", "probe", "ops", "mcp"])
def test_the_garbage_collector_never_runs_during_a_functions_init_and_runs_after_it(function: str) -> None:
    script = (
        "import gc, sys\n"
        "runs = []\n"
        "gc.callbacks.append(lambda phase, info: runs.append(info['generation']) if phase == 'start' else None)\n"
        f"import functions.handlers.{function}\n"
        "print(len(runs), gc.isenabled(), gc.get_freeze_count() > 0)\n"
    )

    assert _loaded(script, ()) == ["0 True True"]
