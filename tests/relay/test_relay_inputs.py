"""The relays' input rules, operation by operation: what the real relay servers accept and what they refuse
(and how they answer a refusal)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from functions.core import RouteKey
from relay.inputs import (
    MAX_RELAY_BODY_BYTES,
    RelayInputRejected,
    read_relay_input,
)
from tests.support.catalog_fixtures import CU_STOCK_BODY, CU_STORE_BODY

OY_STORE = {
    "lat": 37.5635,
    "lon": 126.9839,
    "pageIdx": 1,
    "mapLat": 37.5635,
    "mapLon": 126.9839,
    "searchWords": "DF23",
    "pogKeys": "",
    "serviceKeys": "",
}
GS25_STOCK = {
    "serviceCode": "01",
    "realTimeStockYn": "Y",
    "keyword": "코카콜라",
    "pageNumber": "1",
    "pageCount": "20",
    "myPositionYCoordination": "37.5635",
    "myPositionXCoordination": "126.9839",
    "centerPositionYCoordination": "37.5635",
    "centerPositionXCoordination": "126.9839",
    "radiusCondition": "1000",
    "pickupStoreYn": "N",
    "isSuperDlvyStoreSelected": "N",
    "isGs25DlvyStoreSelected": "N",
}
SEVEN_STOCK = {
    "smCd": "161260",
    "stokMngCd": "161260",
    "stokMngQty": 1,
    "stockApplicationRate": "100",
    "storeList": ["64676"],
}
TIMETABLE = {"brandCode": "indieart", "cinemaCode": "000067", "playDate": "20260228"}


def _raw(body: object) -> bytes:
    return body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode()


def refusal(key: RouteKey, body: object) -> RelayInputRejected:
    with pytest.raises(RelayInputRejected) as caught:
        read_relay_input(key, _raw(body))
    return caught.value


@pytest.mark.parametrize(
    ("key", "body"),
    [
        (RouteKey.OY_FIND_STORE, OY_STORE),
        (RouteKey.OY_FIND_STORE, {**OY_STORE, "lat": 37, "pageIdx": 2.5}),  # any finite number
        (
            RouteKey.OY_PRODUCT_SEARCH,
            {"includeSoldOut": True, "keyword": "립밤", "sort": "01", "page": 1, "size": 10},
        ),
        (RouteKey.OY_GOODS_INFO, {"goodsNo": "any string at all, even \x00"}),
        (
            RouteKey.OY_STOCK_STORES,
            {
                **{k: OY_STORE[k] for k in ("lat", "lon", "pageIdx", "mapLat", "mapLon")},
                "productId": "8800362322138",
                "searchWords": "",
            },
        ),
        (RouteKey.CU_PRIME, {}),
        (RouteKey.CU_STOCK, CU_STOCK_BODY),
        (
            RouteKey.CU_STOCK,
            {**CU_STOCK_BODY, "offset": 5.0, "searchWord": "😀" * 100},
        ),  # 5.0 is 5; 200 units
        (RouteKey.CU_STORE, CU_STORE_BODY),
        (
            RouteKey.CU_STORE,
            {**CU_STORE_BODY, "latVal": "-90", "longVal": "180.0", "itemCd": "8801056038861"},
        ),
        (RouteKey.GS25_PRODUCTS, {"query": "코카콜라"}),
        (RouteKey.GS25_STOCK, GS25_STOCK),
        (RouteKey.GS25_STOCK, {"serviceCode": "02", "realTimeStockYn": "N"}),  # every optional key absent
        (
            RouteKey.GS25_STOCK,
            {**GS25_STOCK, "itemCode": "8801094082604", "storeCode": "VQ670", "apiKey": "k"},
        ),
        (
            RouteKey.SEVEN_GOODS,
            {
                "collection": "goods",
                "query": "코카콜라",
                "sort": "quantity/desc,itemOnm/asc",
                "startCount": 0,
                "listCount": 10,
            },
        ),
        (RouteKey.SEVEN_GOODS, {"query": "코카콜라", "pageNo": 0, "pageSize": 20}),
        (
            RouteKey.SEVEN_STORE,
            {"collection": "store", "query": "강남", "sort": "Date/desc", "listCount": 10},
        ),
        (RouteKey.SEVEN_POPWORDS, {"label": "home"}),
        (RouteKey.SEVEN_STOCK_META, {"itemCd": "8801056018979"}),
        (RouteKey.SEVEN_STOCK, SEVEN_STOCK),
        (RouteKey.SEVEN_STOCK, {**SEVEN_STOCK, "stokMngQty": 0, "stockApplicationRate": ""}),
        (RouteKey.SEVEN_PAGES, {}),
        (RouteKey.SEVEN_ISSUES, {}),
        (RouteKey.SEVEN_EXHIBITIONS, {}),
        (RouteKey.DTRYX_MOVIES, {"brandCode": "indieart", "cinemaCode": "000067"}),
        (RouteKey.DTRYX_PLAY_DATES, {"brandCode": "indieart", "cinemaCode": "000067"}),
        (RouteKey.DTRYX_TIMETABLE, TIMETABLE),
        (RouteKey.DTRYX_TIMETABLE, {**TIMETABLE, "playDate": "20280229"}),  # a leap day
    ],
)
def test_accepted_bodies_are_passed_on_exactly_as_received(key: RouteKey, body: dict[str, Any]) -> None:
    assert read_relay_input(key, _raw(body)) == body


@pytest.mark.parametrize(
    ("key", "body"),
    [
        # gs25-stock: strings only, no empty store code (what `same_body` used to send)
        (RouteKey.GS25_STOCK, {**GS25_STOCK, "pageNumber": 1}),
        (RouteKey.GS25_STOCK, {**GS25_STOCK, "radiusCondition": 1000}),
        (RouteKey.GS25_STOCK, {**GS25_STOCK, "myPositionYCoordination": 37.5635}),
        (RouteKey.GS25_STOCK, {**GS25_STOCK, "storeCode": ""}),
        (RouteKey.GS25_STOCK, {**GS25_STOCK, "storeCode": None}),
        (RouteKey.GS25_STOCK, {**GS25_STOCK, "myPositionYCoordination": "1e-05"}),
        (RouteKey.GS25_STOCK, {**GS25_STOCK, "centerPositionYCoordination": "90.5"}),
        (RouteKey.GS25_STOCK, {**GS25_STOCK, "pageCount": "12345"}),
        (RouteKey.GS25_STOCK, {**GS25_STOCK, "apiKey": ""}),
        (RouteKey.GS25_STOCK, {**GS25_STOCK, "apiKey": "k" * 513}),
        (RouteKey.GS25_STOCK, {**GS25_STOCK, "apiKey": "key\n"}),
        (RouteKey.GS25_STOCK, {"realTimeStockYn": "Y"}),  # serviceCode required
        # seven-stock: an unknown (-1) management quantity is not a count
        (RouteKey.SEVEN_STOCK, {**SEVEN_STOCK, "stokMngQty": -1}),
        (RouteKey.SEVEN_STOCK, {**SEVEN_STOCK, "stokMngQty": 10_000}),
        (RouteKey.SEVEN_STOCK, {**SEVEN_STOCK, "stokMngQty": "1"}),
        (RouteKey.SEVEN_STOCK, {**SEVEN_STOCK, "stockApplicationRate": 100}),
        (RouteKey.SEVEN_STOCK, {**SEVEN_STOCK, "storeList": []}),
        (RouteKey.SEVEN_STOCK, {**SEVEN_STOCK, "storeList": ["64 676"]}),
        # exact key sets, strict types
        (RouteKey.CU_PRIME, {"x": 1}),
        (RouteKey.SEVEN_PAGES, {"page": 1}),
        (RouteKey.CU_STOCK, {**CU_STOCK_BODY, "extra": "x"}),
        (RouteKey.CU_STOCK, {k: v for k, v in CU_STOCK_BODY.items() if k != "searchSort"}),
        (RouteKey.CU_STOCK, {**CU_STOCK_BODY, "offset": True}),
        (RouteKey.CU_STOCK, {**CU_STOCK_BODY, "offset": 0.5}),
        (RouteKey.CU_STOCK, {**CU_STOCK_BODY, "limit": 0}),
        (RouteKey.CU_STOCK, {**CU_STOCK_BODY, "searchWord": "a" * 201}),
        (RouteKey.CU_STOCK, {**CU_STOCK_BODY, "searchWord": "😀" * 101}),  # 202 UTF-16 code units
        (RouteKey.CU_STOCK, {**CU_STOCK_BODY, "searchWord": "a\x85b"}),
        (RouteKey.CU_STOCK, {**CU_STOCK_BODY, "searchWord": ""}),
        (RouteKey.CU_STORE, {**CU_STORE_BODY, "searchStock": 0}),
        (RouteKey.CU_STORE, {**CU_STORE_BODY, "latVal": 37.5}),
        (RouteKey.CU_STORE, {**CU_STORE_BODY, "latVal": "-90.1"}),
        (RouteKey.CU_STORE, {**CU_STORE_BODY, "longVal": "١٢٧"}),  # \d is [0-9]
        (RouteKey.CU_STORE, {**CU_STORE_BODY, "filterSvcList": ["x"]}),
        (RouteKey.CU_STORE, {**CU_STORE_BODY, "itemCd": "a b"}),
        (RouteKey.SEVEN_GOODS, {"query": "코카콜라", "pageNo": 0, "pageSize": 20, "sort": "x"}),
        (
            RouteKey.SEVEN_GOODS,
            {"collection": "goods", "query": "코카콜라", "startCount": 0, "listCount": 10},
        ),
        (RouteKey.SEVEN_POPWORDS, {"label": ""}),
        (RouteKey.GS25_PRODUCTS, {"query": 1}),
        (RouteKey.OY_FIND_STORE, {**OY_STORE, "lat": True}),
        (RouteKey.OY_FIND_STORE, {**OY_STORE, "lat": "37.5"}),
        (RouteKey.OY_FIND_STORE, {k: v for k, v in OY_STORE.items() if k != "pogKeys"}),
        (RouteKey.OY_FIND_STORE, _raw(OY_STORE).replace(b'"lat": 37.5635', b'"lat": 1e400')),  # Infinity
        (RouteKey.OY_GOODS_INFO, {"goodsNo": 4}),
        (
            RouteKey.OY_PRODUCT_SEARCH,
            {"includeSoldOut": 1, "keyword": "a", "sort": "01", "page": 1, "size": 1},
        ),
        (RouteKey.DTRYX_MOVIES, {"brandCode": "indieart", "cinemaCode": 123456}),
        (RouteKey.DTRYX_MOVIES, {"brandCode": "Indieart", "cinemaCode": "000067"}),
        (RouteKey.DTRYX_MOVIES, {**TIMETABLE}),  # playDate only for the timetable
        (RouteKey.DTRYX_TIMETABLE, {**TIMETABLE, "playDate": "20260230"}),
        (RouteKey.DTRYX_TIMETABLE, {**TIMETABLE, "playDate": "2026-02-28"}),
        (RouteKey.DTRYX_TIMETABLE, {"brandCode": "indieart", "cinemaCode": "000067"}),
        # not an object
        (RouteKey.CU_PRIME, []),
        (RouteKey.CU_PRIME, "{}"),
    ],
)
def test_refused_bodies(key: RouteKey, body: object) -> None:
    assert refusal(key, body).status == 400


@pytest.mark.parametrize(
    "raw", [b"", b"{oops", b'{"lat": NaN}', b'{"lat": Infinity}', b"\xff\xfe{}", b"[" * 10_000]
)
def test_what_is_not_json_is_refused(raw: bytes) -> None:
    assert refusal(RouteKey.OY_FIND_STORE, raw).body == {"error": "Invalid JSON"}
    assert refusal(RouteKey.CU_STORE, raw).body == {"error": "Relay request failed"}


def test_the_last_of_duplicated_keys_counts() -> None:
    raw = b'{"label": "", "label": "home"}'
    assert read_relay_input(RouteKey.SEVEN_POPWORDS, raw) == {"label": "home"}


@pytest.mark.parametrize(
    ("key", "too_large", "invalid"),
    [
        (RouteKey.OY_FIND_STORE, {"error": "Body too large"}, {"error": "Invalid payload"}),
        (RouteKey.CU_STOCK, {"error": "Relay request failed"}, {"error": "Relay request failed"}),
        (RouteKey.DTRYX_MOVIES, {"error": "Relay request failed"}, {"error": "Relay request failed"}),
    ],
)
def test_each_relay_answers_refusals_its_own_way(
    key: RouteKey, too_large: dict[str, str], invalid: dict[str, str]
) -> None:
    oversize = refusal(key, b'{"x":"' + b"a" * MAX_RELAY_BODY_BYTES + b'"}')
    assert (oversize.status, oversize.body) == (413, too_large)
    wrong = refusal(key, {"unexpected": 1})
    assert (wrong.status, wrong.body) == (400, invalid)
