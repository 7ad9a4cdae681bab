"""`.ci/runtime-python`: the Python that `.venv` (make install) and CI are built with. The Lambda runtime's
3.12 when the machine has it, on PATH or under pyenv; python3 otherwise, with a note that says so."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / ".ci" / "runtime-python"


def _fake_python(path: Path, version: str | None) -> Path:
    """An executable that answers the version question like a Python of `version`, or fails like a pyenv
    shim of a version that is installed but not selected (None)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    body = f'echo "{version}"' if version else 'echo "pyenv: command not found" >&2; exit 127'
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def _choose(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - the repository's own script, fixed arguments
        [str(SCRIPT)],
        capture_output=True,
        text=True,
        check=True,
        env={
            "PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin",
            "HOME": str(tmp_path),
            "PYENV_ROOT": str(tmp_path / "pyenv"),
        },
    )


def test_python_3_12_on_the_path_is_chosen(tmp_path: Path) -> None:
    runtime = _fake_python(tmp_path / "bin" / "python3.12", "3.12")
    _fake_python(tmp_path / "bin" / "python3", "3.11")

    chosen = _choose(tmp_path)

    assert chosen.stdout.strip() == str(runtime)
    assert chosen.stderr.strip() == f"Python 3.12 (the Lambda runtime's): {runtime}"


def test_a_pyenv_version_is_found_when_the_shim_on_the_path_refuses(tmp_path: Path) -> None:
    _fake_python(tmp_path / "bin" / "python3.12", None)  # pyenv's shim: 3.12 installed, 3.11 selected
    runtime = _fake_python(tmp_path / "pyenv" / "versions" / "3.12.7" / "bin" / "python3.12", "3.12")

    assert _choose(tmp_path).stdout.strip() == str(runtime)


@pytest.mark.parametrize("misleading", ["3.13", None])
def test_without_3_12_it_falls_back_to_python3_with_a_visible_note(
    tmp_path: Path, misleading: str | None
) -> None:
    _fake_python(tmp_path / "bin" / "python3.12", misleading)  # not what its name says, or refusing
    fallback = _fake_python(tmp_path / "bin" / "python3", "3.11")

    chosen = _choose(tmp_path)

    assert chosen.stdout.strip() == str(fallback)
    assert chosen.stderr.startswith("note: no Python 3.12 found (on PATH or under pyenv); using ")
    assert str(fallback) in chosen.stderr
