"""`make bench`: run every benchmark case, write bench/results/latest.json and latest.md, print the table.

Cases run one after another (they share two cores); each prints progress lines on stderr. The whole run
takes about 2-4 minutes on a 2-core machine (limit: 10). `python -m bench.run CASE...` (e.g. `quota`)
reruns only those cases and merges their fields into the latest results (`run.reruns` says which and when).
The monthly bill (`bench/cases/cost.py`) is priced last, from the merged results.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import REGION, progress
from infra.environment import POWERTOOLS_ENVIRONMENT

RESULTS = Path(__file__).resolve().parent / "results"
REQUIRED_FIELDS = (
    "decision_ns_median",
    "handler_overhead_us_median",
    "handler_overhead_ratio_vs_bare_resolver",
    "store_calls_on_request_path",
    "cold_import_ms_median",
    "boto3_import_ms_median",
    "cold_import_ratio_vs_boto3",
    "cold_import_cpu_ratio_vs_boto3",
    "cold_init_ratio",
    "cold_init_cpu_ratio",
    "probe_run_ms",
    "probe_max_in_flight",
    "sandbox_load",
    "cost_per_day",
    "quota",
    "cost_per_month",
    "metric_series",
    "relay",
    "mcp",
    "cache",
    "compare",
)


def _prepare_environment() -> None:
    """An AWS-less, offline environment: moto answers every AWS call made in this process."""
    for name in (
        "AWS_PROFILE",
        "ROUTE_HEALTH_TABLE",
        "ROUTE_HEALTH_SECRET_ID",
        "POWERTOOLS_METRICS_DISABLED",
    ):
        os.environ.pop(name, None)
    os.environ.update(
        {
            "AWS_DEFAULT_REGION": REGION,
            "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": "bench",
            **POWERTOOLS_ENVIRONMENT,
        }
    )


def main(argv: list[str]) -> int:
    _prepare_environment()
    from bench.cases import (
        cache,
        cold_import,
        cold_init,
        compare,
        cost,
        decision,
        handler,
        mcp,
        probe_run,
        quota,
        relay,
        sandbox_load,
    )
    from bench.report import markdown, table

    cases = {
        module.__name__.rsplit(".", 1)[-1]: module
        for module in (
            decision,
            handler,
            probe_run,
            cold_import,
            cold_init,
            sandbox_load,
            quota,
            relay,
            mcp,
            cache,
            compare,
        )
    }
    unknown = [name for name in argv if name not in cases]
    if unknown:
        raise SystemExit(f"bench: unknown cases {unknown}; choose from {', '.join(cases)}")
    started = time.monotonic()
    results: dict[str, Any] = json.loads((RESULTS / "latest.json").read_text()) if argv else {}
    for name in argv or cases:
        results.update(cases[name].run())
    # The bill is priced from the merged results, so a rerun of one case reprices it too.
    progress("cost: synthesizing the stack for its alarms, dashboards, keys and memory")
    results.update(cost.monthly_bill(results, cost.stack_inventory()))
    missing = [name for name in REQUIRED_FIELDS if name not in results]
    if missing:
        raise SystemExit(f"bench: missing fields {missing}")
    finished = {
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "duration_s": round(time.monotonic() - started, 1),
        # How busy the machine was (1, 5, 15 minutes): shared machines stretch wall times, less so CPU times.
        "load_average": [round(load, 2) for load in os.getloadavg()],
    }
    if argv:
        results["run"].setdefault("reruns", []).append({"cases": argv, **finished})
    else:
        results["run"] = {
            **finished,
            "python": platform.python_version(),
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "latest.json").write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    (RESULTS / "latest.md").write_text(markdown(results))
    progress(f"wrote {RESULTS / 'latest.json'} and latest.md in {finished['duration_s']} s")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
