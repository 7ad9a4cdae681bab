"""End to end: the sandbox's relays are the reference relay, in front of the simulated retailers; the
retailer as the relay sees it has faults of its own; the relays can be tried by hand and restarted."""

from __future__ import annotations

import json
import stat

import httpx

from tests.e2e.conftest import Sandbox

CINEMA = {"brandCode": "indieart", "cinemaCode": "000067"}
MOVIES = "/api/dtryx/movies"


def _relay_tokens(sandbox: Sandbox) -> dict[str, str]:
    path = sandbox.stdout.parent / ".sandbox" / "relay-tokens.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    tokens: dict[str, str] = json.loads(path.read_text())
    return tokens


def test_the_relay_reaches_a_retailer_that_blocks_the_lambda(fresh: Sandbox) -> None:
    fresh.fault("direct:dtryx-movies", "http-403")  # blocks cloud IP ranges, not the home network
    response, calls = fresh.lookup(MOVIES, CINEMA, relay_upstream=True)
    assert response.status_code == 200, response.text
    assert calls == {"direct:dtryx-movies": 1, "relay:dtryx-movies": 1, "relay-upstream:dtryx-movies": 1}

    fresh.fault("relay-upstream:dtryx-movies", "http-403")  # and now the home network too
    response, calls = fresh.lookup(MOVIES, CINEMA, relay_upstream=True)
    assert response.status_code == 502
    assert response.json()["error"]["code"] == "UPSTREAM_BAD_RESPONSE"
    assert calls == {"relay:dtryx-movies": 1, "relay-upstream:dtryx-movies": 1}  # blocked: relay only


def test_the_relays_cache_spares_the_retailer(fresh: Sandbox) -> None:
    fresh.fault("direct:seven-store", "http-403")
    stores = ("/api/seveneleven/stores", {"keyword": "역삼"})  # asked nowhere else
    first = fresh.lookup(*stores, relay_upstream=True)[1]
    second = fresh.lookup(*stores, relay_upstream=True)[1]
    assert first == {"direct:seven-store": 1, "relay:seven-store": 1, "relay-upstream:seven-store": 1}
    assert second == {"relay:seven-store": 1}  # the relay answered from its cache


def test_a_respond_fault_answers_exactly_that(fresh: Sandbox) -> None:
    fresh.control(
        "POST",
        "faults",
        {
            "target": "relay:dtryx",
            "fault": "respond",
            "status": 429,
            "body": "{}",
            "contentType": "application/json",
        },
    )
    fresh.fault("direct:dtryx-movies", "http-403")
    response, _ = fresh.lookup(MOVIES, CINEMA)
    assert response.status_code == 429  # a relay 429 without Retry-After: the quota answer with its default
    assert response.headers["retry-after"] == "60"


def test_relays_by_hand_and_a_restart_that_keeps_the_ledger(fresh: Sandbox) -> None:
    urls = fresh.control("GET", "relays").json()
    assert set(urls) == {"oliveyoung", "convenience", "dtryx", "cgv"}
    assert urls["cgv"] == urls["dtryx"]  # the Dtryx relay serves CGV
    tokens = _relay_tokens(fresh)
    auth = {"Authorization": f"Bearer {tokens['dtryx']}"}
    before = httpx.get(f"{urls['dtryx']}/v1/dtryx/health", headers=auth).json()
    assert before["status"] == "ok"
    fresh.fault("direct:dtryx-movies", "http-403")
    assert fresh.lookup(MOVIES, CINEMA)[0].status_code == 200  # one more unit on the Dtryx ledger

    restarted = fresh.control("POST", "relays/restart", {"group": "dtryx"}).json()
    assert restarted == {"group": "dtryx", "url": urls["dtryx"]}
    after = httpx.get(f"{urls['dtryx']}/v1/dtryx/health", headers=auth).json()
    assert after["quota"]["dailyRemaining"] <= before["quota"]["dailyRemaining"] - 1
    assert httpx.get(f"{urls['dtryx']}/v1/dtryx/health").status_code == 401
    fresh.clear_faults()
