"""`python -m bench.breakdown`: what each part of a warm lookup costs in place (not part of `make bench`).

The `handler` case's setup (moto, the instant upstream, a fresh snapshot, the daily quota on). Each variant
takes one part out of the real handler (a no-op, or an answer computed once) and is timed in batches of
`PER_BATCH` lookups interleaved with the unchanged handler, in a shuffled order each round, in the calling
thread's CPU time, with the garbage collector's INIT objects frozen (a full collection landing in one batch
would otherwise swamp it). A part's cost in place is the median over rounds of (handler - variant); the A/A
variant (nothing taken out) shows the noise. The same run times the references of the `handler` case: the
bare fetch, the bare Powertools route with query validation, and that route making the same upstream call.
"""

from __future__ import annotations

import contextlib
import gc
import os
import random
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

from pydantic_core import to_json

from bench.cases import handler as case
from bench.common import median, on_moto, progress
from functions.adapters.direct import DirectTransport
from functions.adapters.http import new_http_client
from functions.catalog.oliveyoung import OliveyoungProductsQuery

ROUNDS = 151
PER_BATCH = 20
WARMUP = 100

Patch = Callable[[], contextlib.AbstractContextManager[Any]]


def _patches(*patches: tuple[object, str, object]) -> Patch:
    """Each (target, attribute, replacement) in place for the duration of a batch."""

    @contextlib.contextmanager
    def applied() -> Iterator[None]:
        with contextlib.ExitStack() as stack:
            for target, attribute, replacement in patches:
                stack.enter_context(mock.patch.object(target, attribute, replacement))
            yield

    return applied


@contextlib.contextmanager
def _unchanged() -> Iterator[None]:
    yield


Variants = dict[str, tuple[Callable[[], Any], Patch]]


def run() -> list[tuple[str, float, float | None]]:
    """(variant, CPU µs per call, the part's cost in place: handler minus variant) for every variant."""
    from functions.handlers.composition import LOOKUP_FUNCTION

    services = case._services()
    lookups = services.lookup_function(case._settings())
    LOOKUP_FUNCTION.install(lookups)
    try:
        through = case._through_handler()
        variants = _variants(services, lookups, through)
        _warm_up(variants)
        samples = _sampled(variants)
    finally:
        LOOKUP_FUNCTION.install(None)
        lookups.close()
    handler = samples["handler"]
    return [
        (
            name,
            round(median(values), 1),
            round(median([a - b for a, b in zip(handler, values, strict=True)]), 1)
            if call is through and name != "handler"
            else None,
        )
        for name, (call, _) in variants.items()
        for values in [samples[name]]
    ]


def _variants(services: Any, lookups: Any, through: Callable[[], Any]) -> Variants:
    """The real handler, the bare references, and the handler with one part taken out by each patch."""
    from functions.catalog.spec import OperationSpec
    from functions.handlers import api, telemetry
    from functions.handlers.telemetry import logger
    from functions.services.routing import Router

    spec, params = case._request_sent_direct(lookups, through)
    bare = DirectTransport(new_http_client(services.upstream))

    def bare_fetch() -> Any:
        return bare.fetch(spec, params, timeout_ms=3_000)

    fetched = bare_fetch()
    data = spec.normalize(fetched)
    body = to_json({"success": True, "data": data}).decode()
    query = OliveyoungProductsQuery.model_validate(case.QUERY)

    return {
        "handler": (through, _unchanged),
        "A/A: nothing taken out": (through, _unchanged),
        "bare fetch": (bare_fetch, _unchanged),
        "bare Powertools route (query validation)": (case._bare_resolver({}), _unchanged),
        "bare route making the same upstream call": (case._bare_resolver({}, bare_fetch), _unchanged),
        "no logger: inject_lambda_context, correlation id": (
            through,
            _patches(
                (api, "lambda_handler", api.lambda_handler.__wrapped__),  # type: ignore[attr-defined]
                (logger, "set_correlation_id", lambda value: None),
            ),
        ),
        "no inject_lambda_context": (
            through,
            _patches((api, "lambda_handler", api.lambda_handler.__wrapped__)),  # type: ignore[attr-defined]
        ),
        "no metrics at all (SnapshotAge, Lookups: their EMF lines)": (
            through,
            _patches((telemetry, "emit_metric", lambda *_, **__: None)),
        ),
        "no daily quota (check and headers)": (through, _patches((lookups, "limited_lookups", None))),
        "no router (decision, snapshot peek, events)": (
            through,
            _patches((Router, "route_operation", _direct_only)),
        ),
        "no normalizing (the answer's data computed once)": (
            through,
            _patches((OperationSpec, "normalize", lambda self, validated: data)),
        ),
        "no envelope (its JSON computed once)": (
            through,
            _patches((api, "to_json", lambda envelope: body.encode())),
        ),
        "no upstream call (the validated answer computed once)": (
            through,
            _patches((lookups.upstreams.direct, "fetch", lambda spec, params, timeout_ms: fetched)),
        ),
        "no Powertools resolver (the route's function called directly)": (
            through,
            _patches((api.app, "resolve", _without_resolver(query))),
        ),
    }


def _direct_only(self: Any, key: Any, direct: Callable[[int], Any], relay: Any, **_: Any) -> Any:
    """`Router.route_operation` without the router: the direct call, at once."""
    return direct(3_000)


def _without_resolver(query: Any) -> Callable[[dict[str, Any], Any], dict[str, Any]]:
    """`app.resolve` without Powertools' resolver: the route's answer, built directly."""
    from aws_lambda_powertools.event_handler import content_types
    from aws_lambda_powertools.event_handler.api_gateway import BaseRouter

    from functions.handlers import api

    def no_resolver(event: dict[str, Any], context: Any) -> dict[str, Any]:
        BaseRouter.lambda_context = context  # what the lookup's budget reads
        return {
            "statusCode": 200,
            "body": api._answer(query).body,
            "isBase64Encoded": False,
            "headers": {"Content-Type": content_types.APPLICATION_JSON},
            "cookies": [],
        }

    return no_resolver


def _warm_up(variants: Variants) -> None:
    for name, (call, patch) in variants.items():
        with patch():
            for _ in range(WARMUP):
                answer = call()
            if isinstance(answer, dict):
                assert answer["statusCode"] == 200, (name, answer)


def _sampled(variants: Variants) -> dict[str, list[float]]:
    """CPU µs per call of each variant, one sample per round; the rounds shuffle the order."""
    gc.collect()
    gc.freeze()
    samples: dict[str, list[float]] = {name: [] for name in variants}
    order = list(variants.items())
    for _ in range(ROUNDS):
        random.shuffle(order)
        for name, (call, patch) in order:
            with patch():
                started = time.thread_time()
                for _ in range(PER_BATCH):
                    call()
                samples[name].append((time.thread_time() - started) * 1e6 / PER_BATCH)
    gc.unfreeze()
    return samples


def main() -> int:
    from bench.run import _prepare_environment

    _prepare_environment()
    progress(f"breakdown: {ROUNDS} rounds of {PER_BATCH} lookups per variant, shuffled (about a minute)")
    with on_moto():
        rows = run()
    timed = dict((name, us) for name, us, _ in rows)
    overhead = timed["handler"] - timed["bare fetch"]
    floor = timed["bare route making the same upstream call"] - timed["bare fetch"]
    resolver = timed["bare Powertools route (query validation)"]
    print(f"load average {os.getloadavg()[0]:.2f}; CPU µs per call, medians")
    print("| variant | µs per call | the part in place |")
    print("|---|---:|---:|")
    for name, us, part in rows:
        print(f"| {name} | {us:.0f} | {'' if part is None else f'{part:.0f}'} |")
    print(
        f"overhead {overhead:.0f} µs over the bare fetch: {overhead / floor:.2f}× the bare route's over the "
        f"same call; {overhead / resolver:.2f}× the bare route alone (where the bare route making the call reads "
        f"{floor / resolver:.2f}×)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
