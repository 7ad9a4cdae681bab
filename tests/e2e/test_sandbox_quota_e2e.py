"""The daily quota over real HTTP against `route-health sandbox` started with a small DAILY_RATE_LIMIT
(conftest `quota_sandbox`): a client that uses it up gets 429 with the headers and no upstream call, another
client is unaffected, the operator key bypasses it, and the next Korea day (the sandbox clock) resets it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from sandbox.gateway import SOURCE_IP_HEADER
from tests.e2e.conftest import DAILY_RATE_LIMIT

if TYPE_CHECKING:
    from tests.e2e.conftest import Sandbox

pytestmark = pytest.mark.e2e

DAY_MS = 24 * 60 * 60 * 1000
KST_MS = 9 * 60 * 60 * 1000
CU_PRODUCTS = ("/api/cu/products", {"keyword": "레쓰비"})
BLANK_KEYWORD = {"keyword": " "}
"""A 400: an error answer, which carries the client's counts (and counts)."""
ALICE = {SOURCE_IP_HEADER: "203.0.113.7"}
BOB = {SOURCE_IP_HEADER: "198.51.100.23"}


def next_korea_midnight_s(now_ms: int) -> int:
    return ((now_ms + KST_MS) // DAY_MS + 1) * DAY_MS // 1000 - KST_MS // 1000


def test_a_client_past_the_limit_gets_429_until_the_next_korea_day(quota_sandbox: Sandbox) -> None:
    sandbox = quota_sandbox
    http = sandbox.http
    reset = next_korea_midnight_s(sandbox.now())

    answered = http.get(CU_PRODUCTS[0], params=CU_PRODUCTS[1], headers=ALICE)
    assert answered.status_code == 200, answered.text
    assert "x-ratelimit-remaining" not in answered.headers  # cacheable: never one client's counts
    remaining = []
    for _ in range(DAILY_RATE_LIMIT - 1):  # error answers say the counts; they count too
        answer = http.get(CU_PRODUCTS[0], params=BLANK_KEYWORD, headers=ALICE)
        assert answer.status_code == 400, answer.text
        assert answer.headers["x-ratelimit-limit"] == str(DAILY_RATE_LIMIT)
        assert answer.headers["x-ratelimit-reset"] == str(reset)
        remaining.append(int(answer.headers["x-ratelimit-remaining"]))
    assert remaining == list(range(DAILY_RATE_LIMIT - 2, -1, -1))  # one container: it knows every lookup

    calls_before = sandbox.calls()
    refused = http.get(CU_PRODUCTS[0], params=CU_PRODUCTS[1], headers=ALICE)
    assert refused.status_code == 429
    assert refused.json()["success"] is False
    assert refused.json()["error"]["code"] == "DAILY_RATE_LIMIT_EXCEEDED"
    assert refused.headers["x-ratelimit-limit"] == str(DAILY_RATE_LIMIT)
    assert refused.headers["x-ratelimit-remaining"] == "0"
    assert refused.headers["x-ratelimit-reset"] == str(reset)
    seconds_left = reset - sandbox.now() // 1000
    assert seconds_left <= int(refused.headers["retry-after"]) <= seconds_left + 5
    assert http.get("/api/gs25/products", params={"keyword": "콜라"}, headers=ALICE).status_code == 429
    assert sandbox.calls() == calls_before  # refused before any upstream call

    assert http.get("/api/seveneleven/popwords", headers=ALICE).status_code == 200  # not a limited prefix
    assert http.get(CU_PRODUCTS[0], params=CU_PRODUCTS[1], headers=BOB).status_code == 200
    bob = http.get(CU_PRODUCTS[0], params=BLANK_KEYWORD, headers=BOB)
    assert (bob.status_code, bob.headers["x-ratelimit-remaining"]) == (400, str(DAILY_RATE_LIMIT - 2))
    assert (
        http.get(CU_PRODUCTS[0], params=CU_PRODUCTS[1], headers={**ALICE, **sandbox.auth()}).status_code
        == 200
    )
    operator = http.get(CU_PRODUCTS[0], params=BLANK_KEYWORD, headers={**ALICE, **sandbox.auth()})
    assert operator.status_code == 400
    assert "x-ratelimit-remaining" not in operator.headers  # the operator's lookups are not counted

    sandbox.advance(reset * 1000 - sandbox.now() + 1_000)  # 00:00:01 in Seoul
    next_day = http.get(CU_PRODUCTS[0], params=BLANK_KEYWORD, headers=ALICE)
    assert next_day.status_code == 400, next_day.text
    assert next_day.headers["x-ratelimit-remaining"] == str(DAILY_RATE_LIMIT - 1)
    assert next_day.headers["x-ratelimit-reset"] == str(reset + DAY_MS // 1000)
