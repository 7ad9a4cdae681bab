"""The comparison's rules on their own: its query (retailers, limit), each retailer's rows mapped onto the
comparison's, and the merge (price order, unpriced last, ties in the order of `retailers`, the best price,
errors beside the rows, the error when no retailer answered)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from functions.catalog import LOOKUPS, spec_for
from functions.catalog.compare import (
    MEMBERS,
    RETAILER_NAMES,
    ComparedProduct,
    CompareProductsQuery,
    Retailer,
    compared,
)
from functions.catalog.contract import retailer_of
from functions.core import ApiError, ErrorCode, RouteKey
from functions.core.input_rules import choices_of
from tests.support.catalog_fixtures import VALID


def row(retailer: Retailer, code: str, price: float | None) -> ComparedProduct:
    return {"retailer": retailer, "itemCode": code, "itemName": f"item {code}", "price": price}


# --- the query -------------------------------------------------------------------------------------


def test_by_default_every_retailer_five_rows_each_in_the_documented_order() -> None:
    query = CompareProductsQuery.model_validate({"keyword": " 콜라 "})
    assert (query.keyword, query.chosen(), query.limit) == ("콜라", list(RETAILER_NAMES), 5)
    assert RETAILER_NAMES == ("cu", "gs25", "seveneleven", "oliveyoung")


def test_the_retailers_are_the_segments_of_their_searches_paths() -> None:
    assert [retailer_of(member.search) for member in MEMBERS.values()] == [
        "CU",
        "GS25",
        "7-Eleven",
        "Olive Young",
    ]
    assert [member.search.path.split("/")[2] for member in MEMBERS.values()] == list(RETAILER_NAMES)
    assert all(member.search in LOOKUPS for member in MEMBERS.values())


def test_retailers_are_asked_in_the_order_given_and_once_each() -> None:
    query = CompareProductsQuery.model_validate({"keyword": "x", "retailers": "oliveyoung,cu,oliveyoung"})
    assert query.chosen() == ["oliveyoung", "cu"]
    # One answer-cache entry for the two spellings of one question.
    assert query == CompareProductsQuery.model_validate({"keyword": "x", "retailers": "oliveyoung,cu"})


@pytest.mark.parametrize("retailers", ["emart", "cu,emart", "", "cu,", ",cu", "cu, gs25", "CU", "cu;gs25"])
def test_an_unknown_or_malformed_retailer_list_is_refused_naming_the_allowed_ones(retailers: str) -> None:
    with pytest.raises(ValidationError) as refused:
        CompareProductsQuery.model_validate({"keyword": "x", "retailers": retailers})
    (error,) = refused.value.errors()
    assert error["loc"] == ("retailers",)
    assert "cu, gs25, seveneleven, oliveyoung" in error["msg"]


def test_the_documented_pattern_lists_exactly_the_retailers() -> None:
    schema = CompareProductsQuery.model_json_schema()["properties"]["retailers"]
    assert choices_of(schema["pattern"]) == list(RETAILER_NAMES)
    assert schema["default"] == "cu,gs25,seveneleven,oliveyoung"
    # The description (the class's docstring) names them too.
    assert f"any of {', '.join(RETAILER_NAMES)};" in CompareProductsQuery.description


@pytest.mark.parametrize("limit", [0, 21, -1, 2.5])
def test_limit_is_one_to_twenty(limit: Any) -> None:
    with pytest.raises(ValidationError):
        CompareProductsQuery.model_validate({"keyword": "x", "limit": limit})
    assert CompareProductsQuery.model_validate({"keyword": "x", "limit": "20"}).limit == 20


# --- each retailer's rows -----------------------------------------------------------------------------


def member_rows(retailer: Retailer, key: RouteKey) -> list[ComparedProduct]:
    spec = spec_for(key)
    return MEMBERS[retailer].rows(spec.normalize(spec.validate(VALID[key])))


def test_each_retailers_code_name_and_price_become_the_comparisons() -> None:
    cu = spec_for(RouteKey.CU_STOCK).normalize(spec_for(RouteKey.CU_STOCK).validate(VALID[RouteKey.CU_STOCK]))
    assert member_rows("cu", RouteKey.CU_STOCK) == [
        row("cu", product["itemCode"], product["price"]) | {"itemName": product["itemName"]}
        for product in cu["products"]
    ]
    gs25 = member_rows("gs25", RouteKey.GS25_PRODUCTS)
    assert gs25
    assert all(product["price"] is None and product["retailer"] == "gs25" for product in gs25)
    oliveyoung = member_rows("oliveyoung", RouteKey.OY_PRODUCT_SEARCH)
    assert oliveyoung
    assert all(product["itemCode"].startswith("A") for product in oliveyoung)
    assert all("imageUrl" not in product for product in [*gs25, *oliveyoung])


def test_seven_elevens_image_address_is_kept_when_it_gives_one() -> None:
    rows = member_rows("seveneleven", RouteKey.SEVEN_GOODS)
    assert rows
    assert all(product.get("imageUrl", "https://").startswith("https://") for product in rows)


# --- the merge -----------------------------------------------------------------------------------


def test_rows_by_price_unpriced_last_ties_in_the_order_of_the_retailers() -> None:
    data = compared(
        "콜라",
        ["gs25", "oliveyoung", "cu"],
        {
            "cu": [row("cu", "c1", 1500), row("cu", "c2", 900)],
            "gs25": [row("gs25", "g1", None)],
            "oliveyoung": [row("oliveyoung", "o1", 1500), row("oliveyoung", "o2", None)],
        },
    )
    assert [product["itemCode"] for product in data["results"]] == ["c2", "o1", "c1", "g1", "o2"]
    assert data["bestPrice"] == row("cu", "c2", 900)
    assert (data["keyword"], data["retailers"], data["errors"]) == ("콜라", ["gs25", "oliveyoung", "cu"], [])


def test_a_failed_retailer_is_listed_beside_the_others_rows() -> None:
    data = compared(
        "콜라",
        ["cu", "gs25"],
        {"cu": ApiError(ErrorCode.UPSTREAM_TIMEOUT), "gs25": [row("gs25", "g1", None)]},
    )
    assert data["results"] == [row("gs25", "g1", None)]
    assert data["bestPrice"] is None  # nothing priced
    assert data["errors"] == [
        {"retailer": "cu", "code": "UPSTREAM_TIMEOUT", "message": ErrorCode.UPSTREAM_TIMEOUT.message}
    ]


def test_a_retailer_that_answers_without_rows_answered() -> None:
    data = compared("x", ["cu", "gs25"], {"cu": [], "gs25": ApiError(ErrorCode.UPSTREAM_BAD_RESPONSE)})
    assert (data["results"], data["bestPrice"], len(data["errors"])) == ([], None, 1)


def test_when_none_answered_the_error_they_share_is_the_answer() -> None:
    quota = ApiError(ErrorCode.RELAY_QUOTA_EXCEEDED, retry_after=120)
    with pytest.raises(ApiError) as raised:
        compared("x", ["cu", "gs25"], {"cu": quota, "gs25": ApiError(ErrorCode.RELAY_QUOTA_EXCEEDED)})
    error = raised.value
    assert (error.code, error.status, error.retry_after, error.message) == (
        ErrorCode.RELAY_QUOTA_EXCEEDED,
        429,
        120,
        quota.message,
    )
    assert error is not quota  # a fresh error, never one raised again


def test_when_none_answered_with_different_errors_the_answer_is_503_naming_each() -> None:
    with pytest.raises(ApiError) as raised:
        compared(
            "x",
            ["gs25", "cu"],
            {"cu": ApiError(ErrorCode.UPSTREAM_TIMEOUT), "gs25": ApiError(ErrorCode.UPSTREAM_BAD_RESPONSE)},
        )
    assert raised.value.code is ErrorCode.UPSTREAM_ROUTE_UNAVAILABLE
    assert raised.value.message == "No retailer answered (gs25: UPSTREAM_BAD_RESPONSE; cu: UPSTREAM_TIMEOUT)."


PRICES = st.one_of(st.none(), st.integers(0, 5), st.floats(0, 5, allow_nan=False))


@st.composite
def outcomes(draw: st.DrawFn) -> tuple[list[Retailer], dict[Retailer, list[ComparedProduct] | ApiError]]:
    retailers = list(draw(st.permutations(RETAILER_NAMES)))[: draw(st.integers(1, len(RETAILER_NAMES)))]
    answered = draw(st.sampled_from(retailers))  # at least one answers
    result: dict[Retailer, list[ComparedProduct] | ApiError] = {}
    for name in retailers:
        if name != answered and draw(st.booleans()):
            result[name] = ApiError(ErrorCode.UPSTREAM_TIMEOUT)
        else:
            prices = draw(st.lists(PRICES, max_size=4))
            result[name] = [row(name, f"{name}-{index}", price) for index, price in enumerate(prices)]
    return retailers, result


@given(outcomes())
def test_the_order_rule_holds_for_any_answers(
    case: tuple[list[Retailer], dict[Retailer, list[ComparedProduct] | ApiError]],
) -> None:
    retailers, by_retailer = case
    data = compared("x", retailers, by_retailer)
    results = data["results"]
    every_row = [r for name in retailers if isinstance(rows := by_retailer[name], list) for r in rows]
    assert sorted(map(id, results)) == sorted(map(id, every_row))  # every row, once, nothing else
    position = {id(r): index for index, r in enumerate(every_row)}  # retailers' order, then their own
    for earlier, later in itertools.pairwise(results):
        a, b = earlier["price"], later["price"]
        assert b is None or (a is not None and a <= b)  # ascending, unpriced last
        if a == b or (a is None and b is None):
            assert position[id(earlier)] < position[id(later)]  # ties keep the order given
    priced = [r for r in results if r["price"] is not None]
    assert data["bestPrice"] == (priced[0] if priced else None)
    assert [error["retailer"] for error in data["errors"]] == [
        name for name in retailers if isinstance(by_retailer[name], ApiError)
    ]
