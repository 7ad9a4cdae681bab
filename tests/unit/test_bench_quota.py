"""The quota benchmark's request-path overhead: what the lookup's own thread pays, apart from background work."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from bench.cases import quota

BACKGROUND_MS = 2


def _spin_in_python() -> None:
    """Holds the GIL for BACKGROUND_MS: like the flush to moto in process, CPU on another thread."""
    until = time.perf_counter() + BACKGROUND_MS / 1000
    while time.perf_counter() < until:
        pass


def test_overheads_count_the_request_threads_cpu_apart_from_background_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in (("WARMUP", 1), ("OVERHEAD_REPEATS", 3), ("PER_BATCH", 5)):
        monkeypatch.setattr(quota, name, value)

    def nothing() -> None:
        return None

    with ThreadPoolExecutor(max_workers=1) as background:

        def with_background_work() -> None:
            background.submit(_spin_in_python).result()

        overheads = quota._overheads(
            {"on": with_background_work, "off": nothing, "off again": nothing}, bare=nothing
        )

    background_us = BACKGROUND_MS * 1000
    assert overheads["wall"]["on"] >= background_us
    assert overheads["cpu"]["on"] < background_us / 4
    assert overheads["cpu"]["off"] < background_us / 4
