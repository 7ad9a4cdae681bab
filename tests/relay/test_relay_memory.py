"""The relay process keeps nothing from a refused request: its resident memory stays flat over hundreds of
refusals of every kind it answers (401, 400, 404, 405, 413, 429, 503), each with a large body and header."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from functions.core import RelayGroup
from relay.quota import DAY_MS, LEDGER_FILE, MINUTE_MS
from tests.relay.relay_process import RelayProcess, bearer, running_relay

OY, CONVENIENCE, DTRYX = RelayGroup.OLIVEYOUNG, RelayGroup.CONVENIENCE, RelayGroup.DTRYX
WARM_UP_ROUNDS = 40
MEASURED_ROUNDS = 210
MAX_GROWTH_KB = 2048
PADDING = "p" * 8000
LARGE_BODY = json.dumps({"junk": "j" * 15_000}).encode()


def _send(
    relay: RelayProcess, group: RelayGroup, method: str, path: str, body: bytes, token: str = ""
) -> int:
    authorization = f"Authorization: Bearer {token}\r\n" if token else bearer(group)
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: relay\r\n{authorization}X-Padding: {PADDING}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return relay.request(group, head, body)


def _refusals(relay: RelayProcess) -> dict[int, Callable[[int], int]]:
    """For each refusal the relay answers, one request that gets it (the argument varies the body)."""
    movies = "/v1/dtryx/movies"

    def quota_exhausted(number: int) -> bytes:
        return json.dumps({"brandCode": "indieart", "cinemaCode": f"{number:06d}"}).encode()

    return {
        401: lambda n: _send(relay, DTRYX, "POST", movies, LARGE_BODY, token="wrong-" + "t" * 40),
        400: lambda n: _send(relay, DTRYX, "POST", movies, b"{" + b"z" * 15_000),
        404: lambda n: _send(relay, OY, "POST", "/v1/oliveyoung/no-such-operation", LARGE_BODY),
        405: lambda n: _send(relay, DTRYX, "GET", movies, b""),
        413: lambda n: _send(relay, DTRYX, "POST", movies, b"{" + b" " * 20_000 + b"}"),
        429: lambda n: _send(relay, DTRYX, "POST", movies, quota_exhausted(n)),
        503: lambda n: _send(relay, CONVENIENCE, "POST", "/v1/convenience/cu-prime", b"{}"),
    }


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process's RSS from /proc")
def test_refused_requests_leave_the_relays_memory_flat(tmp_path: Path) -> None:
    states = {group: tmp_path / group.value for group in (OY, CONVENIENCE, DTRYX)}
    for directory in states.values():
        directory.mkdir(mode=0o700)
    now = time.time_ns() // 1_000_000
    day_used_up = {"day": now // DAY_MS, "minute": now // MINUTE_MS, "dayCount": 300_000, "minuteCount": 0}
    (states[DTRYX] / LEDGER_FILE).write_text(json.dumps(day_used_up))
    with running_relay(tmp_path, (OY, CONVENIENCE, DTRYX), state_dirs=states) as relay:
        (states[CONVENIENCE] / LEDGER_FILE).mkdir()  # the ledger can no longer be written: 503
        refusals = _refusals(relay)
        assert {status: send(0) for status, send in refusals.items()} == {s: s for s in refusals}
        for number in range(WARM_UP_ROUNDS):
            for send in refusals.values():
                send(number)
        before = relay.rss_kb()
        for number in range(MEASURED_ROUNDS):
            for send in refusals.values():
                send(WARM_UP_ROUNDS + number)
        growth = relay.rss_kb() - before
        assert relay.process.poll() is None
    assert growth <= MAX_GROWTH_KB, f"{growth} kB more after {MEASURED_ROUNDS * len(refusals)} refusals"
