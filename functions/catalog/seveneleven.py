"""7-Eleven (new.7-elevenapp.co.kr): eight operations; the relay takes each one's params as JSON.
Its seven lookups' contracts end the module. The payload shapes accepted, and where each alternative key comes
from: docs/upstreams/seveneleven.md."""

from functools import partial
from typing import Annotated, Any, Final, Generic, Literal, Self

from pydantic import (
    ConfigDict,
    Field,
    RootModel,
    StrictStr,
    StringConstraints,
    ValidationError,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError
from typing_extensions import TypedDict

from functions.catalog import common, contract
from functions.catalog import relay_rules as relay
from functions.catalog.relay_rules import WITHOUT_PARAMS, RelayInput
from functions.catalog.spec import OperationSpec
from functions.core import RouteKey
from functions.core.errors import ApiError, ErrorCode
from functions.core.input_rules import CrossRule

BASE_URL = "https://new.7-elevenapp.co.kr"
HEADERS = common.frozen_headers(
    {
        "Accept": "application/json, text/plain, */*",
        "Content-Type": "application/json",
        "User-Agent": "Mozilla/5.0 (Linux; Android 15)",
    }
)

ListCount = Annotated[int, Field(ge=1, le=100)]
# The five id/name pairs the original accepted in a store row (docs/upstreams/seveneleven.md, "Search rows").
STORE_ID_NAME_PAIRS = (
    ("storeCode", "storeName"),
    ("storeCd", "storeNm"),
    ("strCd", "strNm"),
    ("storCd", "storNm"),
    ("shopCd", "shopNm"),
)
# The four keys the original accepted for the word list in an object `data` (docs/upstreams/seveneleven.md,
# "Popular words").
POPWORD_LIST_KEYS = ("keywords", "popwords", "wordList", "list")
# The search body shape (a) the probe uses and lookups send: lookups send what the probe proved works.
GOODS_COLLECTION: Final = "goods"
GOODS_SORT: Final = "quantity/desc,itemOnm/asc"
MAX_START_COUNT = 9999


# --- params ---------------------------------------------------------------------------------------
class GoodsSearchParams(common.StrictParams):
    """Two body shapes are accepted upstream; exactly one must be given.

    (a) `collection`, `sort`, `startCount`, `listCount` (the probe's shape), or
    (b) `pageNo` (0-based), `pageSize` (what the web client sends: `sort` can yield empty results).
    """

    query: common.SearchText
    collection: Literal["goods"] | None = None
    sort: Literal["quantity/desc,itemOnm/asc"] | None = None
    startCount: Annotated[int, Field(ge=0, le=MAX_START_COUNT)] | None = None
    listCount: ListCount | None = None
    pageNo: Annotated[int, Field(ge=0, le=9999)] | None = None
    pageSize: ListCount | None = None

    @model_validator(mode="after")
    def _one_shape(self) -> Self:
        search_shape = [self.collection, self.sort, self.startCount, self.listCount]
        page_shape = [self.pageNo, self.pageSize]
        is_search = all(v is not None for v in search_shape) and all(v is None for v in page_shape)
        is_page = all(v is not None for v in page_shape) and all(v is None for v in search_shape)
        if not (is_search or is_page):
            raise ValueError("give either collection/sort/startCount/listCount or pageNo/pageSize")
        return self


class StoreSearchParams(common.StrictParams):
    collection: Literal["store"] = "store"
    query: common.SearchText
    sort: Literal["Date/desc"] = "Date/desc"
    listCount: ListCount = 10


class PopwordsParams(common.StrictParams):
    label: common.Code = "home"


class StockMetaParams(common.StrictParams):
    itemCd: common.Code


class StockParams(common.StrictParams):
    smCd: common.Code
    stokMngCd: common.Code
    # A known count only: the stock meta's -1 means unknown, and the relays refuse it here.
    stokMngQty: Annotated[int, Field(ge=0, le=9999)]
    stockApplicationRate: Annotated[str, StringConstraints(pattern=r"^[0-9]{1,3}(\.[0-9]{1,4})?$")]
    storeList: Annotated[list[common.Code], Field(min_length=1, max_length=200)]


# --- relay inputs ---------------------------------------------------------------------------------
class GoodsSearchRelayInput(RelayInput):
    collection: Literal["goods"]
    query: relay.Text1
    sort: Literal["quantity/desc,itemOnm/asc"]
    startCount: relay.Count
    listCount: relay.Count1


class GoodsPageRelayInput(RelayInput):
    query: relay.Text1
    pageNo: relay.Count
    pageSize: relay.Count1


class GoodsRelayInput(RootModel[GoodsSearchRelayInput | GoodsPageRelayInput]):
    """Either of the two body shapes the upstream takes."""

    model_config = ConfigDict(defer_build=True)  # as every catalog model: built on first use


class StoreSearchRelayInput(RelayInput):
    collection: Literal["store"]
    query: relay.Text1
    sort: Literal["Date/desc"]
    listCount: relay.Count1


class PopwordsRelayInput(RelayInput):
    label: relay.Code1


class StockMetaRelayInput(RelayInput):
    itemCd: relay.Code1


class StockRelayInput(RelayInput):
    smCd: relay.Code1
    stokMngCd: relay.Code1
    stokMngQty: relay.Count
    stockApplicationRate: Annotated[
        StrictStr, StringConstraints(pattern=r"^[0-9]*(\.[0-9]+)?$", max_length=32)
    ]
    storeList: Annotated[list[relay.Code1], Field(min_length=1, max_length=200)]


# --- responses ------------------------------------------------------------------------------------
def _unwrap_field(data: Any) -> Any:
    """Search rows come either flat or wrapped as `{"field": {...}}` (docs/upstreams/seveneleven.md, "Search
    rows")."""
    if isinstance(data, dict) and isinstance(data.get("field"), dict):
        return data["field"]
    return data


class SevenEnvelope(common.AppEnvelope):
    """The app envelope with its own `data` key (declared by subclasses) and `code` 200..299 when present."""

    @staticmethod
    def failure(data: dict[str, Any]) -> str | None:
        code = data.get("code", 200)
        ok = isinstance(code, int) and not isinstance(code, bool) and 200 <= code <= 299
        return None if ok else "code signals a failure"


class GoodsRow(common.UpstreamModel):
    itemCd: common.NonEmptyStr
    itemOnm: common.NonEmptyStr
    onlinePrice: common.Numeric | None = None
    onlineCost: common.Numeric | None = None
    avgEvalScore: common.NumericOrBlank = None
    productReviewCnt: common.NumericOrBlank = None

    _unwrap = model_validator(mode="before")(_unwrap_field)


class StoreRow(common.UpstreamModel):
    """Store rows name their id/name pair in one of `STORE_ID_NAME_PAIRS`; one pair must be present."""

    _unwrap = model_validator(mode="before")(_unwrap_field)

    @model_validator(mode="after")
    def _has_identity(self) -> Self:
        self.identity()
        return self

    def field(self, name: str) -> Any:
        return (self.model_extra or {}).get(name)

    def identity(self) -> tuple[str, str]:
        for code_key, name_key in STORE_ID_NAME_PAIRS:
            code, name = self.field(code_key), self.field(name_key)
            if isinstance(code, str) and code.strip() and isinstance(name, str) and name.strip():
                return code, name
        raise ValueError("store row without an id/name pair")


class SearchData(common.UpstreamModel, Generic[common.RowT]):
    """Search answers: `SearchQueryResult.Collection[].Documentset.Document[]` or `content[]`, the two the
    original accepted (docs/upstreams/seveneleven.md, "Search rows")."""

    SearchQueryResult: common.SearchEngineResult[common.RowT] | None = None
    content: list[common.RowT] | None = None

    @model_validator(mode="after")
    def _has_rows(self) -> Self:
        if self.SearchQueryResult is None and self.content is None:
            raise ValueError("no SearchQueryResult or content")
        return self

    def rows(self) -> list[common.RowT]:
        if self.SearchQueryResult is not None:
            return self.SearchQueryResult.documents()
        return list(self.content or [])

    def total_count(self) -> int | None:
        return None if self.SearchQueryResult is None else self.SearchQueryResult.total_count()


class GoodsSearchResponse(SevenEnvelope):
    data: SearchData[GoodsRow]


class StoreSearchResponse(SevenEnvelope):
    data: SearchData[StoreRow]


class PopwordItem(common.UpstreamModel):
    """A word object: its word under `keyword`, the one key the recorded payloads show
    (docs/upstreams/seveneleven.md, "Popular words")."""

    keyword: common.NonEmptyStr


PopwordEntry = str | PopwordItem


class PopwordLists(common.UpstreamModel):
    """An object `data`: its word list under one of `POPWORD_LIST_KEYS`."""

    keywords: list[PopwordEntry] | None = None
    popwords: list[PopwordEntry] | None = None
    wordList: list[PopwordEntry] | None = None
    items: list[PopwordEntry] | None = Field(None, alias="list")

    def words(self) -> list[PopwordEntry]:
        for candidate in (self.keywords, self.popwords, self.wordList, self.items):
            if candidate is not None:
                return candidate
        return []


class PopwordsResponse(SevenEnvelope):
    data: list[PopwordEntry] | PopwordLists

    @model_validator(mode="before")
    @classmethod
    def _known_lists_or_confirmed_empty(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("data"), dict):
            inner = data["data"]
            if not any(isinstance(inner.get(key), list) for key in POPWORD_LIST_KEYS):
                # `data: {}` is "no popular words right now", but only when the envelope says success.
                confirmed = data.get("success") is True and data.get("code") == 200
                if inner or not confirmed:
                    raise ValueError("popwords data without a word list")
        return data


class StockMetaResponse(common.UpstreamModel):
    """Not enveloped: the item's stock metadata at top level."""

    itemCd: common.NonEmptyStr
    smCd: common.NonEmptyStr
    stokMngCd: common.NonEmptyStr
    stokMngQty: common.RequiredQuantity
    stockApplicationRate: str | int | common.FiniteFloat


class StoreStock(common.UpstreamModel):
    storeCd: common.NonEmptyStr
    stock: common.RequiredQuantity


class StockData(common.UpstreamModel):
    storeList: list[StoreStock]


class StockResponse(SevenEnvelope):
    data: StockData


class Listing(common.UpstreamModel, Generic[common.RowT]):
    """An object listing: rows under `content` or `list` (docs/upstreams/seveneleven.md, "Listings")."""

    content: list[common.RowT] | None = None
    items: list[common.RowT] | None = Field(None, alias="list")

    @model_validator(mode="after")
    def _has_rows(self) -> Self:
        if self.content is None and self.items is None:
            raise ValueError("no content or list")
        return self

    def rows(self) -> list[common.RowT]:
        return list(self.content if self.content is not None else self.items or [])


class AnyRow(common.UpstreamModel):
    """Exhibitions are any objects; the client reads a few optional fields."""


class ListingResponse(SevenEnvelope, Generic[common.RowT]):
    """A catalog listing: its rows as a bare list or as a `Listing`."""

    data: list[common.RowT] | Listing[common.RowT]

    def rows(self) -> list[common.RowT]:
        return self.data if isinstance(self.data, list) else self.data.rows()


class ProductListingResponse(ListingResponse[GoodsRow]):
    """The product pages and featured products."""


class ExhibitionListingResponse(ListingResponse[AnyRow]):
    """The promotions."""


# --- answers (the lookup API's `data`) ---------------------------------------------------------------
@common.answer
class SevenElevenProduct(TypedDict):
    itemCode: str
    itemName: str
    price: common.Number | None
    cost: common.Number | None
    productNo: str | None
    imageUrl: str | None
    event: str | None
    rating: common.Number | None
    reviewCount: common.Number | None


@common.answer
class SevenElevenProducts(TypedDict):
    totalCount: common.Tally | None
    products: list[SevenElevenProduct]


@common.answer
class SevenElevenStore(TypedDict):
    storeCode: str
    storeName: str
    address: str | None
    latitude: common.Number | None
    longitude: common.Number | None
    pickup: bool | None
    delivery: bool | None
    closed: bool | None


@common.answer
class SevenElevenStores(TypedDict):
    totalCount: common.Tally | None
    stores: list[SevenElevenStore]


@common.answer
class PopularKeyword(TypedDict):
    rank: Annotated[int, Field(ge=1)]
    keyword: str


@common.answer
class SevenElevenPopwords(TypedDict):
    keywords: list[PopularKeyword]


@common.answer
class SevenElevenStock(TypedDict):
    itemCode: str
    itemName: str | None
    storeCode: str
    stock: common.Stock


@common.answer
class SevenElevenCatalogProducts(TypedDict):
    products: list[SevenElevenProduct]


@common.answer
class SevenElevenExhibition(TypedDict):
    id: str | int | None
    name: str | None
    startDate: str | None
    endDate: str | None
    productCount: common.Tally | None


@common.answer
class SevenElevenExhibitions(TypedDict):
    exhibitions: list[SevenElevenExhibition]


# --- normalizers ----------------------------------------------------------------------------------
def _yn_field(row: StoreRow, key: str) -> bool | None:
    value = row.field(key)
    return value == "Y" if value in ("Y", "N") else None


def _product(row: GoodsRow) -> SevenElevenProduct:
    extra = row.model_extra or {}
    product_no = extra.get("prdNo")
    return {
        "itemCode": row.itemCd,
        "itemName": row.itemOnm,
        "price": row.onlinePrice,
        "cost": row.onlineCost,
        "productNo": str(product_no) if isinstance(product_no, str | int) and product_no != "" else None,
        "imageUrl": common.optional_text(extra.get("repImgUrl")),
        "event": common.optional_text(extra.get("eventGbnNm")),
        "rating": row.avgEvalScore,
        "reviewCount": row.productReviewCnt,
    }


def normalize_goods(body: GoodsSearchResponse) -> SevenElevenProducts:
    return {"totalCount": body.data.total_count(), "products": [_product(row) for row in body.data.rows()]}


def normalize_store(body: StoreSearchResponse) -> SevenElevenStores:
    stores: list[SevenElevenStore] = []
    for row in body.data.rows():
        code, name = row.identity()
        address = " ".join(
            part for part in (row.field("addr1"), row.field("addr2")) if common.optional_text(part)
        )
        stores.append(
            {
                "storeCode": code,
                "storeName": name,
                "address": address or None,
                # `lat`/`lng`: the store row's coordinates (docs/upstreams/seveneleven.md, "Search rows").
                "latitude": common.optional_float(row.field("lat")),
                "longitude": common.optional_float(row.field("lng")),
                "pickup": _yn_field(row, "pickupYn"),
                "delivery": _yn_field(row, "dlvyYn"),
                "closed": _yn_field(row, "closeYn"),
            }
        )
    return {"totalCount": body.data.total_count(), "stores": stores}


def _word(item: PopwordEntry) -> str | None:
    return common.optional_text(item) if isinstance(item, str) else item.keyword


def normalize_popwords(body: PopwordsResponse) -> SevenElevenPopwords:
    items = body.data if isinstance(body.data, list) else body.data.words()
    words = [word for word in map(_word, items) if word is not None]
    return {"keywords": [{"rank": rank, "keyword": word} for rank, word in enumerate(words, start=1)]}


def normalize_stock_meta(body: StockMetaResponse) -> dict[str, Any]:
    extra = body.model_extra or {}
    return {
        "itemCd": body.itemCd,
        "itemName": common.optional_text(extra.get("itemOnm")),
        "productNo": common.optional_text(extra.get("prdNo")),
        "smCd": body.smCd,
        "stokMngCd": body.stokMngCd,
        "stokMngQty": body.stokMngQty,
        "stockApplicationRate": str(body.stockApplicationRate),
    }


def normalize_stock(body: StockResponse) -> dict[str, Any]:
    return {
        "stores": [
            {"storeCode": row.storeCd, "stock": common.stock(row.stock)} for row in body.data.storeList
        ]
    }


def normalize_products(body: ProductListingResponse) -> SevenElevenCatalogProducts:
    return {"products": [_product(row) for row in body.rows()]}


def normalize_exhibitions(body: ExhibitionListingResponse) -> SevenElevenExhibitions:
    exhibitions: list[SevenElevenExhibition] = []
    for row in body.rows():
        extra = row.model_extra or {}
        products = extra.get("exhibitionProductList")
        exhibition_id = extra.get("exhibitionIdx")
        exhibitions.append(
            {
                "id": exhibition_id if isinstance(exhibition_id, str | int) else None,
                "name": common.optional_text(extra.get("exhibitionName")),
                "startDate": common.optional_text(extra.get("exhibitionStartDate")),
                "endDate": common.optional_text(extra.get("exhibitionEndDate")),
                "productCount": len(products) if isinstance(products, list) else None,
            }
        )
    return {"exhibitions": exhibitions}


# --- specs ----------------------------------------------------------------------------------------

# Every 7-Eleven operation: the app API's base URL and headers.
spec = partial(OperationSpec, base_url=BASE_URL, headers=HEADERS)

GOODS = spec(
    RouteKey.SEVEN_GOODS,
    "/api/v1/open/search/goods",
    params=GoodsSearchParams,
    probe_params=lambda _now: GoodsSearchParams(
        collection=GOODS_COLLECTION, query="코카콜라", sort=GOODS_SORT, startCount=0, listCount=10
    ),
    response=GoodsSearchResponse,
    normalizer=normalize_goods,
    relay_input=GoodsRelayInput,
)

STORE = spec(
    RouteKey.SEVEN_STORE,
    "/api/v1/open/search/store",
    params=StoreSearchParams,
    probe_params=lambda _now: StoreSearchParams(query="강남", listCount=10),
    response=StoreSearchResponse,
    normalizer=normalize_store,
    relay_input=StoreSearchRelayInput,
)

POPWORDS = spec(
    RouteKey.SEVEN_POPWORDS,
    "/api/v1/open/search/popword",
    params=PopwordsParams,
    probe_params=lambda _now: PopwordsParams(label="home"),
    response=PopwordsResponse,
    normalizer=normalize_popwords,
    relay_input=PopwordsRelayInput,
    # The label travels in the query string; the body is the literal `{}`.
    query=lambda p: [("label", p.label)],
    json_body=lambda _p: {},
)

STOCK_META = spec(
    RouteKey.SEVEN_STOCK_META,
    "/api/v1/open/product/search/stock",
    params=StockMetaParams,
    probe_params=lambda _now: StockMetaParams(itemCd="8801056018979"),
    response=StockMetaResponse,
    normalizer=normalize_stock_meta,
    relay_input=StockMetaRelayInput,
    method="GET",
    query=lambda p: [("itemCd", p.itemCd)],
)

STOCK = spec(
    RouteKey.SEVEN_STOCK,
    "/api/v1/open/real-stock/multi/01/stocks",
    params=StockParams,
    # One store per request: the upstream rejects multi-store requests with code 501.
    probe_params=lambda _now: StockParams(
        smCd="161260", stokMngCd="161260", stokMngQty=1, stockApplicationRate="100", storeList=["64676"]
    ),
    response=StockResponse,
    normalizer=normalize_stock,
    relay_input=StockRelayInput,
)

# The catalog listings: GETs without parameters.
PAGES = spec(
    RouteKey.SEVEN_PAGES,
    "/api/v1/product/pages",
    **WITHOUT_PARAMS,
    response=ProductListingResponse,
    normalizer=normalize_products,
    method="GET",
)
ISSUES = spec(
    RouteKey.SEVEN_ISSUES,
    "/api/v1/product/issues",
    **WITHOUT_PARAMS,
    response=ProductListingResponse,
    normalizer=normalize_products,
    method="GET",
)
EXHIBITIONS = spec(
    RouteKey.SEVEN_EXHIBITIONS,
    "/api/v1/exhibition/main/list",
    **WITHOUT_PARAMS,
    response=ExhibitionListingResponse,
    normalizer=normalize_exhibitions,
    method="GET",
)

SPECS = (GOODS, STORE, POPWORDS, STOCK_META, STOCK, PAGES, ISSUES, EXHIBITIONS)


# --- the API's contract ------------------------------------------------------------------------

SEARCH_WINDOW = CrossRule(
    "searchWindow", f"`(page - 1) * size` must be at most {MAX_START_COUNT} (the search goes no deeper)"
)


@contract.lookup("seveneleven_products", "/api/seveneleven/products")
class SevenElevenProductsQuery(contract.OperationQuery):
    """7-Eleven product search

    Searches 7-Eleven (세븐일레븐) products by `keyword` (a product name; Korean matches best, e.g.
    코카콜라), with prices, events (1+1, 2+1) and ratings. `page`/`size` page through results. 세븐일레븐
    상품 검색.
    """

    key = RouteKey.SEVEN_GOODS
    freshness = contract.Freshness(180, 60, stale_if_error=3600)
    cross_rules = (SEARCH_WINDOW,)
    keyword: contract.SearchText
    page: contract.Page = 1
    size: contract.PageSize = 20

    @model_validator(mode="after")
    def _within_the_search_window(self) -> Self:
        # The upstream search starts at row (page-1)*size and goes no deeper than MAX_START_COUNT.
        if (self.page - 1) * self.size > MAX_START_COUNT:
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
            "collection": GOODS_COLLECTION,
            "query": self.keyword,
            "sort": GOODS_SORT,
            "startCount": (self.page - 1) * self.size,
            "listCount": self.size,
        }


@contract.lookup("seveneleven_stores", "/api/seveneleven/stores")
class SevenElevenStoresQuery(contract.OperationQuery):
    """7-Eleven store search

    Finds 7-Eleven (세븐일레븐) stores by name or area in `keyword` (e.g. 강남), with their location and
    services; `limit` caps the rows. 세븐일레븐 매장 검색.
    """

    key = RouteKey.SEVEN_STORE
    freshness = contract.Freshness(180, 60, stale_if_error=3600)
    keyword: contract.SearchText = Field(serialization_alias="query")
    limit: contract.PageSize = Field(default=20, serialization_alias="listCount")


@contract.lookup("seveneleven_popwords", "/api/seveneleven/popwords")
class SevenElevenPopwordsQuery(contract.OperationQuery):
    """7-Eleven popular keywords

    7-Eleven's (세븐일레븐) most searched keywords right now, ranked; `label` picks the list (default
    `home`). 세븐일레븐 인기 검색어.
    """

    key = RouteKey.SEVEN_POPWORDS
    freshness = contract.Freshness(300, 60, stale_if_error=3600)
    label: contract.Code = "home"


UNKNOWN_QUANTITY = -1


# The item's stock metadata first (it names the stock request's codes), then one store's stock. One store per
# request: asking for several at once is rejected upstream. A management quantity of -1 means the item's stock
# is unknown: that is the answer, and no stock request is made (the relays refuse -1 in one).
@contract.lookup("seveneleven_stock", "/api/seveneleven/stock")
class SevenElevenStockQuery(contract.LookupQuery):
    """7-Eleven stock of one item in one store

    Stock of one 7-Eleven item (`itemCd`: an `itemCode` from sevenelevenProducts) in one store (`storeCd`:
    a `storeCode` from sevenelevenStores). 세븐일레븐 매장 재고.
    """

    freshness = contract.Freshness(600, 60)
    itemCd: contract.Code
    storeCd: contract.Code

    def fetch(self, lookup: contract.OperationRunner) -> SevenElevenStock:
        item = contract.fetch_operation(lookup, RouteKey.SEVEN_STOCK_META, {"itemCd": self.itemCd})
        result: SevenElevenStock = {
            "itemCode": item["itemCd"],
            "itemName": item["itemName"],
            "storeCode": self.storeCd,
            "stock": common.stock(None),
        }
        if item["stokMngQty"] == UNKNOWN_QUANTITY:
            return result
        try:
            stock_params = contract.operation_params(
                RouteKey.SEVEN_STOCK,
                {
                    "smCd": item["smCd"],
                    "stokMngCd": item["stokMngCd"],
                    "stokMngQty": item["stokMngQty"],
                    "stockApplicationRate": item["stockApplicationRate"],
                    "storeList": [self.storeCd],
                },
            )
        except contract.InvalidParams:
            # The codes came from the upstream, not from the caller: an unusable answer, not bad input.
            raise ApiError(ErrorCode.UPSTREAM_BAD_RESPONSE) from None
        stores = lookup.data(RouteKey.SEVEN_STOCK, stock_params)["stores"]
        store = next((row for row in stores if row["storeCode"] == self.storeCd), None)
        if store is not None:  # a store missing from the answer is "unknown", never "out of stock"
            result["stock"] = store["stock"]
        return result


class SevenElevenListingQuery(contract.OperationQuery):
    """`seven-pages`, `seven-issues` or `seven-exhibitions`: listings that take no parameters."""


@contract.lookup("seveneleven_pages", "/api/seveneleven/catalog/pages")
class SevenElevenPagesQuery(SevenElevenListingQuery):
    """7-Eleven product pages

    7-Eleven's (세븐일레븐) product listing pages: the products the app shows on its catalogue pages. No
    parameters. 세븐일레븐 상품 목록.
    """

    key = RouteKey.SEVEN_PAGES
    freshness = contract.Freshness(300, 60, stale_if_error=3600)


@contract.lookup("seveneleven_issues", "/api/seveneleven/catalog/issues")
class SevenElevenIssuesQuery(SevenElevenListingQuery):
    """7-Eleven featured products

    7-Eleven's (세븐일레븐) featured products of the moment. No parameters. 세븐일레븐 추천 상품.
    """

    key = RouteKey.SEVEN_ISSUES
    freshness = contract.Freshness(300, 60, stale_if_error=3600)


@contract.lookup("seveneleven_exhibitions", "/api/seveneleven/catalog/exhibitions")
class SevenElevenExhibitionsQuery(SevenElevenListingQuery):
    """7-Eleven promotions

    7-Eleven's (세븐일레븐) current promotions, with their dates and number of products. No parameters.
    세븐일레븐 기획전.
    """

    key = RouteKey.SEVEN_EXHIBITIONS
    freshness = contract.Freshness(300, 60, stale_if_error=3600)
