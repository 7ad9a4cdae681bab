"""Hand-written upstream bodies per route key, as the retailers document them (independent of the
simulator's payload generator), and helpers to derive one-change soft failures from them."""

from __future__ import annotations

import copy
from typing import Any

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
