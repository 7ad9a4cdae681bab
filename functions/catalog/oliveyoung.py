"""Olive Young: four POST JSON operations on www.oliveyoung.co.kr; the relay takes the same bodies under its
own operation names. Its four lookups' contracts end the module."""

from functools import partial
from typing import Annotated, Generic, Literal, Self, TypeVar

from pydantic import AfterValidator, Field, StrictBool, StrictStr, StringConstraints, model_validator
from typing_extensions import TypedDict

from functions.catalog import common, contract
from functions.catalog.relay_rules import JsNumber, RelayInput
from functions.catalog.spec import OperationSpec
from functions.core import RouteKey

BASE_URL = "https://www.oliveyoung.co.kr"
HEADERS = common.frozen_headers(
    {
        "Accept": "application/json",
        "Content-Type": "application/json",
        "X-Requested-With": "XMLHttpRequest",
        "User-Agent": (
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
            "Chrome/153.0.0.0 Safari/537.36"
        ),
        "Origin": "https://www.oliveyoung.co.kr",
        "Referer": "https://www.oliveyoung.co.kr/",
        "Accept-Language": "ko-KR,ko;q=0.9",
    }
)

# 명동2가점 (store code DF23) and its coordinates: the catalog's probe values.
PROBE_LAT = 37.5635
PROBE_LON = 126.9839
PROBE_STORE_SEARCH = "DF23"

GoodsCode = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9]{1,32}$")]
PageIndex = Annotated[int, Field(ge=1, le=9999)]
RemainQuantity = Annotated[int, Field(ge=0)] | None


# The map centre defaults to the searcher's position (what the web client sends).
_map_defaults_to_position = common.defaults_from(mapLat="lat", mapLon="lon")


def _percent(value: int | float) -> int | float:
    if not 0 <= value <= 100:
        raise ValueError("expected a percentage 0..100")
    return value


# --- params ---------------------------------------------------------------------------------------
class FindStoreParams(common.StrictParams):
    lat: common.Latitude
    lon: common.Longitude
    mapLat: common.Latitude
    mapLon: common.Longitude
    pageIdx: PageIndex = 1
    searchWords: common.OptionalText = ""
    pogKeys: common.OptionalText = ""
    serviceKeys: common.OptionalText = ""

    _map_centre = model_validator(mode="before")(_map_defaults_to_position)


class ProductSearchParams(common.StrictParams):
    keyword: common.SearchText
    page: PageIndex = 1
    size: Annotated[int, Field(ge=1, le=100)] = 10
    sort: Annotated[str, StringConstraints(pattern=r"^[0-9]{2}$")] = "01"
    includeSoldOut: bool = True


class GoodsInfoParams(common.StrictParams):
    goodsNo: GoodsCode


class StockStoresParams(common.StrictParams):
    productId: GoodsCode
    lat: common.Latitude
    lon: common.Longitude
    pageIdx: PageIndex = 1
    searchWords: common.OptionalText = ""
    mapLat: common.Latitude
    mapLon: common.Longitude

    _map_centre = model_validator(mode="before")(_map_defaults_to_position)


# --- relay inputs: exact keys, all required, JavaScript types only --------------------------------
class FindStoreRelayInput(RelayInput):
    lat: JsNumber
    lon: JsNumber
    pageIdx: JsNumber
    mapLat: JsNumber
    mapLon: JsNumber
    searchWords: StrictStr
    pogKeys: StrictStr
    serviceKeys: StrictStr


class ProductSearchRelayInput(RelayInput):
    includeSoldOut: StrictBool
    keyword: StrictStr
    sort: StrictStr
    page: JsNumber
    size: JsNumber


class GoodsInfoRelayInput(RelayInput):
    goodsNo: StrictStr


class StockStoresRelayInput(RelayInput):
    productId: StrictStr
    searchWords: StrictStr
    lat: JsNumber
    lon: JsNumber
    pageIdx: JsNumber
    mapLat: JsNumber
    mapLon: JsNumber


# --- responses ------------------------------------------------------------------------------------
class StoreRow(common.UpstreamModel):
    storeCode: common.NonEmptyStr
    storeName: common.NonEmptyStr
    address: str | None = None
    latitude: common.Latitude | None = None
    longitude: common.Longitude | None = None
    distance: common.NonNegativeFloat | None = None
    pickupYn: bool | None = None
    openYn: bool | None = None
    salesStoreYn: bool | None = None
    remainQuantity: RemainQuantity = None
    o2oRemainQuantity: RemainQuantity = None


class StockStoreRow(StoreRow):
    salesStoreYn: bool  # required here: it decides "not sold" vs "out of stock"


StoreT = TypeVar("StoreT", bound=StoreRow)


class StoreListData(common.UpstreamModel, Generic[StoreT]):
    storeList: list[StoreT]
    totalCount: Annotated[int, Field(ge=0)] | None = None


class ProductRow(common.UpstreamModel):
    goodsNumber: common.NonEmptyStr
    goodsName: common.NonEmptyStr
    priceToPay: common.NonNegativeNumber
    originalPrice: common.NonNegativeNumber
    discountRate: Annotated[int | float, AfterValidator(_percent)]
    o2oStockFlag: bool
    o2oRemainQuantity: Annotated[int, Field(ge=0)]
    imagePath: str | None = None


class ProductSearchData(common.UpstreamModel):
    searchList: list[ProductRow] | None = None
    serachList: list[ProductRow] | None = None  # the upstream's own misspelling, seen in the wild
    totalCount: Annotated[int, Field(ge=0)] | None = None

    @model_validator(mode="after")
    def _has_a_list(self) -> Self:
        if self.searchList is None and self.serachList is None:
            raise ValueError("searchList missing")
        return self

    @property
    def rows(self) -> list[ProductRow]:
        return self.searchList if self.searchList is not None else self.serachList or []


class GoodsInfo(common.UpstreamModel):
    masterGoodsNumber: common.NonEmptyStr


class GoodsInfoData(common.UpstreamModel):
    goodsInfo: GoodsInfo


class OliveyoungResponse(common.UpstreamModel):
    """Every Olive Young body: `status` "SUCCESS" (anything else is a failure envelope) and its `data`."""

    status: Literal["SUCCESS"]


class FindStoreResponse(OliveyoungResponse):
    data: StoreListData[StoreRow]


class ProductSearchResponse(OliveyoungResponse):
    data: ProductSearchData


class GoodsInfoResponse(OliveyoungResponse):
    data: GoodsInfoData


class StockStoresResponse(OliveyoungResponse):
    data: StoreListData[StockStoreRow]


# --- answers (the lookup API's `data`) ---------------------------------------------------------------
@common.answer
class OliveyoungStore(TypedDict):
    storeCode: str
    storeName: str
    address: str | None
    latitude: common.Number | None
    longitude: common.Number | None
    distance: common.Number | None
    open: bool | None
    pickup: bool | None


@common.answer
class OliveyoungStores(TypedDict):
    totalCount: common.Tally | None
    stores: list[OliveyoungStore]


@common.answer
class OliveyoungProduct(TypedDict):
    goodsNumber: str
    goodsName: str
    price: common.Number
    originalPrice: common.Number
    discountRate: common.Number
    imagePath: str | None
    todayDelivery: bool
    onlineStock: common.Stock


@common.answer
class OliveyoungProducts(TypedDict):
    totalCount: common.Tally | None
    nextPage: bool | int | None
    products: list[OliveyoungProduct]


@common.answer
class OliveyoungGoods(TypedDict):
    masterGoodsNumber: Annotated[str, Field(description="The `productId` of /api/oliveyoung/stock")]
    goodsNumber: str | None
    goodsName: str | None


@common.answer
class OliveyoungStockStore(OliveyoungStore):
    stock: common.Stock


@common.answer
class OliveyoungStock(TypedDict):
    totalCount: common.Tally | None
    stores: list[OliveyoungStockStore]


# --- normalizers ----------------------------------------------------------------------------------
def _store(row: StoreRow) -> OliveyoungStore:
    return {
        "storeCode": row.storeCode,
        "storeName": row.storeName,
        "address": row.address,
        "latitude": row.latitude,
        "longitude": row.longitude,
        "distance": row.distance,
        "open": row.openYn,
        "pickup": row.pickupYn,
    }


def _store_quantity(row: StoreRow) -> int | None:
    """The client's rule: a store's quantity is the larger of shelf and online-order stock."""
    known = [q for q in (row.remainQuantity, row.o2oRemainQuantity) if q is not None]
    return max(known) if known else None


def normalize_find_store(body: FindStoreResponse) -> OliveyoungStores:
    return {"totalCount": body.data.totalCount, "stores": [_store(row) for row in body.data.storeList]}


def normalize_product_search(body: ProductSearchResponse) -> OliveyoungProducts:
    next_page = (body.data.model_extra or {}).get("nextPage")
    return {
        "totalCount": body.data.totalCount,
        "nextPage": next_page if isinstance(next_page, bool | int) else None,
        "products": [
            {
                "goodsNumber": row.goodsNumber,
                "goodsName": row.goodsName,
                "price": row.priceToPay,
                "originalPrice": row.originalPrice,
                "discountRate": row.discountRate,
                "imagePath": row.imagePath,
                "todayDelivery": row.o2oStockFlag,
                "onlineStock": common.stock(row.o2oRemainQuantity),
            }
            for row in body.data.rows
        ],
    }


def normalize_goods_info(body: GoodsInfoResponse) -> OliveyoungGoods:
    info = body.data.goodsInfo
    extra = info.model_extra or {}
    return {
        "masterGoodsNumber": info.masterGoodsNumber,
        "goodsNumber": extra.get("goodsNumber") if isinstance(extra.get("goodsNumber"), str) else None,
        "goodsName": extra.get("goodsName") if isinstance(extra.get("goodsName"), str) else None,
    }


def normalize_stock_stores(body: StockStoresResponse) -> OliveyoungStock:
    return {
        "totalCount": body.data.totalCount,
        "stores": [
            {**_store(row), "stock": common.stock(_store_quantity(row), sold_here=row.salesStoreYn)}
            for row in body.data.storeList
        ],
    }


# --- specs ----------------------------------------------------------------------------------------

# Every Olive Young operation: its base URL and the web app's headers.
spec = partial(OperationSpec, base_url=BASE_URL, headers=HEADERS)

FIND_STORE = spec(
    RouteKey.OY_FIND_STORE,
    "/oystore/api/storeFinder/find-store",
    params=FindStoreParams,
    probe_params=lambda _now: FindStoreParams(
        lat=PROBE_LAT, lon=PROBE_LON, mapLat=PROBE_LAT, mapLon=PROBE_LON, searchWords=PROBE_STORE_SEARCH
    ),
    response=FindStoreResponse,
    normalizer=normalize_find_store,
    relay_input=FindStoreRelayInput,
    relay_operation="find-store",
)
PRODUCT_SEARCH = spec(
    RouteKey.OY_PRODUCT_SEARCH,
    "/oystore/api/stock/product-search-v3",
    params=ProductSearchParams,
    probe_params=lambda _now: ProductSearchParams(keyword="립밤", size=10, sort="01", includeSoldOut=True),
    response=ProductSearchResponse,
    normalizer=normalize_product_search,
    relay_input=ProductSearchRelayInput,
    relay_operation="product-search-v3",
)
GOODS_INFO = spec(
    RouteKey.OY_GOODS_INFO,
    "/oystore/api/stock/stock-goods-info-v3",
    params=GoodsInfoParams,
    probe_params=lambda _now: GoodsInfoParams(goodsNo="A000000165760"),
    response=GoodsInfoResponse,
    normalizer=normalize_goods_info,
    relay_input=GoodsInfoRelayInput,
    relay_operation="stock-goods-info-v3",
)
STOCK_STORES = spec(
    RouteKey.OY_STOCK_STORES,
    "/oystore/api/stock/stock-stores",
    params=StockStoresParams,
    probe_params=lambda _now: StockStoresParams(
        productId="8800362322138",
        lat=PROBE_LAT,
        lon=PROBE_LON,
        mapLat=PROBE_LAT,
        mapLon=PROBE_LON,
        searchWords=PROBE_STORE_SEARCH,
    ),
    response=StockStoresResponse,
    normalizer=normalize_stock_stores,
    relay_input=StockStoresRelayInput,
    relay_operation="stock-stores",
)

SPECS = (FIND_STORE, PRODUCT_SEARCH, GOODS_INFO, STOCK_STORES)


# --- the API's contract ------------------------------------------------------------------------

SEOUL_CITY_HALL_LAT = 37.5665
SEOUL_CITY_HALL_LON = 126.9780
"""Where a store search looks when the caller gives no coordinates."""
GoodsNumber = GoodsCode
"""Olive Young goods numbers and master goods numbers (letters and digits only)."""


@contract.lookup("oliveyoung_stores", "/api/oliveyoung/stores")
class OliveyoungStoresQuery(contract.OperationQuery):
    """Olive Young stores

    Finds Olive Young (올리브영) stores near `lat`/`lon` (default: Seoul City Hall), optionally by name,
    area or store code in `keyword` (e.g. 명동, Gangnam). 올리브영 매장 검색.
    """

    key = RouteKey.OY_FIND_STORE
    freshness = contract.Freshness(86400, 300, stale_if_error=86400)
    keyword: contract.SearchText | None = Field(
        default=None, serialization_alias="searchWords", description="Store name, area or store code"
    )
    lat: contract.Latitude = SEOUL_CITY_HALL_LAT
    lon: contract.Longitude = SEOUL_CITY_HALL_LON
    page: contract.Page = Field(default=1, serialization_alias="pageIdx")


@contract.lookup("oliveyoung_products", "/api/oliveyoung/products")
class OliveyoungProductsQuery(contract.OperationQuery):
    """Olive Young product search

    Searches Olive Young's online catalogue by `keyword` (a product or brand name; Korean matches best,
    e.g. 립밤), with prices, discounts and online stock. The `goodsNumber` of a result is the `goodsNo` of
    oliveyoungGoodsInfo. 올리브영 상품 검색.
    """

    key = RouteKey.OY_PRODUCT_SEARCH
    freshness = contract.Freshness(300, 60, stale_if_error=3600)
    keyword: contract.SearchText
    page: contract.Page = 1
    size: contract.PageSize = 20


@contract.lookup("oliveyoung_goods_info", "/api/oliveyoung/products/{goodsNo}")
class OliveyoungGoodsQuery(contract.OperationQuery):
    """Olive Young goods number -> master goods number (the `productId` of stock lookups)

    Turns an Olive Young goods number (`goodsNo`, from a product search) into its master goods number, the
    `productId` that oliveyoungStock asks for. 올리브영 상품번호 → 마스터 상품번호.
    """

    key = RouteKey.OY_GOODS_INFO
    freshness = contract.Freshness(600, 60, stale_if_error=3600)
    goodsNo: GoodsNumber


@contract.lookup("oliveyoung_stock", "/api/oliveyoung/stock")
class OliveyoungStockQuery(contract.OperationQuery):
    """Olive Young stock per store

    Stock of one Olive Young product (`productId`: its master goods number, from oliveyoungGoodsInfo) in
    each store near `lat`/`lon` (default: Seoul City Hall), optionally only stores matching `keyword`.
    올리브영 매장별 재고.
    """

    key = RouteKey.OY_STOCK_STORES
    freshness = contract.Freshness(600, 60)
    productId: GoodsNumber = Field(description="Master goods number (see /api/oliveyoung/products/{goodsNo})")
    keyword: contract.SearchText | None = Field(
        default=None, serialization_alias="searchWords", description="Store name, area or store code"
    )
    lat: contract.Latitude = SEOUL_CITY_HALL_LAT
    lon: contract.Longitude = SEOUL_CITY_HALL_LON
    page: contract.Page = Field(default=1, serialization_alias="pageIdx")
