"""`python -m bench.profile`: where the time goes (not part of `make bench`; about 1 minute).

- bench/results/profile-hot-path.txt: pyinstrument over 1,500 warm lookups through the real API handler
  (the `handler` case's setup: moto, instant upstream, fresh snapshot).
- bench/results/profile-cold-import.txt: pyinstrument over `import functions.handlers.api` in a fresh process.
- what-if cold imports (medians of fresh processes, same run): as is, and with no bytecode cache at all (what
  a Lambda package without .pyc files pays on every cold start).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.cases import handler
from bench.cases.cold_import import ROOT, lambda_like_environment
from bench.common import median, progress

RESULTS = Path(__file__).resolve().parent / "results"
SAMPLES = 7
AS_IS = "import time; t = time.perf_counter(); import functions.handlers.api; print((time.perf_counter() - t) * 1000)"
PROFILE_IMPORT = """from pyinstrument import Profiler
profiler = Profiler(interval=0.0005); profiler.start()
import functions.handlers.api
profiler.stop(); print(profiler.output_text(unicode=False, color=False))"""


def profile_hot_path() -> None:
    from pyinstrument import Profiler

    def profiled(through_handler: Any, bare: Any, data: Any) -> dict[str, Any]:
        for _ in range(200):
            through_handler()
        profiler = Profiler(interval=0.0002)
        profiler.start()
        for _ in range(1_500):
            through_handler()
        profiler.stop()
        (RESULTS / "profile-hot-path.txt").write_text(profiler.output_text(unicode=False, color=False))
        unmeasured = {
            "handler_overhead_us_median": 0.0,
            "handler_us_median": 1.0,
            "bare_us_median": 1.0,
            "bare_resolver_us_median": 1.0,
            "bare_resolver_realistic_payload_us_median": 1.0,
            "bare_route_with_fetch_overhead_us_median": 1.0,
            "overhead_ratio_vs_bare_resolver": 0.0,
            "ratio_vs_bare_route_without_the_call": 0.0,
            "floor_ratio_vs_bare_resolver": 1.0,
        }
        return {**unmeasured, "response_bytes": 0, "cpu": unmeasured}

    handler._overhead_us = profiled
    handler.STORE_COUNT_LOOKUPS = 1
    handler.run()


def _fresh_ms(code: str, environment: dict[str, str]) -> float:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment, cwd=ROOT, check=True
    )
    return float(result.stdout.strip().splitlines()[-1])


def what_if_cold_imports() -> dict[str, float]:
    environment = lambda_like_environment()
    samples: dict[str, list[float]] = {"as_is": [], "no_bytecode_cache": []}
    for _ in range(SAMPLES):
        samples["as_is"].append(_fresh_ms(AS_IS, environment))
        with tempfile.TemporaryDirectory() as empty_cache:
            samples["no_bytecode_cache"].append(
                _fresh_ms(AS_IS, {**environment, "PYTHONPYCACHEPREFIX": empty_cache})
            )
    return {name: round(median(values), 1) for name, values in samples.items()}


def main() -> int:
    RESULTS.mkdir(exist_ok=True)
    progress("profile: hot path (1,500 warm lookups through the API handler)")
    profile_hot_path()
    progress("profile: cold import of the API handler")
    out = subprocess.run(
        [sys.executable, "-c", PROFILE_IMPORT],
        capture_output=True,
        text=True,
        env=lambda_like_environment(),
        cwd=ROOT,
        check=True,
    )
    (RESULTS / "profile-cold-import.txt").write_text(out.stdout)
    progress(f"profile: what-if cold imports ({SAMPLES} fresh processes each)")
    print(what_if_cold_imports())
    return 0


if __name__ == "__main__":
    os.environ.setdefault("AWS_DEFAULT_REGION", "ap-northeast-2")
    sys.exit(main())
