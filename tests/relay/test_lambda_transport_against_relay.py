"""End to end: the Lambda's relay transport against the real relay server (uvicorn on 127.0.0.1), the relay
in front of simulated retailers. A body the relay refuses would fail here: the Lambda's bodies must pass the
relay's input rules for every operation."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel

from functions.adapters.http import new_http_client
from functions.adapters.relay import RelayCredentials, RelayEndpoint, RelayTransport
from functions.catalog import spec_for
from functions.catalog.cgv import CgvTimetableQuery
from functions.core import ApiError, ErrorCode, Reason, RelayGroup, RouteKey, group_of
from functions.services.lookup import MAX_RELAY_CALLS_PER_LOOKUP, RELAY_CALLS_SPENT, Lookup
from functions.services.routing import Router
from relay.app import POLICIES
from relay.config import GroupConfig, RelayConfig
from relay.logs import RelayLog
from relay.server import BackgroundRelay, bound_socket, build_apps
from tests.relay.conftest import CGV_SIGNING_KEY, PROCESS_GROUPS, START_MS, TOKENS, Retailers
from tests.support.clock import ManualClock
from tests.support.core_fakes import RecordingEvents, RecordingRelayEvents

ACCESS = {"access_client_id": "client.access", "access_client_secret": "access-secret-value"}
GS25_KEY = "lambda-gs25-key"


@pytest.fixture
def served(tmp_path: Path, retailers: Retailers) -> Iterator[tuple[RelayTransport, io.StringIO]]:
    config = RelayConfig(
        tuple(GroupConfig(group, TOKENS[group], tmp_path / group.value, 0) for group in PROCESS_GROUPS),
        cgv_signing_key=CGV_SIGNING_KEY,
    )
    for group_config in config.groups:
        group_config.state_dir.mkdir(mode=0o700)
    log = io.StringIO()
    (app,) = build_apps(
        config,
        log=RelayLog(log),
        clock=ManualClock(START_MS),
        transport=httpx.MockTransport(retailers.handle),
    ).values()
    relay = BackgroundRelay(app, bound_socket()).start()
    endpoints = {
        group: RelayEndpoint.parse(
            group,
            relay.url,
            RelayCredentials(
                TOKENS[group], **ACCESS, api_key=GS25_KEY if group is RelayGroup.CONVENIENCE else None
            ),
        )
        for group in RelayGroup
    }
    with new_http_client() as client:
        yield RelayTransport(client, endpoints, events=RecordingRelayEvents()), log
    relay.stop()


@pytest.mark.parametrize("key", list(RouteKey))
def test_every_operation_through_the_real_relay(
    served: tuple[RelayTransport, io.StringIO], retailers: Retailers, key: RouteKey
) -> None:
    transport, log = served
    spec = spec_for(key)
    body = transport.fetch(spec, spec.probe_params(START_MS), timeout_ms=5_000)
    assert isinstance(body, BaseModel)  # the spec's validated answer
    assert retailers.calls(key) == 1
    (sent,) = retailers.requests
    credentials = [*TOKENS.values(), *ACCESS.values(), CGV_SIGNING_KEY]
    seen = str(sent.url) + sent.content.decode() + json.dumps(dict(sent.headers))
    assert not any(value in seen for value in credentials)
    if key is RouteKey.GS25_STOCK:
        assert sent.headers["Api-Key"] == GS25_KEY
    deadline = time.monotonic() + 5  # the relay logs a request once it has answered it
    while '"event":"request"' not in log.getvalue():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    (line,) = [json.loads(text) for text in log.getvalue().splitlines() if '"event":"request"' in text]
    assert (line["group"], line["status"]) == (group_of(key).value, 200)


def test_every_group_is_healthy_for_the_probe(served: tuple[RelayTransport, io.StringIO]) -> None:
    transport, _ = served
    for group in RelayGroup:
        check = transport.check_health(group, timeout_ms=3_000, now=START_MS)
        assert (check.healthy, check.reason) == (True, Reason.OK), group


# --- issue 31: one client draining the Dtryx relay with CGV timetables ----------------------------------


def _relay_first_lookup(transport: RelayTransport) -> Lookup:
    """One API request's lookup with every key routed to its relay (CGV refuses AWS addresses)."""
    router = Router(
        clock=ManualClock(START_MS),
        snapshots=None,
        reporter=None,
        relay_configured=lambda _group: True,
        events=RecordingEvents(),
    )
    return Lookup(
        router=router, direct=transport, relays=transport, clock=ManualClock(START_MS), budget_ms=10_000
    )


def _empty_theater_with_films(retailers: Retailers, films: int) -> None:
    """A theater whose own timetable is empty and which lists `films` films: the timetable's fallback."""
    retailers.answers[RouteKey.CGV_TIMETABLE] = lambda _request: httpx.Response(
        200, json={"statusCode": 0, "data": []}
    )
    rows = [{"movNo": f"3000000{number}", "movNm": f"영화 {number}"} for number in range(films)]
    retailers.answers[RouteKey.CGV_MOVIES] = lambda _request: httpx.Response(
        200, json={"statusCode": 0, "data": rows}
    )
    retailers.answers[RouteKey.CGV_TIMETABLE_MOVIE] = _one_screening_of_the_film_asked


def _one_screening_of_the_film_asked(request: httpx.Request) -> httpx.Response:
    asked = request.url.params
    row = {name: asked[name] for name in ("siteNo", "scnYmd")} | {
        "movNo": asked["movNo"],
        "movNm": "영화",
        "siteNm": "CGV 안산",
        "scnSseq": 1,
        "scnsrtTm": "1230",
        "scnendTm": "1430",
    }
    return httpx.Response(200, json={"statusCode": 0, "data": [row]})


def test_a_cgv_timetable_of_a_new_date_spends_at_most_its_relay_calls_and_says_so(
    served: tuple[RelayTransport, io.StringIO], retailers: Retailers
) -> None:
    transport, _ = served
    _empty_theater_with_films(retailers, films=4)  # the 0211: six relay calls before
    lookup = _relay_first_lookup(transport)
    with pytest.raises(ApiError) as refused:
        CgvTimetableQuery(theaterCode="0211", playDate="20260105").fetch(lookup)
    error = refused.value
    assert (error.status, error.code, error.message) == (
        429,
        ErrorCode.RELAY_QUOTA_EXCEEDED,
        RELAY_CALLS_SPENT,
    )
    assert error.retry_after is None  # asking again would not help
    assert lookup.relay_calls == MAX_RELAY_CALLS_PER_LOOKUP == retailers.calls()
    _empty_theater_with_films(retailers, films=2)  # a fallback within the calls still answers in full
    found = CgvTimetableQuery(theaterCode="0211", playDate="20260106").fetch(_relay_first_lookup(transport))
    assert [row["movieCode"] for row in found["timetable"]] == ["30000000", "30000001"]
    assert retailers.calls() == MAX_RELAY_CALLS_PER_LOOKUP * 2


def test_fifty_cgv_drains_leave_dtryx_its_share(
    served: tuple[RelayTransport, io.StringIO], retailers: Retailers
) -> None:
    transport, _ = served
    _empty_theater_with_films(retailers, films=4)
    refusals: list[int | None] = []
    for day in range(50):  # a new date each time: no relay cache helps
        play_date = (date(2026, 1, 1) + timedelta(days=day)).strftime("%Y%m%d")
        lookup = _relay_first_lookup(transport)
        with pytest.raises(ApiError) as refused:
            CgvTimetableQuery(theaterCode="0211", playDate=play_date).fetch(lookup)
        assert refused.value.code is ErrorCode.RELAY_QUOTA_EXCEEDED
        assert lookup.relay_calls <= MAX_RELAY_CALLS_PER_LOOKUP
        refusals.append(refused.value.retry_after)
    assert refusals[0] is None  # the lookup's own relay calls stopped it
    assert refusals[-1] is not None  # CGV's share ran out: the relay's own 429, with Retry-After
    assert retailers.calls() == POLICIES[RelayGroup.CGV].quota.per_minute  # CGV's share, all of it
    dtryx = spec_for(RouteKey.DTRYX_MOVIES)
    answer = _relay_first_lookup(transport)(RouteKey.DTRYX_MOVIES, dtryx.probe_params(START_MS))
    assert isinstance(answer, BaseModel)  # another client's Dtryx lookup is served
    assert retailers.calls(RouteKey.DTRYX_MOVIES) == 1
