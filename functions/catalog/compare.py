"""The comparison across retailers (비교조회): one keyword searched at CU, GS25, 7-Eleven and Olive Young at once,
each through its own product search (the retailers' own lookups, `members`) and so through its own route keys'
routing, with the rows merged and ranked by price (docs/design.md, "Comparison across retailers").

It has no operation of its own: every call is one of its members', prepared (validated) before the first of
them is made, and run by `Lookup.each` within the one lookup's budget. A retailer that fails or runs out of
time is listed in `errors` beside the others' rows; the answer is an error only when no retailer answers.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NotRequired, cast, get_args

from pydantic import AfterValidator, Field, StringConstraints, WithJsonSchema
from typing_extensions import TypedDict

from functions.catalog import common, contract
from functions.catalog.cu import CuProducts, CuProductsQuery
from functions.catalog.gs25 import Gs25Products, Gs25ProductsQuery
from functions.catalog.oliveyoung import OliveyoungProducts, OliveyoungProductsQuery
from functions.catalog.seveneleven import SevenElevenProducts, SevenElevenProductsQuery
from functions.core import ApiError, ErrorCode, input_rules

Retailer = Literal["cu", "gs25", "seveneleven", "oliveyoung"]
"""A retailer the comparison can ask: the segment of its product search's path, in the default order."""
RETAILER_NAMES: tuple[Retailer, ...] = get_args(Retailer)

MEMBER_ERROR_CODES = (
    ErrorCode.UPSTREAM_REJECTED,
    ErrorCode.UPSTREAM_NOT_FOUND,
    ErrorCode.RELAY_QUOTA_EXCEEDED,
    ErrorCode.UPSTREAM_BAD_RESPONSE,
    ErrorCode.UPSTREAM_ROUTE_UNAVAILABLE,
    ErrorCode.UPSTREAM_TIMEOUT,
)
"""What a retailer's search can fail with once its params are valid (functions/services/routing.py), and a
search still running at the deadline (UPSTREAM_TIMEOUT)."""


# --- answers (the lookup API's `data`) ---------------------------------------------------------------
@common.answer
class ComparedProduct(TypedDict):
    retailer: Retailer
    itemCode: str
    """The retailer's own code: CU's, GS25's and 7-Eleven's `itemCode`, Olive Young's `goodsNumber`."""
    itemName: str
    price: common.Number | None
    """The retailer's price in won; null where its search gives none (GS25's)."""
    imageUrl: NotRequired[str]
    """Where the retailer gives an image's address (7-Eleven)."""


@common.answer
class RetailerError(TypedDict):
    retailer: Retailer
    code: Annotated[
        str, WithJsonSchema({"type": "string", "enum": [code.value for code in MEMBER_ERROR_CODES]})
    ]
    """The error code the retailer's own product search would have answered with."""
    message: str


@common.answer
class ComparedProducts(TypedDict):
    keyword: str
    retailers: list[Retailer]
    """The retailers asked, in the order given: the order of rows of equal price."""
    results: list[ComparedProduct]
    """Each answering retailer's first `limit` rows, cheapest first, rows without a price last."""
    bestPrice: ComparedProduct | None
    """The first row with a price; null when no row has one."""
    errors: list[RetailerError]
    """The retailers that did not answer, in the order given."""


# --- the members: each retailer's product search -------------------------------------------------


def _row(retailer: Retailer, code: str, name: str, price: common.Number | None) -> ComparedProduct:
    return {"retailer": retailer, "itemCode": code, "itemName": name, "price": price}


def _cu_rows(data: Mapping[str, Any]) -> list[ComparedProduct]:
    products = cast(CuProducts, data)["products"]
    return [_row("cu", row["itemCode"], row["itemName"], row["price"]) for row in products]


def _gs25_rows(data: Mapping[str, Any]) -> list[ComparedProduct]:
    products = cast(Gs25Products, data)["products"]
    return [_row("gs25", row["itemCode"], row["itemName"], None) for row in products]


def _seveneleven_rows(data: Mapping[str, Any]) -> list[ComparedProduct]:
    rows: list[ComparedProduct] = []
    for row in cast(SevenElevenProducts, data)["products"]:
        compared = _row("seveneleven", row["itemCode"], row["itemName"], row["price"])
        if row["imageUrl"] is not None:
            compared["imageUrl"] = row["imageUrl"]
        rows.append(compared)
    return rows


def _oliveyoung_rows(data: Mapping[str, Any]) -> list[ComparedProduct]:
    products = cast(OliveyoungProducts, data)["products"]
    return [_row("oliveyoung", row["goodsNumber"], row["goodsName"], row["price"]) for row in products]


@dataclass(frozen=True)
class Member:
    """One retailer's product search as the comparison runs it."""

    search: type[contract.LookupQuery]
    query: Callable[[str, int], dict[str, Any]]
    """The search's query for a keyword and a row count (a search without a row count is cut to it)."""
    rows: Callable[[Mapping[str, Any]], list[ComparedProduct]]
    """Its answer's rows as the comparison's."""

    def prepare(
        self, keyword: str, limit: int
    ) -> Callable[[contract.OperationRunner], list[ComparedProduct]]:
        """Its query and every step's params, validated now; the call that makes them."""
        calls = self.search.model_validate(self.query(keyword, limit)).prepare()
        rows = self.rows
        return lambda lookup: rows(calls(lookup))[:limit]


MEMBERS: Mapping[Retailer, Member] = {
    "cu": Member(CuProductsQuery, lambda keyword, limit: {"keyword": keyword, "limit": limit}, _cu_rows),
    "gs25": Member(Gs25ProductsQuery, lambda keyword, _limit: {"keyword": keyword}, _gs25_rows),
    "seveneleven": Member(
        SevenElevenProductsQuery,
        lambda keyword, limit: {"keyword": keyword, "size": limit},
        _seveneleven_rows,
    ),
    "oliveyoung": Member(
        OliveyoungProductsQuery, lambda keyword, limit: {"keyword": keyword, "size": limit}, _oliveyoung_rows
    ),
}


# --- the merge ---------------------------------------------------------------------------------------


def _price_order(row: ComparedProduct) -> tuple[bool, common.Number]:
    price = row["price"]
    return (price is None, 0 if price is None else price)


def compared(
    keyword: str, retailers: Sequence[Retailer], outcomes: Mapping[Retailer, list[ComparedProduct] | ApiError]
) -> ComparedProducts:
    """The comparison's `data` from each retailer's rows or error: rows by price ascending, unpriced last, ties
    in the order of `retailers` (a stable sort of the rows in that order). Raises when no retailer answered:
    the error they share, else 503 naming each one's."""
    rows: list[ComparedProduct] = []
    failures: list[tuple[Retailer, ApiError]] = []
    for name in retailers:
        outcome = outcomes[name]
        if isinstance(outcome, ApiError):
            failures.append((name, outcome))
        else:
            rows.extend(outcome)
    if len(failures) == len(retailers):
        raise _none_answered(failures)
    results = sorted(rows, key=_price_order)
    return {
        "keyword": keyword,
        "retailers": list(retailers),
        "results": results,
        "bestPrice": next((row for row in results if row["price"] is not None), None),
        "errors": [
            {"retailer": name, "code": error.code.value, "message": error.message} for name, error in failures
        ],
    }


def _none_answered(failures: Sequence[tuple[Retailer, ApiError]]) -> ApiError:
    first = failures[0][1]
    if all(error.code is first.code for _, error in failures):
        # A fresh error like the first (never one raised again), with its status and Retry-After.
        return ApiError(first.code, first.message, status=first.status, retry_after=first.retry_after)
    each = "; ".join(f"{name}: {error.code.value}" for name, error in failures)
    return ApiError(ErrorCode.UPSTREAM_ROUTE_UNAVAILABLE, f"No retailer answered ({each}).")


# --- the API's contract ------------------------------------------------------------------------

RETAILERS_RULE = f"must be a comma-separated list of retailers, each one of: {', '.join(RETAILER_NAMES)}"


def _first_of_each(value: str) -> str:
    return ",".join(dict.fromkeys(value.split(",")))


Retailers = Annotated[
    str,
    StringConstraints(pattern=input_rules.choice_list(RETAILER_NAMES)),
    contract.explained(RETAILERS_RULE),
    # A retailer named twice is asked once, in its first place (`cu,gs25,cu` is `cu,gs25`).
    AfterValidator(_first_of_each),
    Field(description=f"Comma-separated, no spaces; any of {', '.join(RETAILER_NAMES)} (default: all)"),
]


@contract.lookup("compare_products", "/api/compare/products")
class CompareProductsQuery(contract.LookupQuery):
    """Compare a product's price across retailers

    Searches CU, GS25, 7-Eleven and Olive Young (`retailers`: comma-separated, any of cu, gs25,
    seveneleven, oliveyoung; default all four) for `keyword` (a product name; Korean matches best, e.g.
    코카콜라) at once, each through its own product search, and lists each retailer's first `limit` rows
    by price, cheapest first (`bestPrice`); rows without a price (GS25's search has none) come last and
    rows of equal price follow the order of `retailers`. A retailer that fails or does not answer in time
    is listed in `errors` with its error code while the others' rows are answered; the answer is an error
    only when no retailer answers. 편의점·올리브영 상품 가격 비교.
    """

    keyword: contract.SearchText
    retailers: Retailers = ",".join(RETAILER_NAMES)
    limit: Annotated[int, Field(ge=1, le=20, description="Rows per retailer"), contract.WholeNumber] = 5

    members = tuple(member.search for member in MEMBERS.values())
    freshness = contract.Freshness(600, 60)
    freshness_notes = ("An answer with a retailer in `errors` is not cached (`no-store`).",)

    def chosen(self) -> list[Retailer]:
        return [cast(Retailer, name) for name in self.retailers.split(",")]

    def answer_reusable(self, data: Mapping[str, Any]) -> bool:
        # Missing a retailer: the next request asks it again rather than reusing the gap.
        return not data["errors"]

    def fetch(self, lookup: contract.OperationRunner) -> ComparedProducts:
        chosen = self.chosen()
        calls = {name: MEMBERS[name].prepare(self.keyword, self.limit) for name in chosen}
        outcomes = lookup.each(calls, lookup_name=self.name)
        return compared(self.keyword, chosen, {name: outcomes[name] for name in chosen})
