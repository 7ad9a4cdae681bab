"""spec.normalize(): the API's `data` per route key, with stock statuses (-1/null -> unknown, never 0)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from functions.catalog import spec_for
from functions.core import RouteKey
from tests.support.catalog_fixtures import OY_STORE, VALID


def _data(key: RouteKey, body: dict[str, Any] | None = None) -> dict[str, Any]:
    spec = spec_for(key)
    return dict(spec.normalize(spec.validate(VALID[key] if body is None else body)))


def columns(rows: list[dict[str, Any]], *fields: str) -> list[tuple[Any, ...]]:
    """Each row's values in the order of `fields`, which must be exactly the fields the row has."""
    assert all(sorted(row) == sorted(fields) for row in rows), [sorted(row) for row in rows]
    return [tuple(row[field] for field in fields) for row in rows]


@pytest.mark.parametrize("key", list(RouteKey))
def test_every_key_normalizes_to_plain_json(key: RouteKey) -> None:
    data = _data(key)
    assert data
    assert json.loads(json.dumps(data, ensure_ascii=False)) == data


@pytest.mark.parametrize("key", list(RouteKey))
def test_normalize_refuses_an_unvalidated_body(key: RouteKey) -> None:
    other = RouteKey.DTRYX_MOVIES if key is not RouteKey.DTRYX_MOVIES else RouteKey.CU_PRIME
    with pytest.raises(TypeError):
        spec_for(key).normalize(spec_for(other).validate(VALID[other]))


def test_oy_find_store() -> None:
    renamed = {"openYn": "open", "pickupYn": "pickup"}
    store = {renamed.get(name, name): value for name, value in OY_STORE.items()}
    assert _data(RouteKey.OY_FIND_STORE) == {"totalCount": 1, "stores": [store]}


def test_oy_product_search() -> None:
    data = _data(RouteKey.OY_PRODUCT_SEARCH)
    assert (data["totalCount"], data["nextPage"]) == (31, True)
    first, second = data["products"]
    assert first == {
        "goodsNumber": "A000000165760",
        "goodsName": "바세린 립 테라피 오리지널",
        "price": 4500,
        "originalPrice": 5000,
        "discountRate": 10,
        "imagePath": "10/0000/0016/A00000016576001ko.jpg",
        "todayDelivery": True,
        "onlineStock": {"quantity": 3, "status": "in_stock"},
    }
    assert isinstance(first["price"], int)
    assert second["onlineStock"] == {"quantity": 0, "status": "out_of_stock"}


def test_oy_goods_info() -> None:
    assert _data(RouteKey.OY_GOODS_INFO) == {
        "masterGoodsNumber": "8800362322138",
        "goodsNumber": "A000000165760",
        "goodsName": None,
    }


def test_oy_stock_stores_statuses() -> None:
    stores = _data(RouteKey.OY_STOCK_STORES)["stores"]
    assert [store["stock"] for store in stores] == [
        {"quantity": 5, "status": "in_stock"},  # max(remain 2, o2oRemain 5)
        {"quantity": 0, "status": "out_of_stock"},
        {"quantity": None, "status": "unknown"},  # both null: unknown, not 0
        {"quantity": 0, "status": "not_sold"},  # salesStoreYn false
    ]


def test_oy_stock_uses_whichever_quantity_is_known() -> None:
    body = json.loads(json.dumps(VALID[RouteKey.OY_STOCK_STORES]))
    body["data"]["storeList"][0].update(remainQuantity=None, o2oRemainQuantity=4)
    assert _data(RouteKey.OY_STOCK_STORES, body)["stores"][0]["stock"] == {
        "quantity": 4,
        "status": "in_stock",
    }


def test_cu_prime() -> None:
    assert _data(RouteKey.CU_PRIME) == {"categories": [{"code": "10", "name": "간편식사"}]}


def test_cu_stock() -> None:
    data = _data(RouteKey.CU_STOCK)
    fields = ("itemCode", "itemName", "price", "onlineItemNo", "pickup", "delivery", "reservation")
    assert {**data, "products": columns(data["products"], *fields)} == {
        "totalCount": 2,
        "products": [
            ("8801056038861", "레쓰비 마일드 250ml", 1500, None, True, False, False),
            ("8801056038878", "레쓰비 카페라떼 240ml", 1700, "100200300", None, None, None),
        ],
    }


def test_cu_store_statuses_and_coordinates() -> None:
    data = _data(RouteKey.CU_STORE)
    assert data["totalCount"] == 4
    first = data["stores"][0]
    assert (first["latitude"], first["longitude"], first["distance"]) == (37.5637, 126.9851, 120)
    assert (first["delivery"], first["storePickup"], first["deliveryPickup"]) == (True, False, None)
    assert [store["stock"] for store in data["stores"]] == [
        {"quantity": 4, "status": "in_stock"},
        {"quantity": 0, "status": "out_of_stock"},  # "0" string is a real zero
        {"quantity": None, "status": "unknown"},  # -1
        {"quantity": None, "status": "unknown"},  # null
    ]


def test_gs25_products() -> None:
    data = _data(RouteKey.GS25_PRODUCTS)
    fields = ("itemCode", "itemName", "shortItemName", "rating", "stockCheckable")
    assert {**data, "products": columns(data["products"], *fields)} == {
        "totalCount": 1,
        "products": [("8801094017200", "코카콜라 500ml", "코카콜라500", None, True)],
    }


def test_gs25_stock() -> None:
    stores = _data(RouteKey.GS25_STOCK)["stores"]
    assert stores[0] | {"pickupStock": None, "deliveryStock": None} == {
        "storeCode": "VQ670",
        "storeName": "GS25 역삼점",
        "address": "서울 강남구 역삼동",
        "latitude": 37.5006,
        "longitude": 127.0365,
        "itemName": "코카콜라 500ml",
        "price": 2200,
        "stock": {"quantity": 3, "status": "in_stock"},
        "pickupStock": None,
        "deliveryStock": None,
    }
    assert [store["stock"]["status"] for store in stores] == ["in_stock", "out_of_stock", "unknown"]
    assert stores[2]["stock"]["quantity"] is None


@pytest.mark.parametrize(
    ("row", "code", "name"),
    [
        ({"realStockQuantity": "0"}, None, None),  # the original's own test row: nothing else is required
        ({"storeCode": "", "storeName": " ", "realStockQuantity": "0"}, None, None),
        ({"storeCode": "VQ670", "realStockQuantity": "0"}, "VQ670", None),
    ],
)
def test_gs25_stock_rows_need_no_store_code_or_name(
    row: dict[str, Any], code: str | None, name: str | None
) -> None:
    stores = _data(RouteKey.GS25_STOCK, {"stores": [row]})["stores"]
    assert (stores[0]["storeCode"], stores[0]["storeName"]) == (code, name)
    assert stores[0]["stock"] == {"quantity": 0, "status": "out_of_stock"}


def test_seven_goods() -> None:
    data = _data(RouteKey.SEVEN_GOODS)
    fields = (
        "itemCode",
        "itemName",
        "price",
        "cost",
        "productNo",
        "imageUrl",
        "event",
        "rating",
        "reviewCount",
    )
    assert {**data, "products": columns(data["products"], *fields)} == {
        "totalCount": 12,
        "products": [("8801094017200", "코카콜라 500ml", 2000, None, "1000123", None, None, None, None)],
    }


def test_seven_store() -> None:
    data = _data(RouteKey.SEVEN_STORE)
    fields = ("storeCode", "storeName", "address", "latitude", "longitude", "pickup", "delivery", "closed")
    assert {**data, "stores": columns(data["stores"], *fields)} == {
        "totalCount": None,
        "stores": [
            ("64676", "세븐일레븐 강남역점", "서울 강남구 강남대로 396", 37.4979, 127.0276, True, None, None)
        ],
    }


def test_seven_store_coordinates_are_read_from_lat_and_lng_only() -> None:
    # `lat`/`lng` are the keys the original read (docs/upstreams/seveneleven.md); others are not guessed at.
    row = {"strCd": "64676", "strNm": "세븐일레븐 강남역점", "gpsLat": "37.4979", "xCoord": "127.0276"}
    body = {"success": True, "code": 200, "data": {"content": [row]}}
    (store,) = _data(RouteKey.SEVEN_STORE, body)["stores"]
    assert (store["latitude"], store["longitude"]) == (None, None)


def test_seven_popwords_mixed_items_and_empty() -> None:
    assert _data(RouteKey.SEVEN_POPWORDS) == {
        "keywords": [{"rank": 1, "keyword": "포켓몬빵"}, {"rank": 2, "keyword": "하이볼"}]
    }
    empty = {"success": True, "code": 200, "data": {}}
    assert _data(RouteKey.SEVEN_POPWORDS, empty) == {"keywords": []}


def test_seven_stock_meta() -> None:
    assert _data(RouteKey.SEVEN_STOCK_META) == {
        "itemCd": "8801056018979",
        "itemName": "칠성사이다 500ml",
        "productNo": None,
        "smCd": "161260",
        "stokMngCd": "161260",
        "stokMngQty": 1,
        "stockApplicationRate": "100",
    }


@pytest.mark.parametrize(
    ("stock", "expected"),
    [
        ("5", {"quantity": 5, "status": "in_stock"}),
        (0, {"quantity": 0, "status": "out_of_stock"}),
        ("0", {"quantity": 0, "status": "out_of_stock"}),
        (-1, {"quantity": None, "status": "unknown"}),
    ],
)
def test_seven_stock_statuses(stock: object, expected: dict[str, Any]) -> None:
    body = {"success": True, "code": 200, "data": {"storeList": [{"storeCd": "64676", "stock": stock}]}}
    assert _data(RouteKey.SEVEN_STOCK, body) == {"stores": [{"storeCode": "64676", "stock": expected}]}


@pytest.mark.parametrize("key", [RouteKey.SEVEN_PAGES, RouteKey.SEVEN_ISSUES])
def test_seven_product_listings(key: RouteKey) -> None:
    products = _data(key)["products"]
    assert len(products) == 1
    assert isinstance(products[0]["price"], int)
    assert products[0]["itemName"]


def test_seven_exhibitions() -> None:
    assert _data(RouteKey.SEVEN_EXHIBITIONS) == {
        "exhibitions": [
            {
                "id": 12,
                "name": "여름 음료 대전",
                "startDate": "2025-06-01",
                "endDate": "2025-06-30",
                "productCount": 2,
            }
        ]
    }


def test_seven_exhibition_without_a_product_list_has_an_unknown_count() -> None:
    body = {"success": True, "data": [{"exhibitionIdx": 3, "exhibitionName": "가을 기획전"}]}
    [exhibition] = _data(RouteKey.SEVEN_EXHIBITIONS, body)["exhibitions"]
    assert exhibition["productCount"] is None


def test_dtryx_movies() -> None:
    assert _data(RouteKey.DTRYX_MOVIES) == {
        "totalCount": 1,
        "movies": [
            {"movieCode": "20241234", "movieName": "괴물", "runningTime": 120, "rating": "15세이상관람가"}
        ],
    }


def test_dtryx_play_dates() -> None:
    assert _data(RouteKey.DTRYX_PLAY_DATES) == {
        "playDates": [
            {"date": "2025-06-02", "hidden": False, "closed": False},
            {"date": "2025-06-03", "hidden": None, "closed": None},
        ]
    }


def test_dtryx_timetable_seats_and_times() -> None:
    first, second = _data(RouteKey.DTRYX_TIMETABLE)["showtimes"]
    assert (first["startTime"], first["endTime"], first["showSeq"]) == ("10:30", "12:30", "1")
    assert (first["totalSeats"], first["remainingSeats"]) == (64, 0)  # a real sell-out stays 0
    assert (second["totalSeats"], second["remainingSeats"]) == (None, None)  # -1 / null: unknown
    assert first["cinemaName"] == "아트하우스모모"


def test_cgv_theaters_keep_each_sites_region() -> None:
    assert _data(RouteKey.CGV_THEATERS) == {
        "theaters": [
            {"theaterCode": "0056", "theaterName": "강남", "regionCode": "01"},
            {"theaterCode": "0001", "theaterName": "강변", "regionCode": "01"},
            {"theaterCode": "0211", "theaterName": "안산", "regionCode": "02"},
        ]
    }


def test_cgv_movies_without_a_rating_have_none() -> None:
    assert _data(RouteKey.CGV_MOVIES) == {
        "movies": [
            {"movieCode": "30000985", "movieName": "하얼빈", "rating": "전체관람가"},
            {"movieCode": "30000986", "movieName": "모아나 2", "rating": None},
        ]
    }


def test_cgv_site_timetable() -> None:
    first, special = _data(RouteKey.CGV_TIMETABLE)["timetable"]
    assert first == {
        "scheduleId": "2026030400562",
        "movieCode": "30000985",
        "movieName": "하얼빈",
        "theaterCode": "0056",
        "theaterName": "CGV 강남",
        "playDate": "20260304",
        "startTime": "12:30",
        "endTime": "14:43",
        "totalSeats": 123,
        "remainingSeats": 118,
    }
    # A screening named by its product, times kept as sent, an unreadable total unknown (never 0), and the
    # temporary count where the real one is missing.
    assert columns(
        [special],
        "scheduleId",
        "movieCode",
        "movieName",
        "theaterCode",
        "theaterName",
        "playDate",
        "startTime",
        "endTime",
        "totalSeats",
        "remainingSeats",
    ) == [
        ("2026030400563", "", "하얼빈 무대인사", "0056", "CGV 강남", "20260304", "18:30", "12345", None, 17)
    ]


def test_cgv_movie_timetable_keeps_a_real_zero_over_the_temporary_count() -> None:
    [row] = _data(RouteKey.CGV_TIMETABLE_MOVIE)["timetable"]
    assert (row["scheduleId"], row["startTime"], row["totalSeats"], row["remainingSeats"]) == (
        "2026030400561",
        "09:30",
        123,
        0,
    )
