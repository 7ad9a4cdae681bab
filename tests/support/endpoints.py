"""The lookup API's endpoints as the tests know them: a valid query for each, and the route keys it calls."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from functions.core import RouteKey


@dataclass(frozen=True)
class Endpoint:
    path: str
    query: Mapping[str, str]
    keys: tuple[RouteKey, ...]
    """The route keys this endpoint calls, in order."""


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint("/api/oliveyoung/stores", {"keyword": "명동", "page": "1"}, (RouteKey.OY_FIND_STORE,)),
    Endpoint("/api/oliveyoung/products", {"keyword": "립밤", "size": "5"}, (RouteKey.OY_PRODUCT_SEARCH,)),
    Endpoint("/api/oliveyoung/products/A000000165760", {}, (RouteKey.OY_GOODS_INFO,)),
    Endpoint(
        "/api/oliveyoung/stock",
        {"productId": "8800362322138", "lat": "37.5635", "lon": "126.9839"},
        (RouteKey.OY_STOCK_STORES,),
    ),
    Endpoint("/api/cu/products", {"keyword": "레쓰비", "limit": "5"}, (RouteKey.CU_PRIME, RouteKey.CU_STOCK)),
    Endpoint(
        "/api/cu/stores", {"lat": "37.5", "lon": "127.0", "itemCd": "8801056018979"}, (RouteKey.CU_STORE,)
    ),
    Endpoint("/api/gs25/products", {"keyword": "코카콜라"}, (RouteKey.GS25_PRODUCTS,)),
    Endpoint(
        "/api/gs25/stock", {"keyword": "코카콜라", "lat": "37.5", "lon": "127.0"}, (RouteKey.GS25_STOCK,)
    ),
    Endpoint(
        "/api/seveneleven/products", {"keyword": "커피", "page": "2", "size": "5"}, (RouteKey.SEVEN_GOODS,)
    ),
    Endpoint("/api/seveneleven/stores", {"keyword": "강남", "limit": "3"}, (RouteKey.SEVEN_STORE,)),
    Endpoint("/api/seveneleven/popwords", {}, (RouteKey.SEVEN_POPWORDS,)),
    Endpoint(
        "/api/seveneleven/stock",
        {"itemCd": "8801056018979", "storeCd": "64676"},
        (RouteKey.SEVEN_STOCK_META, RouteKey.SEVEN_STOCK),
    ),
    Endpoint("/api/seveneleven/catalog/pages", {}, (RouteKey.SEVEN_PAGES,)),
    Endpoint("/api/seveneleven/catalog/issues", {}, (RouteKey.SEVEN_ISSUES,)),
    Endpoint("/api/seveneleven/catalog/exhibitions", {}, (RouteKey.SEVEN_EXHIBITIONS,)),
    Endpoint(
        "/api/dtryx/movies", {"brandCode": "indieart", "cinemaCode": "000067"}, (RouteKey.DTRYX_MOVIES,)
    ),
    Endpoint(
        "/api/dtryx/play-dates",
        {"brandCode": "indieart", "cinemaCode": "000067"},
        (RouteKey.DTRYX_PLAY_DATES,),
    ),
    Endpoint(
        "/api/dtryx/timetable",
        {"brandCode": "indieart", "cinemaCode": "000067", "playDate": "2026-01-01"},
        (RouteKey.DTRYX_TIMETABLE,),
    ),
    Endpoint("/api/cgv/theaters", {"keyword": "강남", "limit": "5"}, (RouteKey.CGV_THEATERS,)),
    Endpoint("/api/cgv/movies", {"theaterCode": "0056", "playDate": "20260101"}, (RouteKey.CGV_MOVIES,)),
    # A movie the site timetable lacks: then its own timetable.
    Endpoint(
        "/api/cgv/timetable",
        {"theaterCode": "0056", "playDate": "20260101", "movieCode": "20000000"},
        (RouteKey.CGV_TIMETABLE, RouteKey.CGV_TIMETABLE_MOVIE),
    ),
)
ENDPOINT_OF = {key: endpoint for endpoint in ENDPOINTS for key in endpoint.keys}
