"""The lookup API's endpoints, one query model each: what a caller may send (validated, documented in
OpenAPI) and `fetch`, the operations it becomes.

An endpoint that is one operation (`OperationQuery`) says which one and maps its fields onto the operation's
upstream parameter names; a composite endpoint writes its steps out. Every operation's params are built and
validated before the endpoint's first upstream call, so bad input never reaches a retailer or a relay, and
one `Lookup` (one time budget) serves all of an endpoint's calls.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Mapping
from datetime import date
from typing import Annotated, Any, ClassVar, Self

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

from functions.catalog import cgv, common, dtryx, oliveyoung, seveneleven
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


def fetch_operation(lookup: Lookup, key: RouteKey, values: Mapping[str, Any]) -> dict[str, Any]:
    """One operation: its params from `values` (upstream names), the lookup, the normalized `data`."""
    return lookup.data(key, operation_params(key, values))


def _given(**values: Any) -> dict[str, Any]:
    """Only the values the caller gave: everything else is the operation's own default (the params model)."""
    return {name: value for name, value in values.items() if value is not None}


class LookupQuery(BaseModel):
    """One endpoint's query. An endpoint's query model documents the API: its docstring would show in the
    OpenAPI document, so notes on one are comments."""

    model_config = ConfigDict(frozen=True, extra="ignore", allow_inf_nan=False)

    cross_rules: ClassVar[tuple[CrossRule, ...]] = ()
    """Its rules across parameters: a break of one raises a pydantic error whose type is the rule's name."""

    @abstractmethod
    def fetch(self, lookup: Lookup) -> dict[str, Any]:
        """The endpoint's `data`; raises InvalidParams (400), ApiError or LookupCancelled."""


class OperationQuery(LookupQuery):
    """An endpoint that is one operation, `key`. Each field is one of the operation's params: under its own
    name, or under its `serialization_alias` where the upstream names it otherwise."""

    key: ClassVar[RouteKey]

    def values(self) -> dict[str, Any]:
        """The operation's params by upstream name; what the caller left out (None) takes the params model's
        default."""
        return self.model_dump(by_alias=True, exclude_none=True)

    def fetch(self, lookup: Lookup) -> dict[str, Any]:
        return fetch_operation(lookup, self.key, self.values())


# --- Olive Young -------------------------------------------------------------------------------


class OliveyoungStoresQuery(OperationQuery):
    key = RouteKey.OY_FIND_STORE
    keyword: SearchText | None = Field(
        default=None, serialization_alias="searchWords", description="Store name, area or store code"
    )
    lat: Latitude = SEOUL_CITY_HALL_LAT
    lon: Longitude = SEOUL_CITY_HALL_LON
    page: Page = Field(default=1, serialization_alias="pageIdx")


class OliveyoungProductsQuery(OperationQuery):
    key = RouteKey.OY_PRODUCT_SEARCH
    keyword: SearchText
    page: Page = 1
    size: PageSize = 20


class OliveyoungGoodsQuery(OperationQuery):
    """A goods number (a path parameter) -> its master goods number."""

    key = RouteKey.OY_GOODS_INFO
    goodsNo: GoodsNumber


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
class CuProductsQuery(LookupQuery):
    keyword: SearchText
    offset: Annotated[int, Field(ge=0, le=9999), WholeNumber] = 0
    limit: PageSize = 20

    def fetch(self, lookup: Lookup) -> dict[str, Any]:
        prime = operation_params(RouteKey.CU_PRIME, {})
        search = operation_params(
            RouteKey.CU_STOCK, {"searchWord": self.keyword, "offset": self.offset, "limit": self.limit}
        )
        lookup(RouteKey.CU_PRIME, prime)
        return lookup.data(RouteKey.CU_STOCK, search)


class CuStoresQuery(OperationQuery):
    key = RouteKey.CU_STORE
    lat: Latitude = Field(serialization_alias="latVal")
    lon: Longitude = Field(serialization_alias="longVal")
    keyword: SearchText | None = Field(default=None, serialization_alias="searchWord")
    itemCd: Code | None = Field(default=None, description="Also report this item's stock per store")

    def values(self) -> dict[str, Any]:
        return _given(**super().values(), item_cd=self.itemCd)  # the app sends the item under both names

    def fetch(self, lookup: Lookup) -> dict[str, Any]:
        data = super().fetch(lookup)
        if not self.itemCd:
            # Without an item there is no stock to report; "unknown" on every store would only mislead.
            data["stores"] = [{k: v for k, v in store.items() if k != "stock"} for store in data["stores"]]
        return data


# --- GS25 --------------------------------------------------------------------------------------


class Gs25ProductsQuery(OperationQuery):
    key = RouteKey.GS25_PRODUCTS
    keyword: SearchText = Field(serialization_alias="query")


ITEM_CODE_OR_KEYWORD = CrossRule("itemCodeOrKeyword", "give `itemCode` or `keyword` (or both)")
SEARCH_WINDOW = CrossRule(
    "searchWindow",
    f"`(page - 1) * size` must be at most {seveneleven.MAX_START_COUNT} (the search goes no deeper)",
)


# Pinned to the relay (the app session lives there): the router decides that, not this query.
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


class SevenElevenStoresQuery(OperationQuery):
    key = RouteKey.SEVEN_STORE
    keyword: SearchText = Field(serialization_alias="query")
    limit: PageSize = Field(default=20, serialization_alias="listCount")


class SevenElevenPopwordsQuery(OperationQuery):
    key = RouteKey.SEVEN_POPWORDS
    label: Code = "home"


# The item's stock metadata first (it names the stock request's codes), then one store's stock. One store per
# request: asking for several at once is rejected upstream. A management quantity of -1 means the item's stock
# is unknown: that is the answer, and no stock request is made (the relays refuse -1 in one).
class SevenElevenStockQuery(LookupQuery):
    itemCd: Code
    storeCd: Code

    def fetch(self, lookup: Lookup) -> dict[str, Any]:
        item = fetch_operation(lookup, RouteKey.SEVEN_STOCK_META, {"itemCd": self.itemCd})
        result = {"itemCode": item["itemCd"], "itemName": item["itemName"], "storeCode": self.storeCd}
        if item["stokMngQty"] == UNKNOWN_QUANTITY:
            return {**result, "stock": stock(None)}
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
        # A store missing from the answer is "unknown", never "out of stock".
        return {**result, "stock": store["stock"] if store is not None else stock(None)}


class SevenElevenListingQuery(OperationQuery):
    """`seven-pages`, `seven-issues` or `seven-exhibitions`: listings that take no parameters."""


class SevenElevenPagesQuery(SevenElevenListingQuery):
    key = RouteKey.SEVEN_PAGES


class SevenElevenIssuesQuery(SevenElevenListingQuery):
    key = RouteKey.SEVEN_ISSUES


class SevenElevenExhibitionsQuery(SevenElevenListingQuery):
    key = RouteKey.SEVEN_EXHIBITIONS


# --- Dtryx -------------------------------------------------------------------------------------


# One cinema's films, bookable dates or (with a date) showtimes.
class DtryxCinemaQuery(OperationQuery):
    brandCode: BrandCode = Field(description="Cinema brand, e.g. indieart")
    cinemaCode: CinemaCode = Field(description="Six-digit cinema code, e.g. 000067")


class DtryxMoviesQuery(DtryxCinemaQuery):
    key = RouteKey.DTRYX_MOVIES


class DtryxPlayDatesQuery(DtryxCinemaQuery):
    key = RouteKey.DTRYX_PLAY_DATES


class DtryxTimetableQuery(DtryxCinemaQuery):
    key = RouteKey.DTRYX_TIMETABLE
    playDate: DashedDate


# --- CGV ---------------------------------------------------------------------------------------

TheaterCode = cgv.TheaterCode
MovieCode = cgv.MovieCode
CompactDate = cgv.PlayDate
"""YYYYMMDD, a real date (the pattern says which)."""


def _cgv(lookup: Lookup, key: RouteKey, values: Mapping[str, Any], rows: str) -> list[dict[str, Any]]:
    """The rows of one CGV operation's `data`. Its theater or movie code may come from CGV's own lists: one
    the operation refuses is CGV's unusable answer (502), not the caller's bad input."""
    try:
        params = operation_params(key, values)
    except InvalidParams:
        raise ApiError(ErrorCode.UPSTREAM_BAD_RESPONSE) from None
    found: list[dict[str, Any]] = lookup.data(key, params)[rows]
    return found


def _today(lookup: Lookup) -> str:
    return cgv.compact_today(lookup.clock())


class CgvTheatersQuery(LookupQuery):
    keyword: SearchText | None = Field(default=None, description="Words of the theater's name, e.g. 강남")
    regionCode: Code | None = Field(default=None, description="CGV's region code, e.g. 01 (Seoul)")
    limit: PageSize = 30

    def fetch(self, lookup: Lookup) -> dict[str, Any]:
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
class CgvMoviesQuery(LookupQuery):
    theaterCode: TheaterCode | None = Field(default=None, description="CGV theater code, e.g. 0056 (강남)")
    playDate: CompactDate | None = Field(default=None, description="YYYYMMDD (default: today in Korea)")
    keyword: SearchText | None = Field(
        default=None, description="Words of the theater's name, when no theaterCode is given"
    )

    def fetch(self, lookup: Lookup) -> dict[str, Any]:
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
class CgvTimetableQuery(LookupQuery):
    theaterCode: TheaterCode | None = Field(
        default=None, description="CGV theater code, e.g. 0056 (default: the first CGV lists)"
    )
    playDate: CompactDate | None = Field(default=None, description="YYYYMMDD (default: today in Korea)")
    movieCode: MovieCode | None = Field(default=None, description="Only this movie's screenings")
    limit: PageSize = 50

    def fetch(self, lookup: Lookup) -> dict[str, Any]:
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
