"""CU (PocketCU app API): three POST JSON operations on www.pocketcu.co.kr; the relay takes the same bodies.
Its two lookups' contracts end the module."""

import re
from collections.abc import Callable, Mapping
from functools import partial
from typing import Annotated, Any, ClassVar, Literal, NotRequired, cast

from pydantic import BeforeValidator, Field, StringConstraints, model_validator
from typing_extensions import TypedDict

from functions.catalog import common, contract
from functions.catalog import relay_rules as relay
from functions.catalog.relay_rules import WITHOUT_PARAMS, RelayInput
from functions.catalog.spec import OperationSpec
from functions.core import RouteKey

BASE_URL = "https://www.pocketcu.co.kr"
HEADERS = common.frozen_headers(
    {
        "Accept": "application/json, text/javascript, */*; q=0.01",
        "Content-Type": "application/json",
        "X-Requested-With": "XMLHttpRequest",
        # `;BGFCU` marks the PocketCU app; the API expects it.
        "User-Agent": (
            "Mozilla/5.0 (Linux; Android 12) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 "
            "Chrome/138.0.0.0 Mobile Safari/537.36;BGFCU"
        ),
    }
)

_COORD_TEXT = re.compile(r"-?[0-9]{1,3}(\.[0-9]{1,15})?")


def _coordinate_text(limit: float) -> Any:
    """CU wants coordinates as numeric strings; accept a number too and send it as text."""

    def convert(value: object) -> str:
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = common.decimal_text(value)
        if not isinstance(value, str) or not _COORD_TEXT.fullmatch(value) or abs(float(value)) > limit:
            raise ValueError(f"expected a numeric string within ±{limit:g}")
        return value

    return BeforeValidator(convert)


LatText = Annotated[str, _coordinate_text(90)]
LongText = Annotated[str, _coordinate_text(180)]


# --- params ---------------------------------------------------------------------------------------
class StockSearchParams(common.StrictParams):
    searchWord: common.SearchText
    prevSearchWord: Literal[""] = ""
    spellModifyUseYn: Literal["Y"] = "Y"
    offset: Annotated[int, Field(ge=0, le=9999)] = 0
    limit: Annotated[int, Field(ge=1, le=9999)] = 10
    searchSort: Annotated[str, StringConstraints(pattern=r"^[A-Za-z_]{1,20}$")] = "recom"


class StoreParams(common.StrictParams):
    """The app's store request. Fixed fields default to the only values the upstream accepts."""

    latVal: LatText
    longVal: LongText
    baseLatVal: LatText
    baseLongVal: LongText
    tabId: Literal["2"] = "2"
    filterSvcList: Annotated[list[str], Field(max_length=0)] = Field(default_factory=list)
    filterAdtList: Annotated[list[str], Field(max_length=0)] = Field(default_factory=list)
    stockCdcYn: Literal["N"] = "N"
    searchStock: Literal[False] = False
    pickupType: Literal["change"] = "change"
    getRoute: Literal["IOS"] = "IOS"
    areaTplNo: Literal["0"] = "0"
    childMealPickUpYn: Literal["N"] = "N"
    isCurrentSearch: Literal["N"] = "N"
    pageType: common.OptionalText = "search_improve"
    searchWord: common.OptionalText = ""
    isRecommend: Literal["", "Y", "N"] = ""
    recommendId: common.OptionalCode = ""
    jipCd: common.OptionalCode = ""
    itemCd: common.OptionalCode = ""
    item_cd: common.OptionalCode = ""
    onItemNo: common.OptionalCode = ""

    _base_defaults_to_position = model_validator(mode="before")(
        common.defaults_from(baseLatVal="latVal", baseLongVal="longVal")
    )


# --- relay inputs ---------------------------------------------------------------------------------
class StockSearchRelayInput(RelayInput):
    searchWord: relay.Text1
    prevSearchWord: Literal[""]
    spellModifyUseYn: Literal["Y"]
    offset: relay.Count
    limit: relay.Count1
    searchSort: relay.Code1


class StoreRelayInput(RelayInput):
    latVal: relay.Latitude
    longVal: relay.Longitude
    baseLatVal: relay.Latitude
    baseLongVal: relay.Longitude
    tabId: Literal["2"]
    filterSvcList: relay.Empty
    filterAdtList: relay.Empty
    stockCdcYn: Literal["N"]
    searchStock: relay.FalseOnly
    pickupType: Literal["change"]
    getRoute: Literal["IOS"]
    areaTplNo: Literal["0"]
    childMealPickUpYn: Literal["N"]
    isCurrentSearch: Literal["N"]
    pageType: relay.Text
    searchWord: relay.Text
    isRecommend: Literal["", "Y", "N"]
    recommendId: relay.Code
    jipCd: relay.Code
    itemCd: relay.Code
    item_cd: relay.Code
    onItemNo: relay.Code


# --- responses ------------------------------------------------------------------------------------
class CuResponse(common.AppEnvelope):
    """Every CU body: the app envelope, and `resp_cd` "0000" when present ("3000": the lookup failed)."""

    @staticmethod
    def failure(data: dict[str, Any]) -> str | None:
        return "resp_cd signals a failure" if data.get("resp_cd", "0000") != "0000" else None


class AreaCategory(common.UpstreamModel):
    menuCd: common.NonEmptyStr
    menuNm: common.NonEmptyStr


class PrimeResponse(CuResponse):
    areaCateList: list[AreaCategory]


class StockFields(common.UpstreamModel):
    item_cd: common.NonEmptyStr
    item_nm: common.NonEmptyStr
    hyun_maega: common.Numeric
    on_item_no: str | None = None
    pickup_yn: common.YN | None = None
    deliv_yn: common.YN | None = None
    reserv_yn: common.YN | None = None


class StockRow(common.UpstreamModel):
    fields: StockFields


class StockResultInner(common.UpstreamModel):
    rows: list[StockRow]
    total_count: common.Count | None = None


class StockResult(common.UpstreamModel):
    result: StockResultInner


class StockData(common.UpstreamModel):
    stockResult: StockResult


class StockSearchResponse(CuResponse):
    data: StockData


class StoreRow(common.UpstreamModel):
    storeCd: common.NonEmptyStr
    storeNm: common.NonEmptyStr
    latVal: common.Numeric | None = None
    longVal: common.Numeric | None = None
    distance: common.Numeric | None = None
    stock: common.Quantity = None
    deliveryYn: common.YN | None = None
    deliveryPickYn: common.YN | None = None
    jumpoPickYn: common.YN | None = None
    reserveYn: common.YN | None = None


class StoreResponse(CuResponse):
    storeList: list[StoreRow]
    totalCnt: common.Count | None = None


# --- answers (the lookup API's `data`) ---------------------------------------------------------------
@common.answer
class CuProduct(TypedDict):
    itemCode: str
    itemName: str
    price: common.Number
    onlineItemNo: str | None
    pickup: bool | None
    delivery: bool | None
    reservation: bool | None


@common.answer
class CuProducts(TypedDict):
    totalCount: common.Tally | None
    products: list[CuProduct]


@common.answer
class CuStore(TypedDict):
    storeCode: str
    storeName: str
    latitude: common.Number | None
    longitude: common.Number | None
    distance: common.Number | None
    delivery: bool | None
    deliveryPickup: bool | None
    storePickup: bool | None
    reservation: bool | None
    stock: NotRequired[Annotated[common.Stock, Field(description="Only when `itemCd` was given")]]


@common.answer
class CuStores(TypedDict):
    totalCount: common.Tally | None
    stores: list[CuStore]


# --- normalizers ----------------------------------------------------------------------------------
def normalize_prime(body: PrimeResponse) -> dict[str, Any]:
    return {"categories": [{"code": row.menuCd, "name": row.menuNm} for row in body.areaCateList]}


def normalize_stock(body: StockSearchResponse) -> CuProducts:
    result = body.data.stockResult.result
    return {
        "totalCount": result.total_count,
        "products": [
            {
                "itemCode": row.fields.item_cd,
                "itemName": row.fields.item_nm,
                "price": row.fields.hyun_maega,
                "onlineItemNo": row.fields.on_item_no or None,
                "pickup": common.yn(row.fields.pickup_yn),
                "delivery": common.yn(row.fields.deliv_yn),
                "reservation": common.yn(row.fields.reserv_yn),
            }
            for row in result.rows
        ],
    }


def _store(row: StoreRow) -> CuStore:
    return {
        "storeCode": row.storeCd,
        "storeName": row.storeNm,
        "latitude": common.optional_float(row.latVal),
        "longitude": common.optional_float(row.longVal),
        "distance": row.distance,
        "delivery": common.yn(row.deliveryYn),
        "deliveryPickup": common.yn(row.deliveryPickYn),
        "storePickup": common.yn(row.jumpoPickYn),
        "reservation": common.yn(row.reserveYn),
        "stock": common.stock(row.stock),
    }


def normalize_store(body: StoreResponse) -> CuStores:
    return {"totalCount": body.totalCnt, "stores": [_store(row) for row in body.storeList]}


# --- specs ----------------------------------------------------------------------------------------

# Every CU operation: CU's base URL and the app's headers.
spec = partial(OperationSpec, base_url=BASE_URL, headers=HEADERS)

PRIME = spec(
    RouteKey.CU_PRIME,
    "/api/search/display/stock",
    **WITHOUT_PARAMS,
    response=PrimeResponse,
    normalizer=normalize_prime,
)

STOCK = spec(
    RouteKey.CU_STOCK,
    "/api/search/rest/stock/main",
    params=StockSearchParams,
    probe_params=lambda _now: StockSearchParams(searchWord="레쓰비", offset=0, limit=10, searchSort="recom"),
    response=StockSearchResponse,
    normalizer=normalize_stock,
    relay_input=StockSearchRelayInput,
)

STORE = spec(
    RouteKey.CU_STORE,
    "/api/store",
    params=StoreParams,
    probe_params=lambda _now: StoreParams(
        latVal="37.5635",
        longVal="126.9839",
        baseLatVal="37.5635",
        baseLongVal="126.9839",
        pageType="search_improve",
        searchWord="강남",
    ),
    response=StoreResponse,
    normalizer=normalize_store,
    relay_input=StoreRelayInput,
)

SPECS = (PRIME, STOCK, STORE)


# --- the API's contract ------------------------------------------------------------------------


# The PocketCU client primes the stock-search display before every search; so do we.
@contract.lookup("cu_products", "/api/cu/products")
class CuProductsQuery(contract.LookupQuery):
    """CU product search

    Searches CU (씨유) convenience-store products by `keyword` (a product name; Korean matches best, e.g.
    레쓰비), with prices and pickup, delivery and reservation options. `offset`/`limit` page through
    results. CU 상품 검색.
    """

    freshness = contract.Freshness(600, 60, stale_if_error=3600)
    keyword: contract.SearchText
    offset: Annotated[int, Field(ge=0, le=9999), contract.WholeNumber] = 0
    limit: contract.PageSize = 20

    def fetch(self, lookup: contract.OperationRunner) -> CuProducts:
        return cast(CuProducts, self.prepare()(lookup))

    def prepare(self) -> Callable[[contract.OperationRunner], Mapping[str, Any]]:
        prime = contract.operation_params(RouteKey.CU_PRIME, {})
        search = contract.operation_params(
            RouteKey.CU_STOCK, {"searchWord": self.keyword, "offset": self.offset, "limit": self.limit}
        )

        def primed_search(lookup: contract.OperationRunner) -> Mapping[str, Any]:
            lookup(RouteKey.CU_PRIME, prime)
            return lookup.data(RouteKey.CU_STOCK, search)

        return primed_search


@contract.lookup("cu_stores", "/api/cu/stores")
class CuStoresQuery(contract.OperationQuery):
    """CU stores near a point (with one item's stock)

    Finds CU (씨유) stores near `lat`/`lon` (required; WGS84), optionally by name in `keyword`; with
    `itemCd` (an `itemCode` from cuProducts) each store also shows that item's stock. CU 매장 검색 및
    매장별 재고.
    """

    key = RouteKey.CU_STORE
    freshness = contract.Freshness(86400, 300, stale_if_error=86400)
    lat: contract.Latitude = Field(serialization_alias="latVal")
    lon: contract.Longitude = Field(serialization_alias="longVal")
    keyword: contract.SearchText | None = Field(default=None, serialization_alias="searchWord")
    itemCd: contract.Code | None = Field(default=None, description="Also report this item's stock per store")

    WITH_STOCK: ClassVar[contract.Freshness] = contract.Freshness(600, 60)
    freshness_notes = (WITH_STOCK.note("With `itemCd` (stock in the answer), answers"),)

    def answer_freshness(self) -> contract.Freshness:
        return self.WITH_STOCK if self.itemCd else self.freshness

    def values(self) -> dict[str, Any]:
        values = super().values()
        if self.itemCd is not None:
            values["item_cd"] = self.itemCd  # the app sends the item under both names
        return values

    def fetch(self, lookup: contract.OperationRunner) -> CuStores:
        data = cast(CuStores, super().fetch(lookup))
        if not self.itemCd:
            # Without an item there is no stock to report; "unknown" on every store would only mislead.
            for store in data["stores"]:
                del store["stock"]
        return data
