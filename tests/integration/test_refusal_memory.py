"""A warm function keeps nothing from a refused or failed request (docs/design.md, "Abuse").

Each function answers a few hundred refusals and failures of every kind it gives, each call with its own fresh
event carrying a large body and large headers; after a warm-up, the memory Python still holds may grow by at
most a few MB. An exception object raised again keeps every raise's frames (the events, the presented secret)
alive through its traceback chain: that leak grew the operator function by ~54 MB per 200 refusals of 256 KB.
"""

from __future__ import annotations

import gc
import itertools
import tracemalloc
from collections.abc import Callable
from typing import Any

from functions.adapters.secrets import Secrets
from functions.core import PROBE_SLOT_MS, RelayGroup, RouteKey
from functions.handlers import api, composition, ops, probe
from functions.handlers.composition import ProbeFunction
from functions.handlers.ops import ROUTES_PATH
from sandbox.embedded_aws import REGION
from sandbox.scheduler import scheduled_event
from sandbox.simulator.faults import parse_fault
from tests.integration.conftest import NOW, OPERATOR_AUTH, Lambdas
from tests.support.catalog_fixtures import ENDPOINT_OF
from tests.support.events import api_event

BODY_BYTES = 256 * 1024
HEADER_BYTES = 8 * 1024
ALLOWED_GROWTH_BYTES = 4 * 1024 * 1024
"""A few MB: 200 leaked bodies of 256 KB would be 50 MB."""

Call = Callable[[], dict[str, Any]]


def _big_request(
    method: str, path: str, *, query: dict[str, str] | None = None, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """A fresh event with a large body and a large header (new objects every time, as a real invocation)."""
    filler = {"x-filler": "h" * HEADER_BYTES}
    return api_event(
        method, path, query=query, headers={**filler, **(headers or {})}, body="b" * BODY_BYTES, now_ms=NOW
    )


def _growth_over(calls: list[tuple[int, Call]], *, rounds: int) -> tuple[int, set[int]]:
    """Traced bytes gained over `rounds` passes of `calls` after a warm-up pass, and the statuses seen."""
    statuses: set[int] = set()

    def run(passes: int) -> None:
        for expected, call in itertools.islice(itertools.cycle(calls), passes * len(calls)):
            status = call()["statusCode"]
            assert status == expected
            statuses.add(status)

    tracemalloc.start()
    try:
        run(1)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        run(rounds)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return after - before, statuses


def test_the_lookup_function_keeps_nothing_from_refused_or_failed_lookups(lambdas: Lambdas) -> None:
    lambdas.write_verdicts()
    lambdas.loaded(lambdas.deploy(DAILY_RATE_LIMIT="1", DAILY_RATE_LIMIT_PREFIXES="/api/cu/"))
    faults = lambdas.simulator.faults
    faults.set(f"direct:{RouteKey.SEVEN_STORE}", "http-404")
    faults.set(f"direct:{RouteKey.SEVEN_GOODS}", "bad-shape")
    faults.set(f"relay:{RelayGroup.CONVENIENCE}", "bad-shape")
    faults.set(f"direct:{RouteKey.OY_PRODUCT_SEARCH}", "http-403")
    faults.set(f"relay:{RelayGroup.OLIVEYOUNG}", "http-503")
    faults.set(f"direct:{RouteKey.DTRYX_MOVIES}", "http-403")
    faults.set(
        f"relay:{RelayGroup.DTRYX}", parse_fault("respond", status=504, body="{}")
    )  # the relay timed out

    def lookup(key: RouteKey | None, query: dict[str, str] | None = None, path: str = "") -> Call:
        endpoint = ENDPOINT_OF[key] if key else None
        path = endpoint.path if endpoint else path
        query = dict(endpoint.query if endpoint else {}) | (query or {})
        return lambda: api.lambda_handler(_big_request("GET", path, query=query), lambdas.context)

    over_limit = lookup(RouteKey.CU_STORE)
    over_limit()  # the client's one lookup of the day: every later one is refused
    calls = [
        (400, lookup(RouteKey.SEVEN_STORE, {"keyword": "k" * 500})),
        (404, lookup(None, path="/api/no/such/endpoint")),
        (404, lookup(RouteKey.SEVEN_STORE)),
        (429, over_limit),
        (502, lookup(RouteKey.SEVEN_GOODS)),
        (503, lookup(RouteKey.OY_PRODUCT_SEARCH)),
        (504, lookup(RouteKey.DTRYX_MOVIES)),
    ]
    growth, statuses = _growth_over(calls, rounds=30)

    assert statuses == {400, 404, 429, 502, 503, 504}
    assert growth < ALLOWED_GROWTH_BYTES, f"{growth / 1e6:.1f} MB kept over {30 * len(calls)} calls"


def test_the_operator_function_keeps_nothing_from_refused_requests(lambdas: Lambdas) -> None:
    lambdas.write_verdicts()
    lambdas.deploy(secrets=Secrets.from_mapping({}, source="test"), table=False)
    unconfigured = lambdas.operator_function
    lambdas.deploy()
    configured = lambdas.operator_function
    wrong_secret = {"Authorization": "Bearer " + "w" * HEADER_BYTES}

    def operator(
        method: str,
        path: str = ROUTES_PATH,
        headers: dict[str, str] = OPERATOR_AUTH,
        function: ProbeFunction | None = configured,
    ) -> Call:
        def call() -> dict[str, Any]:
            composition.OPERATOR_FUNCTION.install(function)
            return ops.lambda_handler(_big_request(method, path, headers=headers), lambdas.context)

        return call

    calls: list[tuple[int, Call]] = [
        (401, operator("GET", headers=wrong_secret)),
        (401, operator("POST", headers={})),
        (400, operator("POST")),
        (400, operator("PUT", f"{ROUTES_PATH}/cu-stock/override")),
        (404, operator("PUT", f"{ROUTES_PATH}/no-such-key/override")),
        (404, operator("GET", "/api/health/nothing")),
        (503, operator("GET", function=unconfigured)),
    ]
    growth, statuses = _growth_over(calls, rounds=30)

    assert statuses == {400, 401, 404, 503}
    assert growth < ALLOWED_GROWTH_BYTES, f"{growth / 1e6:.1f} MB kept over {30 * len(calls)} calls"


def test_the_probe_function_keeps_nothing_from_failing_checks(lambdas: Lambdas) -> None:
    lambdas.deploy()
    big_failure = parse_fault("respond", status=500, body="e" * BODY_BYTES, content_type="text/html")
    for key in RouteKey:
        lambdas.simulator.faults.set(f"direct:{key}", big_failure)
    for group in RelayGroup:
        lambdas.simulator.faults.set(f"relay:{group}", big_failure)

    def next_slot() -> dict[str, Any]:
        lambdas.clock.advance(PROBE_SLOT_MS)
        result: dict[str, Any] = probe.lambda_handler(
            scheduled_event(lambdas.clock(), region=REGION), lambdas.context
        )
        return {"statusCode": 200 if result["routes"] else 500}

    growth, _ = _growth_over([(200, next_slot)], rounds=10)

    assert growth < ALLOWED_GROWTH_BYTES, f"{growth / 1e6:.1f} MB kept over 10 probe runs"
