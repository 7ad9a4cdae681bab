"""The lookup contract, written once: one query model per lookup endpoint (docs/design.md, "HTTP API").

Each endpoint's query model is its contract: `@lookup(name, path, summary, description)` gives its operation
name, path, summary and description (with `cross_rules`, its rules across parameters); its fields (with every constraint) are its parameters; `answer_type()` is its `data` (the return type
of its operation's normalizer, or of its own `fetch`); the errors it can answer with follow from
`functions.core.errors.ErrorCode`. REST routes, the OpenAPI document, MCP tools and the CLI are derived from
`LOOKUPS`; `fetch` is what the endpoint does: the operations it becomes.

An endpoint that is one operation (`OperationQuery`) says which one and maps its fields onto the operation's
upstream parameter names; a composite endpoint writes its steps out. Every operation's params are built and
validated before the endpoint's first upstream call, so bad input never reaches a retailer or a relay, and
one `Lookup` (one time budget) serves all of an endpoint's calls.
"""

from __future__ import annotations

import re
import typing
from abc import abstractmethod
from collections.abc import Callable, Mapping
from datetime import date
from typing import Annotated, Any, ClassVar, Self, TypeVar, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from functions.catalog import cgv, common, cu, dtryx, oliveyoung, seveneleven, spec_for
from functions.catalog.common import stock
from functions.core import RouteKey, input_rules
from functions.core.errors import ApiError, ErrorCode
from functions.core.input_rules import CONTROL, CrossRule
from functions.services import cgv_lookup
from functions.services.lookup import InvalidParams, Lookup, operation_params

SEOUL_CITY_HALL_LAT = 37.5665
SEOUL_CITY_HALL_LON = 126.9780
"""Where a store search looks when the caller gives no coordinates."""


def _explained(message: str) -> WrapValidator:
    """A value that fails its pattern is refused with `message` (pydantic's own would quote the pattern)."""

    def explain(value: object, handler: ValidatorFunctionWrapHandler) -> object:
        try:
            return handler(value)
        except ValidationError as error:
            if any(item["type"] == "string_pattern_mismatch" for item in error.errors()):
                raise PydanticCustomError("string_pattern_mismatch", message) from None
            raise

    return WrapValidator(explain)


# Every rule a parameter has is in its schema, which the OpenAPI document shows (a pattern, lengths, a range):
# the value is checked as the caller sent it, and what passes here also passes the operation's params, so a
# 400 always names a field the caller sent.
MAX_SEARCH_CHARS = 100
"""Any 100 characters fit the retailers' 200 UTF-16 code units (a character beyond the BMP counts twice
there), which no JSON Schema keyword can count."""
SearchText = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_SEARCH_CHARS, pattern=input_rules.visible_text(CONTROL)),
    _explained("must hold a visible character and no control characters"),
    AfterValidator(str.strip),
]
"""Free text: 1..100 characters, no control characters, not blank; searched for without the whitespace
around it."""
Code = common.Code
"""Retailer codes (item codes, store codes, labels): short and plain, so they are safe in any URL."""
GoodsNumber = oliveyoung.GoodsCode
"""Olive Young goods numbers and master goods numbers (letters and digits only)."""
Latitude = Annotated[common.Latitude, Field(description="WGS84 latitude")]
Longitude = Annotated[common.Longitude, Field(description="WGS84 longitude")]
WholeNumber = BeforeValidator(input_rules.whole_number_text)
"""An integer parameter takes what JSON Schema calls one: `3`, and also `3.0` or `3e0` (never `3.5`). After
the range (pydantic would not show a range behind a validator in the schema)."""
Page = Annotated[int, Field(ge=1, le=1000, description="1-based page number"), WholeNumber]
PageSize = Annotated[int, Field(ge=1, le=100, description="Rows per page"), WholeNumber]
BrandCode = dtryx.BrandCode
CinemaCode = dtryx.CinemaCode

_DASHED_DATE = re.compile(input_rules.DASHED_DATE)


def _dashed_date_only(value: object) -> object:
    # pydantic's lax `date` also takes "20240131" or epoch numbers; the API promises YYYY-MM-DD only.
    if isinstance(value, str) and not _DASHED_DATE.fullmatch(value):
        raise ValueError("must be a date in YYYY-MM-DD form")
    return value


DashedDate = Annotated[
    date,
    BeforeValidator(_dashed_date_only),
    # pydantic's schema of a date is `format: date`, which JSON Schema only annotates; the pattern asserts.
    Field(description="YYYY-MM-DD", json_schema_extra={"pattern": input_rules.DASHED_DATE}),
]


UNKNOWN_QUANTITY = -1


def fetch_operation(lookup: Lookup, key: RouteKey, values: Mapping[str, Any]) -> Mapping[str, Any]:
    """One operation: its params from `values` (upstream names), the lookup, the normalized `data`."""
    return lookup.data(key, operation_params(key, values))


def _given(**values: Any) -> dict[str, Any]:
    """Only the values the caller gave: everything else is the operation's own default (the params model)."""
    return {name: value for name, value in values.items() if value is not None}


class LookupQuery(BaseModel):
    """One endpoint's query. An endpoint's query model documents the API: its docstring would show in the
    OpenAPI document, so notes on one are comments."""

    model_config = ConfigDict(frozen=True, extra="ignore", allow_inf_nan=False)

    name: ClassVar[str]
    """The operation's name: the REST handler's, the MCP tool's and the CLI's (`cu_products`; camelCase as
    the OpenAPI operationId)."""
    path: ClassVar[str]
    """`/api/cu/products`; a parameter in braces is a path parameter (`/api/oliveyoung/products/{goodsNo}`)."""
    summary: ClassVar[str]
    description: ClassVar[str]
    """What it finds, where, and what its parameters mean, in English and Korean: assistants (MCP) and people
    (the CLI's help, the document) read it."""
    cross_rules: ClassVar[tuple[CrossRule, ...]] = ()
    """Its rules across parameters: a break of one raises a pydantic error whose type is the rule's name."""

    @abstractmethod
    def fetch(self, lookup: Lookup) -> Mapping[str, Any]:
        """The endpoint's `data`; raises InvalidParams (400), ApiError or LookupCancelled."""


LOOKUPS: list[type[LookupQuery]] = []
"""Every lookup endpoint's query model, in the document's order."""
RETAILERS = {
    "oliveyoung": "Olive Young",
    "cu": "CU",
    "gs25": "GS25",
    "seveneleven": "7-Eleven",
    "dtryx": "Dtryx cinemas",
    "cgv": "CGV",
}
"""The retailer segment of a lookup's path (`/api/<retailer>/...`) and its name (the OpenAPI tag)."""

Q = TypeVar("Q", bound=type[LookupQuery])


def lookup(name: str, path: str, summary: str, description: str) -> Callable[[Q], Q]:
    """Declares a query model a lookup endpoint (see the module docstring) and adds it to `LOOKUPS`."""

    def declare(query: Q) -> Q:
        query.name, query.path, query.summary, query.description = name, path, summary, description
        LOOKUPS.append(query)
        return query

    return declare


def description_of(query: type[LookupQuery]) -> str:
    """Its description and the rules across its parameters, which their own schemas cannot state."""
    return " ".join([query.description, *(rule.note for rule in query.cross_rules)])


def retailer_of(query: type[LookupQuery]) -> str:
    """The name of the retailer whose lookup this is (its OpenAPI tag)."""
    return RETAILERS[query.path.split("/")[2]]


def answer_type(query: type[LookupQuery]) -> Any:
    """The endpoint's `data` type: its own `fetch`'s return type, else its operation's normalizer's."""
    owner = next(klass for klass in query.__mro__ if "fetch" in vars(klass))
    if owner is OperationQuery:
        key: RouteKey = query.key  # type: ignore[attr-defined]
        return typing.get_type_hints(spec_for(key).normalizer)["return"]
    return typing.get_type_hints(query.fetch)["return"]


class OperationQuery(LookupQuery):
    """An endpoint that is one operation, `key`. Each field is one of the operation's params: under its own
    name, or under its `serialization_alias` where the upstream names it otherwise."""

    key: ClassVar[RouteKey]

    def values(self) -> dict[str, Any]:
        """The operation's params by upstream name; what the caller left out (None) takes the params model's
        default."""
        return self.model_dump(by_alias=True, exclude_none=True)

    def fetch(self, lookup: Lookup) -> Mapping[str, Any]:
        return fetch_operation(lookup, self.key, self.values())


# --- Olive Young -------------------------------------------------------------------------------


@lookup(
    "oliveyoung_stores",
    "/api/oliveyoung/stores",
    "Olive Young stores",
    "Finds Olive Young (올리브영) stores near `lat`/`lon` (default: Seoul City Hall), optionally "
    "by name, area or store code in `keyword` (e.g. 명동, Gangnam). 올리브영 매장 검색.",
)
class OliveyoungStoresQuery(OperationQuery):
    key = RouteKey.OY_FIND_STORE
    keyword: SearchText | None = Field(
        default=None, serialization_alias="searchWords", description="Store name, area or store code"
    )
    lat: Latitude = SEOUL_CITY_HALL_LAT
    lon: Longitude = SEOUL_CITY_HALL_LON
    page: Page = Field(default=1, serialization_alias="pageIdx")


@lookup(
    "oliveyoung_products",
    "/api/oliveyoung/products",
    "Olive Young product search",
    "Searches Olive Young's online catalogue by `keyword` (a product or brand name; Korean "
    "matches best, e.g. 립밤), with prices, discounts and online stock. The `goodsNumber` of a "
    "result is the `goodsNo` of oliveyoungGoodsInfo. 올리브영 상품 검색.",
)
class OliveyoungProductsQuery(OperationQuery):
    key = RouteKey.OY_PRODUCT_SEARCH
    keyword: SearchText
    page: Page = 1
    size: PageSize = 20


@lookup(
    "oliveyoung_goods_info",
    "/api/oliveyoung/products/{goodsNo}",
    "Olive Young goods number -> master goods number (the `productId` of stock lookups)",
    "Turns an Olive Young goods number (`goodsNo`, from a product search) into its master "
    "goods number, the `productId` that oliveyoungStock asks for. 올리브영 상품번호 → 마스터 상품번호.",
)
class OliveyoungGoodsQuery(OperationQuery):
    """A goods number (a path parameter) -> its master goods number."""

    key = RouteKey.OY_GOODS_INFO
    goodsNo: GoodsNumber


@lookup(
    "oliveyoung_stock",
    "/api/oliveyoung/stock",
    "Olive Young stock per store",
    "Stock of one Olive Young product (`productId`: its master goods number, from "
    "oliveyoungGoodsInfo) in each store near `lat`/`lon` (default: Seoul City Hall), "
    "optionally only stores matching `keyword`. 올리브영 매장별 재고.",
)
class OliveyoungStockQuery(OperationQuery):
    key = RouteKey.OY_STOCK_STORES
    productId: GoodsNumber = Field(description="Master goods number (see /api/oliveyoung/products/{goodsNo})")
    keyword: SearchText | None = Field(
        default=None, serialization_alias="searchWords", description="Store name, area or store code"
    )
    lat: Latitude = SEOUL_CITY_HALL_LAT
    lon: Longitude = SEOUL_CITY_HALL_LON
    page: Page = Field(default=1, serialization_alias="pageIdx")


# --- CU ----------------------------------------------------------------------------------------


# The PocketCU client primes the stock-search display before every search; so do we.
@lookup(
    "cu_products",
    "/api/cu/products",
    "CU product search",
    "Searches CU (씨유) convenience-store products by `keyword` (a product name; Korean matches "
    "best, e.g. 레쓰비), with prices and pickup, delivery and reservation options. "
    "`offset`/`limit` page through results. CU 상품 검색.",
)
class CuProductsQuery(LookupQuery):
    keyword: SearchText
    offset: Annotated[int, Field(ge=0, le=9999), WholeNumber] = 0
    limit: PageSize = 20

    def fetch(self, lookup: Lookup) -> cu.CuProducts:
        prime = operation_params(RouteKey.CU_PRIME, {})
        search = operation_params(
            RouteKey.CU_STOCK, {"searchWord": self.keyword, "offset": self.offset, "limit": self.limit}
        )
        lookup(RouteKey.CU_PRIME, prime)
        return cast(cu.CuProducts, lookup.data(RouteKey.CU_STOCK, search))


@lookup(
    "cu_stores",
    "/api/cu/stores",
    "CU stores near a point (with one item's stock)",
    "Finds CU (씨유) stores near `lat`/`lon` (required; WGS84), optionally by name in "
    "`keyword`; with `itemCd` (an `itemCode` from cuProducts) each store also shows that "
    "item's stock. CU 매장 검색 및 매장별 재고.",
)
class CuStoresQuery(OperationQuery):
    key = RouteKey.CU_STORE
    lat: Latitude = Field(serialization_alias="latVal")
    lon: Longitude = Field(serialization_alias="longVal")
    keyword: SearchText | None = Field(default=None, serialization_alias="searchWord")
    itemCd: Code | None = Field(default=None, description="Also report this item's stock per store")

    def values(self) -> dict[str, Any]:
        return _given(**super().values(), item_cd=self.itemCd)  # the app sends the item under both names

    def fetch(self, lookup: Lookup) -> cu.CuStores:
        data = cast(cu.CuStores, super().fetch(lookup))
        if not self.itemCd:
            # Without an item there is no stock to report; "unknown" on every store would only mislead.
            for store in data["stores"]:
                del store["stock"]
        return data


# --- GS25 --------------------------------------------------------------------------------------


@lookup(
    "gs25_products",
    "/api/gs25/products",
    "GS25 product search",
    "Searches GS25 (지에스25) convenience-store products by `keyword` (a product name; Korean "
    "matches best, e.g. 코카콜라). The `itemCode` of a result is what gs25Stock asks for. GS25 상품 "
    "검색.",
)
class Gs25ProductsQuery(OperationQuery):
    key = RouteKey.GS25_PRODUCTS
    keyword: SearchText = Field(serialization_alias="query")


ITEM_CODE_OR_KEYWORD = CrossRule("itemCodeOrKeyword", "give `itemCode` or `keyword` (or both)")
SEARCH_WINDOW = CrossRule(
    "searchWindow",
    f"`(page - 1) * size` must be at most {seveneleven.MAX_START_COUNT} (the search goes no deeper)",
)


# Pinned to the relay (the app session lives there): the router decides that, not this query.
@lookup(
    "gs25_stock",
    "/api/gs25/stock",
    "GS25 stock per store near a point (`itemCode` or `keyword` required)",
    "Stock of one GS25 product in stores near `lat`/`lon` (required; WGS84): give its "
    "`itemCode` (from gs25Products) or a `keyword` naming it; at least one of the two. GS25 "
    "매장별 재고.",
)
class Gs25StockQuery(OperationQuery):
    key = RouteKey.GS25_STOCK
    cross_rules = (ITEM_CODE_OR_KEYWORD,)
    itemCode: Code | None = Field(default=None, description="GS25 item code; or give `keyword`")
    keyword: SearchText | None = Field(default=None, description="Product keyword; or give `itemCode`")
    lat: Latitude = Field(serialization_alias="myPositionYCoordination")
    lon: Longitude = Field(serialization_alias="myPositionXCoordination")

    @model_validator(mode="after")
    def _item_code_or_keyword(self) -> Self:
        if self.itemCode is None and self.keyword is None:
            raise PydanticCustomError(ITEM_CODE_OR_KEYWORD.name, ITEM_CODE_OR_KEYWORD.text)
        return self


# --- 7-Eleven ----------------------------------------------------------------------------------


@lookup(
    "seveneleven_products",
    "/api/seveneleven/products",
    "7-Eleven product search",
    "Searches 7-Eleven (세븐일레븐) products by `keyword` (a product name; Korean matches best, "
    "e.g. 코카콜라), with prices, events (1+1, 2+1) and ratings. `page`/`size` page through "
    "results. 세븐일레븐 상품 검색.",
)
class SevenElevenProductsQuery(OperationQuery):
    key = RouteKey.SEVEN_GOODS
    cross_rules = (SEARCH_WINDOW,)
    keyword: SearchText
    page: Page = 1
    size: PageSize = 20

    @model_validator(mode="after")
    def _within_the_search_window(self) -> Self:
        # The upstream search starts at row (page-1)*size and goes no deeper than MAX_START_COUNT.
        if (self.page - 1) * self.size > seveneleven.MAX_START_COUNT:
            error = PydanticCustomError(SEARCH_WINDOW.name, SEARCH_WINDOW.text)
            raise ValidationError.from_exception_data(
                type(self).__name__,
                [
                    InitErrorDetails(type=error, loc=(name,), input=getattr(self, name))
                    for name in ("page", "size")
                ],
            )
        return self

    def values(self) -> dict[str, Any]:
        return {
            "collection": seveneleven.GOODS_COLLECTION,
            "query": self.keyword,
            "sort": seveneleven.GOODS_SORT,
            "startCount": (self.page - 1) * self.size,
            "listCount": self.size,
        }


@lookup(
    "seveneleven_stores",
    "/api/seveneleven/stores",
    "7-Eleven store search",
    "Finds 7-Eleven (세븐일레븐) stores by name or area in `keyword` (e.g. 강남), with their "
    "location and services; `limit` caps the rows. 세븐일레븐 매장 검색.",
)
class SevenElevenStoresQuery(OperationQuery):
    key = RouteKey.SEVEN_STORE
    keyword: SearchText = Field(serialization_alias="query")
    limit: PageSize = Field(default=20, serialization_alias="listCount")


@lookup(
    "seveneleven_popwords",
    "/api/seveneleven/popwords",
    "7-Eleven popular keywords",
    "7-Eleven's (세븐일레븐) most searched keywords right now, ranked; `label` picks the list "
    "(default `home`). 세븐일레븐 인기 검색어.",
)
class SevenElevenPopwordsQuery(OperationQuery):
    key = RouteKey.SEVEN_POPWORDS
    label: Code = "home"


# The item's stock metadata first (it names the stock request's codes), then one store's stock. One store per
# request: asking for several at once is rejected upstream. A management quantity of -1 means the item's stock
# is unknown: that is the answer, and no stock request is made (the relays refuse -1 in one).
@lookup(
    "seveneleven_stock",
    "/api/seveneleven/stock",
    "7-Eleven stock of one item in one store",
    "Stock of one 7-Eleven item (`itemCd`: an `itemCode` from sevenelevenProducts) in one "
    "store (`storeCd`: a `storeCode` from sevenelevenStores). 세븐일레븐 매장 재고.",
)
class SevenElevenStockQuery(LookupQuery):
    itemCd: Code
    storeCd: Code

    def fetch(self, lookup: Lookup) -> seveneleven.SevenElevenStock:
        item = fetch_operation(lookup, RouteKey.SEVEN_STOCK_META, {"itemCd": self.itemCd})
        result: seveneleven.SevenElevenStock = {
            "itemCode": item["itemCd"],
            "itemName": item["itemName"],
            "storeCode": self.storeCd,
            "stock": stock(None),
        }
        if item["stokMngQty"] == UNKNOWN_QUANTITY:
            return result
        try:
            stock_params = operation_params(
                RouteKey.SEVEN_STOCK,
                {
                    "smCd": item["smCd"],
                    "stokMngCd": item["stokMngCd"],
                    "stokMngQty": item["stokMngQty"],
                    "stockApplicationRate": item["stockApplicationRate"],
                    "storeList": [self.storeCd],
                },
            )
        except InvalidParams:
            # The codes came from the upstream, not from the caller: an unusable answer, not bad input.
            raise ApiError(ErrorCode.UPSTREAM_BAD_RESPONSE) from None
        stores = lookup.data(RouteKey.SEVEN_STOCK, stock_params)["stores"]
        store = next((row for row in stores if row["storeCode"] == self.storeCd), None)
        if store is not None:  # a store missing from the answer is "unknown", never "out of stock"
            result["stock"] = store["stock"]
        return result


class SevenElevenListingQuery(OperationQuery):
    """`seven-pages`, `seven-issues` or `seven-exhibitions`: listings that take no parameters."""


@lookup(
    "seveneleven_pages",
    "/api/seveneleven/catalog/pages",
    "7-Eleven product pages",
    "7-Eleven's (세븐일레븐) product listing pages: the products the app shows on its catalogue "
    "pages. No parameters. 세븐일레븐 상품 목록.",
)
class SevenElevenPagesQuery(SevenElevenListingQuery):
    key = RouteKey.SEVEN_PAGES


@lookup(
    "seveneleven_issues",
    "/api/seveneleven/catalog/issues",
    "7-Eleven featured products",
    "7-Eleven's (세븐일레븐) featured products of the moment. No parameters. 세븐일레븐 추천 상품.",
)
class SevenElevenIssuesQuery(SevenElevenListingQuery):
    key = RouteKey.SEVEN_ISSUES


@lookup(
    "seveneleven_exhibitions",
    "/api/seveneleven/catalog/exhibitions",
    "7-Eleven promotions",
    "7-Eleven's (세븐일레븐) current promotions, with their dates and number of products. No "
    "parameters. 세븐일레븐 기획전.",
)
class SevenElevenExhibitionsQuery(SevenElevenListingQuery):
    key = RouteKey.SEVEN_EXHIBITIONS


# --- Dtryx -------------------------------------------------------------------------------------


# One cinema's films, bookable dates or (with a date) showtimes.
class DtryxCinemaQuery(OperationQuery):
    brandCode: BrandCode = Field(description="Cinema brand, e.g. indieart")
    cinemaCode: CinemaCode = Field(description="Six-digit cinema code, e.g. 000067")


@lookup(
    "dtryx_movies",
    "/api/dtryx/movies",
    "Films now showing at a cinema",
    "Films now showing at one cinema of the Dtryx booking system (Korean independent cinemas, "
    "독립영화관): `brandCode` (e.g. indieart) and six-digit `cinemaCode` (e.g. 000067). 상영 중인 영화.",
)
class DtryxMoviesQuery(DtryxCinemaQuery):
    key = RouteKey.DTRYX_MOVIES


@lookup(
    "dtryx_play_dates",
    "/api/dtryx/play-dates",
    "Bookable screening dates",
    "Dates with bookable screenings at one Dtryx cinema (`brandCode`, `cinemaCode`); a date "
    "from here is the `playDate` of dtryxTimetable. 예매 가능한 상영일.",
)
class DtryxPlayDatesQuery(DtryxCinemaQuery):
    key = RouteKey.DTRYX_PLAY_DATES


@lookup(
    "dtryx_timetable",
    "/api/dtryx/timetable",
    "Showtimes and seats for one date",
    "Showtimes of one Dtryx cinema (`brandCode`, `cinemaCode`) on one date (`playDate`, "
    "YYYY-MM-DD), with screens, start and end times and remaining seats. 상영 시간표와 잔여 좌석.",
)
class DtryxTimetableQuery(DtryxCinemaQuery):
    key = RouteKey.DTRYX_TIMETABLE
    playDate: DashedDate


# --- CGV ---------------------------------------------------------------------------------------

TheaterCode = cgv.TheaterCode
MovieCode = cgv.MovieCode
CompactDate = cgv.PlayDate
"""YYYYMMDD, a real date (the pattern says which)."""


def _cgv(lookup: Lookup, key: RouteKey, values: Mapping[str, Any], rows: str) -> list[Any]:
    """The rows of one CGV operation's `data`. Its theater or movie code may come from CGV's own lists: one
    the operation refuses is CGV's unusable answer (502), not the caller's bad input."""
    try:
        params = operation_params(key, values)
    except InvalidParams:
        raise ApiError(ErrorCode.UPSTREAM_BAD_RESPONSE) from None
    found: list[Any] = lookup.data(key, params)[rows]  # the rows of the operation's answer type
    return found


def _today(lookup: Lookup) -> str:
    return cgv.compact_today(lookup.clock())


@lookup(
    "cgv_theaters",
    "/api/cgv/theaters",
    "CGV theaters",
    "Finds CGV (씨지브이) cinemas: all of them, or those whose name has the words of `keyword` (e.g. 강남), or "
    "one region's (`regionCode`, e.g. 01 for Seoul); `limit` caps the rows. The `theaterCode` of a result is "
    "what cgvMovies and cgvTimetable ask for. CGV 극장 검색.",
)
class CgvTheatersQuery(LookupQuery):
    keyword: SearchText | None = Field(default=None, description="Words of the theater's name, e.g. 강남")
    regionCode: Code | None = Field(default=None, description="CGV's region code, e.g. 01 (Seoul)")
    limit: PageSize = 30

    def fetch(self, lookup: Lookup) -> cgv.CgvTheaters:
        theaters = _cgv(lookup, RouteKey.CGV_THEATERS, {}, "theaters")
        if self.regionCode is not None:
            theaters = [theater for theater in theaters if theater["regionCode"] == self.regionCode]
        if self.keyword is not None:
            theaters = cgv_lookup.matching_theaters(theaters, self.keyword)
        return {
            "filters": {"keyword": self.keyword, "regionCode": self.regionCode},
            "theaters": theaters[: self.limit],
        }


# Without a theaterCode the theater is the best name match for `keyword`, else the first CGV lists (강남 if
# it lists none); a keyword that names no theater answers no movies rather than another theater's.
@lookup(
    "cgv_movies",
    "/api/cgv/movies",
    "Films showing at a CGV theater",
    "Films showing at one CGV (씨지브이) cinema on one date: `theaterCode` (e.g. 0056, 강남), or the best "
    "name match for `keyword`; `playDate` as YYYYMMDD (default: today in Korea). The `movieCode` of a result "
    "is what cgvTimetable filters by. CGV 상영 영화.",
)
class CgvMoviesQuery(LookupQuery):
    theaterCode: TheaterCode | None = Field(default=None, description="CGV theater code, e.g. 0056 (강남)")
    playDate: CompactDate | None = Field(default=None, description="YYYYMMDD (default: today in Korea)")
    keyword: SearchText | None = Field(
        default=None, description="Words of the theater's name, when no theaterCode is given"
    )

    def fetch(self, lookup: Lookup) -> cgv.CgvMovies:
        play_date = self.playDate or _today(lookup)
        theater, resolved, movies = self.theaterCode, None, []
        if theater is None:
            listed = _cgv(lookup, RouteKey.CGV_THEATERS, {}, "theaters")
            if self.keyword is not None:
                listed = cgv_lookup.matching_theaters(listed, self.keyword)
            resolved = listed[0] if listed else None
            if resolved is not None or self.keyword is None:
                theater = cgv_lookup.DEFAULT_THEATER if resolved is None else resolved["theaterCode"]
        if theater is not None:
            site = {"theaterCode": theater, "playDate": play_date}
            movies = _cgv(lookup, RouteKey.CGV_MOVIES, site, "movies")
        return {
            "playDate": play_date,
            "filters": {"theaterCode": theater, "keyword": self.keyword},
            "resolvedTheater": resolved,
            "movies": movies,
        }


# The theater's site timetable; where it lacks `movieCode`, that movie's timetable; with neither a movie nor
# any screening, each movie's timetable at up to five theaters (강남 first) until one has screenings. Every
# call shares the lookup's time budget, which bounds these fallbacks (504 past it).
@lookup(
    "cgv_timetable",
    "/api/cgv/timetable",
    "CGV screenings and seats for one date",
    "Showtimes and remaining seats at one CGV (씨지브이) cinema (`theaterCode`, default: the first CGV lists) "
    "on one date (`playDate`, YYYYMMDD, default: today in Korea), optionally only one film (`movieCode`, from "
    "cgvMovies); `limit` caps the rows. CGV 상영 시간표와 잔여 좌석.",
)
class CgvTimetableQuery(LookupQuery):
    theaterCode: TheaterCode | None = Field(
        default=None, description="CGV theater code, e.g. 0056 (default: the first CGV lists)"
    )
    playDate: CompactDate | None = Field(default=None, description="YYYYMMDD (default: today in Korea)")
    movieCode: MovieCode | None = Field(default=None, description="Only this movie's screenings")
    limit: PageSize = 50

    def fetch(self, lookup: Lookup) -> cgv.CgvTimetable:
        play_date = self.playDate or _today(lookup)
        theater, resolved, listed = self.theaterCode, None, []
        if theater is None:
            listed = _cgv(lookup, RouteKey.CGV_THEATERS, {}, "theaters")
            resolved = listed[0] if listed else None
            theater = cgv_lookup.DEFAULT_THEATER if resolved is None else resolved["theaterCode"]
        site = {"theaterCode": theater, "playDate": play_date}
        rows = _cgv(lookup, RouteKey.CGV_TIMETABLE, site, "timetable")
        if self.movieCode is not None:
            if not any(row["movieCode"] == self.movieCode for row in rows):
                by_movie = {**site, "movieCode": self.movieCode}
                rows = _cgv(lookup, RouteKey.CGV_TIMETABLE_MOVIE, by_movie, "timetable")
        elif not rows:
            theaters = [theater] if self.theaterCode else cgv_lookup.fallback_theaters(listed)
            rows = self._first_with_screenings(lookup, theaters, play_date)
        return {
            "playDate": play_date,
            "filters": {"theaterCode": self.theaterCode, "movieCode": self.movieCode},
            "resolvedTheater": resolved,
            "filterRelaxed": False,
            "timetable": cgv_lookup.timetable_rows(
                rows, theater=self.theaterCode, movie=self.movieCode, limit=self.limit
            ),
        }

    @staticmethod
    def _first_with_screenings(lookup: Lookup, theaters: list[str], play_date: str) -> list[dict[str, Any]]:
        """Every movie's screenings at the first of `theaters` that has any (N+1 calls per theater)."""
        for theater in theaters:
            site = {"theaterCode": theater, "playDate": play_date}
            rows = [
                row
                for movie in _cgv(lookup, RouteKey.CGV_MOVIES, site, "movies")
                for row in _cgv(
                    lookup,
                    RouteKey.CGV_TIMETABLE_MOVIE,
                    {**site, "movieCode": movie["movieCode"]},
                    "timetable",
                )
            ]
            if rows:
                return rows
        return []
