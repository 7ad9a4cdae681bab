"""The cache benchmark's arithmetic (bench/cases/cache.py): the stream it sends and what it reports."""

from __future__ import annotations

from collections import Counter

from bench.cases import cache
from functions.catalog import LOOKUPS


def test_the_zipf_stream_is_seeded_and_favours_the_first_queries() -> None:
    stream = cache.zipf_stream(seed=7, universe=2_000, length=10_000, exponent=1.1)
    assert stream == cache.zipf_stream(seed=7, universe=2_000, length=10_000, exponent=1.1)
    assert stream != cache.zipf_stream(seed=8, universe=2_000, length=10_000, exponent=1.1)
    assert len(stream) == 10_000
    assert all(0 <= number < 2_000 for number in stream)
    counts = Counter(stream)
    # Weight 1/k^1.1: the first query is drawn about 2^1.1 times as often as the second, far more than the tail.
    assert counts[0] > counts[1] > counts[9] > 0
    assert 1.6 < counts[0] / counts[1] < 2.7
    assert len(counts) < 2_000  # a stream this long does not draw the whole tail


def test_the_stream_queries_are_distinct_fresh_long_enough_and_of_several_lookups() -> None:
    queries = cache.stream_queries(2_000, seed=3)
    assert len(queries) == 2_000
    assert len({(path, tuple(sorted(params.items()))) for _, path, params in queries}) == 2_000
    used = Counter(name for name, _, _ in queries)
    assert len(used) >= 4
    assert max(used.values()) - min(used.values()) <= 1
    freshness = {query.name: query.freshness for query in LOOKUPS}
    assert min(freshness[name].max_age for name in used) >= 300
    # Seeded order: the head of the distribution is not one lookup's.
    assert len({name for name, _, _ in queries[:20]}) > 1
    assert queries == cache.stream_queries(2_000, seed=3)


def test_the_stream_summary_says_where_each_lookup_was_answered() -> None:
    counts = cache.StreamCounts(
        lookups=10_000,
        distinct_queries=1_200,
        edge_hits=8_780,
        edge_misses=1_220,
        function_hits=20,
        function_misses=1_200,
        upstream_calls=1_200,
        errors=0,
    )
    summary = cache.stream_summary(counts)
    assert summary["no_upstream_share"] == 0.88
    assert summary["upstream_calls_equal_distinct_queries"] is True
    assert summary["every_lookup_accounted"] is True
    over = cache.stream_summary(cache.StreamCounts(10_000, 1_200, 8_780, 1_220, 10, 1_210, 1_210, 0))
    assert over["upstream_calls_equal_distinct_queries"] is False
    assert over["every_lookup_accounted"] is True


def test_the_hit_is_compared_with_the_miss_less_the_bare_fetch() -> None:
    # (wall µs, CPU µs) per call, one sample per round.
    samples = {
        "hit": [(120.0, 100.0), (130.0, 110.0), (125.0, 90.0)],
        "miss": [(700.0, 600.0), (720.0, 650.0), (710.0, 640.0)],
        "bare": [(300.0, 250.0), (310.0, 240.0), (305.0, 260.0)],
    }
    found = cache.hit_overhead(samples)
    cpu = found["cpu_us_median"]
    assert cpu["hit"] == 100.0
    assert cpu["miss_overhead"] == 380.0  # median of 350, 410, 380
    assert found["hit_overhead_ratio"] == round(100 / 380, 2)
    assert found["wall_us_median"]["miss_overhead"] == 405.0
    assert found["wall_us_median"]["ratio"] == round(125 / 405, 2)
