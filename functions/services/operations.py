"""One function per lookup endpoint: API query -> operation params (upstream field names) -> lookup ->
normalized `data`.

Every operation's params are built and validated before the endpoint's first upstream call, so bad input
never reaches a retailer or a relay. Composite endpoints share one `Lookup` (one time budget).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from functions.catalog import seveneleven
from functions.catalog.common import stock
from functions.catalog.normalize import normalize
from functions.core import RouteKey
from functions.core.errors import upstream_bad_response
from functions.services.lookup import InvalidParams, Lookup, operation_params
from functions.services.queries import (
    CuProductsQuery,
    CuStoresQuery,
    DtryxCinemaQuery,
    DtryxTimetableQuery,
    Gs25ProductsQuery,
    Gs25StockQuery,
    OliveyoungProductsQuery,
    OliveyoungStockQuery,
    OliveyoungStoresQuery,
    SevenElevenPopwordsQuery,
    SevenElevenProductsQuery,
    SevenElevenStockQuery,
    SevenElevenStoresQuery,
)

NO_PARAMS: dict[str, Any] = {}
UNKNOWN_QUANTITY = -1


def _fetch(lookup: Lookup, key: RouteKey, params: BaseModel) -> dict[str, Any]:
    return normalize(key, lookup(key, params))


def _given(**values: Any) -> dict[str, Any]:
    """Only the values the caller gave: everything else is the operation's own default (the params model)."""
    return {name: value for name, value in values.items() if value is not None}


# --- Olive Young -------------------------------------------------------------------------------


def oliveyoung_stores(lookup: Lookup, query: OliveyoungStoresQuery) -> dict[str, Any]:
    key = RouteKey.OY_FIND_STORE
    params = operation_params(
        key, _given(lat=query.lat, lon=query.lon, pageIdx=query.page, searchWords=query.keyword)
    )
    return _fetch(lookup, key, params)


def oliveyoung_products(lookup: Lookup, query: OliveyoungProductsQuery) -> dict[str, Any]:
    key = RouteKey.OY_PRODUCT_SEARCH
    params = operation_params(key, {"keyword": query.keyword, "page": query.page, "size": query.size})
    return _fetch(lookup, key, params)


def oliveyoung_goods_info(lookup: Lookup, goods_no: str) -> dict[str, Any]:
    key = RouteKey.OY_GOODS_INFO
    return _fetch(lookup, key, operation_params(key, {"goodsNo": goods_no}))


def oliveyoung_stock(lookup: Lookup, query: OliveyoungStockQuery) -> dict[str, Any]:
    key = RouteKey.OY_STOCK_STORES
    params = operation_params(
        key,
        _given(
            productId=query.productId,
            lat=query.lat,
            lon=query.lon,
            pageIdx=query.page,
            searchWords=query.keyword,
        ),
    )
    return _fetch(lookup, key, params)


# --- CU ----------------------------------------------------------------------------------------


def cu_products(lookup: Lookup, query: CuProductsQuery) -> dict[str, Any]:
    """The PocketCU client primes the stock-search display before every search; so do we."""
    prime = operation_params(RouteKey.CU_PRIME, NO_PARAMS)
    search = operation_params(
        RouteKey.CU_STOCK, {"searchWord": query.keyword, "offset": query.offset, "limit": query.limit}
    )
    lookup(RouteKey.CU_PRIME, prime)
    return _fetch(lookup, RouteKey.CU_STOCK, search)


def cu_stores(lookup: Lookup, query: CuStoresQuery) -> dict[str, Any]:
    key = RouteKey.CU_STORE
    item = query.itemCd
    params = operation_params(
        key,
        _given(latVal=query.lat, longVal=query.lon, searchWord=query.keyword, itemCd=item, item_cd=item),
    )
    data = _fetch(lookup, key, params)
    if not item:
        # Without an item there is no stock to report; "unknown" on every store would only mislead.
        data["stores"] = [{k: v for k, v in store.items() if k != "stock"} for store in data["stores"]]
    return data


# --- GS25 --------------------------------------------------------------------------------------


def gs25_products(lookup: Lookup, query: Gs25ProductsQuery) -> dict[str, Any]:
    key = RouteKey.GS25_PRODUCTS
    return _fetch(lookup, key, operation_params(key, {"query": query.keyword}))


def gs25_stock(lookup: Lookup, query: Gs25StockQuery) -> dict[str, Any]:
    """Pinned to the relay (the app session lives there): the router decides that, not this function."""
    key = RouteKey.GS25_STOCK
    values = _given(
        myPositionYCoordination=query.lat,
        myPositionXCoordination=query.lon,
        itemCode=query.itemCode,
        keyword=query.keyword,
    )
    return _fetch(lookup, key, operation_params(key, values))


# --- 7-Eleven ----------------------------------------------------------------------------------


def seveneleven_products(lookup: Lookup, query: SevenElevenProductsQuery) -> dict[str, Any]:
    key = RouteKey.SEVEN_GOODS
    params = operation_params(
        key,
        {
            "collection": seveneleven.GOODS_COLLECTION,
            "query": query.keyword,
            "sort": seveneleven.GOODS_SORT,
            "startCount": (query.page - 1) * query.size,
            "listCount": query.size,
        },
    )
    return _fetch(lookup, key, params)


def seveneleven_stores(lookup: Lookup, query: SevenElevenStoresQuery) -> dict[str, Any]:
    key = RouteKey.SEVEN_STORE
    params = operation_params(key, {"query": query.keyword, "listCount": query.limit})
    return _fetch(lookup, key, params)


def seveneleven_popwords(lookup: Lookup, query: SevenElevenPopwordsQuery) -> dict[str, Any]:
    key = RouteKey.SEVEN_POPWORDS
    return _fetch(lookup, key, operation_params(key, {"label": query.label}))


def seveneleven_stock(lookup: Lookup, query: SevenElevenStockQuery) -> dict[str, Any]:
    """The item's stock metadata first (it names the stock request's codes), then one store's stock.

    One store per request: asking for several at once is rejected upstream. A management quantity of -1
    means the item's stock is unknown: that is the answer, and no stock request is made (the relays refuse
    -1 in one).
    """
    meta_params = operation_params(RouteKey.SEVEN_STOCK_META, {"itemCd": query.itemCd})
    item = _fetch(lookup, RouteKey.SEVEN_STOCK_META, meta_params)
    result = {"itemCode": item["itemCd"], "itemName": item["itemName"], "storeCode": query.storeCd}
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
                "storeList": [query.storeCd],
            },
        )
    except InvalidParams:
        # The codes came from the upstream, not from the caller: an unusable answer, not bad input.
        raise upstream_bad_response() from None
    stores = _fetch(lookup, RouteKey.SEVEN_STOCK, stock_params)["stores"]
    store = next((row for row in stores if row["storeCode"] == query.storeCd), None)
    # A store missing from the answer is "unknown", never "out of stock".
    return {**result, "stock": store["stock"] if store is not None else stock(None)}


# --- 7-Eleven catalog ----------------------------------------------------------------------------


def seveneleven_catalog(lookup: Lookup, key: RouteKey) -> dict[str, Any]:
    """`seven-pages`, `seven-issues` or `seven-exhibitions`: listings that take no parameters."""
    return _fetch(lookup, key, operation_params(key, NO_PARAMS))


# --- Dtryx -------------------------------------------------------------------------------------


def dtryx_movies(lookup: Lookup, query: DtryxCinemaQuery) -> dict[str, Any]:
    key = RouteKey.DTRYX_MOVIES
    return _fetch(lookup, key, operation_params(key, _cinema(query)))


def dtryx_play_dates(lookup: Lookup, query: DtryxCinemaQuery) -> dict[str, Any]:
    key = RouteKey.DTRYX_PLAY_DATES
    return _fetch(lookup, key, operation_params(key, _cinema(query)))


def dtryx_timetable(lookup: Lookup, query: DtryxTimetableQuery) -> dict[str, Any]:
    key = RouteKey.DTRYX_TIMETABLE
    return _fetch(lookup, key, operation_params(key, {**_cinema(query), "playDate": query.playDate}))


def _cinema(query: DtryxCinemaQuery) -> dict[str, Any]:
    return {"brandCode": query.brandCode, "cinemaCode": query.cinemaCode}
