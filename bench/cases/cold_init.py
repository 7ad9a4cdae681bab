"""Cold INIT of the three functions as Lambda runs it, against a baseline function: import plus container build.

Each sample is one new `python -c` process with `AWS_LAMBDA_FUNCTION_NAME` set, so importing a handler module
builds its container as in a Lambda INIT (`composition.prepare_at_init`): settings, the HTTP clients, the
DynamoDB and Secrets Manager clients, the secret read and, for the lookup function, the bounded snapshot
prefetch, all against moto's server on 127.0.0.1 holding the table, fresh verdicts and the secret. The
baseline is the smallest useful function: `import boto3` and one DynamoDB client. Targets are interleaved
round-robin; medians and ratios come from the same run (bytecode cached, as in a deployed package).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import boto3
import httpx
from moto.moto_server.threaded_moto_server import ThreadedMotoServer

from bench.cases.cold_import import lambda_like_environment, medians_of, timed_ms
from bench.common import BENCH_SECRET_VALUES, REGION, TABLE_NAME, all_healthy_checks, progress
from functions.adapters.dynamo_store import DynamoVerdictStore, table_definition

SAMPLES = 11
"""Fresh processes per target."""
SECRET_ID = "route-health/bench-init"  # noqa: S105 - a secret name, not a value
TARGETS = {
    "api": "import functions.handlers.api",
    "probe": "import functions.handlers.probe",
    "ops": "import functions.handlers.ops",
    "baseline": "import boto3; boto3.client('dynamodb')",
}


@contextmanager
def _embedded_store() -> Iterator[str]:
    """moto's server on 127.0.0.1 with the table, healthy verdicts written 30 s ago and the secret."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        url = f"http://{host}:{port}"
        # moto's backends are the process's: empty what an earlier case (or store) left there.
        httpx.post(f"{url}/moto-api/reset").raise_for_status()
        # botocore's default timeouts, not the store's: on a loaded machine a retried CreateTable found its table.
        dynamodb = boto3.client("dynamodb", region_name=REGION, endpoint_url=url)  # bench.run's credentials
        dynamodb.create_table(**table_definition(TABLE_NAME))
        now_ms = int(time.time() * 1000)
        routes, relays = all_healthy_checks(now_ms - 30_000)
        DynamoVerdictStore(TABLE_NAME, dynamodb).write_checks(routes, relays, now=now_ms - 30_000)
        boto3.client("secretsmanager", region_name=REGION, endpoint_url=url).create_secret(
            Name=SECRET_ID, SecretString=json.dumps(dict(BENCH_SECRET_VALUES))
        )
        yield url
    finally:
        server.stop()


def _environment(endpoint_url: str, function: str) -> dict[str, str]:
    environment = lambda_like_environment()
    environment.update(
        {
            "AWS_LAMBDA_FUNCTION_NAME": f"route-health-{function}",
            "AWS_ENDPOINT_URL": endpoint_url,
            "AWS_ACCESS_KEY_ID": "bench",
            "AWS_SECRET_ACCESS_KEY": "bench",
            "ROUTE_HEALTH_TABLE": TABLE_NAME,
            "ROUTE_HEALTH_SECRET_ID": SECRET_ID,
            "OY_RELAY_URL": "http://127.0.0.1:9/relays/oliveyoung",
            "CONVENIENCE_RELAY_URL": "http://127.0.0.1:9/relays/convenience",
            "DTRYX_RELAY_URL": "http://127.0.0.1:9/relays/dtryx",
        }
    )
    return environment


def sampled(
    targets: Mapping[str, str], environments: Mapping[str, dict[str, str]], label: str
) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) ms of `SAMPLES` rounds, each one fresh process per target in turn (noise hits all alike)."""
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in targets}
    for round_number in range(SAMPLES):
        for name, code in targets.items():
            samples[name].append(timed_ms(code, environments[name]))
        if round_number % 5 == 4:
            progress(f"{label}: {round_number + 1}/{SAMPLES} rounds of {len(targets)} fresh processes")
    return samples


def run() -> dict[str, Any]:
    progress("cold init: moto's server with the table, verdicts and secret on 127.0.0.1")
    with _embedded_store() as endpoint_url:
        environments = {name: _environment(endpoint_url, name) for name in TARGETS}
        for name, code in TARGETS.items():  # warm the OS file cache, as the cold import case does
            timed_ms(code, environments[name])
        samples = sampled(TARGETS, environments, "cold init")
    medians, cpu = medians_of(samples)
    ratios = {name: round(medians[name] / medians["baseline"], 2) for name in ("api", "probe", "ops")}
    cpu_ratios = {name: round(cpu[name] / cpu["baseline"], 2) for name in ("api", "probe", "ops")}
    progress(f"cold init: {medians} ms; ratios {ratios}; CPU ratios {cpu_ratios}")
    return {
        "cold_init_ms_median": {name: medians[name] for name in ("api", "probe", "ops")},
        "baseline_init_ms_median": medians["baseline"],
        "cold_init_ratio": max(ratios.values()),
        "cold_init_cpu_ratio": max(cpu_ratios.values()),
        "cold_init_detail": {
            "ratio_per_function": ratios,
            "cpu_ms_median": cpu,
            "cpu_ratio_per_function": cpu_ratios,
            "baseline": TARGETS["baseline"],
            "samples_per_target": SAMPLES,
            "all_samples_ms": {name: [round(w, 1) for w, _ in values] for name, values in samples.items()},
            "conditions": "AWS_LAMBDA_FUNCTION_NAME set (the container is built at import), moto server on "
            "127.0.0.1, call tracing off (the default deploy)",
        },
    }
