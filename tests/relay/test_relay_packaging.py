"""The relay stays out of the Lambda package: nothing the functions import pulls it (or its server
libraries) in, and the Lambda's locked runtime dependencies do not include them."""

from __future__ import annotations

import ast
from pathlib import Path

import functions

RELAY_ONLY = {"relay", "starlette", "uvicorn"}
REPO = Path(functions.__file__).resolve().parent.parent


def test_no_lambda_module_imports_the_relay() -> None:
    offenders = []
    for path in sorted(Path(functions.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module]
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0
                else []
            )
            offenders += [f"{path.name}: {name}" for name in names if name.split(".")[0] in RELAY_ONLY]
    assert offenders == []


def test_the_lambda_layer_locks_no_server_library() -> None:
    locked = {
        line.split("==")[0].strip().lower()
        for line in (REPO / "requirements" / "runtime.lock").read_text().splitlines()
        if "==" in line
    }
    assert locked.isdisjoint({"starlette", "uvicorn"})
