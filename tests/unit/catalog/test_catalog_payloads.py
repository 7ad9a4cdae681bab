"""The simulator's payloads: realistic bodies pass validation for any valid params, soft-failure bodies fail
with SHAPE, wrong-kind bodies with INVALID_RESPONSE; all deterministic."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from functions.catalog import spec_for
from functions.core import Reason, RouteKey
from relay.inputs import read_relay_input
from sandbox.simulator.payloads import (
    bad_shape_payload,
    probe_request,
    realistic_payload,
    request_fields,
    soft_failure_payloads,
    wrong_kind_payload,
)
from tests.support.catalog_fixtures import rejection
from tests.support.examples import examples

text = st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=40)
code = st.from_regex(r"[A-Za-z0-9_-]{1,20}", fullmatch=True)
lat = st.floats(-90, 90, allow_nan=False)
lon = st.floats(-180, 180, allow_nan=False)
page = st.integers(1, 50)
brand = st.from_regex(r"[a-z][a-z0-9_-]{0,10}", fullmatch=True)
cinema = st.from_regex(r"[0-9]{6}", fullmatch=True)
cgv_site = st.fixed_dictionaries(
    {
        "theaterCode": st.from_regex(r"[0-9]{4}", fullmatch=True),
        "playDate": st.dates(date(2000, 1, 1), date(2099, 12, 31)).map(lambda day: day.strftime("%Y%m%d")),
    }
)

NOW_MS = 1_767_225_600_000


def params_of(key: RouteKey) -> st.SearchStrategy[dict[str, Any]]:
    """A key's params drawn from its strategy here, else its probe's params (a new key needs no entry)."""
    if key in PARAMS:
        return PARAMS[key]
    return st.just(spec_for(key).probe_params(NOW_MS).model_dump(mode="json"))


PARAMS: dict[RouteKey, st.SearchStrategy[dict[str, Any]]] = {
    RouteKey.OY_FIND_STORE: st.fixed_dictionaries(
        {"lat": lat, "lon": lon, "pageIdx": page, "searchWords": text}
    ),
    RouteKey.OY_PRODUCT_SEARCH: st.fixed_dictionaries(
        {"keyword": text, "page": page, "size": st.integers(1, 100), "includeSoldOut": st.booleans()}
    ),
    RouteKey.OY_GOODS_INFO: st.fixed_dictionaries(
        {"goodsNo": st.from_regex(r"[A-Z0-9]{1,20}", fullmatch=True)}
    ),
    RouteKey.OY_STOCK_STORES: st.fixed_dictionaries(
        {"productId": st.from_regex(r"[0-9]{13}", fullmatch=True), "lat": lat, "lon": lon, "pageIdx": page}
    ),
    RouteKey.CU_PRIME: st.just({}),
    RouteKey.CU_STOCK: st.fixed_dictionaries(
        {"searchWord": text, "offset": st.integers(0, 9999), "limit": st.integers(1, 9999)}
    ),
    RouteKey.CU_STORE: st.fixed_dictionaries(
        {"latVal": lat, "longVal": lon, "searchWord": st.just("") | text, "itemCd": st.just("") | code}
    ),
    RouteKey.GS25_PRODUCTS: st.fixed_dictionaries({"query": text}),
    RouteKey.GS25_STOCK: st.fixed_dictionaries(
        {"myPositionYCoordination": lat, "myPositionXCoordination": lon, "keyword": text}
    ),
    RouteKey.SEVEN_GOODS: st.one_of(
        st.fixed_dictionaries({"query": text, "pageNo": st.integers(0, 50), "pageSize": st.integers(1, 100)}),
        st.fixed_dictionaries(
            {
                "query": text,
                "collection": st.just("goods"),
                "sort": st.just("quantity/desc,itemOnm/asc"),
                "startCount": st.integers(0, 500),
                "listCount": st.integers(1, 100),
            }
        ),
    ),
    RouteKey.SEVEN_STORE: st.fixed_dictionaries({"query": text, "listCount": st.integers(1, 100)}),
    RouteKey.SEVEN_POPWORDS: st.fixed_dictionaries({"label": code}),
    RouteKey.SEVEN_STOCK_META: st.fixed_dictionaries({"itemCd": code}),
    RouteKey.SEVEN_STOCK: st.fixed_dictionaries(
        {
            "smCd": code,
            "stokMngCd": code,
            "stokMngQty": st.integers(0, 9999),
            "stockApplicationRate": st.from_regex(r"[0-9]{1,3}", fullmatch=True),
            "storeList": st.lists(code, min_size=1, max_size=200),
        }
    ),
    RouteKey.SEVEN_PAGES: st.just({}),
    RouteKey.SEVEN_ISSUES: st.just({}),
    RouteKey.SEVEN_EXHIBITIONS: st.just({}),
    RouteKey.DTRYX_MOVIES: st.fixed_dictionaries({"brandCode": brand, "cinemaCode": cinema}),
    RouteKey.DTRYX_PLAY_DATES: st.fixed_dictionaries({"brandCode": brand, "cinemaCode": cinema}),
    RouteKey.DTRYX_TIMETABLE: st.fixed_dictionaries(
        {"brandCode": brand, "cinemaCode": cinema, "playDate": st.dates()}
    ),
    RouteKey.CGV_THEATERS: st.just({}),
    RouteKey.CGV_MOVIES: cgv_site,
    RouteKey.CGV_TIMETABLE: cgv_site,
    RouteKey.CGV_TIMETABLE_MOVIE: st.builds(
        lambda site, movie: {**site, "movieCode": movie},
        cgv_site,
        st.from_regex(r"[0-9]{1,16}", fullmatch=True),
    ),
}


@pytest.mark.parametrize("key", list(RouteKey))
def test_probe_payload_passes_validation_and_normalizes(key: RouteKey) -> None:
    body = realistic_payload(key, probe_request(key))
    assert spec_for(key).normalize(spec_for(key).validate(body))


@pytest.mark.parametrize("key", list(RouteKey))
@settings(
    max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_any_valid_params_get_a_valid_body_direct_and_relay(key: RouteKey, data: st.DataObject) -> None:
    spec = spec_for(key)
    params = spec.params.model_validate(data.draw(params_of(key)))
    request = spec.build_request(params)
    # JSON round trip: exactly what a simulated retailer / relay receives on the wire.
    retailer_sees = json.loads(json.dumps(request_fields(request.url, request.json_body)))
    relay_sees = json.loads(json.dumps(dict(spec.relay_body(params))))
    for received in (retailer_sees, relay_sees):
        body = realistic_payload(key, received)
        spec.validate(body)
        assert realistic_payload(key, received) == body  # deterministic


@pytest.mark.parametrize("day", [date(991, 9, 21), date(1, 1, 1), date(2026, 2, 28)])
def test_a_timetable_of_any_date_asks_the_relay_for_its_eight_digits(day: date) -> None:
    spec = spec_for(RouteKey.DTRYX_TIMETABLE)
    params = spec.params.model_validate({"brandCode": "indieart", "cinemaCode": "000067", "playDate": day})
    body = json.dumps(dict(spec.relay_body(params))).encode()
    assert read_relay_input(RouteKey.DTRYX_TIMETABLE, body)["playDate"] == day.isoformat().replace("-", "")


@pytest.mark.parametrize("key", list(RouteKey))
def test_soft_failure_payloads_fail_with_shape(key: RouteKey) -> None:
    failures = soft_failure_payloads(key)
    assert failures
    for name, body in failures.items():
        assert rejection(key, body) is Reason.SHAPE, name
        json.dumps(body)  # still a plain 200 JSON body


@pytest.mark.parametrize("key", list(RouteKey))
def test_bad_shape_payload_fails_with_shape(key: RouteKey) -> None:
    assert rejection(key, bad_shape_payload(key)) is Reason.SHAPE


@pytest.mark.parametrize(
    ("key", "signal"),
    [
        (RouteKey.OY_FIND_STORE, ("status", "FAIL")),
        (RouteKey.CU_STOCK, ("resp_cd", "3000")),
        (RouteKey.SEVEN_GOODS, ("code", 500)),
        (RouteKey.DTRYX_TIMETABLE, ("RetCode", "fail")),
    ],
)
def test_bad_shape_uses_the_retailers_own_failure_signal(key: RouteKey, signal: tuple[str, object]) -> None:
    body = bad_shape_payload(key)
    assert isinstance(body, dict)
    assert body[signal[0]] == signal[1]


@pytest.mark.parametrize("key", list(RouteKey))
def test_wrong_kind_payload_is_invalid_response(key: RouteKey) -> None:
    assert rejection(key, wrong_kind_payload(key)) is Reason.INVALID_RESPONSE


@pytest.mark.parametrize(
    ("key", "request_fields_", "path_to_stock"),
    [
        (RouteKey.CU_STORE, {"latVal": "37.5", "longVal": "127.0", "itemCd": "8801056038861"}, "stores"),
        (
            RouteKey.GS25_STOCK,
            {"myPositionYCoordination": "37.5", "myPositionXCoordination": "127.0"},
            "stores",
        ),
        (RouteKey.SEVEN_STOCK, {"storeList": ["1", "2", "3", "4"]}, "stores"),
    ],
)
def test_stock_payloads_include_zero_and_unknown(
    key: RouteKey, request_fields_: dict[str, Any], path_to_stock: str
) -> None:
    spec = spec_for(key)
    data = spec.normalize(spec.validate(realistic_payload(key, request_fields_)))
    statuses = {row["stock"]["status"] for row in data[path_to_stock]}
    assert {"in_stock", "out_of_stock", "unknown"} <= statuses


def test_oy_stock_payload_includes_every_status() -> None:
    spec = spec_for(RouteKey.OY_STOCK_STORES)
    data = spec.normalize(
        spec.validate(realistic_payload(RouteKey.OY_STOCK_STORES, probe_request(RouteKey.OY_STOCK_STORES)))
    )
    assert {row["stock"]["status"] for row in data["stores"]} == {
        "in_stock",
        "out_of_stock",
        "unknown",
        "not_sold",
    }
    assert data["stores"][0]["storeCode"] == "DF23"


def test_timetable_payload_follows_the_requested_date_in_either_form() -> None:
    dashed = realistic_payload(RouteKey.DTRYX_TIMETABLE, {"PlaySDT": "2025-12-24", "CinemaCd": "000053"})
    compact = realistic_payload(RouteKey.DTRYX_TIMETABLE, {"playDate": "20251224", "cinemaCode": "000053"})
    for body in (dashed, compact):
        assert isinstance(body, dict)
        assert {row["PlaySDT"] for row in body["Recordset"]} == {"2025-12-24"}
        assert {row["CinemaCd"] for row in body["Recordset"]} == {"000053"}


def test_play_dates_start_from_the_given_today() -> None:
    body = realistic_payload(RouteKey.DTRYX_PLAY_DATES, {}, today=date(2025, 12, 30))
    assert isinstance(body, dict)
    assert [row["PlaySDT"] for row in body["Recordset"]][:3] == ["2025-12-30", "2025-12-31", "2026-01-01"]


def test_seven_stock_payload_answers_every_requested_store() -> None:
    body = realistic_payload(RouteKey.SEVEN_STOCK, {"storeList": ["64676", "10001"]})
    assert isinstance(body, dict)
    assert [row["storeCd"] for row in body["data"]["storeList"]] == ["64676", "10001"]


def test_different_requests_get_different_bodies() -> None:
    one = realistic_payload(RouteKey.CU_STOCK, {"searchWord": "레쓰비"})
    other = realistic_payload(RouteKey.CU_STOCK, {"searchWord": "바나나우유"})
    assert one != other
