"""Response validation per route key: valid bodies pass; every catalog soft failure is rejected with the
right reason (SHAPE for schema/soft failures, INVALID_RESPONSE for JSON of the wrong kind)."""

from __future__ import annotations

from typing import Any

import pytest

from functions.catalog import spec_for
from functions.core import Reason, RouteFailure, RouteKey
from tests.support.catalog_fixtures import CGV, DELETE, SOFT_FAILURES, VALID, changed, rejection


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
        {"list": [{"keyword": "제로콜라"}]},
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
        # Word keys no recorded payload shows (docs/upstreams/seveneleven.md): refused, never guessed at.
        [{"word": "제로콜라"}],
        {"popwords": [{"popWord": "먹태깡"}]},
    ],
)
def test_seven_popwords_word_objects_without_a_word_are_shape(data: object) -> None:
    # Never "no popular words": an object item must carry a non-blank `keyword`.
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
