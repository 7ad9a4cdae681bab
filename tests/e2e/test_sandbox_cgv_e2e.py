"""End to end: CGV in the sandbox. The simulated CGV checks every signature (made with the sandbox's made-up
CGV_SIGNING_KEY), the Lambda functions sign direct calls, and the Dtryx relay serves CGV with the same key,
reached through the Dtryx relay's URL and token."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from tests.e2e.conftest import Sandbox

pytestmark = pytest.mark.e2e

TIMETABLE = "/api/cgv/timetable"


def _today_in_korea() -> str:
    return (datetime.now(UTC) + timedelta(hours=9)).strftime("%Y%m%d")


def test_a_timetable_of_today_in_korea_sorted_with_unknown_seats_as_null(fresh: Sandbox) -> None:
    response, calls = fresh.lookup(TIMETABLE, {"theaterCode": "0056"})
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert calls == {"direct:cgv-timetable": 1}
    # The sandbox clock may be days ahead of the wall clock: today is the one CGV was asked for.
    assert data["playDate"] >= _today_in_korea()
    rows = data["timetable"]
    assert [row["startTime"] for row in rows] == sorted(row["startTime"] for row in rows)
    assert {row["theaterCode"] for row in rows} == {"0056"}
    assert None in {row["remainingSeats"] for row in rows}  # CGV could not say: null, never 0
    assert 0 in {row["remainingSeats"] for row in rows}  # a real sell-out stays 0


def test_cgv_blocking_aws_is_answered_through_the_dtryx_relay_with_a_valid_signature(fresh: Sandbox) -> None:
    fresh.fault("direct:cgv-movies", "http-403")  # CGV refuses cloud addresses, not the home network
    response, calls = fresh.lookup("/api/cgv/movies", {"theaterCode": "0211"}, relay_upstream=True)
    assert response.status_code == 200, response.text
    assert response.json()["data"]["movies"]
    assert calls == {"direct:cgv-movies": 1, "relay:cgv-movies": 1, "relay-upstream:cgv-movies": 1}


def test_an_empty_site_timetable_falls_back_to_each_movie(fresh: Sandbox) -> None:
    response, calls = fresh.lookup(TIMETABLE, {"theaterCode": "0211"})  # 안산: empty site timetable
    assert response.status_code == 200, response.text
    assert response.json()["data"]["timetable"]
    assert calls["direct:cgv-timetable"] == 1
    assert calls["direct:cgv-movies"] == 1
    assert calls["direct:cgv-timetable-movie"] >= 1


def test_the_cgv_relay_by_hand_is_the_dtryx_relay_with_its_token(fresh: Sandbox) -> None:
    urls = fresh.control("GET", "relays").json()
    tokens = json.loads((fresh.stdout.parent / ".sandbox" / "relay-tokens.json").read_text())
    auth = {"Authorization": f"Bearer {tokens['dtryx']}"}
    health = httpx.get(f"{urls['cgv']}/v1/cgv/health", headers=auth).json()
    assert health["status"] == "ok"
    answer = httpx.post(f"{urls['cgv']}/v1/cgv/theaters", headers=auth, json={})
    assert answer.status_code == 200
    assert answer.json()["statusCode"] == 0
    refused = httpx.post(
        f"{urls['cgv']}/v1/cgv/movies", headers=auth, json={"theaterCode": "0056", "playDate": "20260230"}
    )
    assert (refused.status_code, refused.json()) == (400, {"error": "Relay request failed"})
    assert httpx.get(f"{urls['cgv']}/v1/cgv/health").status_code == 401


def test_bad_cgv_input_is_400_without_upstream_calls(fresh: Sandbox) -> None:
    for params in ({"theaterCode": "56"}, {"playDate": "2026-03-04"}, {"movieCode": "abc"}, {"limit": "0"}):
        fresh.assert_refused_before_any_call(TIMETABLE, params)
