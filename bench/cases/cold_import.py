"""Cold imports of the three Lambda handler modules, each in fresh interpreters, against `import boto3`.

Each sample is one new `python -c` process that times only the import statement (interpreter start-up is
excluded: Lambda pays it whatever the code). Targets are interleaved round-robin so that machine noise hits
all of them alike; the medians and the ratio to boto3 come from the same run. The environment is the one a
Lambda sees (Powertools settings, a table name), with no bytecode writing so every run reads the same .pyc.
`-X importtime` of the API handler names the heaviest modules (self time, first import only).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.common import REGION, median, progress
from infra.environment import POWERTOOLS_ENVIRONMENT

SAMPLES = 15
"""Fresh processes per target."""
TARGETS = {
    "api": "functions.handlers.api",
    "probe": "functions.handlers.probe",
    "ops": "functions.handlers.ops",
    "boto3": "boto3",
}
TIMER = "import time; t = time.perf_counter(); import {module}; print((time.perf_counter() - t) * 1000)"
ROOT = Path(__file__).resolve().parents[2]


def lambda_like_environment() -> dict[str, str]:
    keep = {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "VIRTUAL_ENV"}
    environment = {name: value for name, value in os.environ.items() if name in keep}
    environment.update(
        {
            "AWS_DEFAULT_REGION": REGION,
            "AWS_REGION": REGION,
            "ROUTE_HEALTH_TABLE": "route-health",
            **POWERTOOLS_ENVIRONMENT,
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    return environment


def import_ms(module: str, environment: dict[str, str]) -> float:
    result = subprocess.run(
        [sys.executable, "-c", TIMER.format(module=module)],
        capture_output=True,
        text=True,
        env=environment,
        cwd=ROOT,
        check=True,
    )
    return float(result.stdout.strip().splitlines()[-1])


def heaviest_imports(module: str, environment: dict[str, str], top: int = 12) -> list[dict[str, Any]]:
    """Top-level packages by the time their first import took under `module` (`-X importtime`, one run)."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        env=environment,
        cwd=ROOT,
        check=True,
    )
    packages: list[tuple[str, float]] = []
    for line in result.stderr.splitlines():
        parts = line.split("|")
        if len(parts) != 3 or not parts[0].startswith("import time:") or "self [us]" in line:
            continue
        name = parts[2].strip()
        if "." not in name:
            packages.append((name, round(int(parts[1]) / 1000, 1)))
    heaviest = sorted(packages, key=lambda row: row[1], reverse=True)[:top]
    return [{"module": name, "cumulative_ms": ms} for name, ms in heaviest]


def run() -> dict[str, Any]:
    environment = lambda_like_environment()
    writes_bytecode = {k: v for k, v in environment.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for module in TARGETS.values():  # warm the OS file cache and write the .pyc files once (as a build would)
        import_ms(module, writes_bytecode)
    samples: dict[str, list[float]] = {name: [] for name in TARGETS}
    for round_number in range(SAMPLES):
        for name, module in TARGETS.items():
            samples[name].append(import_ms(module, environment))
        if round_number % 5 == 4:
            progress(f"cold import: {round_number + 1}/{SAMPLES} rounds of {len(TARGETS)} fresh processes")
    medians = {name: round(median(values), 1) for name, values in samples.items()}
    handlers = {name: medians[name] for name in ("api", "probe", "ops")}
    ratio = max(handlers.values()) / medians["boto3"]
    progress(f"cold import: api {medians['api']} ms, boto3 {medians['boto3']} ms, ratio {ratio:.2f}")
    return {
        "cold_import_ms_median": handlers,
        "boto3_import_ms_median": medians["boto3"],
        "cold_import_ratio_vs_boto3": round(ratio, 2),
        "cold_import_detail": {
            "ratio_per_function": {name: round(ms / medians["boto3"], 2) for name, ms in handlers.items()},
            "samples_per_target": SAMPLES,
            "all_samples_ms": {name: [round(v, 1) for v in values] for name, values in samples.items()},
            "api_heaviest_imports": heaviest_imports(TARGETS["api"], environment),
        },
    }
