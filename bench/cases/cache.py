"""`cache`: the answer caches (docs/design.md, "Caching"), measured.

- `cache.hit_overhead_ratio`: a lookup answered from the function's cache, through
  `functions.handlers.api.lambda_handler` (the `handler` case's container: moto, the instant upstream), over
  what the same handler adds to the upstream call on a miss (a lookup of a query not seen before, stored as it
  is answered, minus the bare `DirectTransport.fetch` of the same request), each in the calling thread's CPU
  time per lookup, in interleaved batches; medians. A hit does less work than a miss: target ≤ 1.0.
- `cache.bytes_at_cap`: the container's `ResponseCache` with the default byte cap (and its entry cap raised to
  FILL, so the bytes bind) filled through `get_or_fetch` with FILL distinct answers of the lookup's real size;
  its bytes over the cap (target within 10 %), and the memory that stayed allocated (tracemalloc) over the cap
  (target ≤ 1.5).
- `cache.stream`: `route-health sandbox` in a subprocess with the edge and the functions' caches on; a seeded
  Zipf(ZIPF_EXPONENT) stream of STREAM_LOOKUPS lookups over UNIVERSE distinct queries of STREAM_OPERATIONS
  (each one upstream call, fresh for at least 5 minutes, so the whole stream runs inside their TTLs), at
  CONCURRENCY. Edge hits from `X-Cache`, function hits and misses from the functions' `answer cache` log
  lines, upstream calls from `/_sandbox/calls` (`direct:` and `relay:`). Target: upstream calls == the
  distinct queries the stream drew (a Zipf stream of this length does not draw every query of the universe).
"""

from __future__ import annotations

import json
import random
import re
import secrets
import tempfile
import threading
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from bench.cases import handler
from bench.common import api_event, median, on_moto, progress
from functions.adapters.direct import DirectTransport
from functions.adapters.http import new_http_client
from functions.catalog import LOOKUPS
from functions.core.model import COOLDOWN_MS, PROBE_SLOT_MS, SECOND_MS
from functions.services.response_cache import ResponseCache
from sandbox.edge import HIT, MISS
from sandbox.process import sandbox_process
from sandbox.scheduler import slot_start

if TYPE_CHECKING:
    from functions.handlers.settings import ApiSettings

WARMUP = 300
REPEATS = 15
PER_BATCH = 100
FILL = 10_000
STREAM_LOOKUPS = 10_000
UNIVERSE = 2_000
ZIPF_EXPONENT = 1.1
SEED = 20_260_101
CONCURRENCY = 8
STREAM_OPERATIONS: Sequence[tuple[str, Callable[[int], tuple[str, Mapping[str, str]]]]] = (
    ("oliveyoung_stores", lambda n: ("/api/oliveyoung/stores", {"keyword": f"명동 {n}"})),
    ("oliveyoung_goods_info", lambda n: (f"/api/oliveyoung/products/A{n:012d}", {})),
    ("oliveyoung_stock", lambda n: ("/api/oliveyoung/stock", {"productId": f"88{n:011d}"})),
    ("dtryx_movies", lambda n: ("/api/dtryx/movies", {"brandCode": "indieart", "cinemaCode": f"{n:06d}"})),
    ("seveneleven_popwords", lambda n: ("/api/seveneleven/popwords", {"label": f"w{n}"})),
)
"""(lookup, its request for the n-th query of its share): each one upstream operation, fresh ≥ 5 minutes."""
_ANSWER_CACHE_LINE = re.compile(r'"message":\s*"answer cache"')


def run() -> dict[str, Any]:
    progress("cache: a function-cache hit against the handler's overhead on a miss (moto, instant upstream)")
    with on_moto():
        hit = _hit_overhead()
    progress(
        f"cache: hit {hit['cpu_us_median']['hit']:.0f} µs CPU, {hit['hit_overhead_ratio']:.2f}× a miss's overhead"
    )
    at_cap = bytes_at_cap()
    progress(
        f"cache: {at_cap['bytes_at_cap_ratio']:.3f} of the cap stored after {FILL:,} answers; memory "
        f"{at_cap['memory_growth_ratio']:.2f}× the cap"
    )
    stream = _stream()
    progress(
        f"cache: stream of {stream['lookups']:,}: {stream['edge_hits']:,} edge hits, {stream['function_hits']:,} "
        f"function hits, {stream['upstream_calls']:,} upstream calls for {stream['distinct_queries']:,} distinct "
        f"queries in {stream['detail']['elapsed_s']} s"
    )
    return {
        "cache": {
            "hit_overhead_ratio": hit["hit_overhead_ratio"],
            "bytes_at_cap": at_cap["bytes"],
            "bytes_at_cap_ratio": at_cap["bytes_at_cap_ratio"],
            "memory_growth_ratio": at_cap["memory_growth_ratio"],
            "stream": stream,
            "detail": {"hit": hit, "at_cap": at_cap},
        }
    }


# --- a hit against the handler's overhead on a miss ---------------------------------------------------------


def _cache_on(settings: ApiSettings) -> ApiSettings:
    return settings.model_copy(update={"response_cache": "on"})


def _hit_overhead() -> dict[str, Any]:
    from functions.handlers import api
    from functions.handlers.composition import LOOKUP_FUNCTION

    services = handler._services()
    lookups = services.lookup_function(_cache_on(handler._settings()))
    assert lookups.answers is not None
    LOOKUP_FUNCTION.install(lookups)
    try:
        context = handler._WholeTimeLeft("route-health-api", timeout_s=15.0)
        spec, params = handler._request_sent_direct(lookups, handler._through_handler())  # stores QUERY
        bare_transport = DirectTransport(new_http_client(services.upstream))
        new_queries = iter(
            [
                api_event(
                    handler.ENDPOINT, {"keyword": f"{handler.QUERY['keyword']} {n}"}, now_ms=handler.NOW
                )
                for n in range(WARMUP + REPEATS * PER_BATCH)
            ]
        )  # built before the clock starts: a miss is timed from the event in
        stored_before = len(lookups.answers)

        calls = {
            "hit": handler._through_handler(),
            "miss": lambda: api.lambda_handler(next(new_queries), context),  # type: ignore[arg-type]
            "bare": lambda: bare_transport.fetch(spec, params, timeout_ms=3_000),
        }
        samples = _interleaved(calls)
        misses_stored = len(lookups.answers) - stored_before
    finally:
        LOOKUP_FUNCTION.install(None)
        lookups.close()
    assert misses_stored == WARMUP + REPEATS * PER_BATCH, misses_stored  # every miss was one, and was stored
    return hit_overhead(samples)


def _interleaved(calls: Mapping[str, Callable[[], Any]]) -> dict[str, list[tuple[float, float]]]:
    """WARMUP calls of each, then REPEATS rounds of one batch of each: (wall µs, CPU µs) per call."""
    for call in calls.values():
        for _ in range(WARMUP):
            call()
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in calls}
    for _ in range(REPEATS):
        for name, call in calls.items():
            samples[name].append(handler._time_batch(call, PER_BATCH))
    return samples


def hit_overhead(samples: Mapping[str, Sequence[tuple[float, float]]]) -> dict[str, Any]:
    """A hit's whole cost over a miss's overhead (the miss less the bare fetch of each round), in CPU time
    (the headline) and wall time; medians of the rounds."""

    def of(clock: int) -> dict[str, Any]:
        hit = [sample[clock] for sample in samples["hit"]]
        miss = [sample[clock] for sample in samples["miss"]]
        bare = [sample[clock] for sample in samples["bare"]]
        miss_overhead = median([m - b for m, b in zip(miss, bare, strict=True)])
        return {
            "hit": round(median(hit), 1),
            "miss": round(median(miss), 1),
            "bare_fetch": round(median(bare), 1),
            "miss_overhead": round(miss_overhead, 1),
            "ratio": round(median(hit) / miss_overhead, 2),
        }

    cpu, wall = of(1), of(0)
    return {
        "hit_overhead_ratio": cpu["ratio"],
        "cpu_us_median": cpu,
        "wall_us_median": wall,
        "repeats": len(samples["hit"]),
        "note": "a hit: the same query each time; a miss: a new query each time, stored as it is answered",
    }


# --- the byte cap ---------------------------------------------------------------------------------------------


def bytes_at_cap(fill: int = FILL) -> dict[str, Any]:
    """FILL distinct answers of the lookup's real size through `get_or_fetch`, with the default byte cap."""
    from functions.handlers.settings import ApiSettings

    cap = ApiSettings.model_fields["response_cache_max_bytes"].default
    body = _real_answer_body()
    query_type = next(query for query in LOOKUPS if query.path == handler.ENDPOINT)
    clock_ms = handler.NOW
    tracemalloc.start()
    try:
        cache = ResponseCache(clock=lambda: clock_ms, max_bytes=cap, max_entries=fill)
        before, _ = tracemalloc.get_traced_memory()
        for n in range(fill):
            query = query_type.model_validate({"keyword": f"{handler.QUERY['keyword']} {n}"})
            answer = f'{{"n":{n},{body[1:]}'  # distinct, the real answer's size and characters
            cache.get_or_fetch((query.name, query.model_dump_json()), 600 * SECOND_MS, _returning(answer))
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return {
        "cap": cap,
        "bytes": cache.bytes,
        "bytes_at_cap_ratio": round(cache.bytes / cap, 4),
        "entries": len(cache),
        "answers_filled": fill,
        "answer_bytes": len(body.encode()),
        "memory_growth_bytes": after - before,
        "memory_growth_ratio": round((after - before) / cap, 3),
        "how": "tracemalloc: memory still allocated after the fill, less before it (the cache's entries, "
        "keys and answers)",
    }


def _returning(answer: str) -> Callable[[], str]:
    return lambda: answer


def _real_answer_body() -> str:
    """The lookup's real answer text (the `handler` case's container answering QUERY)."""
    from functions.handlers.composition import LOOKUP_FUNCTION

    with on_moto():
        services = handler._services()
        lookups = services.lookup_function(handler._settings())
        LOOKUP_FUNCTION.install(lookups)
        try:
            response = handler._through_handler()()
        finally:
            LOOKUP_FUNCTION.install(None)
            lookups.close()
    assert response["statusCode"] == 200, response
    body: str = response["body"]
    return body


# --- the stream through the sandbox's edge and functions ------------------------------------------------------


def zipf_stream(*, seed: int, universe: int, length: int, exponent: float) -> list[int]:
    """`length` query numbers in [0, universe), number k drawn with weight 1 / (k + 1) ** exponent."""
    weights = [1 / (rank + 1) ** exponent for rank in range(universe)]
    return random.Random(seed).choices(range(universe), weights=weights, k=length)


def stream_queries(universe: int, seed: int) -> list[tuple[str, str, Mapping[str, str]]]:
    """`universe` distinct (lookup, path, params), shared out between STREAM_OPERATIONS, in a seeded order (so
    no operation owns the head of the distribution)."""
    queries = [
        (name, *request(n // len(STREAM_OPERATIONS)))
        for n, (name, request) in (
            (n, STREAM_OPERATIONS[n % len(STREAM_OPERATIONS)]) for n in range(universe)
        )
    ]
    random.Random(seed).shuffle(queries)
    return queries


@dataclass(frozen=True)
class StreamCounts:
    lookups: int
    distinct_queries: int
    edge_hits: int
    edge_misses: int
    function_hits: int
    function_misses: int
    upstream_calls: int
    errors: int


def stream_summary(counts: StreamCounts) -> dict[str, Any]:
    """What the stream shows: where each lookup was answered, and whether every distinct query reached an
    upstream exactly once."""
    return {
        "lookups": counts.lookups,
        "distinct_queries": counts.distinct_queries,
        "edge_hits": counts.edge_hits,
        "function_hits": counts.function_hits,
        "upstream_calls": counts.upstream_calls,
        "no_upstream_share": round(1 - counts.upstream_calls / counts.lookups, 4),
        "upstream_calls_equal_distinct_queries": counts.upstream_calls == counts.distinct_queries,
        "every_lookup_accounted": counts.edge_hits + counts.function_hits + counts.function_misses
        == counts.lookups,
        "edge_misses": counts.edge_misses,
        "function_misses": counts.function_misses,
        "errors": counts.errors,
    }


def _stream() -> dict[str, Any]:
    queries = stream_queries(UNIVERSE, SEED)
    stream = zipf_stream(seed=SEED, universe=UNIVERSE, length=STREAM_LOOKUPS, exponent=ZIPF_EXPONENT)
    freshest = min(query.freshness.max_age for query in LOOKUPS if query.name in dict(STREAM_OPERATIONS))
    progress(
        f"cache: stream of {STREAM_LOOKUPS:,} lookups (Zipf {ZIPF_EXPONENT}, {UNIVERSE:,} queries, "
        f"{len(set(stream)):,} drawn) through route-health sandbox at concurrency {CONCURRENCY}"
    )
    with (
        tempfile.TemporaryDirectory(prefix="route-health-bench-") as workdir,
        sandbox_process(
            Path(workdir), health_check_secret=secrets.token_urlsafe(24), settings={"RESPONSE_CACHE": "on"}
        ) as started,
        httpx.Client(base_url=started.url, timeout=60) as control,
    ):
        _settle(control)
        log_from = started.stdout.stat().st_size
        calls_before = _calls(control)
        began = time.perf_counter()
        answers = _run_stream(started.url, [queries[number] for number in stream])
        elapsed_s = time.perf_counter() - began
        calls_after = _calls(control)
        outcomes = _answer_cache_outcomes(started.stdout.read_bytes()[log_from:])
    delta = {name: calls_after[name] - calls_before.get(name, 0) for name in calls_after}
    counts = StreamCounts(
        lookups=len(answers),
        distinct_queries=len(set(stream)),
        edge_hits=sum(1 for _, cache in answers if cache == HIT),
        edge_misses=sum(1 for _, cache in answers if cache == MISS),
        function_hits=outcomes["hit"],
        function_misses=outcomes["miss"],
        upstream_calls=sum(n for name, n in delta.items() if name.startswith(("direct:", "relay:"))),
        errors=sum(1 for status, _ in answers if status != 200),
    )
    return {
        **stream_summary(counts),
        "detail": {
            "query_universe": UNIVERSE,
            "zipf_exponent": ZIPF_EXPONENT,
            "seed": SEED,
            "operations": [name for name, _ in STREAM_OPERATIONS],
            "concurrency": CONCURRENCY,
            "elapsed_s": round(elapsed_s, 1),
            "inside_ttls": elapsed_s < freshest,
            "shortest_max_age_s": freshest,
            "probe_runs_during_stream": delta.get("relay-health:oliveyoung", 0),
            "upstream_calls_by_target": {
                name: n for name, n in sorted(delta.items()) if n and name.startswith(("direct:", "relay:"))
            },
            "note": "function hits are edge misses the function already held: concurrent misses of one query "
            "(the edge does not collapse them; the sandbox runs one lookup at a time per function, as one "
            "container)",
        },
    }


def _settle(control: httpx.Client) -> None:
    """1 s past a slot start and every cooldown (no scheduled probe falls inside the stream), then until the
    lookup container's snapshot has the probe's verdicts (lookups go direct), asked with queries of a lookup
    the stream does not use."""
    now = control.get("/_sandbox/clock").json()["now"]
    control.post(
        "/_sandbox/clock", json={"advanceMs": slot_start(now + COOLDOWN_MS) + PROBE_SLOT_MS + 1_000 - now}
    ).raise_for_status()
    deadline = time.monotonic() + 15
    for attempt in range(10_000):
        before = _calls(control)
        control.get("/api/seveneleven/stores", params={"keyword": f"settle {attempt}"}).raise_for_status()
        if _calls(control)["direct:seven-store"] > before["direct:seven-store"]:
            return
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    raise RuntimeError("the sandbox's lookup container never went direct")


def _run_stream(url: str, requests: Sequence[tuple[str, str, Mapping[str, str]]]) -> list[tuple[int, str]]:
    """(status, X-Cache) of every lookup, CONCURRENCY at a time."""
    answers: list[tuple[int, str]] = []
    lock = threading.Lock()
    numbers: Iterator[int] = iter(range(len(requests)))

    def work() -> None:
        with httpx.Client(base_url=url, timeout=60) as http:
            while True:
                with lock:
                    number = next(numbers, None)
                if number is None:
                    return
                _, path, params = requests[number]
                response = http.get(path, params=dict(params))
                with lock:
                    answers.append((response.status_code, response.headers.get("x-cache", "")))

    workers = [threading.Thread(target=work) for _ in range(CONCURRENCY)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return answers


def _answer_cache_outcomes(log: bytes) -> Counter[str]:
    """The functions' `answer cache` log lines (Powertools JSON), counted by outcome."""
    outcomes: Counter[str] = Counter()
    for line in log.decode(errors="replace").splitlines():
        if line.startswith("{") and _ANSWER_CACHE_LINE.search(line):
            outcomes[json.loads(line)["outcome"]] += 1
    return outcomes


def _calls(control: httpx.Client) -> dict[str, int]:
    counts: dict[str, int] = control.get("/_sandbox/calls").json()
    return counts
