"""The catalog itself: one spec per route key, the exact probe requests, relay calls and strict params."""

from __future__ import annotations

from datetime import date
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from pydantic import ValidationError

from functions.catalog import CATALOG, spec_for
from functions.catalog.spec import HttpRequest
from functions.core import PINNED_TO_RELAY, RouteKey
from tests.support.catalog_fixtures import (
    INVALID_INPUTS,
    PROBE_NOW,
    PROBE_RELAY_CALLS,
    PROBE_REQUESTS,
    probe_params_with,
)

NOW = PROBE_NOW


def test_one_spec_per_route_key() -> None:
    assert list(CATALOG) == list(RouteKey)
    assert all(spec_for(key).key is key for key in RouteKey)


def test_gs25_stock_is_pinned_but_still_has_a_spec() -> None:
    assert {RouteKey.GS25_STOCK} == PINNED_TO_RELAY
    assert (
        spec_for(RouteKey.GS25_STOCK).build_request(spec_for(RouteKey.GS25_STOCK).probe_params(NOW)).method
        == "GET"
    )


@pytest.mark.parametrize("key", list(RouteKey))
def test_probe_request_is_exactly_the_catalogs(key: RouteKey) -> None:
    spec = spec_for(key)
    request = spec.build_request(spec.probe_params(NOW))
    method, url, body, headers = PROBE_REQUESTS[key]
    assert isinstance(request, HttpRequest)
    assert (request.method, request.url, request.json_body) == (method, url, body)
    assert dict(request.headers) == headers


@pytest.mark.parametrize("key", list(RouteKey))
def test_probe_relay_call_is_exactly_the_catalogs(key: RouteKey) -> None:
    spec = spec_for(key)
    operation, body = PROBE_RELAY_CALLS[key]
    assert spec.relay_operation == operation
    assert dict(spec.relay_body(spec.probe_params(NOW))) == body


@pytest.mark.parametrize("key", list(RouteKey))
def test_probe_params_round_trip_through_the_strict_model(key: RouteKey) -> None:
    spec = spec_for(key)
    probe = spec.probe_params(NOW)
    assert isinstance(probe, spec.params)
    assert spec.params.model_validate(probe.model_dump()) == probe


@pytest.mark.parametrize("key", list(RouteKey))
def test_params_reject_unknown_fields(key: RouteKey) -> None:
    spec = spec_for(key)
    with pytest.raises(ValidationError):
        spec.params.model_validate({**spec.probe_params(NOW).model_dump(), "unexpected": "x"})


@pytest.mark.parametrize("key", list(RouteKey))
def test_no_header_carries_a_credential(key: RouteKey) -> None:
    spec = spec_for(key)
    headers = {name.lower() for name in spec.build_request(spec.probe_params(NOW)).headers}
    assert not headers & {
        "authorization",
        "cookie",
        "cf-access-client-id",
        "cf-access-client-secret",
        "api-key",
    }


@pytest.mark.parametrize(
    ("key", "params"), INVALID_INPUTS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(INVALID_INPUTS)]
)
def test_params_reject_invalid_input(key: RouteKey, params: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        spec_for(key).params.model_validate(params)


def test_every_route_key_has_an_invalid_input_case() -> None:
    assert {key for key, _ in INVALID_INPUTS} == set(RouteKey)


def test_seven_goods_accepts_the_clients_paged_shape() -> None:
    spec = spec_for(RouteKey.SEVEN_GOODS)
    params = spec.params.model_validate({"query": "콜라", "pageNo": 0, "pageSize": 20})
    assert spec.build_request(params).json_body == {"query": "콜라", "pageNo": 0, "pageSize": 20}


def test_seven_popwords_label_goes_in_the_query_string_only() -> None:
    spec = spec_for(RouteKey.SEVEN_POPWORDS)
    request = spec.build_request(spec.params.model_validate({"label": "search"}))
    assert request.url.endswith("/api/v1/open/search/popword?label=search")
    assert request.json_body == {}
    assert spec.relay_body(spec.params.model_validate({})) == {"label": "home"}  # default label


def test_cu_prime_params_are_strictly_empty() -> None:
    assert spec_for(RouteKey.CU_PRIME).params.model_validate({}).model_dump() == {}


def test_oy_map_centre_defaults_to_the_position() -> None:
    params = spec_for(RouteKey.OY_STOCK_STORES).params.model_validate(
        {"productId": "8800362322138", "lat": 35.1, "lon": 129.0}
    )
    assert (params.mapLat, params.mapLon, params.pageIdx, params.searchWords) == (35.1, 129.0, 1, "")


def test_cu_store_coordinates_may_be_given_as_numbers() -> None:
    params = spec_for(RouteKey.CU_STORE).params.model_validate({"latVal": 37.5, "longVal": 127.0})
    assert (params.latVal, params.longVal, params.baseLatVal, params.baseLongVal) == (
        "37.5",
        "127",
        "37.5",
        "127",
    )


@pytest.mark.parametrize("given", ["2025-06-02", "20250602", date(2025, 6, 2)])
def test_dtryx_play_date_is_sent_dashed_upstream_and_compact_to_the_relay(given: object) -> None:
    spec = spec_for(RouteKey.DTRYX_TIMETABLE)
    params = spec.params.model_validate({"brandCode": "indieart", "cinemaCode": "000053", "playDate": given})
    query = parse_qsl(urlsplit(spec.build_request(params).url).query, keep_blank_values=True)
    assert [name for name, _ in query] == [
        "ChannelCd",
        "EngVerYn",
        "WorkGuID",
        "BrandCd",
        "CinemaCd",
        "PlaySDT",
        "ImgSize",
    ]
    assert dict(query)["PlaySDT"] == "2025-06-02"
    assert spec.relay_body(params)["playDate"] == "20250602"


@pytest.mark.parametrize(
    ("now_ms", "korean_date"),
    [
        (1_748_789_999_000, "2025-06-01"),  # 2025-06-01 23:59:59 KST
        (1_748_790_000_000, "2025-06-02"),  # 2025-06-02 00:00:00 KST (still 06-01 in UTC)
        (1_748_876_399_000, "2025-06-02"),  # 2025-06-02 23:59:59 KST
    ],
)
def test_dtryx_probe_date_is_today_in_korea(now_ms: int, korean_date: str) -> None:
    spec = spec_for(RouteKey.DTRYX_TIMETABLE)
    assert spec.probe_params(now_ms).playDate.isoformat() == korean_date
    assert f"PlaySDT={korean_date}" in spec.build_request(spec.probe_params(now_ms)).url


@pytest.mark.parametrize(
    ("now_ms", "play_date"),
    [
        (1_748_789_999_000, "20250601"),  # 2025-06-01 23:59:59 KST
        (1_748_790_000_000, "20250602"),  # 2025-06-02 00:00:00 KST (still 06-01 in UTC)
    ],
)
@pytest.mark.parametrize("key", [RouteKey.CGV_MOVIES, RouteKey.CGV_TIMETABLE, RouteKey.CGV_TIMETABLE_MOVIE])
def test_cgv_probe_is_the_gangnam_theater_today_in_korea(key: RouteKey, now_ms: int, play_date: str) -> None:
    probe = spec_for(key).probe_params(now_ms)
    assert (probe.theaterCode, probe.playDate) == ("0056", play_date)
    assert f"siteNo=0056&scnYmd={play_date}" in spec_for(key).build_request(probe).url


@pytest.mark.parametrize("key", list(RouteKey))
def test_probe_params_are_fixed_apart_from_the_date(key: RouteKey) -> None:
    spec = spec_for(key)
    if key is RouteKey.DTRYX_TIMETABLE:
        assert spec.probe_params(NOW).brandCode == spec.probe_params(NOW + 86_400_000).brandCode
    else:
        today, tomorrow = (spec.probe_params(now).model_dump() for now in (NOW, NOW + 86_400_000))
        if "playDate" in today:  # CGV's: today in Korea, a compact string
            assert (today.pop("playDate"), tomorrow.pop("playDate")) == ("20250602", "20250603")
        assert today == tomorrow


def test_gs25_stock_needs_an_item_or_keyword_and_takes_either() -> None:
    params = spec_for(RouteKey.GS25_STOCK).params
    position = {"myPositionYCoordination": 37.5, "myPositionXCoordination": 127.0}
    assert (
        params.model_validate({**position, "itemCode": "8801094017200"}).centerPositionYCoordination == 37.5
    )
    assert params.model_validate({**position, "keyword": "콜라"}).keyword == "콜라"


@pytest.mark.parametrize(
    ("key", "params"),
    [
        (RouteKey.DTRYX_MOVIES, {"brandCode": "indieart", "cinemaCode": "٠٠٠٠٦٧"}),  # Arabic-Indic digits
        (
            RouteKey.DTRYX_TIMETABLE,
            {"brandCode": "indieart", "cinemaCode": "000067", "playDate": "２０２５０６０２"},
        ),
        (RouteKey.SEVEN_STOCK, probe_params_with(RouteKey.SEVEN_STOCK, stockApplicationRate="１００")),
        (RouteKey.CGV_MOVIES, {"theaterCode": "٠٠٥٦", "playDate": "20250602"}),
        (RouteKey.CGV_MOVIES, {"theaterCode": "0056", "playDate": "２０２５０６０２"}),
    ],
)
def test_codes_and_dates_take_ascii_digits_only(key: RouteKey, params: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        spec_for(key).params.model_validate(params)
