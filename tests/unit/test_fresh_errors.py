"""Every raise makes a fresh exception object (docs/design.md, "Abuse").

An exception instance kept in a module and raised again chains each raise's frames onto its `__traceback__`:
everything those frames hold (a request's event and body, a presented secret) stays alive as long as the warm
process. This check reads the source of every package and fails on a `raise` of a module-level name bound to a
call (`UNAUTHORIZED = SomeError(...)`), in its own module or imported from another one.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("functions", "relay", "ops_cli", "sandbox")


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            yield name, ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _call_bound_globals(module: ast.Module) -> set[str]:
    """Module-level names assigned the result of a call: objects made once, at import."""
    names: set[str] = set()
    for statement in module.body:
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call):
            names.update(target.id for target in statement.targets if isinstance(target, ast.Name))
        elif (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.value, ast.Call)
            and isinstance(statement.target, ast.Name)
        ):
            names.add(statement.target.id)
    return names


def _imported_names(module: ast.Module, made_once: dict[str, set[str]]) -> set[str]:
    """The names this module imports from project modules that bind them to a call."""
    return {
        alias.asname or alias.name
        for statement in ast.walk(module)
        if isinstance(statement, ast.ImportFrom) and statement.module in made_once
        for alias in statement.names
        if alias.name in made_once[statement.module]
    }


def _imported_modules(module: ast.Module, made_once: dict[str, set[str]]) -> dict[str, str]:
    """The project modules this module imports whole: the name it uses -> the module."""
    return {
        alias.asname or alias.name: alias.name
        for statement in ast.walk(module)
        if isinstance(statement, ast.Import)
        for alias in statement.names
        if alias.name in made_once
    }


def _raised_names(module: ast.Module) -> Iterator[tuple[str | None, str, int]]:
    """`raise NAME` and `raise module.NAME`, with `from ...` or not, as (module alias, NAME, line); a call,
    `raise NAME(...)`, makes a fresh object."""
    for node in ast.walk(module):
        if not isinstance(node, ast.Raise):
            continue
        if isinstance(node.exc, ast.Name):
            yield None, node.exc.id, node.lineno
        elif isinstance(node.exc, ast.Attribute) and isinstance(node.exc.value, ast.Name):
            yield node.exc.value.id, node.exc.attr, node.lineno


def raised_instances(modules: list[tuple[str, ast.Module]]) -> list[str]:
    made_once = {name: _call_bound_globals(module) for name, module in modules}
    found = []
    for name, module in modules:
        shared = made_once[name] | _imported_names(module, made_once)
        imported = _imported_modules(module, made_once)
        for owner, raised, line in _raised_names(module):
            bound = shared if owner is None else made_once.get(imported.get(owner, ""), set())
            if raised in bound:
                found.append(f"{name}:{line} raise {raised if owner is None else f'{owner}.{raised}'}")
    return found


def test_no_package_raises_an_exception_object_made_once() -> None:
    assert raised_instances(list(_modules())) == []


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("REFUSED = ValueError('no')\ndef f():\n    raise REFUSED\n", ["m:3 raise REFUSED"]),
        ("REFUSED = ValueError('no')\ndef f():\n    raise REFUSED from None\n", ["m:3 raise REFUSED"]),
        ("REFUSED: Exception = ValueError('no')\ndef f():\n    raise REFUSED\n", ["m:3 raise REFUSED"]),
        ("REFUSED = partial(ValueError, 'no')\ndef f():\n    raise REFUSED()\n", []),
        ("def f():\n    raise ValueError('no')\n", []),
        ("def f(error):\n    raise error\n", []),
    ],
)
def test_the_check_finds_a_raised_module_level_instance(source: str, found: list[str]) -> None:
    assert raised_instances([("m", ast.parse(source))]) == found


def test_the_check_follows_an_import_from_another_module() -> None:
    errors = ast.parse("REFUSED = ValueError('no')\n")
    user = ast.parse("from errors import REFUSED\ndef f():\n    raise REFUSED\n")
    whole = ast.parse("import errors\ndef f():\n    raise errors.REFUSED from None\n")

    assert raised_instances([("errors", errors), ("user", user), ("whole", whole)]) == [
        "user:3 raise REFUSED",
        "whole:3 raise errors.REFUSED",
    ]
