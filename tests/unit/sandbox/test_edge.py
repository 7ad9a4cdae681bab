"""The sandbox's edge cache (sandbox/edge.py): what it keeps, for how long on the sandbox clock, what it says.

Also over real HTTP through the sandbox gateway: which paths it caches, and that a hit invokes nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from sandbox import cli
from sandbox.clock import SandboxClock
from sandbox.edge import HIT, MISS, X_CACHE, Answer, EdgeCache, cache_key, cached_path, lifetime
from tests.support.clock import ManualClock
from tests.support.sandbox_gateway import gateway_over

SECOND = 1000
LOOKUP = "/api/cu/products?keyword=cola&limit=3"
FRESH = "public, max-age=60, s-maxage=60, stale-while-revalidate=30"


class Origin:
    """The lookup function behind the edge: answers with the given status and Cache-Control, counts calls."""

    def __init__(self, status: int = 200, cache_control: str = FRESH) -> None:
        self.status = status
        self.cache_control = cache_control
        self.calls = 0

    def __call__(self) -> Answer:
        self.calls += 1
        headers = [("content-type", "application/json"), ("Cache-Control", self.cache_control)]
        return self.status, headers, f'{{"answer": {self.calls}}}'.encode()


class Deferred:
    """Background work held until the test runs it, so a refresh happens exactly when the test says."""

    def __init__(self) -> None:
        self.pending: list[Callable[[], None]] = []

    def __call__(self, work: Callable[[], None]) -> None:
        self.pending.append(work)

    def run_all(self) -> None:
        while self.pending:
            self.pending.pop(0)()


@pytest.fixture
def clock() -> SandboxClock:
    """The one sandbox clock with its real-time part standing still: only `advance` moves it."""
    return SandboxClock(real_time=ManualClock())


@pytest.fixture
def background() -> Deferred:
    return Deferred()


@pytest.fixture
def edge(clock: SandboxClock, background: Deferred) -> EdgeCache:
    return EdgeCache(clock=clock, background=background)


def header(answer: Answer, name: str) -> str | None:
    found = [value for key, value in answer[1] if key.lower() == name.lower()]
    assert len(found) <= 1, found
    return found[0] if found else None


def test_the_key_is_the_path_and_the_query_sorted_by_name() -> None:
    assert cache_key("/api/cu/products?limit=3&keyword=cola") == cache_key(
        "/api/cu/products?keyword=cola&limit=3"
    )
    assert cache_key("/api/cu/products?keyword=cola&limit=3") == "/api/cu/products?keyword=cola&limit=3"
    assert cache_key("/api/cu/products") == "/api/cu/products"
    # A repeated name keeps its values' order (a different order is a different question); values differ.
    assert cache_key("/a?b=2&a=1&b=1") == "/a?a=1&b=2&b=1"
    assert cache_key("/a?keyword=cola") != cache_key("/a?keyword=Cola")
    assert cache_key("/a?x=") == "/a?x="


def test_a_reordered_query_is_the_same_entry(edge: EdgeCache) -> None:
    origin = Origin()
    assert header(edge.serve("/api/cu/products?keyword=cola&limit=3", origin), X_CACHE) == MISS
    assert header(edge.serve("/api/cu/products?limit=3&keyword=cola", origin), X_CACHE) == HIT
    assert origin.calls == 1


def test_a_miss_then_hits_with_their_age_on_the_sandbox_clock(edge: EdgeCache, clock: SandboxClock) -> None:
    origin = Origin()
    miss = edge.serve(LOOKUP, origin)
    assert header(miss, X_CACHE) == MISS
    assert header(miss, "Age") is None
    clock.advance(2_500)
    hit = edge.serve(LOOKUP, origin)
    assert header(hit, X_CACHE) == HIT
    assert header(hit, "Age") == "2"
    assert hit[0] == 200
    assert hit[2] == miss[2]
    assert header(hit, "Cache-Control") == FRESH  # the origin's headers, as stored
    assert origin.calls == 1


@pytest.mark.parametrize(
    ("cache_control", "fresh_s"),
    [
        ("public, max-age=600, s-maxage=10", 10),  # s-maxage rules over max-age
        ("public, max-age=5", 5),  # max-age when there is no s-maxage
    ],
)
def test_an_answer_stays_fresh_for_its_shared_max_age(
    edge: EdgeCache, clock: SandboxClock, cache_control: str, fresh_s: int
) -> None:
    origin = Origin(cache_control=cache_control)
    edge.serve(LOOKUP, origin)
    clock.advance((fresh_s - 1) * SECOND)
    assert header(edge.serve(LOOKUP, origin), X_CACHE) == HIT
    clock.advance(1 * SECOND)
    assert header(edge.serve(LOOKUP, origin), X_CACHE) == MISS
    assert origin.calls == 2


def test_expiry_follows_the_sandbox_clock(edge: EdgeCache, clock: SandboxClock) -> None:
    origin = Origin(cache_control="public, max-age=60, s-maxage=60")
    edge.serve(LOOKUP, origin)
    clock.advance(60 * SECOND)  # what POST /_sandbox/clock does
    assert header(edge.serve(LOOKUP, origin), X_CACHE) == MISS
    assert origin.calls == 2
    assert len(edge) == 1


def test_stale_while_revalidate_serves_the_stale_answer_and_refreshes_it_once(
    edge: EdgeCache, clock: SandboxClock, background: Deferred
) -> None:
    origin = Origin()  # fresh 60 s, then 30 s stale while it is refreshed
    first = edge.serve(LOOKUP, origin)
    clock.advance(70 * SECOND)
    stale = edge.serve(LOOKUP, origin)
    again = edge.serve(LOOKUP, origin)
    assert header(stale, X_CACHE) == header(again, X_CACHE) == HIT
    assert header(stale, "Age") == "70"
    assert stale[2] == again[2] == first[2]
    assert origin.calls == 1  # nothing waited for the origin
    assert len(background.pending) == 1  # one refresh, however many stale answers were served
    background.run_all()
    assert origin.calls == 2
    refreshed = edge.serve(LOOKUP, origin)
    assert header(refreshed, X_CACHE) == HIT
    assert header(refreshed, "Age") == "0"
    assert refreshed[2] != first[2]
    assert background.pending == []


def test_past_the_stale_window_it_is_a_miss(
    edge: EdgeCache, clock: SandboxClock, background: Deferred
) -> None:
    origin = Origin()
    edge.serve(LOOKUP, origin)
    clock.advance(90 * SECOND)  # 60 fresh + 30 stale
    assert header(edge.serve(LOOKUP, origin), X_CACHE) == MISS
    assert origin.calls == 2
    assert background.pending == []


def test_a_failed_refresh_keeps_the_stale_answer_until_its_window_ends(
    edge: EdgeCache, clock: SandboxClock, background: Deferred
) -> None:
    origin = Origin()
    first = edge.serve(LOOKUP, origin)
    clock.advance(61 * SECOND)
    origin.status, origin.cache_control = 502, "no-store"
    edge.serve(LOOKUP, origin)
    background.run_all()
    clock.advance(1 * SECOND)
    kept = edge.serve(LOOKUP, origin)
    assert header(kept, X_CACHE) == HIT
    assert kept[2] == first[2]
    assert len(background.pending) == 1  # the next stale answer starts the next refresh


@pytest.mark.parametrize("status", [400, 404, 429, 500, 502, 503, 504, 201, 204])
def test_only_a_200_is_ever_stored(edge: EdgeCache, status: int) -> None:
    origin = Origin(status=status, cache_control=FRESH)  # even when it says it may be cached
    for _ in range(3):
        answer = edge.serve(LOOKUP, origin)
        assert answer[0] == status
        assert header(answer, X_CACHE) == MISS
    assert origin.calls == 3
    assert len(edge) == 0


@pytest.mark.parametrize(
    "cache_control",
    [
        "no-store",
        "private, max-age=60",
        "public, max-age=60, no-store",
        "no-cache, max-age=60",
        "public",
        "public, max-age=0, s-maxage=0, stale-while-revalidate=30",
        "public, max-age=soon",
    ],
)
def test_an_answer_a_shared_cache_may_not_keep_is_never_stored(edge: EdgeCache, cache_control: str) -> None:
    origin = Origin(cache_control=cache_control)
    for _ in range(2):
        assert header(edge.serve(LOOKUP, origin), X_CACHE) == MISS
    assert origin.calls == 2
    assert len(edge) == 0


def test_no_cache_control_is_never_stored() -> None:
    assert lifetime(200, [("content-type", "application/json")]) is None
    assert lifetime(200, [("cache-control", "PUBLIC, S-MAXAGE=7, Max-Age=3")]) is not None


def test_the_least_recently_used_answers_go_first_past_the_entry_cap(clock: SandboxClock) -> None:
    edge = EdgeCache(clock=clock, max_entries=2)
    origin = Origin()
    edge.serve("/api/a", origin)
    edge.serve("/api/b", origin)
    edge.serve("/api/a", origin)  # a is now the most recently used
    edge.serve("/api/c", origin)
    assert len(edge) == 2
    assert header(edge.serve("/api/a", origin), X_CACHE) == HIT
    assert header(edge.serve("/api/b", origin), X_CACHE) == MISS


def test_the_bytes_never_pass_the_cap(clock: SandboxClock) -> None:
    edge = EdgeCache(clock=clock, max_bytes=1_000)
    origin = Origin()
    sizes = []
    for number in range(100):
        edge.serve(f"/api/x?n={number}", origin)
        sizes.append(edge.bytes)
    assert max(sizes) <= 1_000
    assert 0 < len(edge) < 100
    _, headers, body = Origin()()
    largest_entry = len(body) + 2 + sum(len(name) + len(value) for name, value in headers)  # up to "100"
    assert edge.bytes > 1_000 - largest_entry  # the oldest went only as far as the newest needed


def test_an_answer_larger_than_the_cap_is_not_stored(clock: SandboxClock) -> None:
    edge = EdgeCache(clock=clock, max_bytes=10)
    origin = Origin()
    edge.serve(LOOKUP, origin)
    assert len(edge) == 0
    assert edge.bytes == 0


@pytest.mark.parametrize(
    ("method", "path", "cached"),
    [
        ("GET", "/api/cu/products", True),
        ("GET", "/api/openapi.json", True),
        ("GET", "/api/health/routes", False),
        ("GET", "/api/health", False),
        ("GET", "/api/health/routes/cu-stock/override", False),
        ("POST", "/api/cu/products", False),
        ("HEAD", "/api/cu/products", False),
        ("GET", "/mcp", False),
        ("GET", "/_sandbox/calls", False),
        ("GET", "/apiary", False),
    ],
)
def test_which_paths_the_edge_caches(method: str, path: str, cached: bool) -> None:
    assert cached_path(method, path) is cached


# --- through the gateway, over HTTP on 127.0.0.1 ------------------------------------------------------------


@contextlib.contextmanager
def gateway_with_edge(clock: SandboxClock, invoked: list[str]) -> Iterator[httpx.Client]:
    def function(name: str, cache_control: str) -> Callable[[dict[str, Any]], Any]:
        def invoke(event: dict[str, Any]) -> Any:
            invoked.append(f"{name} {event['rawPath']}")
            status = 404 if event["rawPath"].endswith("/missing") else 200
            headers = {"Cache-Control": cache_control if status == 200 else "no-store"}
            return {"statusCode": status, "headers": headers, "body": '{"ok": true}'}

        return invoke

    cacheable = function("ops", FRESH)  # even a cacheable operator answer passes through
    edge = EdgeCache(clock=clock)
    with gateway_over(
        function("api", FRESH), cacheable, function("mcp", FRESH), clock=clock, edge=edge
    ) as http:
        yield http


def test_a_hit_never_reaches_the_lookup_function(clock: SandboxClock) -> None:
    invoked: list[str] = []
    with gateway_with_edge(clock, invoked) as http:
        first = http.get("/api/cu/products", params={"keyword": "cola", "limit": "3"})
        clock.advance(3 * SECOND)
        second = http.get("/api/cu/products?limit=3&keyword=cola")
        assert first.headers["x-cache"] == MISS
        assert "age" not in first.headers
        assert second.headers["x-cache"] == HIT
        assert second.headers["age"] == "3"
        assert second.json() == {"ok": True}
        assert invoked == ["api /api/cu/products"]


def test_errors_and_uncached_paths_pass_through(clock: SandboxClock) -> None:
    invoked: list[str] = []
    with gateway_with_edge(clock, invoked) as http:
        for _ in range(2):
            missing = http.get("/api/cu/missing")
            assert missing.status_code == 404
            assert missing.headers["x-cache"] == MISS
            for method, path in [("GET", "/api/health/routes"), ("POST", "/mcp"), ("GET", "/_sandbox/calls")]:
                answer = http.request(method, path)
                assert answer.status_code == 200
                assert "x-cache" not in answer.headers
                assert "age" not in answer.headers
            assert http.post("/api/cu/products").status_code == 404  # API Gateway's: no route
    assert invoked == ["api /api/cu/missing", "ops /api/health/routes", "mcp /mcp"] * 2


def test_no_edge_cache_reaches_the_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, Any]] = []

    def run_sandbox(**arguments: Any) -> int:
        seen.append(arguments)
        return 0

    monkeypatch.setattr(cli, "run_sandbox", run_sandbox)
    assert cli.main(["sandbox", "--port", "0"]) == 0
    assert cli.main(["sandbox", "--port", "0", "--no-edge-cache"]) == 0
    assert [arguments["edge_cache"] for arguments in seen] == [True, False]
