"""Response validation per route key: valid bodies pass; every catalog soft failure is rejected with the
right reason (SHAPE for schema/soft failures, INVALID_RESPONSE for JSON of the wrong kind)."""

from __future__ import annotations

from typing import Any

import pytest

from functions.catalog import spec_for
from functions.core import Reason, RouteFailure, RouteKey
from tests.support.catalog_fixtures import DELETE, VALID, changed, rejection

SEVEN_ENVELOPED = [
    RouteKey.SEVEN_GOODS,
    RouteKey.SEVEN_STORE,
    RouteKey.SEVEN_POPWORDS,
    RouteKey.SEVEN_STOCK,
    RouteKey.SEVEN_PAGES,
    RouteKey.SEVEN_ISSUES,
    RouteKey.SEVEN_EXHIBITIONS,
]
OY = [RouteKey.OY_FIND_STORE, RouteKey.OY_PRODUCT_SEARCH, RouteKey.OY_GOODS_INFO, RouteKey.OY_STOCK_STORES]
CU = [RouteKey.CU_PRIME, RouteKey.CU_STOCK, RouteKey.CU_STORE]
DTRYX = [RouteKey.DTRYX_MOVIES, RouteKey.DTRYX_PLAY_DATES, RouteKey.DTRYX_TIMETABLE]
CGV = [RouteKey.CGV_THEATERS, RouteKey.CGV_MOVIES, RouteKey.CGV_TIMETABLE, RouteKey.CGV_TIMETABLE_MOVIE]
DOC0 = ("data", "SearchQueryResult", "Collection", 0, "Documentset", "Document", 0, "field")


def soft(key: RouteKey, name: str, path: tuple[str | int, ...], value: object) -> tuple[RouteKey, str, Any]:
    """The soft-failure case `name`: `key`'s valid fixture with the value at `path` changed (DELETE: removed)."""
    return key, name, changed(key, path, value)


@pytest.mark.parametrize("key", list(RouteKey))
def test_valid_fixture_passes(key: RouteKey) -> None:
    validated = spec_for(key).validate(VALID[key])
    assert validated.model_dump()  # a typed model, not the raw dict


@pytest.mark.parametrize("key", list(RouteKey))
@pytest.mark.parametrize("body", [[], [{"status": "SUCCESS"}], "SUCCESS", 200, None, True])
def test_json_of_the_wrong_kind_is_invalid_response(key: RouteKey, body: object) -> None:
    assert rejection(key, body) is Reason.INVALID_RESPONSE


@pytest.mark.parametrize("key", list(RouteKey))
def test_empty_object_is_shape(key: RouteKey) -> None:
    assert rejection(key, {}) is Reason.SHAPE


# --- per-service soft failures ---------------------------------------------------------------------

SOFT_FAILURES: list[tuple[RouteKey, str, dict[str, Any]]] = [
    *[(key, "oy-status-fail", changed(key, ("status",), "FAIL")) for key in OY],
    *[(key, "oy-status-missing", changed(key, ("status",), DELETE)) for key in OY],
    *[(key, "oy-status-lowercase", changed(key, ("status",), "success")) for key in OY],
    soft(RouteKey.OY_FIND_STORE, "store-list-missing", ("data", "storeList"), DELETE),
    soft(RouteKey.OY_FIND_STORE, "store-name-empty", ("data", "storeList", 0, "storeName"), ""),
    soft(RouteKey.OY_FIND_STORE, "store-code-blank", ("data", "storeList", 0, "storeCode"), "  "),
    soft(RouteKey.OY_FIND_STORE, "latitude-out-of-range", ("data", "storeList", 0, "latitude"), 91),
    soft(RouteKey.OY_FIND_STORE, "distance-negative", ("data", "storeList", 0, "distance"), -1),
    soft(RouteKey.OY_FIND_STORE, "pickup-not-bool", ("data", "storeList", 0, "pickupYn"), "Y"),
    soft(RouteKey.OY_PRODUCT_SEARCH, "no-search-list", ("data", "searchList"), DELETE),
    soft(RouteKey.OY_PRODUCT_SEARCH, "search-list-null", ("data", "searchList"), None),
    soft(RouteKey.OY_PRODUCT_SEARCH, "goods-name-empty", ("data", "searchList", 0, "goodsName"), ""),
    soft(RouteKey.OY_PRODUCT_SEARCH, "price-negative", ("data", "searchList", 0, "priceToPay"), -1),
    soft(RouteKey.OY_PRODUCT_SEARCH, "price-string", ("data", "searchList", 0, "originalPrice"), "5000"),
    soft(RouteKey.OY_PRODUCT_SEARCH, "discount-over-100", ("data", "searchList", 0, "discountRate"), 101),
    soft(RouteKey.OY_PRODUCT_SEARCH, "stock-flag-missing", ("data", "searchList", 0, "o2oStockFlag"), DELETE),
    soft(RouteKey.OY_PRODUCT_SEARCH, "remain-negative", ("data", "searchList", 0, "o2oRemainQuantity"), -1),
    soft(RouteKey.OY_GOODS_INFO, "master-empty", ("data", "goodsInfo", "masterGoodsNumber"), ""),
    soft(RouteKey.OY_GOODS_INFO, "master-missing", ("data", "goodsInfo", "masterGoodsNumber"), DELETE),
    soft(RouteKey.OY_STOCK_STORES, "sales-store-missing", ("data", "storeList", 0, "salesStoreYn"), DELETE),
    soft(RouteKey.OY_STOCK_STORES, "remain-negative", ("data", "storeList", 0, "remainQuantity"), -1),
    soft(RouteKey.OY_STOCK_STORES, "remain-fraction", ("data", "storeList", 0, "o2oRemainQuantity"), 1.5),
    soft(RouteKey.OY_STOCK_STORES, "store-list-missing", ("data", "storeList"), DELETE),
    *[(key, "cu-resp-cd-3000", changed(key, ("resp_cd",), "3000")) for key in CU],
    *[(key, "cu-resp-cd-null", changed(key, ("resp_cd",), None)) for key in CU],
    *[(key, "cu-success-false", {**VALID[key], "success": False}) for key in CU],
    *[(key, "cu-error-key", {**VALID[key], "error": "Request Blocked"}) for key in CU],
    soft(RouteKey.CU_PRIME, "empty-category-row", ("areaCateList",), [{}]),
    soft(RouteKey.CU_PRIME, "category-name-empty", ("areaCateList", 0, "menuNm"), ""),
    soft(
        RouteKey.CU_STOCK,
        "item-name-empty",
        ("data", "stockResult", "result", "rows", 0, "fields", "item_nm"),
        "",
    ),
    soft(
        RouteKey.CU_STOCK,
        "price-oops",
        ("data", "stockResult", "result", "rows", 0, "fields", "hyun_maega"),
        "oops",
    ),
    soft(
        RouteKey.CU_STOCK,
        "pickup-flag-bad",
        ("data", "stockResult", "result", "rows", 0, "fields", "pickup_yn"),
        "y",
    ),
    soft(RouteKey.CU_STOCK, "rows-missing", ("data", "stockResult", "result", "rows"), DELETE),
    soft(RouteKey.CU_STORE, "store-list-missing", ("storeList",), DELETE),
    soft(RouteKey.CU_STORE, "store-code-empty", ("storeList", 0, "storeCd"), ""),
    soft(RouteKey.CU_STORE, "stock-below-minus-one", ("storeList", 0, "stock"), -2),
    soft(RouteKey.CU_STORE, "stock-oops", ("storeList", 0, "stock"), "oops"),
    soft(RouteKey.CU_STORE, "stock-bool", ("storeList", 0, "stock"), True),
    soft(RouteKey.CU_STORE, "lat-not-numeric", ("storeList", 0, "latVal"), "north"),
    soft(RouteKey.GS25_PRODUCTS, "no-collection", ("SearchQueryResult",), {}),
    soft(
        RouteKey.GS25_PRODUCTS,
        "item-code-empty",
        ("SearchQueryResult", "Collection", 0, "Documentset", "Document", 0, "field", "itemCode"),
        "",
    ),
    soft(
        RouteKey.GS25_PRODUCTS,
        "star-point-oops",
        ("SearchQueryResult", "Collection", 0, "Documentset", "Document", 0, "field", "starPoint"),
        "oops",
    ),
    soft(RouteKey.GS25_STOCK, "stores-missing", ("stores",), DELETE),
    soft(RouteKey.GS25_STOCK, "stock-oops", ("stores", 0, "realStockQuantity"), "oops"),
    soft(RouteKey.GS25_STOCK, "store-not-an-object", ("stores", 0), "VQ670"),
    *[(key, "seven-code-500", {**VALID[key], "code": 500}) for key in SEVEN_ENVELOPED],
    *[(key, "seven-code-199", {**VALID[key], "code": 199}) for key in SEVEN_ENVELOPED],
    *[(key, "seven-code-300", {**VALID[key], "code": 300}) for key in SEVEN_ENVELOPED],
    *[(key, "seven-success-false", {**VALID[key], "success": False}) for key in SEVEN_ENVELOPED],
    *[
        (key, "seven-no-data", {k: v for k, v in VALID[key].items() if k != "data"})
        for key in SEVEN_ENVELOPED
    ],
    *[(key, "seven-error-key", {**VALID[key], "error": "Forbidden"}) for key in SEVEN_ENVELOPED],
    soft(RouteKey.SEVEN_GOODS, "item-name-empty", (*DOC0, "itemOnm"), ""),
    soft(RouteKey.SEVEN_GOODS, "neither-container", ("data",), {"total": 0}),
    soft(RouteKey.SEVEN_GOODS, "review-count-oops", (*DOC0, "avgEvalScore"), "oops"),
    soft(RouteKey.SEVEN_STORE, "no-id-name-pair", ("data", "content", 0), {"strCd": "1", "storeNm": "x"}),
    soft(RouteKey.SEVEN_STORE, "blank-name", ("data", "content", 0, "strNm"), " "),
    (RouteKey.SEVEN_POPWORDS, "empty-data-without-success", {"code": 200, "data": {}}),
    (RouteKey.SEVEN_POPWORDS, "empty-data-code-201", {"success": True, "code": 201, "data": {}}),
    soft(RouteKey.SEVEN_POPWORDS, "object-without-lists", ("data",), {"label": "home"}),
    soft(RouteKey.SEVEN_POPWORDS, "list-key-not-array", ("data",), {"list": "포켓몬빵"}),
    soft(RouteKey.SEVEN_POPWORDS, "data-null", ("data",), None),
    soft(RouteKey.SEVEN_STOCK_META, "sm-code-empty", ("smCd",), ""),
    soft(RouteKey.SEVEN_STOCK_META, "stock-code-missing", ("stokMngCd",), DELETE),
    soft(RouteKey.SEVEN_STOCK_META, "quantity-below-minus-one", ("stokMngQty",), -2),
    soft(RouteKey.SEVEN_STOCK_META, "rate-missing", ("stockApplicationRate",), DELETE),
    (RouteKey.SEVEN_STOCK_META, "enveloped-failure", {"success": False, "code": 500, "data": None}),
    soft(RouteKey.SEVEN_STOCK, "store-list-missing", ("data", "storeList"), DELETE),
    soft(RouteKey.SEVEN_STOCK, "stock-ten-digits", ("data", "storeList", 0, "stock"), "1234567890"),
    soft(RouteKey.SEVEN_STOCK, "stock-null", ("data", "storeList", 0, "stock"), None),
    soft(RouteKey.SEVEN_STOCK, "stock-minus-two", ("data", "storeList", 0, "stock"), -2),
    soft(RouteKey.SEVEN_STOCK, "store-code-empty", ("data", "storeList", 0, "storeCd"), ""),
    (
        RouteKey.SEVEN_STOCK,
        "relay-store-rejection",
        {
            "success": False,
            "error": "Relay request failed",
            "upstreamError": {"status": 400, "code": 501, "message": "정상적인 점포 조회 요청이 아닙니다."},
        },
    ),
    soft(RouteKey.SEVEN_PAGES, "price-blank", ("data", "content", 0, "onlinePrice"), ""),
    soft(RouteKey.SEVEN_PAGES, "price-oops", ("data", "content", 0, "onlinePrice"), "oops"),
    soft(RouteKey.SEVEN_PAGES, "data-is-string", ("data",), "none"),
    soft(RouteKey.SEVEN_ISSUES, "price-blank", ("data", 0, "field", "onlinePrice"), ""),
    soft(RouteKey.SEVEN_ISSUES, "empty-object-data", ("data",), {}),
    soft(RouteKey.SEVEN_EXHIBITIONS, "rows-not-objects", ("data",), ["여름"]),
    soft(RouteKey.SEVEN_EXHIBITIONS, "no-container", ("data",), {"items": []}),
    *[(key, "dtryx-retcode-fail", changed(key, ("RetCode",), "fail")) for key in DTRYX],
    *[(key, "dtryx-retcode-missing", changed(key, ("RetCode",), DELETE)) for key in DTRYX],
    *[(key, "dtryx-recordset-object", changed(key, ("Recordset",), {"MovieCd": "1"})) for key in DTRYX],
    *[(key, "dtryx-recordset-not-objects", changed(key, ("Recordset",), ["20241234"])) for key in DTRYX],
    *[(key, "dtryx-recordset-missing", changed(key, ("Recordset",), DELETE)) for key in DTRYX],
    soft(RouteKey.DTRYX_MOVIES, "movie-name-empty", ("Recordset", 0, "MovieNm"), ""),
    soft(RouteKey.DTRYX_MOVIES, "running-time-oops", ("Recordset", 0, "RunningTime"), "oops"),
    soft(RouteKey.DTRYX_PLAY_DATES, "compact-date", ("Recordset", 0, "PlaySDT"), "20250602"),
    soft(RouteKey.DTRYX_PLAY_DATES, "rest-flag-bad", ("Recordset", 0, "RestYn"), "X"),
    soft(RouteKey.DTRYX_TIMETABLE, "screen-missing", ("Recordset", 0, "ScreenCd"), DELETE),
    soft(RouteKey.DTRYX_TIMETABLE, "seats-oops", ("Recordset", 0, "RemainSeatCnt"), "oops"),
    soft(RouteKey.DTRYX_TIMETABLE, "seats-below-minus-one", ("Recordset", 0, "TotalSeatCnt"), -2),
    soft(RouteKey.DTRYX_TIMETABLE, "start-time-bad", ("Recordset", 0, "StartTime"), "10:3"),
    # CGV: `statusCode === 0` and `data` an array of objects; the rows themselves are not checked.
    *[(key, "cgv-status-code-1", changed(key, ("statusCode",), 1)) for key in CGV],
    *[(key, "cgv-status-code-text", changed(key, ("statusCode",), "0")) for key in CGV],
    *[(key, "cgv-status-code-false", changed(key, ("statusCode",), False)) for key in CGV],
    *[(key, "cgv-status-code-missing", changed(key, ("statusCode",), DELETE)) for key in CGV],
    *[(key, "cgv-data-null", changed(key, ("data",), None)) for key in CGV],
    *[(key, "cgv-data-object", changed(key, ("data",), {"siteNo": "0056"})) for key in CGV],
    *[(key, "cgv-data-row-null", changed(key, ("data",), [None])) for key in CGV],
    *[(key, "cgv-data-row-array", changed(key, ("data",), [[]])) for key in CGV],
    *[(key, "cgv-data-row-number", changed(key, ("data",), [1])) for key in CGV],
    *[(key, "cgv-data-missing", changed(key, ("data",), DELETE)) for key in CGV],
]


@pytest.mark.parametrize(
    ("key", "name", "body"), SOFT_FAILURES, ids=[f"{k}:{n}" for k, n, _ in SOFT_FAILURES]
)
def test_catalog_soft_failure_is_shape(key: RouteKey, name: str, body: dict[str, Any]) -> None:
    assert rejection(key, body) is Reason.SHAPE


def test_every_route_key_has_a_soft_failure_case() -> None:
    assert {key for key, _, _ in SOFT_FAILURES} == set(RouteKey)


# --- rules that accept what a naive schema would reject ----------------------------------------------


def test_oy_product_search_accepts_the_upstream_misspelling() -> None:
    body = changed(RouteKey.OY_PRODUCT_SEARCH, ("data", "searchList"), DELETE)
    body["data"]["serachList"] = VALID[RouteKey.OY_PRODUCT_SEARCH]["data"]["searchList"]
    validated = spec_for(RouteKey.OY_PRODUCT_SEARCH).validate(body)
    assert [row.goodsName for row in validated.data.rows] == ["바세린 립 테라피 오리지널", "니베아 립밤"]


@pytest.mark.parametrize(
    ("key", "path"),
    [
        (RouteKey.OY_FIND_STORE, ("data", "storeList")),
        (RouteKey.OY_STOCK_STORES, ("data", "storeList")),
        (RouteKey.CU_STORE, ("storeList",)),
        (RouteKey.SEVEN_STOCK, ("data", "storeList")),
        (RouteKey.GS25_STOCK, ("stores",)),
        (RouteKey.DTRYX_TIMETABLE, ("Recordset",)),
        *[(key, ("data",)) for key in CGV],
    ],
)
def test_an_empty_list_is_a_valid_answer(key: RouteKey, path: tuple[str, ...]) -> None:
    spec_for(key).validate(changed(key, path, []))


@pytest.mark.parametrize(
    ("key", "path"),
    [
        (RouteKey.CU_STORE, ("storeList", 0, "stock")),
        (RouteKey.SEVEN_STOCK, ("data", "storeList", 0, "stock")),
        (RouteKey.GS25_STOCK, ("stores", 0, "realStockQuantity")),
        (RouteKey.SEVEN_STOCK_META, ("stokMngQty",)),
        (RouteKey.DTRYX_TIMETABLE, ("Recordset", 0, "RemainSeatCnt")),
    ],
)
@pytest.mark.parametrize("unknown", [-1, "-1"])
def test_minus_one_stock_is_valid(key: RouteKey, path: tuple[str, ...], unknown: object) -> None:
    spec_for(key).validate(changed(key, path, unknown))


def test_seven_stock_accepts_nine_digit_strings() -> None:
    spec_for(RouteKey.SEVEN_STOCK).validate(
        changed(RouteKey.SEVEN_STOCK, ("data", "storeList", 0, "stock"), "123456789")
    )


def test_seven_popwords_empty_data_only_with_confirmed_success() -> None:
    spec_for(RouteKey.SEVEN_POPWORDS).validate({"success": True, "code": 200, "data": {}})


@pytest.mark.parametrize(
    "data",
    [
        ["포켓몬빵", "하이볼"],
        [{"keyword": "포켓몬빵", "rank": 1}],
        {"popwords": ["먹태깡"]},
        {"wordList": []},
        {"list": [{"word": "제로콜라"}]},
    ],
)
def test_seven_popwords_accepts_every_documented_data_form(data: object) -> None:
    spec_for(RouteKey.SEVEN_POPWORDS).validate({"data": data})


@pytest.mark.parametrize(
    "data",
    [
        [{"foo": 1}],
        {"list": [{"unexpected": "x"}]},
        {"keywords": ["포켓몬빵", {"rank": 2}]},
        [{"keyword": "   "}],
        [{"keyword": 5}],
    ],
)
def test_seven_popwords_word_objects_without_a_word_are_shape(data: object) -> None:
    # Never "no popular words": an object item must carry a known, non-blank word key.
    assert rejection(RouteKey.SEVEN_POPWORDS, {"success": True, "code": 200, "data": data}) is Reason.SHAPE


@pytest.mark.parametrize("code", [200, 201, 299])
def test_seven_envelope_accepts_any_2xx_code(code: int) -> None:
    spec_for(RouteKey.SEVEN_GOODS).validate({**VALID[RouteKey.SEVEN_GOODS], "code": code})


@pytest.mark.parametrize(
    "pair", [("storeCode", "storeName"), ("storeCd", "storeNm"), ("storCd", "storNm"), ("shopCd", "shopNm")]
)
def test_seven_store_accepts_every_id_name_pair(pair: tuple[str, str]) -> None:
    body = {
        "data": {
            "SearchQueryResult": {
                "Collection": [{"Documentset": {"Document": [{"field": {pair[0]: "1", pair[1]: "강남점"}}]}}]
            }
        }
    }
    spec_for(RouteKey.SEVEN_STORE).validate(body)


def test_seven_goods_accepts_the_flat_content_shape() -> None:
    body = {
        "success": True,
        "data": {"content": [{"itemCd": "1", "itemOnm": "코카콜라", "onlinePrice": 2000}]},
    }
    assert spec_for(RouteKey.SEVEN_GOODS).validate(body).data.rows()[0].itemOnm == "코카콜라"


def test_seven_stock_meta_is_not_enveloped() -> None:
    wrapped = {"success": True, "code": 200, "data": VALID[RouteKey.SEVEN_STOCK_META]}
    assert rejection(RouteKey.SEVEN_STOCK_META, wrapped) is Reason.SHAPE


def test_extra_upstream_fields_are_kept() -> None:
    body = changed(RouteKey.DTRYX_MOVIES, ("Recordset", 0, "PosterUrl"), "https://example.invalid/p.jpg")
    row = spec_for(RouteKey.DTRYX_MOVIES).validate(body).Recordset[0]
    assert (row.model_extra or {})["PosterUrl"] == "https://example.invalid/p.jpg"


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_numbers_are_shape(value: float) -> None:
    body = changed(RouteKey.OY_PRODUCT_SEARCH, ("data", "searchList", 0, "priceToPay"), value)
    assert rejection(RouteKey.OY_PRODUCT_SEARCH, body) is Reason.SHAPE


def test_rejection_does_not_chain_the_upstream_body() -> None:
    body = changed(RouteKey.OY_GOODS_INFO, ("status",), "secret-looking upstream text")
    with pytest.raises(RouteFailure) as caught:
        spec_for(RouteKey.OY_GOODS_INFO).validate(body)
    assert caught.value.__cause__ is None
    assert caught.value.__suppress_context__
