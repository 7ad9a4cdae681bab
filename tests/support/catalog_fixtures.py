"""Each route key's test fixture, hand-written from what the retailers document (independent of the simulator's
payload generator): a valid upstream body (`VALID`), the probe's exact request and relay call, params its
operation must refuse, the soft failures its spec must reject; and the lookup endpoints with a valid query each."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from functions.catalog import spec_for
from functions.core import Reason, RouteFailure, RouteKey

CU_STOCK_BODY = {
    "searchWord": "레쓰비",
    "prevSearchWord": "",
    "spellModifyUseYn": "Y",
    "offset": 0,
    "limit": 10,
    "searchSort": "recom",
}
"""The body of a cu-stock request (the probe's)."""

CU_STORE_BODY = {
    "latVal": "37.5635",
    "longVal": "126.9839",
    "baseLatVal": "37.5635",
    "baseLongVal": "126.9839",
    "tabId": "2",
    "filterSvcList": [],
    "filterAdtList": [],
    "stockCdcYn": "N",
    "searchStock": False,
    "pickupType": "change",
    "getRoute": "IOS",
    "areaTplNo": "0",
    "childMealPickUpYn": "N",
    "isCurrentSearch": "N",
    "pageType": "search_improve",
    "searchWord": "강남",
    "isRecommend": "",
    "recommendId": "",
    "jipCd": "",
    "itemCd": "",
    "item_cd": "",
    "onItemNo": "",
}
"""The body of a cu-store request (the probe's), as CU's store finder sends it."""

OY_STORE = {
    "storeCode": "DF23",
    "storeName": "명동2가점",
    "address": "서울특별시 중구 명동길 53",
    "latitude": 37.5635,
    "longitude": 126.9839,
    "distance": 0.12,
    "pickupYn": True,
    "openYn": True,
}

CGV_OK = {"statusCode": 0, "statusMessage": "조회 되었습니다."}
CGV_SITE_DAY = {"siteNo": "0056", "siteNm": "CGV 강남", "scnYmd": "20260304"}
"""A CGV screening's theater and day (CGV 강남, 2026-03-04)."""

VALID: dict[RouteKey, dict[str, Any]] = {
    RouteKey.OY_FIND_STORE: {"status": "SUCCESS", "data": {"totalCount": 1, "storeList": [OY_STORE]}},
    RouteKey.OY_PRODUCT_SEARCH: {
        "status": "SUCCESS",
        "data": {
            "totalCount": 31,
            "nextPage": True,
            "searchList": [
                {
                    "goodsNumber": "A000000165760",
                    "goodsName": "바세린 립 테라피 오리지널",
                    "priceToPay": 4500,
                    "originalPrice": 5000,
                    "discountRate": 10,
                    "o2oStockFlag": True,
                    "o2oRemainQuantity": 3,
                    "imagePath": "10/0000/0016/A00000016576001ko.jpg",
                },
                {
                    "goodsNumber": "A000000100001",
                    "goodsName": "니베아 립밤",
                    "priceToPay": 3900,
                    "originalPrice": 3900,
                    "discountRate": 0,
                    "o2oStockFlag": False,
                    "o2oRemainQuantity": 0,
                },
            ],
        },
    },
    RouteKey.OY_GOODS_INFO: {
        "status": "SUCCESS",
        "data": {"goodsInfo": {"goodsNumber": "A000000165760", "masterGoodsNumber": "8800362322138"}},
    },
    RouteKey.OY_STOCK_STORES: {
        "status": "SUCCESS",
        "data": {
            "totalCount": 4,
            "storeList": [
                {**OY_STORE, "salesStoreYn": True, "remainQuantity": 2, "o2oRemainQuantity": 5},
                {
                    "storeCode": "D176",
                    "storeName": "명동본점",
                    "salesStoreYn": True,
                    "remainQuantity": 0,
                    "o2oRemainQuantity": 0,
                },
                {
                    "storeCode": "D177",
                    "storeName": "을지로점",
                    "salesStoreYn": True,
                    "remainQuantity": None,
                    "o2oRemainQuantity": None,
                },
                {
                    "storeCode": "D178",
                    "storeName": "회현점",
                    "salesStoreYn": False,
                    "remainQuantity": 0,
                    "o2oRemainQuantity": 0,
                },
            ],
        },
    },
    RouteKey.CU_PRIME: {"resp_cd": "0000", "areaCateList": [{"menuCd": "10", "menuNm": "간편식사"}]},
    RouteKey.CU_STOCK: {
        "resp_cd": "0000",
        "data": {
            "stockResult": {
                "spellModifyYn": "N",
                "result": {
                    "total_count": "2",
                    "rows": [
                        {
                            "fields": {
                                "item_cd": "8801056038861",
                                "item_nm": "레쓰비 마일드 250ml",
                                "hyun_maega": "1500",
                                "pickup_yn": "Y",
                                "deliv_yn": "N",
                                "reserv_yn": "N",
                            }
                        },
                        {
                            "fields": {
                                "item_cd": "8801056038878",
                                "item_nm": "레쓰비 카페라떼 240ml",
                                "hyun_maega": 1700,
                                "on_item_no": "100200300",
                            }
                        },
                    ],
                },
            }
        },
    },
    RouteKey.CU_STORE: {
        "resp_cd": "0000",
        "totalCnt": 4,
        "storeList": [
            {
                "storeCd": "23451",
                "storeNm": "CU 명동중앙점",
                "latVal": "37.5637",
                "longVal": "126.9851",
                "distance": "120",
                "stock": 4,
                "deliveryYn": "Y",
                "jumpoPickYn": "N",
            },
            {"storeCd": "23452", "storeNm": "CU 명동역점", "stock": "0"},
            {"storeCd": "23453", "storeNm": "CU 회현점", "stock": -1},
            {"storeCd": "23454", "storeNm": "CU 남산점", "stock": None},
        ],
    },
    RouteKey.GS25_PRODUCTS: {
        "SearchQueryResult": {
            "Collection": [
                {
                    "CollectionId": "product",
                    "Documentset": {
                        "totalCount": 1,
                        "Document": [
                            {
                                "field": {
                                    "itemCode": "8801094017200",
                                    "itemName": "코카콜라 500ml",
                                    "shortItemName": "코카콜라500",
                                    "starPoint": "",
                                    "stockCheckYn": "Y",
                                }
                            }
                        ],
                    },
                }
            ]
        }
    },
    RouteKey.GS25_STOCK: {
        "stores": [
            {
                "storeCode": "VQ670",
                "storeName": "GS25 역삼점",
                "storeAddress": "서울 강남구 역삼동",
                "storeXCoordination": "127.0365",
                "storeYCoordination": "37.5006",
                "realStockQuantity": 3,
                "isSoldOutYn": "N",
                "searchItemName": "코카콜라 500ml",
                "searchItemSellPrice": 2200,
                "propertyList": [],
            },
            {"storeCode": "VQ671", "storeName": "GS25 강남점", "realStockQuantity": "0", "isSoldOutYn": "Y"},
            {"storeCode": "VQ672", "storeName": "GS25 논현점", "realStockQuantity": -1},
        ]
    },
    RouteKey.SEVEN_GOODS: {
        "success": True,
        "code": 200,
        "data": {
            "SearchQueryResult": {
                "Collection": [
                    {
                        "CollectionId": "goods",
                        "Documentset": {
                            "totalCount": 12,
                            "Document": [
                                {
                                    "field": {
                                        "itemCd": "8801094017200",
                                        "itemOnm": "코카콜라 500ml",
                                        "onlinePrice": "2000",
                                        "avgEvalScore": "",
                                        "prdNo": "1000123",
                                    }
                                }
                            ],
                        },
                    }
                ]
            }
        },
    },
    RouteKey.SEVEN_STORE: {
        "success": True,
        "code": 200,
        "data": {
            "content": [
                {
                    "strCd": "64676",
                    "strNm": "세븐일레븐 강남역점",
                    "addr1": "서울 강남구",
                    "addr2": "강남대로 396",
                    "lat": "37.4979",
                    "lng": "127.0276",
                    "pickupYn": "Y",
                }
            ]
        },
    },
    RouteKey.SEVEN_POPWORDS: {
        "success": True,
        "code": 200,
        "data": {"keywords": ["포켓몬빵", {"keyword": "하이볼"}]},
    },
    RouteKey.SEVEN_STOCK_META: {
        "itemCd": "8801056018979",
        "smCd": "161260",
        "stokMngCd": "161260",
        "stokMngQty": "1",
        "stockApplicationRate": "100",
        "itemOnm": "칠성사이다 500ml",
    },
    RouteKey.SEVEN_STOCK: {
        "success": True,
        "code": 200,
        "data": {"storeList": [{"storeCd": "64676", "stock": "5"}]},
    },
    RouteKey.SEVEN_PAGES: {
        "success": True,
        "data": {
            "content": [{"itemCd": "8801115114154", "itemOnm": "바나나우유 240ml", "onlinePrice": 1700}]
        },
    },
    RouteKey.SEVEN_ISSUES: {
        "code": 200,
        "data": [{"field": {"itemCd": "8801043015653", "itemOnm": "새우깡 90g", "onlinePrice": "1500"}}],
    },
    RouteKey.SEVEN_EXHIBITIONS: {
        "success": True,
        "data": {
            "list": [
                {
                    "exhibitionIdx": 12,
                    "exhibitionName": "여름 음료 대전",
                    "exhibitionStartDate": "2025-06-01",
                    "exhibitionEndDate": "2025-06-30",
                    "exhibitionProductList": [{"itemCd": "1"}, {"itemCd": "2"}],
                }
            ]
        },
    },
    RouteKey.DTRYX_MOVIES: {
        "RetCode": "success",
        "RetMsg": "",
        "RecordCount": 1,
        "Recordset": [
            {"MovieCd": "20241234", "MovieNm": "괴물", "RunningTime": "120", "RatingNm": "15세이상관람가"}
        ],
    },
    RouteKey.DTRYX_PLAY_DATES: {
        "RetCode": "success",
        "RecordCount": 2,
        "Recordset": [{"PlaySDT": "2025-06-02", "HiddenYn": "N", "RestYn": "N"}, {"PlaySDT": "2025-06-03"}],
    },
    RouteKey.DTRYX_TIMETABLE: {
        "RetCode": "success",
        "RecordCount": 2,
        "Recordset": [
            {
                "MovieCd": "20241234",
                "MovieNm": "괴물",
                "CinemaCd": "000067",
                "CinemaNm": "아트하우스모모",
                "ScreenCd": "01",
                "PlaySDT": "2025-06-02",
                "ShowSeq": 1,
                "StartTime": "1030",
                "EndTime": "12:30",
                "TotalSeatCnt": 64,
                "RemainSeatCnt": "0",
            },
            {
                "MovieCd": "20241234",
                "MovieNm": "괴물",
                "CinemaCd": "000067",
                "ScreenCd": "02",
                "StartTime": "19:20",
                "TotalSeatCnt": -1,
                "RemainSeatCnt": None,
            },
        ],
    },
    RouteKey.CGV_THEATERS: {
        **CGV_OK,
        "data": [
            {
                "regnGrpCd": "01",
                "regnGrpNm": "서울",
                "siteList": [{"siteNo": "0056", "siteNm": "강남"}, {"siteNo": "0001", "siteNm": "강변"}],
            },
            {"regnGrpCd": "02", "regnGrpNm": "경기", "siteList": [{"siteNo": "0211", "siteNm": "안산"}]},
        ],
    },
    RouteKey.CGV_MOVIES: {
        **CGV_OK,
        "data": [
            {"movNo": "30000985", "movNm": "하얼빈", "cratgClsNm": "전체관람가"},
            {"movNo": "30000986", "movNm": "모아나 2", "cratgClsNm": None},
        ],
    },
    RouteKey.CGV_TIMETABLE: {
        **CGV_OK,
        "data": [
            {
                **CGV_SITE_DAY,
                "scnSseq": "2",
                "movNo": "30000985",
                "movNm": "하얼빈",
                "scnsrtTm": "1230",
                "scnendTm": "1443",
                "stcnt": "123",
                "frSeatCnt": "118",
            },
            {
                **CGV_SITE_DAY,
                "scnSseq": "3",
                "prodNm": "하얼빈 무대인사",
                "scnsrtTm": "18:30",
                "scnendTm": "12345",
                "stcnt": "bad",
                "frtmpSeatCnt": "17",
            },
        ],
    },
    RouteKey.CGV_TIMETABLE_MOVIE: {
        **CGV_OK,
        "data": [
            {
                **CGV_SITE_DAY,
                "scnSseq": 1,
                "movNo": "30000985",
                "movNm": "하얼빈",
                "scnsrtTm": "0930",
                "scnendTm": "1124",
                "stcnt": 123,
                "frSeatCnt": 0,
                "frtmpSeatCnt": 17,
            }
        ],
    },
}


def changed(key: RouteKey, path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    """A copy of the valid fixture with one value replaced (or removed when `value` is DELETE)."""
    body = copy.deepcopy(VALID[key])
    target: Any = body
    for step in path[:-1]:
        target = target[step]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return body


DELETE = object()


def rejection(key: RouteKey, body: object) -> Reason:
    """Why `key`'s spec rejects `body` (it must)."""
    with pytest.raises(RouteFailure) as caught:
        spec_for(key).validate(body)
    return caught.value.reason


# --- the probe's requests and relay calls, verbatim ----------------------------------------------

PROBE_NOW = 1_748_822_400_000  # 2025-06-02 00:00 UTC = 09:00 KST

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
DTRYX_URL = "https://api.dtryx.com/dtryx/cms/thirdparty/movie"
CGV_URL = "https://api.cgv.co.kr/cnm/atkt"

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
        f"{DTRYX_URL}/third-party-type2-movie-now?ChannelCd=homepage&EngVerYn=N"
        "&WorkGuID=6D741A36-A973-4BC4-87B4-2475E6654114&BrandCd=indieart&CinemaCd=000067&ImgSize=small",
        None,
        DTRYX_HEADERS,
    ),
    RouteKey.DTRYX_PLAY_DATES: (
        "GET",
        f"{DTRYX_URL}/third-party-type2-timetable-play-date-list?ChannelCd=homepage&EngVerYn=N"
        "&WorkGuID=324A2914-AB19-42A3-BDFE-58A08B2DC35D&BrandCd=indieart&CinemaCd=000067&MovieCd=",
        None,
        DTRYX_HEADERS,
    ),
    RouteKey.DTRYX_TIMETABLE: (
        "GET",
        f"{DTRYX_URL}/third-party-type2-timetable-list?ChannelCd=homepage&EngVerYn=N"
        "&WorkGuID=37E0BA0F-DA5F-4376-9BA4-B5D27286AB87&BrandCd=indieart&CinemaCd=000067"
        "&PlaySDT=2025-06-02&ImgSize=small",
        None,
        DTRYX_HEADERS,
    ),
    # The signature headers are added when a request is sent (`request_to_send`): test_cgv_rules.py.
    RouteKey.CGV_THEATERS: ("GET", f"{CGV_URL}/searchRegnList?coCd=A420", None, CGV_HEADERS),
    RouteKey.CGV_MOVIES: (
        "GET",
        f"{CGV_URL}/searchOnlyCgvMovList?coCd=A420&siteNo=0056&scnYmd=20250602",
        None,
        CGV_HEADERS,
    ),
    RouteKey.CGV_TIMETABLE: (
        "GET",
        f"{CGV_URL}/searchMovScnInfo?coCd=A420&siteNo=0056&scnYmd=20250602&rtctlScopCd=08",
        None,
        CGV_HEADERS,
    ),
    RouteKey.CGV_TIMETABLE_MOVIE: (
        "GET",
        f"{CGV_URL}/searchSchByMov?coCd=A420&siteNo=0056&scnYmd=20250602&movNo=20000000&rtctlScopCd=01",
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


# --- params its operation must refuse --------------------------------------------------------------


def probe_params_with(key: RouteKey, **changes: Any) -> dict[str, Any]:
    return {**spec_for(key).probe_params(PROBE_NOW).model_dump(), **changes}


INVALID_INPUTS: list[tuple[RouteKey, dict[str, Any]]] = [
    (RouteKey.OY_FIND_STORE, probe_params_with(RouteKey.OY_FIND_STORE, lat=91.0)),
    (RouteKey.OY_FIND_STORE, probe_params_with(RouteKey.OY_FIND_STORE, lon="126.9")),
    (RouteKey.OY_FIND_STORE, probe_params_with(RouteKey.OY_FIND_STORE, pageIdx=0)),
    (RouteKey.OY_FIND_STORE, probe_params_with(RouteKey.OY_FIND_STORE, searchWords="명동\n")),
    (RouteKey.OY_PRODUCT_SEARCH, probe_params_with(RouteKey.OY_PRODUCT_SEARCH, keyword="")),
    (RouteKey.OY_PRODUCT_SEARCH, probe_params_with(RouteKey.OY_PRODUCT_SEARCH, keyword="a" * 201)),
    (RouteKey.OY_PRODUCT_SEARCH, probe_params_with(RouteKey.OY_PRODUCT_SEARCH, includeSoldOut="true")),
    (RouteKey.OY_PRODUCT_SEARCH, probe_params_with(RouteKey.OY_PRODUCT_SEARCH, size=0)),
    (RouteKey.OY_GOODS_INFO, {"goodsNo": "A0000/../x"}),
    (RouteKey.OY_GOODS_INFO, {}),
    (RouteKey.OY_STOCK_STORES, probe_params_with(RouteKey.OY_STOCK_STORES, productId="")),
    (RouteKey.OY_STOCK_STORES, probe_params_with(RouteKey.OY_STOCK_STORES, lat=float("nan"))),
    (RouteKey.CU_PRIME, {"searchWord": "x"}),
    (RouteKey.CU_STOCK, probe_params_with(RouteKey.CU_STOCK, searchWord="")),
    (RouteKey.CU_STOCK, probe_params_with(RouteKey.CU_STOCK, searchWord="a" * 201)),
    (RouteKey.CU_STOCK, probe_params_with(RouteKey.CU_STOCK, searchWord="레쓰\x00비")),
    (RouteKey.CU_STOCK, probe_params_with(RouteKey.CU_STOCK, offset=10000)),
    (RouteKey.CU_STOCK, probe_params_with(RouteKey.CU_STOCK, limit=0)),
    (RouteKey.CU_STOCK, probe_params_with(RouteKey.CU_STOCK, prevSearchWord="커피")),
    (RouteKey.CU_STORE, probe_params_with(RouteKey.CU_STORE, latVal="95.0")),
    (RouteKey.CU_STORE, probe_params_with(RouteKey.CU_STORE, longVal="east")),
    (RouteKey.CU_STORE, probe_params_with(RouteKey.CU_STORE, tabId="1")),
    (RouteKey.CU_STORE, probe_params_with(RouteKey.CU_STORE, filterSvcList=["pickup"])),
    (RouteKey.CU_STORE, probe_params_with(RouteKey.CU_STORE, isRecommend="X")),
    (RouteKey.CU_STORE, probe_params_with(RouteKey.CU_STORE, itemCd="88 01")),
    (RouteKey.GS25_PRODUCTS, {"query": ""}),
    (RouteKey.GS25_PRODUCTS, {"query": "a" * 201}),
    (RouteKey.GS25_PRODUCTS, {"query": "😀" * 101}),  # 202 UTF-16 code units, as the relays count
    (RouteKey.GS25_STOCK, probe_params_with(RouteKey.GS25_STOCK, keyword=None, itemCode=None)),
    (RouteKey.GS25_STOCK, probe_params_with(RouteKey.GS25_STOCK, serviceCode="03")),
    (RouteKey.SEVEN_GOODS, probe_params_with(RouteKey.SEVEN_GOODS, pageNo=0, pageSize=10)),
    (RouteKey.SEVEN_GOODS, {"query": "콜라"}),
    (RouteKey.SEVEN_GOODS, {"query": "콜라", "pageNo": 0}),
    (RouteKey.SEVEN_STORE, probe_params_with(RouteKey.SEVEN_STORE, listCount=101)),
    (RouteKey.SEVEN_STORE, probe_params_with(RouteKey.SEVEN_STORE, sort="Date/asc")),
    (RouteKey.SEVEN_POPWORDS, {"label": "home&x=1"}),
    (RouteKey.SEVEN_POPWORDS, {"label": ""}),
    (RouteKey.SEVEN_STOCK_META, {"itemCd": ""}),
    (RouteKey.SEVEN_STOCK, probe_params_with(RouteKey.SEVEN_STOCK, storeList=[])),
    (RouteKey.SEVEN_STOCK, probe_params_with(RouteKey.SEVEN_STOCK, storeList=[str(n) for n in range(201)])),
    (RouteKey.SEVEN_STOCK, probe_params_with(RouteKey.SEVEN_STOCK, stockApplicationRate="all")),
    (RouteKey.SEVEN_STOCK, probe_params_with(RouteKey.SEVEN_STOCK, stokMngQty="1")),
    (
        RouteKey.SEVEN_STOCK,
        probe_params_with(RouteKey.SEVEN_STOCK, stokMngQty=-1),
    ),  # unknown: the relays refuse it
    (RouteKey.SEVEN_STOCK, probe_params_with(RouteKey.SEVEN_STOCK, stokMngQty=10_000)),
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


# --- soft failures: one change each to the valid body, which its spec must reject -----------------

SEVEN_ENVELOPED = [
    RouteKey.SEVEN_GOODS,
    RouteKey.SEVEN_STORE,
    RouteKey.SEVEN_POPWORDS,
    RouteKey.SEVEN_STOCK,
    RouteKey.SEVEN_PAGES,
    RouteKey.SEVEN_ISSUES,
    RouteKey.SEVEN_EXHIBITIONS,
]
OY = [RouteKey.OY_FIND_STORE, RouteKey.OY_PRODUCT_SEARCH, RouteKey.OY_GOODS_INFO, RouteKey.OY_STOCK_STORES]
CU = [RouteKey.CU_PRIME, RouteKey.CU_STOCK, RouteKey.CU_STORE]
DTRYX = [RouteKey.DTRYX_MOVIES, RouteKey.DTRYX_PLAY_DATES, RouteKey.DTRYX_TIMETABLE]
CGV = [RouteKey.CGV_THEATERS, RouteKey.CGV_MOVIES, RouteKey.CGV_TIMETABLE, RouteKey.CGV_TIMETABLE_MOVIE]
DOC0 = ("data", "SearchQueryResult", "Collection", 0, "Documentset", "Document", 0, "field")


def soft(key: RouteKey, name: str, path: tuple[str | int, ...], value: object) -> tuple[RouteKey, str, Any]:
    """The soft-failure case `name`: `key`'s valid fixture with the value at `path` changed (DELETE: removed)."""
    return key, name, changed(key, path, value)


SOFT_FAILURES: list[tuple[RouteKey, str, dict[str, Any]]] = [
    *[(key, "oy-status-fail", changed(key, ("status",), "FAIL")) for key in OY],
    *[(key, "oy-status-missing", changed(key, ("status",), DELETE)) for key in OY],
    *[(key, "oy-status-lowercase", changed(key, ("status",), "success")) for key in OY],
    soft(RouteKey.OY_FIND_STORE, "store-list-missing", ("data", "storeList"), DELETE),
    soft(RouteKey.OY_FIND_STORE, "store-name-empty", ("data", "storeList", 0, "storeName"), ""),
    soft(RouteKey.OY_FIND_STORE, "store-code-blank", ("data", "storeList", 0, "storeCode"), "  "),
    soft(RouteKey.OY_FIND_STORE, "latitude-out-of-range", ("data", "storeList", 0, "latitude"), 91),
    soft(RouteKey.OY_FIND_STORE, "distance-negative", ("data", "storeList", 0, "distance"), -1),
    soft(RouteKey.OY_FIND_STORE, "pickup-not-bool", ("data", "storeList", 0, "pickupYn"), "Y"),
    soft(RouteKey.OY_PRODUCT_SEARCH, "no-search-list", ("data", "searchList"), DELETE),
    soft(RouteKey.OY_PRODUCT_SEARCH, "search-list-null", ("data", "searchList"), None),
    soft(RouteKey.OY_PRODUCT_SEARCH, "goods-name-empty", ("data", "searchList", 0, "goodsName"), ""),
    soft(RouteKey.OY_PRODUCT_SEARCH, "price-negative", ("data", "searchList", 0, "priceToPay"), -1),
    soft(RouteKey.OY_PRODUCT_SEARCH, "price-string", ("data", "searchList", 0, "originalPrice"), "5000"),
    soft(RouteKey.OY_PRODUCT_SEARCH, "discount-over-100", ("data", "searchList", 0, "discountRate"), 101),
    soft(RouteKey.OY_PRODUCT_SEARCH, "stock-flag-missing", ("data", "searchList", 0, "o2oStockFlag"), DELETE),
    soft(RouteKey.OY_PRODUCT_SEARCH, "remain-negative", ("data", "searchList", 0, "o2oRemainQuantity"), -1),
    soft(RouteKey.OY_GOODS_INFO, "master-empty", ("data", "goodsInfo", "masterGoodsNumber"), ""),
    soft(RouteKey.OY_GOODS_INFO, "master-missing", ("data", "goodsInfo", "masterGoodsNumber"), DELETE),
    soft(RouteKey.OY_STOCK_STORES, "sales-store-missing", ("data", "storeList", 0, "salesStoreYn"), DELETE),
    soft(RouteKey.OY_STOCK_STORES, "remain-negative", ("data", "storeList", 0, "remainQuantity"), -1),
    soft(RouteKey.OY_STOCK_STORES, "remain-fraction", ("data", "storeList", 0, "o2oRemainQuantity"), 1.5),
    soft(RouteKey.OY_STOCK_STORES, "store-list-missing", ("data", "storeList"), DELETE),
    *[(key, "cu-resp-cd-3000", changed(key, ("resp_cd",), "3000")) for key in CU],
    *[(key, "cu-resp-cd-null", changed(key, ("resp_cd",), None)) for key in CU],
    *[(key, "cu-success-false", {**VALID[key], "success": False}) for key in CU],
    *[(key, "cu-error-key", {**VALID[key], "error": "Request Blocked"}) for key in CU],
    soft(RouteKey.CU_PRIME, "empty-category-row", ("areaCateList",), [{}]),
    soft(RouteKey.CU_PRIME, "category-name-empty", ("areaCateList", 0, "menuNm"), ""),
    soft(
        RouteKey.CU_STOCK,
        "item-name-empty",
        ("data", "stockResult", "result", "rows", 0, "fields", "item_nm"),
        "",
    ),
    soft(
        RouteKey.CU_STOCK,
        "price-oops",
        ("data", "stockResult", "result", "rows", 0, "fields", "hyun_maega"),
        "oops",
    ),
    soft(
        RouteKey.CU_STOCK,
        "pickup-flag-bad",
        ("data", "stockResult", "result", "rows", 0, "fields", "pickup_yn"),
        "y",
    ),
    soft(RouteKey.CU_STOCK, "rows-missing", ("data", "stockResult", "result", "rows"), DELETE),
    soft(RouteKey.CU_STORE, "store-list-missing", ("storeList",), DELETE),
    soft(RouteKey.CU_STORE, "store-code-empty", ("storeList", 0, "storeCd"), ""),
    soft(RouteKey.CU_STORE, "stock-below-minus-one", ("storeList", 0, "stock"), -2),
    soft(RouteKey.CU_STORE, "stock-oops", ("storeList", 0, "stock"), "oops"),
    soft(RouteKey.CU_STORE, "stock-bool", ("storeList", 0, "stock"), True),
    soft(RouteKey.CU_STORE, "lat-not-numeric", ("storeList", 0, "latVal"), "north"),
    soft(RouteKey.GS25_PRODUCTS, "no-collection", ("SearchQueryResult",), {}),
    soft(
        RouteKey.GS25_PRODUCTS,
        "item-code-empty",
        ("SearchQueryResult", "Collection", 0, "Documentset", "Document", 0, "field", "itemCode"),
        "",
    ),
    soft(
        RouteKey.GS25_PRODUCTS,
        "star-point-oops",
        ("SearchQueryResult", "Collection", 0, "Documentset", "Document", 0, "field", "starPoint"),
        "oops",
    ),
    soft(RouteKey.GS25_STOCK, "stores-missing", ("stores",), DELETE),
    soft(RouteKey.GS25_STOCK, "stock-oops", ("stores", 0, "realStockQuantity"), "oops"),
    soft(RouteKey.GS25_STOCK, "store-not-an-object", ("stores", 0), "VQ670"),
    *[(key, "seven-code-500", {**VALID[key], "code": 500}) for key in SEVEN_ENVELOPED],
    *[(key, "seven-code-199", {**VALID[key], "code": 199}) for key in SEVEN_ENVELOPED],
    *[(key, "seven-code-300", {**VALID[key], "code": 300}) for key in SEVEN_ENVELOPED],
    *[(key, "seven-success-false", {**VALID[key], "success": False}) for key in SEVEN_ENVELOPED],
    *[
        (key, "seven-no-data", {k: v for k, v in VALID[key].items() if k != "data"})
        for key in SEVEN_ENVELOPED
    ],
    *[(key, "seven-error-key", {**VALID[key], "error": "Forbidden"}) for key in SEVEN_ENVELOPED],
    soft(RouteKey.SEVEN_GOODS, "item-name-empty", (*DOC0, "itemOnm"), ""),
    soft(RouteKey.SEVEN_GOODS, "neither-container", ("data",), {"total": 0}),
    soft(RouteKey.SEVEN_GOODS, "review-count-oops", (*DOC0, "avgEvalScore"), "oops"),
    soft(RouteKey.SEVEN_STORE, "no-id-name-pair", ("data", "content", 0), {"strCd": "1", "storeNm": "x"}),
    soft(RouteKey.SEVEN_STORE, "blank-name", ("data", "content", 0, "strNm"), " "),
    (RouteKey.SEVEN_POPWORDS, "empty-data-without-success", {"code": 200, "data": {}}),
    (RouteKey.SEVEN_POPWORDS, "empty-data-code-201", {"success": True, "code": 201, "data": {}}),
    soft(RouteKey.SEVEN_POPWORDS, "object-without-lists", ("data",), {"label": "home"}),
    soft(RouteKey.SEVEN_POPWORDS, "list-key-not-array", ("data",), {"list": "포켓몬빵"}),
    soft(RouteKey.SEVEN_POPWORDS, "data-null", ("data",), None),
    soft(RouteKey.SEVEN_STOCK_META, "sm-code-empty", ("smCd",), ""),
    soft(RouteKey.SEVEN_STOCK_META, "stock-code-missing", ("stokMngCd",), DELETE),
    soft(RouteKey.SEVEN_STOCK_META, "quantity-below-minus-one", ("stokMngQty",), -2),
    soft(RouteKey.SEVEN_STOCK_META, "rate-missing", ("stockApplicationRate",), DELETE),
    (RouteKey.SEVEN_STOCK_META, "enveloped-failure", {"success": False, "code": 500, "data": None}),
    soft(RouteKey.SEVEN_STOCK, "store-list-missing", ("data", "storeList"), DELETE),
    soft(RouteKey.SEVEN_STOCK, "stock-ten-digits", ("data", "storeList", 0, "stock"), "1234567890"),
    soft(RouteKey.SEVEN_STOCK, "stock-null", ("data", "storeList", 0, "stock"), None),
    soft(RouteKey.SEVEN_STOCK, "stock-minus-two", ("data", "storeList", 0, "stock"), -2),
    soft(RouteKey.SEVEN_STOCK, "store-code-empty", ("data", "storeList", 0, "storeCd"), ""),
    (
        RouteKey.SEVEN_STOCK,
        "relay-store-rejection",
        {
            "success": False,
            "error": "Relay request failed",
            "upstreamError": {"status": 400, "code": 501, "message": "정상적인 점포 조회 요청이 아닙니다."},
        },
    ),
    soft(RouteKey.SEVEN_PAGES, "price-blank", ("data", "content", 0, "onlinePrice"), ""),
    soft(RouteKey.SEVEN_PAGES, "price-oops", ("data", "content", 0, "onlinePrice"), "oops"),
    soft(RouteKey.SEVEN_PAGES, "data-is-string", ("data",), "none"),
    soft(RouteKey.SEVEN_ISSUES, "price-blank", ("data", 0, "field", "onlinePrice"), ""),
    soft(RouteKey.SEVEN_ISSUES, "empty-object-data", ("data",), {}),
    soft(RouteKey.SEVEN_EXHIBITIONS, "rows-not-objects", ("data",), ["여름"]),
    soft(RouteKey.SEVEN_EXHIBITIONS, "no-container", ("data",), {"items": []}),
    *[(key, "dtryx-retcode-fail", changed(key, ("RetCode",), "fail")) for key in DTRYX],
    *[(key, "dtryx-retcode-missing", changed(key, ("RetCode",), DELETE)) for key in DTRYX],
    *[(key, "dtryx-recordset-object", changed(key, ("Recordset",), {"MovieCd": "1"})) for key in DTRYX],
    *[(key, "dtryx-recordset-not-objects", changed(key, ("Recordset",), ["20241234"])) for key in DTRYX],
    *[(key, "dtryx-recordset-missing", changed(key, ("Recordset",), DELETE)) for key in DTRYX],
    soft(RouteKey.DTRYX_MOVIES, "movie-name-empty", ("Recordset", 0, "MovieNm"), ""),
    soft(RouteKey.DTRYX_MOVIES, "running-time-oops", ("Recordset", 0, "RunningTime"), "oops"),
    soft(RouteKey.DTRYX_PLAY_DATES, "compact-date", ("Recordset", 0, "PlaySDT"), "20250602"),
    soft(RouteKey.DTRYX_PLAY_DATES, "rest-flag-bad", ("Recordset", 0, "RestYn"), "X"),
    soft(RouteKey.DTRYX_TIMETABLE, "screen-missing", ("Recordset", 0, "ScreenCd"), DELETE),
    soft(RouteKey.DTRYX_TIMETABLE, "seats-oops", ("Recordset", 0, "RemainSeatCnt"), "oops"),
    soft(RouteKey.DTRYX_TIMETABLE, "seats-below-minus-one", ("Recordset", 0, "TotalSeatCnt"), -2),
    soft(RouteKey.DTRYX_TIMETABLE, "start-time-bad", ("Recordset", 0, "StartTime"), "10:3"),
    # CGV: `statusCode === 0` and `data` an array of objects; the rows themselves are not checked.
    *[(key, "cgv-status-code-1", changed(key, ("statusCode",), 1)) for key in CGV],
    *[(key, "cgv-status-code-text", changed(key, ("statusCode",), "0")) for key in CGV],
    *[(key, "cgv-status-code-false", changed(key, ("statusCode",), False)) for key in CGV],
    *[(key, "cgv-status-code-missing", changed(key, ("statusCode",), DELETE)) for key in CGV],
    *[(key, "cgv-data-null", changed(key, ("data",), None)) for key in CGV],
    *[(key, "cgv-data-object", changed(key, ("data",), {"siteNo": "0056"})) for key in CGV],
    *[(key, "cgv-data-row-null", changed(key, ("data",), [None])) for key in CGV],
    *[(key, "cgv-data-row-array", changed(key, ("data",), [[]])) for key in CGV],
    *[(key, "cgv-data-row-number", changed(key, ("data",), [1])) for key in CGV],
    *[(key, "cgv-data-missing", changed(key, ("data",), DELETE)) for key in CGV],
]


# --- the lookup endpoints: a valid query for each, and the route keys it calls ----------------------


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
    # Every retailer's product search at once (in no fixed order), each through its own route keys.
    Endpoint(
        "/api/compare/products",
        {"keyword": "콜라", "limit": "3"},
        (
            RouteKey.CU_PRIME,
            RouteKey.CU_STOCK,
            RouteKey.GS25_PRODUCTS,
            RouteKey.SEVEN_GOODS,
            RouteKey.OY_PRODUCT_SEARCH,
        ),
    ),
)
ENDPOINT_OF = {key: endpoint for endpoint in reversed(ENDPOINTS) for key in endpoint.keys}
"""Each route key's own endpoint: the first that calls it (not the comparison, which calls its members')."""
