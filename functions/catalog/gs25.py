"""GS25 (Woodongs app): product search direct, store stock pinned to the relay (the app's logged-in session
or API key lives there). Its two lookups' contracts end the module."""

from functools import partial
from typing import Annotated, Any, Literal, Self

from pydantic import Field, model_validator
from pydantic_core import PydanticCustomError
from typing_extensions import TypedDict

from functions.catalog import common, contract
from functions.catalog import relay_rules as relay
from functions.catalog.relay_rules import RelayInput
from functions.catalog.spec import OperationSpec
from functions.core import RouteKey
from functions.core.input_rules import CrossRule

SEARCH_API = "https://b2c-apigw.woodongs.com"
BFF_API = "https://b2c-bff.woodongs.com"
HEADERS = common.frozen_headers(
    {
        "Accept": "application/json, text/plain, */*",
        "Content-Type": "application/json",
        "Accept-Language": "ko-KR,ko;q=0.9,en-US;q=0.8,en;q=0.7",
        "User-Agent": (
            "Mozilla/5.0 (Linux; Android 15; SM-S928N) AppleWebKit/537.36 (KHTML, like Gecko) "
            "Version/4.0 Chrome/124.0 Mobile Safari/537.36"
        ),
        "Origin": "https://woodongs.com",
        "Referer": "https://woodongs.com/",
    }
)


# --- params ---------------------------------------------------------------------------------------
class ProductSearchParams(common.StrictParams):
    query: common.SearchText


class StoreStockParams(common.StrictParams):
    """The store-stock query. Only the relay sends it (it needs the app's logged-in session)."""

    serviceCode: Literal["01", "02"] = "01"
    realTimeStockYn: common.YN = "Y"
    itemCode: common.OptionalCode | None = None
    keyword: common.SearchText | None = None
    storeCode: common.OptionalCode = ""
    pageNumber: Annotated[int, Field(ge=0, le=9999)] = 1
    pageCount: Annotated[int, Field(ge=1, le=100)] = 20
    myPositionYCoordination: common.Latitude
    myPositionXCoordination: common.Longitude
    centerPositionYCoordination: common.Latitude
    centerPositionXCoordination: common.Longitude
    radiusCondition: Literal["1000"] = "1000"  # a query value, as the relay takes it back
    pickupStoreYn: Literal["N"] = "N"
    isSuperDlvyStoreSelected: Literal["N"] = "N"
    isGs25DlvyStoreSelected: Literal["N"] = "N"

    _centre_defaults_to_position = model_validator(mode="before")(
        common.defaults_from(
            centerPositionYCoordination="myPositionYCoordination",
            centerPositionXCoordination="myPositionXCoordination",
        )
    )

    @model_validator(mode="after")
    def _item_or_keyword(self) -> Self:
        if not self.itemCode and self.keyword is None:
            raise ValueError("itemCode or keyword is required")
        return self

    def query_pairs(self) -> list[tuple[str, str]]:
        """The query as the app sends it: every value a string (coordinates as plain decimals), empty ones
        left out. The relay takes these same pairs as its JSON body and refuses numbers and empty values."""
        values = self.model_dump(exclude_none=True)
        pairs = [
            (name, common.decimal_text(v) if isinstance(v, float) else str(v)) for name, v in values.items()
        ]
        return [(name, text) for name, text in pairs if text]


# --- relay inputs ---------------------------------------------------------------------------------
class ProductSearchRelayInput(RelayInput):
    query: relay.Text1


class StoreStockRelayInput(RelayInput):
    """Every value a string (a number is refused), and an optional one is absent rather than empty."""

    serviceCode: Literal["01", "02"]
    realTimeStockYn: Literal["Y", "N"]
    itemCode: relay.Code1 | None = None
    keyword: relay.Text1 | None = None
    storeCode: relay.Code1 | None = None
    pageNumber: relay.PageText | None = None
    pageCount: relay.PageText | None = None
    myPositionYCoordination: relay.Latitude | None = None
    centerPositionYCoordination: relay.Latitude | None = None
    myPositionXCoordination: relay.Longitude | None = None
    centerPositionXCoordination: relay.Longitude | None = None
    radiusCondition: Literal["1000"] | None = None
    pickupStoreYn: Literal["N"] | None = None
    isSuperDlvyStoreSelected: Literal["N"] | None = None
    isGs25DlvyStoreSelected: Literal["N"] | None = None
    apiKey: relay.ApiKey | None = None


# --- responses ------------------------------------------------------------------------------------
class ProductField(common.UpstreamModel):
    itemCode: common.NonEmptyStr
    itemName: common.NonEmptyStr
    shortItemName: str | None = None
    starPoint: common.NumericOrBlank = None
    stockCheckYn: common.YN | None = None


class ProductDocument(common.UpstreamModel):
    field: ProductField


class ProductSearchResponse(common.UpstreamModel):
    SearchQueryResult: common.SearchEngineResult[ProductDocument]


class StockStoreRow(common.UpstreamModel):
    """Nothing is required of a row (the original accepts `{"realStockQuantity": "0"}`); what is there is typed."""

    storeCode: str | None = None
    storeName: str | None = None
    storeAddress: str | None = None
    storeXCoordination: common.Numeric | None = None
    storeYCoordination: common.Numeric | None = None
    realStockQuantity: common.Quantity = None
    pickupStkQty: common.Quantity = None
    dlvyStkQty: common.Quantity = None
    isSoldOutYn: common.YN | None = None
    searchItemName: str | None = None
    searchItemSellPrice: common.Numeric | None = None
    propertyList: list[Any] | None = None


class StoreStockResponse(common.UpstreamModel):
    stores: list[StockStoreRow]


# --- answers (the lookup API's `data`) ---------------------------------------------------------------
@common.answer
class Gs25Product(TypedDict):
    itemCode: str
    itemName: str
    shortItemName: str | None
    rating: common.Number | None
    stockCheckable: bool | None


@common.answer
class Gs25Products(TypedDict):
    totalCount: common.Tally | None
    products: list[Gs25Product]


@common.answer
class Gs25StockStore(TypedDict):
    storeCode: str | None
    storeName: str | None
    address: str | None
    latitude: common.Number | None
    longitude: common.Number | None
    itemName: str | None
    price: common.Number | None
    stock: common.Stock
    pickupStock: common.Stock
    deliveryStock: common.Stock


@common.answer
class Gs25Stock(TypedDict):
    stores: list[Gs25StockStore]


# --- normalizers ----------------------------------------------------------------------------------
def normalize_products(body: ProductSearchResponse) -> Gs25Products:
    return {
        "totalCount": body.SearchQueryResult.total_count(),
        "products": [
            {
                "itemCode": doc.field.itemCode,
                "itemName": doc.field.itemName,
                "shortItemName": common.optional_text(doc.field.shortItemName),
                "rating": doc.field.starPoint,
                "stockCheckable": common.yn(doc.field.stockCheckYn),
            }
            for doc in body.SearchQueryResult.documents()
        ],
    }


def normalize_stock(body: StoreStockResponse) -> Gs25Stock:
    return {
        "stores": [
            {
                "storeCode": common.optional_text(row.storeCode),
                "storeName": common.optional_text(row.storeName),
                "address": common.optional_text(row.storeAddress),
                "latitude": common.optional_float(row.storeYCoordination),
                "longitude": common.optional_float(row.storeXCoordination),
                "itemName": common.optional_text(row.searchItemName),
                "price": row.searchItemSellPrice,
                "stock": common.stock(row.realStockQuantity),
                "pickupStock": common.stock(row.pickupStkQty),
                "deliveryStock": common.stock(row.dlvyStkQty),
            }
            for row in body.stores
        ]
    }


# --- specs ----------------------------------------------------------------------------------------

# Every GS25 operation: the app's headers (search and stock are on two hosts).
spec = partial(OperationSpec, headers=HEADERS)

PRODUCTS = spec(
    RouteKey.GS25_PRODUCTS,
    "/search/v3/totalSearch",
    base_url=SEARCH_API,
    params=ProductSearchParams,
    probe_params=lambda _now: ProductSearchParams(query="코카콜라"),
    response=ProductSearchResponse,
    normalizer=normalize_products,
    relay_input=ProductSearchRelayInput,
)

# Pinned to the relay (PINNED_TO_RELAY): the direct transport refuses it before any network use. The GET
# request is the reference request the relay makes with the app session; it documents the query shape.
STOCK = spec(
    RouteKey.GS25_STOCK,
    "/api/bff/v2/store/stock",
    base_url=BFF_API,
    params=StoreStockParams,
    probe_params=lambda _now: StoreStockParams(
        keyword="코카콜라",
        myPositionYCoordination=37.5635,
        myPositionXCoordination=126.9839,
        centerPositionYCoordination=37.5635,
        centerPositionXCoordination=126.9839,
    ),
    response=StoreStockResponse,
    normalizer=normalize_stock,
    relay_input=StoreStockRelayInput,
    method="GET",
    query=StoreStockParams.query_pairs,
    relay_body=lambda p: dict(p.query_pairs()),
    relay_api_key_field="apiKey",
)

SPECS = (PRODUCTS, STOCK)


# --- the API's contract ------------------------------------------------------------------------


@contract.lookup("gs25_products", "/api/gs25/products")
class Gs25ProductsQuery(contract.OperationQuery):
    """GS25 product search

    Searches GS25 (지에스25) convenience-store products by `keyword` (a product name; Korean matches best,
    e.g. 코카콜라). The `itemCode` of a result is what gs25Stock asks for. GS25 상품 검색.
    """

    key = RouteKey.GS25_PRODUCTS
    freshness = contract.Freshness(180, 60, stale_if_error=3600)
    keyword: contract.SearchText = Field(serialization_alias="query")


ITEM_CODE_OR_KEYWORD = CrossRule("itemCodeOrKeyword", "give `itemCode` or `keyword` (or both)")


# Pinned to the relay (the app session lives there): the router decides that, not this query.
@contract.lookup("gs25_stock", "/api/gs25/stock")
class Gs25StockQuery(contract.OperationQuery):
    """GS25 stock per store near a point (`itemCode` or `keyword` required)

    Stock of one GS25 product in stores near `lat`/`lon` (required; WGS84): give its `itemCode` (from
    gs25Products) or a `keyword` naming it; at least one of the two. GS25 매장별 재고.
    """

    key = RouteKey.GS25_STOCK
    freshness = contract.Freshness(120, 30)
    cross_rules = (ITEM_CODE_OR_KEYWORD,)
    itemCode: contract.Code | None = Field(default=None, description="GS25 item code; or give `keyword`")
    keyword: contract.SearchText | None = Field(
        default=None, description="Product keyword; or give `itemCode`"
    )
    lat: contract.Latitude = Field(serialization_alias="myPositionYCoordination")
    lon: contract.Longitude = Field(serialization_alias="myPositionXCoordination")

    @model_validator(mode="after")
    def _item_code_or_keyword(self) -> Self:
        if self.itemCode is None and self.keyword is None:
            raise PydanticCustomError(ITEM_CODE_OR_KEYWORD.name, ITEM_CODE_OR_KEYWORD.text)
        return self
