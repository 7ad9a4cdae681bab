"""The sandbox's edge cache and the functions' answer caches together, over real HTTP on 127.0.0.1.

A sandbox of its own with both caches on (the shared one runs with `--no-edge-cache` and `RESPONSE_CACHE=off`,
because its tests count the upstream calls of repeated lookups). Each test uses its own keyword, so no test
meets another's entries.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator

import pytest

from functions.catalog.seveneleven import SevenElevenProductsQuery as ProductsQuery
from functions.core.model import COOLDOWN_MS, PROBE_SLOT_MS
from sandbox.edge import HIT, MISS
from sandbox.scheduler import slot_start
from tests.e2e.conftest import Sandbox, running_sandbox

PRODUCTS = "/api/seveneleven/products"  # one upstream call per lookup (seven-goods)
MAX_AGE_MS = ProductsQuery.freshness.max_age * 1000
STALE_MS = ProductsQuery.freshness.stale_while_revalidate * 1000
_keywords = itertools.count()


def keyword() -> str:
    return f"콜라 {next(_keywords)}"


def upstream_calls(delta: dict[str, int]) -> int:
    """Requests the functions made to a retailer or a relay."""
    return sum(count for name, count in delta.items() if name.startswith(("direct:", "relay:")))


@pytest.fixture(scope="module")
def cache_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    workdir = tmp_path_factory.mktemp("cache-sandbox")
    with running_sandbox(workdir, {"RESPONSE_CACHE": "on"}, edge_cache=True) as started:
        yield started
        started.assert_nothing_leaked()


@pytest.fixture
def edge(cache_sandbox: Sandbox) -> Iterator[Sandbox]:
    """No faults, the clock 1 s past a slot start and past every cooldown: no scheduled probe falls inside the
    test unless it moves the clock itself."""
    cache_sandbox.clear_faults()
    now = cache_sandbox.now()
    cache_sandbox.advance(slot_start(now + COOLDOWN_MS) + PROBE_SLOT_MS + 1_000 - now)
    yield cache_sandbox
    cache_sandbox.clear_faults()


def test_a_repeat_is_an_edge_hit_that_reaches_no_upstream(edge: Sandbox) -> None:
    query: dict[str, str | int] = {"keyword": keyword(), "size": 3}
    first, first_calls = edge.lookup(PRODUCTS, query)
    assert first.status_code == 200, first.text
    assert first.headers["x-cache"] == MISS
    assert "age" not in first.headers
    assert upstream_calls(first_calls) == 1
    edge.advance(2_000)
    second, second_calls = edge.lookup(PRODUCTS, query)
    assert second.headers["x-cache"] == HIT
    assert 2 <= int(second.headers["age"]) < MAX_AGE_MS // 1000
    assert second.content == first.content
    assert second.headers["cache-control"] == first.headers["cache-control"]
    assert second_calls == {}


def test_the_query_order_never_splits_an_entry(edge: Sandbox) -> None:
    word = keyword()
    first, _ = edge.lookup(PRODUCTS, {"keyword": word, "size": 3})
    reordered, calls = edge.lookup(PRODUCTS, {"size": 3, "keyword": word})
    assert str(reordered.request.url) != str(first.request.url)
    assert reordered.headers["x-cache"] == HIT
    assert calls == {}


def test_the_functions_cache_answers_what_the_edge_keeps_apart(edge: Sandbox) -> None:
    """`size=20` is the default: two keys at the edge, one entry in the function."""
    word = keyword()
    edge.lookup(PRODUCTS, {"keyword": word})
    with_default, calls = edge.lookup(PRODUCTS, {"keyword": word, "size": 20})
    assert with_default.status_code == 200
    assert with_default.headers["x-cache"] == MISS
    assert calls == {}


def test_past_max_age_and_its_stale_window_on_the_sandbox_clock_it_is_a_miss(edge: Sandbox) -> None:
    query = {"keyword": keyword()}
    edge.lookup(PRODUCTS, query)
    edge.advance(MAX_AGE_MS + STALE_MS)
    again, calls = edge.lookup(PRODUCTS, query)
    assert again.status_code == 200
    assert again.headers["x-cache"] == MISS
    assert upstream_calls(calls) == 1  # the function's copy expired on the same clock


def test_within_the_stale_window_the_stale_answer_is_served_and_refreshed_once(edge: Sandbox) -> None:
    query = {"keyword": keyword()}
    first, _ = edge.lookup(PRODUCTS, query)
    edge.advance(MAX_AGE_MS + 1_000)
    before = edge.calls()
    stale = edge.http.get(PRODUCTS, params=query)
    assert stale.headers["x-cache"] == HIT
    assert int(stale.headers["age"]) >= MAX_AGE_MS // 1000 + 1
    assert stale.content == first.content
    deadline = time.monotonic() + 10
    while True:  # the refresh runs after the stale answer was sent
        refreshed = edge.http.get(PRODUCTS, params=query)
        assert refreshed.headers["x-cache"] == HIT
        if int(refreshed.headers["age"]) < MAX_AGE_MS // 1000:
            break
        assert time.monotonic() < deadline, "the stale answer was never refreshed"
        time.sleep(0.05)
    assert upstream_calls(delta(edge.calls(), before)) == 1  # one refresh, however many stale answers


def delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {name: after[name] - before.get(name, 0) for name in after if after[name] != before.get(name, 0)}


@pytest.mark.parametrize(
    ("path", "params", "status"),
    [
        (PRODUCTS, {}, 400),
        (PRODUCTS, {"keyword": "콜라", "size": 0}, 400),
        ("/api/seveneleven/nothing", {}, 404),
    ],
)
def test_an_answer_the_function_refuses_is_never_a_hit(
    edge: Sandbox, path: str, params: dict[str, str | int], status: int
) -> None:
    for _ in range(2):
        answer = edge.http.get(path, params=params)
        assert answer.status_code == status
        assert answer.headers["x-cache"] == MISS
        assert answer.headers["cache-control"] == "no-store"


def test_an_upstream_failure_is_never_a_hit(edge: Sandbox) -> None:
    query = {"keyword": keyword()}
    edge.fault("direct:seven-goods", "http-500")
    edge.fault("relay:convenience", "http-500")
    for _ in range(2):
        failed, calls = edge.lookup(PRODUCTS, query)
        assert failed.status_code >= 500, failed.text
        assert failed.headers["x-cache"] == MISS
        assert upstream_calls(calls) >= 1
    edge.clear_faults()
    healed, calls = edge.lookup(PRODUCTS, query)
    assert healed.status_code == 200
    assert healed.headers["x-cache"] == MISS
    assert upstream_calls(calls) >= 1


def test_operator_and_sandbox_answers_pass_the_edge_untouched(edge: Sandbox) -> None:
    for _ in range(2):
        for answer in (
            edge.http.get("/api/health/routes", headers=edge.auth()),
            edge.http.get("/_sandbox/calls"),
            edge.http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        ):
            assert "x-cache" not in answer.headers
            assert "age" not in answer.headers


def test_without_the_edge_cache_no_answer_says_x_cache(sandbox: Sandbox) -> None:
    """The shared sandbox runs with `--no-edge-cache` (and RESPONSE_CACHE=off): every repeat reaches upstream."""
    query = {"keyword": keyword()}
    for _ in range(2):
        answer, calls = sandbox.lookup(PRODUCTS, query)
        assert answer.status_code == 200
        assert "x-cache" not in answer.headers
        assert "age" not in answer.headers
        assert upstream_calls(calls) >= 1
