"""Cold imports of the three Lambda handler modules, each in fresh interpreters, against `import boto3`.

Each sample is one new `python -c` process that times only the import statement (interpreter start-up is
excluded: Lambda pays it whatever the code). Targets are interleaved round-robin so that machine noise hits
all of them alike; the medians and the ratio to boto3 come from the same run. The environment is the one a
Lambda sees as deployed by default (Powertools settings, no call tracing, a table name), with no bytecode
writing so every run reads the same .pyc.
`-X importtime` of the API handler names the heaviest modules (self time, first import only).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.common import REGION, median, progress
from infra.environment import CALLS_UNTRACED, POWERTOOLS_ENVIRONMENT, RUNTIME_ENVIRONMENT

SAMPLES = 15
"""Fresh processes per target."""
TARGETS = {
    "api": "functions.handlers.api",
    "probe": "functions.handlers.probe",
    "ops": "functions.handlers.ops",
    "boto3": "boto3",
}
NOT_IN_THE_LAYER = ("click",)
"""Installed here for moto's server and uvicorn only. httpx imports its command line (click, pygments) when
click is importable, which the Lambda layer never pays: each sample makes these unimportable first."""
PRELUDE = f"import sys; sys.modules.update(dict.fromkeys({NOT_IN_THE_LAYER!r})); "
TIMER = (
    PRELUDE + "import time; w, c = time.perf_counter(), time.process_time(); {code}; "
    "print((time.perf_counter() - w) * 1000, (time.process_time() - c) * 1000)"
)
"""Wall and CPU milliseconds of `code`. CPU time is what a shared machine barely disturbs: other processes
stretch the wall time (it mixed 2.4 and 3.3 for the same code in two runs here), not the CPU the code used."""
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
            **RUNTIME_ENVIRONMENT,
            **CALLS_UNTRACED,  # as deployed by default: the probe and ops import no X-Ray SDK
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    return environment


def timed_ms(code: str, environment: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) milliseconds of `code` in a fresh interpreter."""
    result = subprocess.run(
        [sys.executable, "-c", TIMER.format(code=code)],
        capture_output=True,
        text=True,
        env=environment,
        cwd=ROOT,
        check=True,
    )
    wall, cpu = result.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def heaviest_imports(module: str, environment: dict[str, str], top: int = 12) -> list[dict[str, Any]]:
    """Top-level packages by the time their first import took under `module` (`-X importtime`, one run)."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"{PRELUDE}import {module}"],
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
        timed_ms(f"import {module}", writes_bytecode)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in TARGETS}
    for round_number in range(SAMPLES):
        for name, module in TARGETS.items():
            samples[name].append(timed_ms(f"import {module}", environment))
        if round_number % 5 == 4:
            progress(f"cold import: {round_number + 1}/{SAMPLES} rounds of {len(TARGETS)} fresh processes")
    wall, cpu = medians_of(samples)
    handlers = {name: wall[name] for name in ("api", "probe", "ops")}
    ratio = max(handlers.values()) / wall["boto3"]
    cpu_ratios = {name: round(cpu[name] / cpu["boto3"], 2) for name in ("api", "probe", "ops")}
    progress(
        f"cold import: api {wall['api']} ms, boto3 {wall['boto3']} ms, ratio {ratio:.2f}; CPU {cpu_ratios}"
    )
    return {
        "cold_import_ms_median": handlers,
        "boto3_import_ms_median": wall["boto3"],
        "cold_import_ratio_vs_boto3": round(ratio, 2),
        "cold_import_cpu_ratio_vs_boto3": max(cpu_ratios.values()),
        "cold_import_detail": {
            "ratio_per_function": {name: round(ms / wall["boto3"], 2) for name, ms in handlers.items()},
            "cpu_ms_median": cpu,
            "cpu_ratio_per_function": cpu_ratios,
            "samples_per_target": SAMPLES,
            "all_samples_ms": {name: [round(w, 1) for w, _ in values] for name, values in samples.items()},
            "api_heaviest_imports": heaviest_imports(TARGETS["api"], environment),
        },
    }


def medians_of(samples: dict[str, list[tuple[float, float]]]) -> tuple[dict[str, float], dict[str, float]]:
    """Median wall and median CPU milliseconds per target."""
    wall = {name: round(median([w for w, _ in values]), 1) for name, values in samples.items()}
    cpu = {name: round(median([c for _, c in values]), 1) for name, values in samples.items()}
    return wall, cpu
