"""Lambda code and dependencies, packaged without Docker, so `cdk synth` works offline.

The code asset is the `functions/` package with its package root kept, so handler strings read
`functions.handlers.<name>.lambda_handler`. Dependencies go into one layer built by pip for the Lambda
platform (`--platform manylinux2014_<arch> --only-binary=:all:`), cached under `.build/` by the hash of the
runtime lock file so repeated synths reuse it. The MCP function adds a second layer on top: the pins of
`requirements/mcp.lock` that the runtime lock does not have (the MCP protocol types), so no other function's
package holds them.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

from aws_cdk import aws_lambda as lambda_
from constructs import Construct

REPO_ROOT = Path(__file__).resolve().parent.parent
FUNCTIONS_PACKAGE = REPO_ROOT / "functions"
RUNTIME_LOCK = REPO_ROOT / "requirements" / "runtime.lock"
MCP_LOCK = REPO_ROOT / "requirements" / "mcp.lock"
BUILD_DIR = REPO_ROOT / ".build"

PYTHON_VERSION = "3.12"
PYTHON_TAG = PYTHON_VERSION.replace(".", "")
RUNTIME = lambda_.Runtime.PYTHON_3_12
# Graviton: cheaper per GB-second, and every locked dependency ships manylinux aarch64 wheels.
ARCHITECTURE = lambda_.Architecture.ARM_64
_PIP_PLATFORM = {"arm64": "manylinux2014_aarch64", "x86_64": "manylinux2014_x86_64"}

# A prebuilt layer directory (containing `python/`) skips the pip build: tests point it at an empty
# directory so they stay offline and fast.
LAYER_DIR_CONTEXT = "layerDir"
LAYER_DIR_ENV = "ROUTE_HEALTH_LAYER_DIR"

_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc", ".mypy_cache", ".pytest_cache")
LAMBDA_PYTHON_ENV = "LAMBDA_PYTHON"


@cache  # one lookup per synth: it starts interpreters to ask their version
def _runtime_python() -> str | None:
    """A Python of the Lambda runtime's version (for bytecode), or None when this machine has none.

    Lambda's code directories are read-only, so bytecode not shipped is recompiled on every cold start
    (measured: ~1.6 s instead of ~0.5 s to import the API handler). `LAMBDA_PYTHON` names one explicitly.
    """
    candidates = [os.environ.get(LAMBDA_PYTHON_ENV), shutil.which(f"python{PYTHON_VERSION}")]
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates += sorted(
        str(path) for path in pyenv_root.glob(f"versions/{PYTHON_VERSION}.*/bin/python{PYTHON_VERSION}")
    )
    for candidate in filter(None, candidates):
        probe = subprocess.run(  # noqa: S603 - an interpreter path, fixed arguments, no shell
            [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        if probe.returncode == 0 and probe.stdout.strip() == PYTHON_VERSION:
            return candidate
    return None


def _compile_bytecode(root: Path) -> None:
    """Ship `.pyc` files for the runtime's Python (hash-checked, so timestamps in the zip don't matter)."""
    python = _runtime_python()
    if python is None:
        print(
            f"note: no Python {PYTHON_VERSION} found (set {LAMBDA_PYTHON_ENV}); shipping sources without "
            "bytecode, so cold starts compile them",
            file=sys.stderr,
        )
        return
    subprocess.run(  # noqa: S603 - fixed argv, no shell, no user input
        [python, "-m", "compileall", "-q", "-j", "0", "--invalidation-mode", "unchecked-hash", str(root)],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip


def _tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _publish(build: Path, final: Path, digest: str) -> Path:
    """Move a finished build into place and drop older builds of the same variant; a concurrent build wins ties.

    A variant is the build's name with its content digest left out, so `code-<digest>` (bytecode, `make
    synth`) and `code-<digest>-src` (the infra tests) never delete each other, nor do layers of different
    architectures or with and without bytecode.
    """
    try:
        build.rename(final)
    except OSError:
        shutil.rmtree(build, ignore_errors=True)
    prefix, _, suffix = final.name.partition(digest)
    same_variant = re.compile(f"{re.escape(prefix)}[0-9a-f]{{{len(digest)}}}{re.escape(suffix)}")
    for old in BUILD_DIR.iterdir():
        if old != final and old.is_dir() and same_variant.fullmatch(old.name):
            shutil.rmtree(old, ignore_errors=True)
    return final


def stage_code(*, compile_bytecode: bool = True) -> Path:
    """A directory holding only `functions/` (no caches, no tests), keyed by its content."""
    suffix = "" if compile_bytecode else "-src"
    digest = _tree_digest(FUNCTIONS_PACKAGE)
    final = BUILD_DIR / f"code-{digest}{suffix}"
    if final.is_dir():
        return final
    BUILD_DIR.mkdir(exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix="code-tmp", dir=BUILD_DIR))
    shutil.copytree(FUNCTIONS_PACKAGE, build / "functions", ignore=_IGNORED)
    if compile_bytecode:
        _compile_bytecode(build)
    return _publish(build, final, digest)


def build_dependencies_layer(architecture: lambda_.Architecture = ARCHITECTURE) -> Path:
    """pip-install the runtime lock for the Lambda platform once per lock file content."""
    return _build_layer("layer", RUNTIME_LOCK.read_text(), architecture)


def build_mcp_layer(architecture: lambda_.Architecture = ARCHITECTURE) -> Path:
    """pip-install the MCP lock's pins that the runtime lock lacks, without their dependencies (the runtime
    layer has them, at the same pins: the MCP lock is compiled against it)."""
    extra = sorted(locked_pins(MCP_LOCK.read_text()) - locked_pins(RUNTIME_LOCK.read_text()))
    return _build_layer("mcp-layer", "\n".join(extra) + "\n", architecture, "--no-deps")


def locked_pins(lock: str) -> set[str]:
    """The `name==version` lines of a lock file."""
    return {line.strip() for line in lock.splitlines() if "==" in line and not line.lstrip().startswith("#")}


def _build_layer(name: str, requirements: str, architecture: lambda_.Architecture, *options: str) -> Path:
    lock_hash = hashlib.sha256(requirements.encode()).hexdigest()[:16]
    bytecode = "-pyc" if _runtime_python() else ""
    final = BUILD_DIR / f"{name}-{architecture.name}-py{PYTHON_TAG}-{lock_hash}{bytecode}"
    if final.is_dir():
        return final
    BUILD_DIR.mkdir(exist_ok=True)
    build = Path(tempfile.mkdtemp(prefix=f"{name}-tmp", dir=BUILD_DIR))
    (build / "requirements.txt").write_text(requirements)
    command = [
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
        "--platform", _PIP_PLATFORM[architecture.name], "--only-binary=:all:",
        "--python-version", PYTHON_VERSION, "--implementation", "cp", *options,
        "--target", str(build / "python"), "-r", str(build / "requirements.txt"),
    ]  # fmt: skip
    try:
        subprocess.run(command, check=True)  # noqa: S603 - fixed argv, no shell, no user input
        (build / "requirements.txt").unlink()
        _compile_bytecode(build / "python")
    except subprocess.CalledProcessError:
        shutil.rmtree(build, ignore_errors=True)
        raise
    return _publish(build, final, lock_hash)


class LambdaPackaging(Construct):
    """The shared code asset and dependencies layer every function uses."""

    def __init__(self, scope: Construct, construct_id: str) -> None:
        super().__init__(scope, construct_id)
        prebuilt = self.node.try_get_context(LAYER_DIR_CONTEXT) or os.environ.get(LAYER_DIR_ENV)
        layer_dir = Path(prebuilt) if prebuilt else build_dependencies_layer()
        if not layer_dir.is_dir():
            raise FileNotFoundError(f"dependencies layer directory {layer_dir} does not exist")
        # A test synth's prebuilt (empty) layer stands in for both layers.
        mcp_layer_dir = layer_dir if prebuilt else build_mcp_layer()

        # A prebuilt layer means a test synth: skip compiling, which needs the runtime's Python.
        self.code = lambda_.Code.from_asset(str(stage_code(compile_bytecode=not prebuilt)))
        self.dependencies = self._layer("Dependencies", layer_dir, "runtime dependencies", RUNTIME_LOCK)
        self.mcp_dependencies = self._layer(
            "McpDependencies", mcp_layer_dir, "MCP function's own dependencies", MCP_LOCK
        )

    def _layer(self, construct_id: str, directory: Path, contents: str, lock: Path) -> lambda_.LayerVersion:
        return lambda_.LayerVersion(
            self,
            construct_id,
            code=lambda_.Code.from_asset(str(directory)),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description=f"Route Health {contents} ({lock.name}, {ARCHITECTURE.name})",
        )
