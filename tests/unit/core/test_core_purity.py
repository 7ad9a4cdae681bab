"""The rings hold: the core is pure (rules and models: no AWS, HTTP, Powertools, os or thread imports, no clock
reads), and the services, which keep the state, import no AWS or HTTP library either: adapters implement their
ports (README, "Layout")."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import functions.core
import functions.services

CORE_DIR = Path(functions.core.__file__).parent
CORE_FILES = sorted(CORE_DIR.glob("*.py"))
SERVICES_FILES = sorted(Path(functions.services.__file__).parent.glob("*.py"))
AWS_AND_HTTP = {"boto3", "botocore", "httpx", "aws_lambda_powertools"}
FORBIDDEN_MODULES = AWS_AND_HTTP | {"os", "time", "datetime", "threading", "concurrent", "asyncio"}
"""State (locks, executors, background work) lives in `functions/services/`."""
CLOCK_CALLS = {
    "time",
    "time_ns",
    "monotonic",
    "monotonic_ns",
    "perf_counter",
    "perf_counter_ns",
    "now",
    "utcnow",
    "today",
}


def imported_modules(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__":
            names.add("__import__")
    return names


def test_all_core_modules_are_checked() -> None:
    names = {path.stem for path in CORE_FILES}
    assert {"decision", "overrides", "quota", "model", "ports", "errors"} <= names


@pytest.mark.parametrize("path", CORE_FILES, ids=lambda p: p.name)
def test_core_module_imports_nothing_impure(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    assert imported_modules(tree).isdisjoint(FORBIDDEN_MODULES | {"__import__", "importlib"})


@pytest.mark.parametrize("path", SERVICES_FILES, ids=lambda p: p.name)
def test_services_module_imports_no_aws_or_http_library(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    assert imported_modules(tree).isdisjoint(AWS_AND_HTTP | {"__import__", "importlib"})


def test_all_services_modules_are_checked() -> None:
    assert {"ports", "lookup", "probe_run"} <= {path.stem for path in SERVICES_FILES}


@pytest.mark.parametrize("path", CORE_FILES, ids=lambda p: p.name)
def test_core_module_reads_no_clock(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    clock_reads = [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in CLOCK_CALLS
    ]
    assert clock_reads == []


def test_importing_the_core_and_the_services_loads_no_aws_or_http_library() -> None:
    modules = ", ".join(
        f"'functions.{path.parent.name}.{path.stem}'"
        for path in (*CORE_FILES, *SERVICES_FILES)
        if path.stem != "__init__"
    )
    script = (
        "import importlib, sys\n"
        f"for name in ['functions.core', 'functions.services', {modules}]: importlib.import_module(name)\n"
        "print(','.join(sorted(m for m in {'boto3', 'botocore', 'httpx', 'aws_lambda_powertools'} if m in sys.modules)))\n"
    )
    result = subprocess.run(  # noqa: S603 - our own interpreter running a fixed script
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == ""
