"""Every error the relay raises is a fresh object: raising a module-level exception instance again would chain
each raise's traceback onto it, and with it the frames (requests, bodies, headers) of every refused call."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

RELAY = Path(__file__).parents[2] / "relay"


def shared_exceptions_raised(source: str) -> list[str]:
    """`raise NAME` where NAME is bound by a module-level assignment or spelled as a constant (`raise X` of a
    class is fine; `raise X()` makes a new object)."""
    tree = ast.parse(source)
    module_level = {
        target.id
        for statement in tree.body
        if isinstance(statement, ast.Assign | ast.AnnAssign)
        for target in (statement.targets if isinstance(statement, ast.Assign) else [statement.target])
        if isinstance(target, ast.Name)
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Raise) or node.exc is None:
            continue
        name = node.exc.id if isinstance(node.exc, ast.Name) else getattr(node.exc, "attr", None)
        if name is not None and (name in module_level or name.isupper()):
            found.append(f"line {node.lineno}: raise {name}")
    return found


@pytest.mark.parametrize("path", sorted(RELAY.glob("*.py")), ids=lambda path: path.name)
def test_no_module_level_exception_instance_is_raised(path: Path) -> None:
    assert shared_exceptions_raised(path.read_text()) == []


def test_the_check_finds_what_it_looks_for() -> None:
    source = """
REFUSED = ValueError("refused")
shared: Exception = KeyError("k")
import errors
def f(flag):
    if flag == 1:
        raise REFUSED
    if flag == 2:
        raise shared from None
    if flag == 3:
        raise errors.NOT_FOUND
    raise ValueError("fresh")
class Fresh(Exception):
    pass
def g():
    raise Fresh
"""
    assert shared_exceptions_raised(source) == [
        "line 7: raise REFUSED",
        "line 9: raise shared",
        "line 11: raise NOT_FOUND",
    ]
