"""Which simulated upstream a request is for: retailer (host, path) and relay (group, operation) -> route key.

These mirror the URLs and relay operation names of the specs in `functions/catalog/`; a test checks them
against the real specs so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping

from functions.core import RelayGroup, RouteKey

DTRYX_MOVIE_PATH = "/dtryx/cms/thirdparty/movie"

RETAILER_ROUTES: Mapping[tuple[str, str], RouteKey] = {
    ("www.oliveyoung.co.kr", "/oystore/api/storeFinder/find-store"): RouteKey.OY_FIND_STORE,
    ("www.oliveyoung.co.kr", "/oystore/api/stock/product-search-v3"): RouteKey.OY_PRODUCT_SEARCH,
    ("www.oliveyoung.co.kr", "/oystore/api/stock/stock-goods-info-v3"): RouteKey.OY_GOODS_INFO,
    ("www.oliveyoung.co.kr", "/oystore/api/stock/stock-stores"): RouteKey.OY_STOCK_STORES,
    ("www.pocketcu.co.kr", "/api/search/display/stock"): RouteKey.CU_PRIME,
    ("www.pocketcu.co.kr", "/api/search/rest/stock/main"): RouteKey.CU_STOCK,
    ("www.pocketcu.co.kr", "/api/store"): RouteKey.CU_STORE,
    ("b2c-apigw.woodongs.com", "/search/v3/totalSearch"): RouteKey.GS25_PRODUCTS,
    # Pinned to the relay: never called direct. Served anyway, so that a mistake shows up in the call counts.
    ("b2c-bff.woodongs.com", "/api/bff/v2/store/stock"): RouteKey.GS25_STOCK,
    ("new.7-elevenapp.co.kr", "/api/v1/open/search/goods"): RouteKey.SEVEN_GOODS,
    ("new.7-elevenapp.co.kr", "/api/v1/open/search/store"): RouteKey.SEVEN_STORE,
    ("new.7-elevenapp.co.kr", "/api/v1/open/search/popword"): RouteKey.SEVEN_POPWORDS,
    ("new.7-elevenapp.co.kr", "/api/v1/open/product/search/stock"): RouteKey.SEVEN_STOCK_META,
    ("new.7-elevenapp.co.kr", "/api/v1/open/real-stock/multi/01/stocks"): RouteKey.SEVEN_STOCK,
    ("new.7-elevenapp.co.kr", "/api/v1/product/pages"): RouteKey.SEVEN_PAGES,
    ("new.7-elevenapp.co.kr", "/api/v1/product/issues"): RouteKey.SEVEN_ISSUES,
    ("new.7-elevenapp.co.kr", "/api/v1/exhibition/main/list"): RouteKey.SEVEN_EXHIBITIONS,
    ("api.dtryx.com", f"{DTRYX_MOVIE_PATH}/third-party-type2-movie-now"): RouteKey.DTRYX_MOVIES,
    (
        "api.dtryx.com",
        f"{DTRYX_MOVIE_PATH}/third-party-type2-timetable-play-date-list",
    ): RouteKey.DTRYX_PLAY_DATES,
    ("api.dtryx.com", f"{DTRYX_MOVIE_PATH}/third-party-type2-timetable-list"): RouteKey.DTRYX_TIMETABLE,
}

_OLIVEYOUNG_OPERATIONS = {
    "find-store": RouteKey.OY_FIND_STORE,
    "product-search-v3": RouteKey.OY_PRODUCT_SEARCH,
    "stock-goods-info-v3": RouteKey.OY_GOODS_INFO,
    "stock-stores": RouteKey.OY_STOCK_STORES,
}
_DTRYX_OPERATIONS = {
    "movies": RouteKey.DTRYX_MOVIES,
    "play-dates": RouteKey.DTRYX_PLAY_DATES,
    "timetable": RouteKey.DTRYX_TIMETABLE,
}
# The convenience relay names its operations after the route keys themselves.
_CONVENIENCE_OPERATIONS = {key.value: key for key in RouteKey if not key.value.startswith(("oy-", "dtryx-"))}

RELAY_OPERATIONS: Mapping[RelayGroup, Mapping[str, RouteKey]] = {
    RelayGroup.OLIVEYOUNG: _OLIVEYOUNG_OPERATIONS,
    RelayGroup.CONVENIENCE: _CONVENIENCE_OPERATIONS,
    RelayGroup.DTRYX: _DTRYX_OPERATIONS,
}

RELAY_HEALTH_PATHS: Mapping[RelayGroup, str] = {
    RelayGroup.OLIVEYOUNG: "/health",
    RelayGroup.CONVENIENCE: "/v1/convenience/health",
    RelayGroup.DTRYX: "/v1/dtryx/health",
}


def retailer_route(host: str, path: str) -> RouteKey | None:
    """The route key for a request to a retailer host and path (no query), if it is a simulated one."""
    return RETAILER_ROUTES.get((host.lower(), path.rstrip("/") or "/"))


def relay_route(group: RelayGroup, operation: str) -> RouteKey | None:
    """The route key a relay operation serves, if the relay knows that operation."""
    return RELAY_OPERATIONS[group].get(operation)
