"""The catalog itself: one spec per route key, the exact probe requests, relay calls and strict params."""

from __future__ import annotations

from datetime import date
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from pydantic import ValidationError

from functions.catalog import CATALOG, spec_for
from functions.catalog.spec import HttpRequest
from functions.core import PINNED_TO_RELAY, RouteKey
from tests.support.catalog_fixtures import CU_STOCK_BODY, CU_STORE_BODY

NOW = 1_748_822_400_000  # 2025-06-02 00:00 UTC = 09:00 KST

OY_HEADERS = {
    "Accept": "application/json",
    "Content-Type": "application/json",
    "X-Requested-With": "XMLHttpRequest",
    "User-Agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/153.0.0.0 Safari/537.36",
    "Origin": "https://www.oliveyoung.co.kr",
    "Referer": "https://www.oliveyoung.co.kr/",
    "Accept-Language": "ko-KR,ko;q=0.9",
}
CU_HEADERS = {
    "Accept": "application/json, text/javascript, */*; q=0.01",
    "Content-Type": "application/json",
    "X-Requested-With": "XMLHttpRequest",
    "User-Agent": "Mozilla/5.0 (Linux; Android 12) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/138.0.0.0 Mobile Safari/537.36;BGFCU",
}
GS25_HEADERS = {
    "Accept": "application/json, text/plain, */*",
    "Content-Type": "application/json",
    "Accept-Language": "ko-KR,ko;q=0.9,en-US;q=0.8,en;q=0.7",
    "User-Agent": "Mozilla/5.0 (Linux; Android 15; SM-S928N) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0 Mobile Safari/537.36",
    "Origin": "https://woodongs.com",
    "Referer": "https://woodongs.com/",
}
SEVEN_HEADERS = {
    "Accept": "application/json, text/plain, */*",
    "Content-Type": "application/json",
    "User-Agent": "Mozilla/5.0 (Linux; Android 15)",
}
DTRYX_HEADERS = {"Accept": "application/json"}
CGV_HEADERS = {
    "Accept": "application/json",
    "Accept-Language": "ko-KR",
    "User-Agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36",
}

OY_POSITION = {"lat": 37.5635, "lon": 126.9839, "mapLat": 37.5635, "mapLon": 126.9839}
DTRYX = "https://api.dtryx.com/dtryx/cms/thirdparty/movie"
CGV = "https://api.cgv.co.kr/cnm/atkt"

# key -> (method, URL with exact query, JSON body, headers): the catalog's probe requests, verbatim.
PROBE_REQUESTS: dict[RouteKey, tuple[str, str, Any, dict[str, str]]] = {
    RouteKey.OY_FIND_STORE: (
        "POST",
        "https://www.oliveyoung.co.kr/oystore/api/storeFinder/find-store",
        {**OY_POSITION, "pageIdx": 1, "searchWords": "DF23", "pogKeys": "", "serviceKeys": ""},
        OY_HEADERS,
    ),
    RouteKey.OY_PRODUCT_SEARCH: (
        "POST",
        "https://www.oliveyoung.co.kr/oystore/api/stock/product-search-v3",
        {"keyword": "립밤", "page": 1, "size": 10, "sort": "01", "includeSoldOut": True},
        OY_HEADERS,
    ),
    RouteKey.OY_GOODS_INFO: (
        "POST",
        "https://www.oliveyoung.co.kr/oystore/api/stock/stock-goods-info-v3",
        {"goodsNo": "A000000165760"},
        OY_HEADERS,
    ),
    RouteKey.OY_STOCK_STORES: (
        "POST",
        "https://www.oliveyoung.co.kr/oystore/api/stock/stock-stores",
        {"productId": "8800362322138", **OY_POSITION, "pageIdx": 1, "searchWords": "DF23"},
        OY_HEADERS,
    ),
    RouteKey.CU_PRIME: ("POST", "https://www.pocketcu.co.kr/api/search/display/stock", {}, CU_HEADERS),
    RouteKey.CU_STOCK: (
        "POST",
        "https://www.pocketcu.co.kr/api/search/rest/stock/main",
        CU_STOCK_BODY,
        CU_HEADERS,
    ),
    RouteKey.CU_STORE: ("POST", "https://www.pocketcu.co.kr/api/store", CU_STORE_BODY, CU_HEADERS),
    RouteKey.GS25_PRODUCTS: (
        "POST",
        "https://b2c-apigw.woodongs.com/search/v3/totalSearch",
        {"query": "코카콜라"},
        GS25_HEADERS,
    ),
    RouteKey.GS25_STOCK: (
        "GET",
        "https://b2c-bff.woodongs.com/api/bff/v2/store/stock?serviceCode=01&realTimeStockYn=Y"
        "&keyword=%EC%BD%94%EC%B9%B4%EC%BD%9C%EB%9D%BC&pageNumber=1&pageCount=20"
        "&myPositionYCoordination=37.5635&myPositionXCoordination=126.9839"
        "&centerPositionYCoordination=37.5635&centerPositionXCoordination=126.9839"
        "&radiusCondition=1000&pickupStoreYn=N&isSuperDlvyStoreSelected=N&isGs25DlvyStoreSelected=N",
        None,
        GS25_HEADERS,
    ),
    RouteKey.SEVEN_GOODS: (
        "POST",
        "https://new.7-elevenapp.co.kr/api/v1/open/search/goods",
        {
            "query": "코카콜라",
            "collection": "goods",
            "sort": "quantity/desc,itemOnm/asc",
            "startCount": 0,
            "listCount": 10,
        },
        SEVEN_HEADERS,
    ),
    RouteKey.SEVEN_STORE: (
        "POST",
        "https://new.7-elevenapp.co.kr/api/v1/open/search/store",
        {"collection": "store", "query": "강남", "sort": "Date/desc", "listCount": 10},
        SEVEN_HEADERS,
    ),
    RouteKey.SEVEN_POPWORDS: (
        "POST",
        "https://new.7-elevenapp.co.kr/api/v1/open/search/popword?label=home",
        {},
        SEVEN_HEADERS,
    ),
    RouteKey.SEVEN_STOCK_META: (
        "GET",
        "https://new.7-elevenapp.co.kr/api/v1/open/product/search/stock?itemCd=8801056018979",
        None,
        SEVEN_HEADERS,
    ),
    RouteKey.SEVEN_STOCK: (
        "POST",
        "https://new.7-elevenapp.co.kr/api/v1/open/real-stock/multi/01/stocks",
        {
            "smCd": "161260",
            "stokMngCd": "161260",
            "stokMngQty": 1,
            "stockApplicationRate": "100",
            "storeList": ["64676"],
        },
        SEVEN_HEADERS,
    ),
    RouteKey.SEVEN_PAGES: ("GET", "https://new.7-elevenapp.co.kr/api/v1/product/pages", None, SEVEN_HEADERS),
    RouteKey.SEVEN_ISSUES: (
        "GET",
        "https://new.7-elevenapp.co.kr/api/v1/product/issues",
        None,
        SEVEN_HEADERS,
    ),
    RouteKey.SEVEN_EXHIBITIONS: (
        "GET",
        "https://new.7-elevenapp.co.kr/api/v1/exhibition/main/list",
        None,
        SEVEN_HEADERS,
    ),
    RouteKey.DTRYX_MOVIES: (
        "GET",
        f"{DTRYX}/third-party-type2-movie-now?ChannelCd=homepage&EngVerYn=N"
        "&WorkGuID=6D741A36-A973-4BC4-87B4-2475E6654114&BrandCd=indieart&CinemaCd=000067&ImgSize=small",
        None,
        DTRYX_HEADERS,
    ),
    RouteKey.DTRYX_PLAY_DATES: (
        "GET",
        f"{DTRYX}/third-party-type2-timetable-play-date-list?ChannelCd=homepage&EngVerYn=N"
        "&WorkGuID=324A2914-AB19-42A3-BDFE-58A08B2DC35D&BrandCd=indieart&CinemaCd=000067&MovieCd=",
        None,
        DTRYX_HEADERS,
    ),
    RouteKey.DTRYX_TIMETABLE: (
        "GET",
        f"{DTRYX}/third-party-type2-timetable-list?ChannelCd=homepage&EngVerYn=N"
        "&WorkGuID=37E0BA0F-DA5F-4376-9BA4-B5D27286AB87&BrandCd=indieart&CinemaCd=000067"
        "&PlaySDT=2025-06-02&ImgSize=small",
        None,
        DTRYX_HEADERS,
    ),
    # The signature headers are added when a request is sent (`request_to_send`): test_cgv_rules.py.
    RouteKey.CGV_THEATERS: ("GET", f"{CGV}/searchRegnList?coCd=A420", None, CGV_HEADERS),
    RouteKey.CGV_MOVIES: (
        "GET",
        f"{CGV}/searchOnlyCgvMovList?coCd=A420&siteNo=0056&scnYmd=20250602",
        None,
        CGV_HEADERS,
    ),
    RouteKey.CGV_TIMETABLE: (
        "GET",
        f"{CGV}/searchMovScnInfo?coCd=A420&siteNo=0056&scnYmd=20250602&rtctlScopCd=08",
        None,
        CGV_HEADERS,
    ),
    RouteKey.CGV_TIMETABLE_MOVIE: (
        "GET",
        f"{CGV}/searchSchByMov?coCd=A420&siteNo=0056&scnYmd=20250602&movNo=20000000&rtctlScopCd=01",
        None,
        CGV_HEADERS,
    ),
}

DTRYX_CINEMA = {"brandCode": "indieart", "cinemaCode": "000067"}
CGV_SITE = {"theaterCode": "0056", "playDate": "20250602"}
# key -> (relay operation segment, relay body for the probe params)
PROBE_RELAY_CALLS: dict[RouteKey, tuple[str, dict[str, Any]]] = {
    RouteKey.OY_FIND_STORE: ("find-store", PROBE_REQUESTS[RouteKey.OY_FIND_STORE][2]),
    RouteKey.OY_PRODUCT_SEARCH: ("product-search-v3", PROBE_REQUESTS[RouteKey.OY_PRODUCT_SEARCH][2]),
    RouteKey.OY_GOODS_INFO: ("stock-goods-info-v3", PROBE_REQUESTS[RouteKey.OY_GOODS_INFO][2]),
    RouteKey.OY_STOCK_STORES: ("stock-stores", PROBE_REQUESTS[RouteKey.OY_STOCK_STORES][2]),
    RouteKey.CU_PRIME: ("cu-prime", {}),
    RouteKey.CU_STOCK: ("cu-stock", PROBE_REQUESTS[RouteKey.CU_STOCK][2]),
    RouteKey.CU_STORE: ("cu-store", CU_STORE_BODY),
    RouteKey.GS25_PRODUCTS: ("gs25-products", {"query": "코카콜라"}),
    # The stock query's own pairs: every value a string, no empty storeCode (the relay refuses both).
    RouteKey.GS25_STOCK: (
        "gs25-stock",
        dict(parse_qsl(urlsplit(PROBE_REQUESTS[RouteKey.GS25_STOCK][1]).query, keep_blank_values=True)),
    ),
    RouteKey.SEVEN_GOODS: ("seven-goods", PROBE_REQUESTS[RouteKey.SEVEN_GOODS][2]),
    RouteKey.SEVEN_STORE: ("seven-store", PROBE_REQUESTS[RouteKey.SEVEN_STORE][2]),
    RouteKey.SEVEN_POPWORDS: ("seven-popwords", {"label": "home"}),
    RouteKey.SEVEN_STOCK_META: ("seven-stock-meta", {"itemCd": "8801056018979"}),
    RouteKey.SEVEN_STOCK: ("seven-stock", PROBE_REQUESTS[RouteKey.SEVEN_STOCK][2]),
    RouteKey.SEVEN_PAGES: ("seven-pages", {}),
    RouteKey.SEVEN_ISSUES: ("seven-issues", {}),
    RouteKey.SEVEN_EXHIBITIONS: ("seven-exhibitions", {}),
    RouteKey.DTRYX_MOVIES: ("movies", DTRYX_CINEMA),
    RouteKey.DTRYX_PLAY_DATES: ("play-dates", DTRYX_CINEMA),
    RouteKey.DTRYX_TIMETABLE: ("timetable", {**DTRYX_CINEMA, "playDate": "20250602"}),
    RouteKey.CGV_THEATERS: ("theaters", {}),
    RouteKey.CGV_MOVIES: ("movies", CGV_SITE),
    RouteKey.CGV_TIMETABLE: ("timetable", CGV_SITE),
    RouteKey.CGV_TIMETABLE_MOVIE: ("timetable-movie", {**CGV_SITE, "movieCode": "20000000"}),
}


def test_one_spec_per_route_key() -> None:
    assert list(CATALOG) == list(RouteKey)
    assert all(spec_for(key).key is key for key in RouteKey)


def test_gs25_stock_is_pinned_but_still_has_a_spec() -> None:
    assert {RouteKey.GS25_STOCK} == PINNED_TO_RELAY
    assert (
        spec_for(RouteKey.GS25_STOCK).build_request(spec_for(RouteKey.GS25_STOCK).probe_params(NOW)).method
        == "GET"
    )


@pytest.mark.parametrize("key", list(RouteKey))
def test_probe_request_is_exactly_the_catalogs(key: RouteKey) -> None:
    spec = spec_for(key)
    request = spec.build_request(spec.probe_params(NOW))
    method, url, body, headers = PROBE_REQUESTS[key]
    assert isinstance(request, HttpRequest)
    assert (request.method, request.url, request.json_body) == (method, url, body)
    assert dict(request.headers) == headers


@pytest.mark.parametrize("key", list(RouteKey))
def test_probe_relay_call_is_exactly_the_catalogs(key: RouteKey) -> None:
    spec = spec_for(key)
    operation, body = PROBE_RELAY_CALLS[key]
    assert spec.relay_operation == operation
    assert dict(spec.relay_body(spec.probe_params(NOW))) == body


@pytest.mark.parametrize("key", list(RouteKey))
def test_probe_params_round_trip_through_the_strict_model(key: RouteKey) -> None:
    spec = spec_for(key)
    probe = spec.probe_params(NOW)
    assert isinstance(probe, spec.params)
    assert spec.params.model_validate(probe.model_dump()) == probe


@pytest.mark.parametrize("key", list(RouteKey))
def test_params_reject_unknown_fields(key: RouteKey) -> None:
    spec = spec_for(key)
    with pytest.raises(ValidationError):
        spec.params.model_validate({**spec.probe_params(NOW).model_dump(), "unexpected": "x"})


@pytest.mark.parametrize("key", list(RouteKey))
def test_no_header_carries_a_credential(key: RouteKey) -> None:
    spec = spec_for(key)
    headers = {name.lower() for name in spec.build_request(spec.probe_params(NOW)).headers}
    assert not headers & {
        "authorization",
        "cookie",
        "cf-access-client-id",
        "cf-access-client-secret",
        "api-key",
    }


def _with(key: RouteKey, **changes: Any) -> dict[str, Any]:
    return {**spec_for(key).probe_params(NOW).model_dump(), **changes}


INVALID_INPUTS: list[tuple[RouteKey, dict[str, Any]]] = [
    (RouteKey.OY_FIND_STORE, _with(RouteKey.OY_FIND_STORE, lat=91.0)),
    (RouteKey.OY_FIND_STORE, _with(RouteKey.OY_FIND_STORE, lon="126.9")),
    (RouteKey.OY_FIND_STORE, _with(RouteKey.OY_FIND_STORE, pageIdx=0)),
    (RouteKey.OY_FIND_STORE, _with(RouteKey.OY_FIND_STORE, searchWords="명동\n")),
    (RouteKey.OY_PRODUCT_SEARCH, _with(RouteKey.OY_PRODUCT_SEARCH, keyword="")),
    (RouteKey.OY_PRODUCT_SEARCH, _with(RouteKey.OY_PRODUCT_SEARCH, keyword="a" * 201)),
    (RouteKey.OY_PRODUCT_SEARCH, _with(RouteKey.OY_PRODUCT_SEARCH, includeSoldOut="true")),
    (RouteKey.OY_PRODUCT_SEARCH, _with(RouteKey.OY_PRODUCT_SEARCH, size=0)),
    (RouteKey.OY_GOODS_INFO, {"goodsNo": "A0000/../x"}),
    (RouteKey.OY_GOODS_INFO, {}),
    (RouteKey.OY_STOCK_STORES, _with(RouteKey.OY_STOCK_STORES, productId="")),
    (RouteKey.OY_STOCK_STORES, _with(RouteKey.OY_STOCK_STORES, lat=float("nan"))),
    (RouteKey.CU_PRIME, {"searchWord": "x"}),
    (RouteKey.CU_STOCK, _with(RouteKey.CU_STOCK, searchWord="")),
    (RouteKey.CU_STOCK, _with(RouteKey.CU_STOCK, searchWord="a" * 201)),
    (RouteKey.CU_STOCK, _with(RouteKey.CU_STOCK, searchWord="레쓰\x00비")),
    (RouteKey.CU_STOCK, _with(RouteKey.CU_STOCK, offset=10000)),
    (RouteKey.CU_STOCK, _with(RouteKey.CU_STOCK, limit=0)),
    (RouteKey.CU_STOCK, _with(RouteKey.CU_STOCK, prevSearchWord="커피")),
    (RouteKey.CU_STORE, _with(RouteKey.CU_STORE, latVal="95.0")),
    (RouteKey.CU_STORE, _with(RouteKey.CU_STORE, longVal="east")),
    (RouteKey.CU_STORE, _with(RouteKey.CU_STORE, tabId="1")),
    (RouteKey.CU_STORE, _with(RouteKey.CU_STORE, filterSvcList=["pickup"])),
    (RouteKey.CU_STORE, _with(RouteKey.CU_STORE, isRecommend="X")),
    (RouteKey.CU_STORE, _with(RouteKey.CU_STORE, itemCd="88 01")),
    (RouteKey.GS25_PRODUCTS, {"query": ""}),
    (RouteKey.GS25_PRODUCTS, {"query": "a" * 201}),
    (RouteKey.GS25_PRODUCTS, {"query": "😀" * 101}),  # 202 UTF-16 code units, as the relays count
    (RouteKey.GS25_STOCK, _with(RouteKey.GS25_STOCK, keyword=None, itemCode=None)),
    (RouteKey.GS25_STOCK, _with(RouteKey.GS25_STOCK, serviceCode="03")),
    (RouteKey.SEVEN_GOODS, _with(RouteKey.SEVEN_GOODS, pageNo=0, pageSize=10)),
    (RouteKey.SEVEN_GOODS, {"query": "콜라"}),
    (RouteKey.SEVEN_GOODS, {"query": "콜라", "pageNo": 0}),
    (RouteKey.SEVEN_STORE, _with(RouteKey.SEVEN_STORE, listCount=101)),
    (RouteKey.SEVEN_STORE, _with(RouteKey.SEVEN_STORE, sort="Date/asc")),
    (RouteKey.SEVEN_POPWORDS, {"label": "home&x=1"}),
    (RouteKey.SEVEN_POPWORDS, {"label": ""}),
    (RouteKey.SEVEN_STOCK_META, {"itemCd": ""}),
    (RouteKey.SEVEN_STOCK, _with(RouteKey.SEVEN_STOCK, storeList=[])),
    (RouteKey.SEVEN_STOCK, _with(RouteKey.SEVEN_STOCK, storeList=[str(n) for n in range(201)])),
    (RouteKey.SEVEN_STOCK, _with(RouteKey.SEVEN_STOCK, stockApplicationRate="all")),
    (RouteKey.SEVEN_STOCK, _with(RouteKey.SEVEN_STOCK, stokMngQty="1")),
    (RouteKey.SEVEN_STOCK, _with(RouteKey.SEVEN_STOCK, stokMngQty=-1)),  # unknown: the relays refuse it
    (RouteKey.SEVEN_STOCK, _with(RouteKey.SEVEN_STOCK, stokMngQty=10_000)),
    (RouteKey.SEVEN_PAGES, {"page": 1}),
    (RouteKey.SEVEN_ISSUES, {"page": 1}),
    (RouteKey.SEVEN_EXHIBITIONS, {"page": 1}),
    (RouteKey.DTRYX_MOVIES, {"brandCode": "Indieart", "cinemaCode": "000067"}),
    (RouteKey.DTRYX_MOVIES, {"brandCode": "indieart", "cinemaCode": "67"}),
    (RouteKey.DTRYX_MOVIES, {"brandCode": "indieart"}),
    (RouteKey.DTRYX_PLAY_DATES, {"brandCode": "1ndie", "cinemaCode": "000067"}),
    (RouteKey.DTRYX_PLAY_DATES, {"brandCode": "indieart", "cinemaCode": "0000670"}),
    (RouteKey.DTRYX_TIMETABLE, {"brandCode": "indieart", "cinemaCode": "000067"}),
    (RouteKey.DTRYX_TIMETABLE, {"brandCode": "indieart", "cinemaCode": "000067", "playDate": "20250230"}),
    (RouteKey.DTRYX_TIMETABLE, {"brandCode": "indieart", "cinemaCode": "000067", "playDate": "2025-6-2"}),
    (RouteKey.DTRYX_TIMETABLE, {"brandCode": "indieart", "cinemaCode": "000067", "playDate": 20250602}),
    (RouteKey.CGV_THEATERS, {"coCd": "A420"}),
    (RouteKey.CGV_MOVIES, {"theaterCode": "56", "playDate": "20250602"}),
    (RouteKey.CGV_MOVIES, {"theaterCode": "00560", "playDate": "20250602"}),
    (RouteKey.CGV_MOVIES, {"theaterCode": "0056", "playDate": "20250230"}),
    (RouteKey.CGV_MOVIES, {"theaterCode": "0056", "playDate": "20261301"}),
    (RouteKey.CGV_MOVIES, {"theaterCode": "0056", "playDate": "2025-06-02"}),
    (RouteKey.CGV_MOVIES, {"theaterCode": "0056", "playDate": 20250602}),
    (RouteKey.CGV_TIMETABLE, {"theaterCode": "0056"}),
    (RouteKey.CGV_TIMETABLE, {"theaterCode": 56, "playDate": "20250602"}),
    (RouteKey.CGV_TIMETABLE_MOVIE, {"theaterCode": "0056", "playDate": "20250602"}),
    (RouteKey.CGV_TIMETABLE_MOVIE, {"theaterCode": "0056", "playDate": "20250602", "movieCode": ""}),
    (RouteKey.CGV_TIMETABLE_MOVIE, {"theaterCode": "0056", "playDate": "20250602", "movieCode": "1" * 17}),
    (RouteKey.CGV_TIMETABLE_MOVIE, {"theaterCode": "0056", "playDate": "20250602", "movieCode": "3000098x"}),
]


@pytest.mark.parametrize(
    ("key", "params"), INVALID_INPUTS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(INVALID_INPUTS)]
)
def test_params_reject_invalid_input(key: RouteKey, params: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        spec_for(key).params.model_validate(params)


def test_every_route_key_has_an_invalid_input_case() -> None:
    assert {key for key, _ in INVALID_INPUTS} == set(RouteKey)


def test_seven_goods_accepts_the_clients_paged_shape() -> None:
    spec = spec_for(RouteKey.SEVEN_GOODS)
    params = spec.params.model_validate({"query": "콜라", "pageNo": 0, "pageSize": 20})
    assert spec.build_request(params).json_body == {"query": "콜라", "pageNo": 0, "pageSize": 20}


def test_seven_popwords_label_goes_in_the_query_string_only() -> None:
    spec = spec_for(RouteKey.SEVEN_POPWORDS)
    request = spec.build_request(spec.params.model_validate({"label": "search"}))
    assert request.url.endswith("/api/v1/open/search/popword?label=search")
    assert request.json_body == {}
    assert spec.relay_body(spec.params.model_validate({})) == {"label": "home"}  # default label


def test_cu_prime_params_are_strictly_empty() -> None:
    assert spec_for(RouteKey.CU_PRIME).params.model_validate({}).model_dump() == {}


def test_oy_map_centre_defaults_to_the_position() -> None:
    params = spec_for(RouteKey.OY_STOCK_STORES).params.model_validate(
        {"productId": "8800362322138", "lat": 35.1, "lon": 129.0}
    )
    assert (params.mapLat, params.mapLon, params.pageIdx, params.searchWords) == (35.1, 129.0, 1, "")


def test_cu_store_coordinates_may_be_given_as_numbers() -> None:
    params = spec_for(RouteKey.CU_STORE).params.model_validate({"latVal": 37.5, "longVal": 127.0})
    assert (params.latVal, params.longVal, params.baseLatVal, params.baseLongVal) == (
        "37.5",
        "127",
        "37.5",
        "127",
    )


@pytest.mark.parametrize("given", ["2025-06-02", "20250602", date(2025, 6, 2)])
def test_dtryx_play_date_is_sent_dashed_upstream_and_compact_to_the_relay(given: object) -> None:
    spec = spec_for(RouteKey.DTRYX_TIMETABLE)
    params = spec.params.model_validate({"brandCode": "indieart", "cinemaCode": "000053", "playDate": given})
    query = parse_qsl(urlsplit(spec.build_request(params).url).query, keep_blank_values=True)
    assert [name for name, _ in query] == [
        "ChannelCd",
        "EngVerYn",
        "WorkGuID",
        "BrandCd",
        "CinemaCd",
        "PlaySDT",
        "ImgSize",
    ]
    assert dict(query)["PlaySDT"] == "2025-06-02"
    assert spec.relay_body(params)["playDate"] == "20250602"


@pytest.mark.parametrize(
    ("now_ms", "korean_date"),
    [
        (1_748_789_999_000, "2025-06-01"),  # 2025-06-01 23:59:59 KST
        (1_748_790_000_000, "2025-06-02"),  # 2025-06-02 00:00:00 KST (still 06-01 in UTC)
        (1_748_876_399_000, "2025-06-02"),  # 2025-06-02 23:59:59 KST
    ],
)
def test_dtryx_probe_date_is_today_in_korea(now_ms: int, korean_date: str) -> None:
    spec = spec_for(RouteKey.DTRYX_TIMETABLE)
    assert spec.probe_params(now_ms).playDate.isoformat() == korean_date
    assert f"PlaySDT={korean_date}" in spec.build_request(spec.probe_params(now_ms)).url


@pytest.mark.parametrize(
    ("now_ms", "play_date"),
    [
        (1_748_789_999_000, "20250601"),  # 2025-06-01 23:59:59 KST
        (1_748_790_000_000, "20250602"),  # 2025-06-02 00:00:00 KST (still 06-01 in UTC)
    ],
)
@pytest.mark.parametrize("key", [RouteKey.CGV_MOVIES, RouteKey.CGV_TIMETABLE, RouteKey.CGV_TIMETABLE_MOVIE])
def test_cgv_probe_is_the_gangnam_theater_today_in_korea(key: RouteKey, now_ms: int, play_date: str) -> None:
    probe = spec_for(key).probe_params(now_ms)
    assert (probe.theaterCode, probe.playDate) == ("0056", play_date)
    assert f"siteNo=0056&scnYmd={play_date}" in spec_for(key).build_request(probe).url


@pytest.mark.parametrize("key", list(RouteKey))
def test_probe_params_are_fixed_apart_from_the_date(key: RouteKey) -> None:
    spec = spec_for(key)
    if key is RouteKey.DTRYX_TIMETABLE:
        assert spec.probe_params(NOW).brandCode == spec.probe_params(NOW + 86_400_000).brandCode
    else:
        today, tomorrow = (spec.probe_params(now).model_dump() for now in (NOW, NOW + 86_400_000))
        if "playDate" in today:  # CGV's: today in Korea, a compact string
            assert (today.pop("playDate"), tomorrow.pop("playDate")) == ("20250602", "20250603")
        assert today == tomorrow


def test_gs25_stock_needs_an_item_or_keyword_and_takes_either() -> None:
    params = spec_for(RouteKey.GS25_STOCK).params
    position = {"myPositionYCoordination": 37.5, "myPositionXCoordination": 127.0}
    assert (
        params.model_validate({**position, "itemCode": "8801094017200"}).centerPositionYCoordination == 37.5
    )
    assert params.model_validate({**position, "keyword": "콜라"}).keyword == "콜라"


@pytest.mark.parametrize(
    ("key", "params"),
    [
        (RouteKey.DTRYX_MOVIES, {"brandCode": "indieart", "cinemaCode": "٠٠٠٠٦٧"}),  # Arabic-Indic digits
        (
            RouteKey.DTRYX_TIMETABLE,
            {"brandCode": "indieart", "cinemaCode": "000067", "playDate": "２０２５０６０２"},
        ),
        (RouteKey.SEVEN_STOCK, _with(RouteKey.SEVEN_STOCK, stockApplicationRate="１００")),
        (RouteKey.CGV_MOVIES, {"theaterCode": "٠٠٥٦", "playDate": "20250602"}),
        (RouteKey.CGV_MOVIES, {"theaterCode": "0056", "playDate": "２０２５０６０２"}),
    ],
)
def test_codes_and_dates_take_ascii_digits_only(key: RouteKey, params: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        spec_for(key).params.model_validate(params)
