"""The lookup function's INIT imports only what its lookups use: not the OpenAPI builder or the documented data
models (loaded on the first `GET /api/openapi.json`), not the probe's code, not the X-Ray SDK."""

from __future__ import annotations

import os
import subprocess
import sys

from infra.environment import CALLS_UNTRACED, POWERTOOLS_ENVIRONMENT

NOT_AT_INIT = (
    "functions.handlers.openapi",
    "functions.handlers.lookup_data",
    "functions.services.probe_run",
    "aws_xray_sdk",
)
LOADED_AFTER_IMPORT = """
import sys
import functions.handlers.api as api
print(" ".join(sorted(name for name in sys.modules if name in {names!r})))
api._openapi_document()
print(" ".join(sorted(name for name in sys.modules if name in {names!r})))
"""


def test_importing_the_lookup_function_loads_neither_the_openapi_builder_nor_probe_code() -> None:
    result = subprocess.run(  # noqa: S603 - our own interpreter running a fixed script
        [sys.executable, "-c", LOADED_AFTER_IMPORT.format(names=set(NOT_AT_INIT))],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ["PATH"], **POWERTOOLS_ENVIRONMENT, **CALLS_UNTRACED},
    )
    at_init, after_document = result.stdout.splitlines()

    assert at_init == ""
    assert after_document == "functions.handlers.lookup_data functions.handlers.openapi"
