"""The CGV relay (`/v1/cgv/…`) in the Dtryx relay's process: its token and log, a ledger of its own (its
share of the process's quota); CGV's input rules, signed upstream calls, answer rule, cache TTLs and
coalescing; not served without CGV's signing key."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from functions.catalog import cgv
from functions.core import RelayGroup, RouteKey
from relay import cgv as cgv_relay
from relay.app import DTRYX_PROCESS_QUOTA
from relay.config import ConfigError, load_config
from relay.quota import LEDGER_FILE
from tests.relay.conftest import (
    CGV_SIGNING_KEY,
    RelayFactory,
    RelayUnderTest,
    auth,
    path_of,
    probe_body,
    wait_until,
)

CGV_KEYS = [RouteKey.CGV_THEATERS, RouteKey.CGV_MOVIES, RouteKey.CGV_TIMETABLE, RouteKey.CGV_TIMETABLE_MOVIE]
CORE_FAILURE = {"error": "Relay request failed"}


@pytest.mark.parametrize("key", CGV_KEYS)
def test_each_operation_answers_cgvs_own_json_from_a_signed_call(
    relay: RelayUnderTest, key: RouteKey
) -> None:
    response = relay.post(key)
    assert response.status_code == 200
    answer = response.json()
    assert (answer["statusCode"], type(answer["data"])) == (0, list)  # CGV's answer, unwrapped
    [call] = relay.retailers.requests
    assert (call.method, call.url.host) == ("GET", "api.cgv.co.kr")
    assert call.headers["user-agent"] == cgv.USER_AGENT
    assert call.headers["x-timestamp"] == str(relay.clock() // 1000)
    assert CGV_SIGNING_KEY not in str(call.headers) + str(call.url)


def test_the_theaters_call_is_exactly_cgvs_url(relay: RelayUnderTest) -> None:
    relay.post(RouteKey.CGV_THEATERS, {})
    assert [str(r.url) for r in relay.retailers.requests] == [
        "https://api.cgv.co.kr/cnm/atkt/searchRegnList?coCd=A420"
    ]


def test_cgv_shares_the_dtryx_token_and_log_but_counts_in_a_ledger_of_its_own(relay: RelayUnderTest) -> None:
    cgv_health, dtryx_health = relay.health(RelayGroup.CGV), relay.health(RelayGroup.DTRYX)
    assert cgv_health.keys() == dtryx_health.keys()
    assert relay.post(RouteKey.CGV_MOVIES).status_code == 200
    assert relay.post(RouteKey.CGV_THEATERS).status_code == 200
    assert relay.post(RouteKey.DTRYX_MOVIES).status_code == 200
    ledgers = {group: relay.app.relays[group].ledger for group in (RelayGroup.CGV, RelayGroup.DTRYX)}
    for group, spent in ((RelayGroup.CGV, 2), (RelayGroup.DTRYX, 1)):
        health = relay.health(group)
        assert health["quota"]["dailyRemaining"] == ledgers[group].limits.per_day - spent
        assert health["status"] == "ok"
        assert json.loads(ledgers[group].path.read_text())["dayCount"] == spent
    # Both files in the Dtryx state directory, under its one lock; the two shares make the process's quota.
    assert {ledger.path.name for ledger in ledgers.values()} == {LEDGER_FILE, cgv_relay.LEDGER_FILE}
    assert {ledger.path.parent for ledger in ledgers.values()} == {relay.state_dirs[RelayGroup.DTRYX]}
    shares = [ledger.limits for ledger in ledgers.values()]
    assert sum(limits.per_minute for limits in shares) == DTRYX_PROCESS_QUOTA.per_minute
    assert sum(limits.per_day for limits in shares) == DTRYX_PROCESS_QUOTA.per_day
    wrong = relay.client.get("/v1/cgv/health", headers=auth(RelayGroup.OLIVEYOUNG))
    assert (wrong.status_code, wrong.json()) == (401, {"error": "Unauthorized"})
    logged = [
        line for line in relay.log_lines() if line.get("event") == "request" and line.get("group") == "cgv"
    ]
    assert [line["operation"] for line in logged].count("movies") == 1


def _timetables_of_new_dates(relay: RelayUnderTest) -> Iterator[httpx.Response]:
    """CGV timetables of one theater, a new date each time (no cache can answer them): issue 31's drain."""
    day = date(2026, 1, 1)
    while True:
        body = {"theaterCode": "0211", "playDate": day.strftime("%Y%m%d")}
        yield relay.post(RouteKey.CGV_TIMETABLE, body)
        day += timedelta(days=1)


def test_cgv_callers_using_up_cgvs_share_leave_dtryx_its_own(relay: RelayUnderTest) -> None:
    share = relay.app.relays[RelayGroup.CGV].ledger.limits.per_minute
    answers = _timetables_of_new_dates(relay)
    assert all(next(answers).status_code == 200 for _ in range(share))
    refused = next(answers)
    assert (refused.status_code, refused.headers["x-relay-quota-reason"]) == (429, "minute")
    assert relay.retailers.calls(RouteKey.CGV_TIMETABLE) == share  # the refusal reached no retailer
    dtryx = relay.post(RouteKey.DTRYX_MOVIES)
    assert dtryx.status_code == 200  # another group's callers are not starved
    assert relay.health(RelayGroup.DTRYX)["quota"]["minuteRemaining"] == (
        relay.app.relays[RelayGroup.DTRYX].ledger.limits.per_minute - 1
    )


def test_cgvs_ledger_survives_a_restart_and_an_unreadable_one_stops_the_start(
    make_relay: RelayFactory, tmp_path: Path
) -> None:
    state = tmp_path / "kept"
    first = make_relay((RelayGroup.DTRYX,), state_root=state)
    assert first.post(RouteKey.CGV_MOVIES).status_code == 200
    first.app.close()
    again = make_relay((RelayGroup.DTRYX,), state_root=state)
    cgv_ledger = again.app.relays[RelayGroup.CGV].ledger
    assert again.health(RelayGroup.CGV)["quota"]["dailyRemaining"] == cgv_ledger.limits.per_day - 1
    again.app.close()
    (state / "dtryx" / cgv_relay.LEDGER_FILE).write_text("{")
    with pytest.raises(ConfigError, match=r"cgv-quota\.json is not JSON"):
        make_relay((RelayGroup.DTRYX,), state_root=state)
    (state / "dtryx" / cgv_relay.LEDGER_FILE).unlink()
    assert make_relay((RelayGroup.DTRYX,), state_root=state).post(RouteKey.CGV_MOVIES).status_code == 200


def test_without_cgvs_signing_key_the_process_serves_no_cgv(make_relay: RelayFactory) -> None:
    relay = make_relay((RelayGroup.DTRYX,), cgv_signing_key=None)
    assert RelayGroup.CGV not in relay.app.relays
    for method, path in [("GET", "/v1/cgv/health"), ("POST", "/v1/cgv/theaters")]:
        answer = relay.client.request(method, path, headers=auth(RelayGroup.DTRYX), content=b"{}")
        assert (answer.status_code, answer.json()) == (404, {"error": "Not found"})
    assert relay.client.get("/v1/cgv/health").status_code == 401
    assert relay.retailers.calls() == 0


@pytest.mark.parametrize(
    ("key", "body"),
    [
        (RouteKey.CGV_THEATERS, {"url": "https://api.cgv.co.kr/cnm/atkt/searchRegnList"}),
        (RouteKey.CGV_MOVIES, {"theaterCode": "0056", "playDate": "20260230"}),
        (RouteKey.CGV_MOVIES, {"theaterCode": "0056", "playDate": "2026108"}),
        (RouteKey.CGV_MOVIES, {"theaterCode": "0056", "playDate": "https://example.com/"}),
        (RouteKey.CGV_MOVIES, {"theaterCode": "0056", "playDate": "2026-03-04"}),
        (RouteKey.CGV_MOVIES, {"theaterCode": 56, "playDate": "20260304"}),
        (RouteKey.CGV_MOVIES, {"theaterCode": "0056"}),
        (RouteKey.CGV_TIMETABLE, {"theaterCode": "0056", "playDate": "20260304", "movieCode": "1"}),
        (RouteKey.CGV_TIMETABLE_MOVIE, {"theaterCode": "0056", "playDate": "20260304", "movieCode": ""}),
        (
            RouteKey.CGV_TIMETABLE_MOVIE,
            {"theaterCode": "0056", "playDate": "20260304", "movieCode": "1" * 17},
        ),
        (RouteKey.CGV_TIMETABLE_MOVIE, {"theaterCode": "0056", "playDate": "20260304"}),
    ],
)
def test_inputs_outside_cgvs_rules_are_refused_before_any_call(
    relay: RelayUnderTest, key: RouteKey, body: dict[str, Any]
) -> None:
    response = relay.post(key, body)
    assert (response.status_code, response.json()) == (400, CORE_FAILURE)
    assert relay.retailers.calls() == 0


@pytest.mark.parametrize(
    "answer",
    [
        lambda request: httpx.Response(500),
        lambda request: httpx.Response(403, text="<html>Just a moment...</html>"),
        lambda request: httpx.Response(200, json={"statusCode": 1, "statusMessage": "실패", "data": []}),
        lambda request: httpx.Response(200, json={"statusCode": 0, "data": None}),
        lambda request: httpx.Response(200, json={"statusCode": 0, "data": [None]}),
        lambda request: httpx.Response(200, json=[{"statusCode": 0}]),
        lambda request: httpx.Response(200, text="<html>not json</html>"),
    ],
)
def test_an_unusable_answer_is_502_and_never_cached(
    relay: RelayUnderTest, answer: Callable[[httpx.Request], httpx.Response]
) -> None:
    relay.retailers.answers[RouteKey.CGV_TIMETABLE] = answer
    response = relay.post(RouteKey.CGV_TIMETABLE)
    assert (response.status_code, response.json()) == (502, CORE_FAILURE)
    del relay.retailers.answers[RouteKey.CGV_TIMETABLE]
    assert relay.post(RouteKey.CGV_TIMETABLE).headers["x-relay-cache"] == "miss"


def test_an_empty_list_is_an_answer(relay: RelayUnderTest) -> None:
    relay.retailers.answers[RouteKey.CGV_MOVIES] = lambda request: httpx.Response(
        200, json={"statusCode": 0, "statusMessage": "조회 되었습니다.", "data": []}
    )
    response = relay.post(RouteKey.CGV_MOVIES)
    assert (response.status_code, response.json()["data"]) == (200, [])


def test_a_relay_with_another_key_than_cgvs_gets_403_and_answers_502(make_relay: RelayFactory) -> None:
    relay = make_relay((RelayGroup.DTRYX,), cgv_signing_key="a-rotated-key-the-relay-does-not-have-yet")
    response = relay.post(RouteKey.CGV_THEATERS)
    assert (response.status_code, response.json()) == (502, CORE_FAILURE)
    assert relay.retailers.calls(RouteKey.CGV_THEATERS) == 1


def test_identical_bodies_in_flight_share_one_call_whatever_their_key_order(relay: RelayUnderTest) -> None:
    body = probe_body(RouteKey.CGV_TIMETABLE_MOVIE)
    reordered = dict(reversed(list(body.items())))
    relay.retailers.hold = True
    with ThreadPoolExecutor(2) as pool:
        leader = pool.submit(relay.post, RouteKey.CGV_TIMETABLE_MOVIE, body)
        wait_until(relay.retailers.held.is_set, "the first call reached CGV")
        joiner = pool.submit(relay.post, RouteKey.CGV_TIMETABLE_MOVIE, reordered)
        wait_until(lambda: relay.app.relays[RelayGroup.CGV].outstanding == 2, "the joiner waits")
        relay.retailers.released.set()
        answers = [leader.result(5), joiner.result(5)]
    assert [a.headers["x-relay-cache"] for a in answers] == ["miss", "coalesced"]
    assert relay.retailers.calls() == 1
    remaining = relay.health(RelayGroup.CGV)["quota"]
    assert remaining["dailyRemaining"] == relay.app.relays[RelayGroup.CGV].ledger.limits.per_day - 1


def test_cgv_has_its_own_bounds(relay: RelayUnderTest) -> None:
    policy = relay.app.relays[RelayGroup.CGV].policy
    assert (policy.upstream_slots, policy.max_outstanding, policy.deadline_ms) == (4, 32, 15_000)


# --- configuration ------------------------------------------------------------------------------


def _env(tmp_path: Path, **values: str) -> dict[str, str]:
    return {"DTRYX_RELAY_TOKEN": "d" * 32, "DTRYX_RELAY_STATE_DIR": str(tmp_path / "dtryx"), **values}


def test_the_dtryx_process_serves_cgv_with_its_signing_key(tmp_path: Path) -> None:
    config = load_config(_env(tmp_path, CGV_SIGNING_KEY=" key-from-cgvs-web-code "))
    assert [c.group for c in config.groups] == [RelayGroup.DTRYX]
    assert config.cgv_signing_key == "key-from-cgvs-web-code"
    assert config.signing_key(cgv.SIGNING_KEY) == "key-from-cgvs-web-code"
    assert "key-from-cgvs-web-code" not in repr(config)
    assert load_config(_env(tmp_path)).cgv_signing_key is None


def test_asking_for_cgv_is_asking_for_the_dtryx_process_which_needs_the_key(tmp_path: Path) -> None:
    config = load_config(_env(tmp_path, CGV_SIGNING_KEY="k"), [RelayGroup.CGV])
    assert [c.group for c in config.groups] == [RelayGroup.DTRYX]
    with pytest.raises(ConfigError, match="CGV_SIGNING_KEY is required"):
        load_config(_env(tmp_path), [RelayGroup.CGV])


def test_the_lambdas_relay_body_for_every_cgv_probe_passes(relay: RelayUnderTest) -> None:
    for key in CGV_KEYS:
        raw = json.dumps(probe_body(key)).encode()
        assert relay.client.post(path_of(key), content=raw, headers=auth(RelayGroup.CGV)).status_code == 200
