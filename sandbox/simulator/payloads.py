"""Realistic upstream bodies for the simulated retailers and relays, and the soft failures they can fake.

`realistic_payload(key, request)` answers any valid request of a route key with a body shaped like the real
retailer's (Korean names, plausible codes, coordinates, prices; stock values including 0 and -1 where the
schema allows). `request` is what the retailer or relay received: query parameters and/or the JSON body,
under either the upstream names (`BrandCd`) or the relay's names (`brandCode`). Same input, same body.

Soft-failure bodies are a realistic body with exactly one catalog failure signal changed, so they parse as
JSON but `spec.validate` rejects them with `Reason.SHAPE`. Each operation is one `SIMULATED` entry: its
body builder and its soft failures.
"""

from __future__ import annotations

import copy
import hashlib
import json
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from functions.catalog import spec_for
from functions.core import RouteKey

Body = dict[str, Any]
DEFAULT_PROBE_NOW_MS = 1_748_822_400_000  # 2025-06-02 09:00 KST: a fixed "today" when none is given
DEFAULT_TODAY = date(2025, 6, 2)

_STORES = (
    ("명동2가점", "서울특별시 중구 명동길 53", 37.5635, 126.9839),
    ("강남역점", "서울특별시 강남구 강남대로 429", 37.4990, 127.0282),
    ("홍대입구점", "서울특별시 마포구 양화로 160", 37.5568, 126.9237),
    ("신촌점", "서울특별시 서대문구 신촌로 83", 37.5555, 126.9368),
    ("잠실역점", "서울특별시 송파구 올림픽로 265", 37.5133, 127.1001),
    ("여의도IFC점", "서울특별시 영등포구 국제금융로 10", 37.5251, 126.9255),
    ("광화문점", "서울특별시 종로구 세종대로 175", 37.5716, 126.9769),
    ("성수역점", "서울특별시 성동구 아차산로 100", 37.5446, 127.0557),
)
_OY_BRANDS = ("라운드랩", "바세린", "니베아", "아벤느", "버츠비", "클리오", "토니모리", "이니스프리")
_CU_ITEMS = ("마일드 250ml", "카페라떼 240ml", "헤이즐넛 175ml", "캔커피 6입", "스위트아메리카노 500ml")
_GS25_ITEMS = ("500ml", "제로 355ml", "1.5L", "캔 250ml", "제로 500ml 2입")
_SEVEN_ITEMS = ("제로 350ml", "500ml", "1.25L", "캔 190ml", "라임 355ml")
_CU_CATEGORIES = (
    ("10", "간편식사"),
    ("20", "즉석조리"),
    ("30", "과자류"),
    ("40", "아이스크림"),
    ("50", "음료"),
)
_POPWORDS = ("포켓몬빵", "연세우유 생크림빵", "하이볼", "먹태깡", "제로콜라", "컵라면", "삼각김밥", "도시락")
_MOVIES = (
    ("20241234", "괴물", 120, "15세이상관람가"),
    ("20240987", "헤어질 결심", 138, "15세이상관람가"),
    ("20240555", "남매의 여름밤", 105, "전체관람가"),
    ("20240321", "벌새", 138, "15세이상관람가"),
    ("20240777", "찬실이는 복도 많지", 96, "12세이상관람가"),
)
_CINEMA_NAMES = {"000067": "아트하우스모모", "000053": "KU시네마테크", "000072": "스페이스독"}
_STOCK_PATTERN = (7, 0, -1, 3, 12, 0, 1, 25)  # includes 0 (sold out) and -1 (unknown)


def _rng(key: RouteKey, request: Mapping[str, Any]) -> random.Random:
    seed = hashlib.sha256(f"{key}|{json.dumps(request, sort_keys=True, default=str)}".encode()).digest()
    return random.Random(int.from_bytes(seed[:8], "big"))


def _text(request: Mapping[str, Any], *names: str, default: str = "") -> str:
    for name in names:
        value = request.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return default


def _number(request: Mapping[str, Any], *names: str, default: float) -> float:
    for name in names:
        value = request.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            continue
        try:
            return float(value)
        except (TypeError, ValueError):
            continue
    return default


def _count(request: Mapping[str, Any], *names: str, default: int, cap: int = 8) -> int:
    return max(1, min(cap, int(_number(request, *names, default=default))))


def _digits(rng: random.Random, length: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(length))


def _barcode(rng: random.Random) -> str:
    return "880" + _digits(rng, 10)


def _stock_value(index: int) -> int:
    return _STOCK_PATTERN[index % len(_STOCK_PATTERN)]


def _near(rng: random.Random, lat: float, lon: float) -> tuple[float, float]:
    """A point a few hundred metres away, kept on the globe."""
    near_lat = min(90.0, max(-90.0, lat + rng.uniform(-0.01, 0.01)))
    near_lon = min(180.0, max(-180.0, lon + rng.uniform(-0.01, 0.01)))
    return round(near_lat, 6), round(near_lon, 6)


def _decimal(value: float) -> str:
    """A coordinate as the apps send it: plain decimal text, never exponent notation."""
    return f"{value:.6f}"


def _price(rng: random.Random, low: int, high: int) -> int:
    return rng.randrange(low, high, 100)


# --- Olive Young ----------------------------------------------------------------------------------


def _oy_stores(request: Mapping[str, Any], rng: random.Random, *, with_stock: bool) -> Body:
    lat = _number(request, "lat", "mapLat", default=37.5635)
    lon = _number(request, "lon", "mapLon", default=126.9839)
    search = _text(request, "searchWords")
    # 명동2가점 (DF23) leads when asked for by code; the rest are other stores with other codes.
    stores = [_STORES[0], *rng.sample(_STORES[1:], 4)] if search == "DF23" else rng.sample(_STORES[1:], 5)
    rows = []
    for index, (name, address, _slat, _slon) in enumerate(stores):
        code = "DF23" if name == _STORES[0][0] else f"D{rng.choice('ABCEGHJ')}{_digits(rng, 2)}"
        store_lat, store_lon = _near(rng, lat, lon)
        row: Body = {
            "storeCode": code,
            "storeName": name,
            "address": address,
            "latitude": store_lat,
            "longitude": store_lon,
            "distance": round(rng.uniform(0.05, 3.0), 2),
            "pickupYn": rng.random() < 0.7,
            "openYn": True,
            "salesStoreYn": True,
        }
        if with_stock:
            remain = max(_stock_value(index), 0)
            row["remainQuantity"] = remain
            row["o2oRemainQuantity"] = max(remain - 1, 0)
            if index == 2:  # the store could not say: unknown, not 0
                row["remainQuantity"] = row["o2oRemainQuantity"] = None
            if index == 4:
                row["salesStoreYn"] = False
                row["remainQuantity"] = row["o2oRemainQuantity"] = 0
        rows.append(row)
    return {"status": "SUCCESS", "data": {"totalCount": 5 + rng.randrange(0, 40), "storeList": rows}}


def _oy_find_store(request: Mapping[str, Any], rng: random.Random, _today: date) -> Body:
    return _oy_stores(request, rng, with_stock=False)


def _oy_stock_stores(request: Mapping[str, Any], rng: random.Random, _today: date) -> Body:
    return _oy_stores(request, rng, with_stock=True)


def _oy_product_search(request: Mapping[str, Any], rng: random.Random, _today: date) -> Body:
    keyword = _text(request, "keyword", default="립밤")
    size = _count(request, "size", default=10)
    rows = []
    for index in range(size):
        original = _price(rng, 3000, 30000)
        discount = rng.choice((0, 10, 20, 30))
        remain = max(_stock_value(index), 0)
        rows.append(
            {
                "goodsNumber": f"A0000001{_digits(rng, 5)}",
                "goodsName": f"{rng.choice(_OY_BRANDS)} {keyword} {rng.choice(('오리지널', '무향', '체리', '2입 기획'))}",
                "priceToPay": original * (100 - discount) // 100,
                "originalPrice": original,
                "discountRate": discount,
                "o2oStockFlag": remain > 0,
                "o2oRemainQuantity": remain,
                "imagePath": f"10/0000/0016/A0000001{_digits(rng, 5)}01ko.jpg",
            }
        )
    total = size + rng.randrange(0, 60)
    page = int(_number(request, "page", default=1))
    # The upstream sometimes spells the list `serachList`; the simulator does too, deterministically.
    list_name = "serachList" if rng.random() < 0.3 else "searchList"
    return {
        "status": "SUCCESS",
        "data": {list_name: rows, "totalCount": total, "nextPage": page * size < total},
    }


def _oy_goods_info(request: Mapping[str, Any], rng: random.Random, _today: date) -> Body:
    goods_no = _text(request, "goodsNo", default="A000000165760")
    master = "8800362322138" if goods_no == "A000000165760" else _barcode(rng)
    return {
        "status": "SUCCESS",
        "data": {
            "goodsInfo": {
                "goodsNumber": goods_no,
                "masterGoodsNumber": master,
                "goodsName": f"{rng.choice(_OY_BRANDS)} 핸드크림 50ml",
            }
        },
    }


# --- CU -------------------------------------------------------------------------------------------


def _cu_prime(_request: Mapping[str, Any], _rng: random.Random, _today: date) -> Body:
    return {"resp_cd": "0000", "areaCateList": [{"menuCd": c, "menuNm": n} for c, n in _CU_CATEGORIES]}


def _cu_item(rng: random.Random, word: str, index: int) -> Body:
    price = _price(rng, 1000, 4000)
    return {
        "fields": {
            "item_cd": _barcode(rng),
            "item_nm": f"{word} {_CU_ITEMS[index % len(_CU_ITEMS)]}",
            "hyun_maega": str(price) if index % 2 else price,  # CU sends both forms
            "on_item_no": _digits(rng, 9),
            "pickup_yn": rng.choice(("Y", "N")),
            "deliv_yn": rng.choice(("Y", "N")),
            "reserv_yn": "N",
        }
    }


def _cu_stock(request: Mapping[str, Any], rng: random.Random, _today: date) -> Body:
    word = _text(request, "searchWord", default="레쓰비")
    limit = _count(request, "limit", default=10)
    rows = [_cu_item(rng, word, index) for index in range(limit)]
    total = limit + rng.randrange(0, 30)
    return {
        "resp_cd": "0000",
        "data": {"stockResult": {"spellModifyYn": "N", "result": {"total_count": total, "rows": rows}}},
    }


def _cu_store(request: Mapping[str, Any], rng: random.Random, _today: date) -> Body:
    lat = _number(request, "latVal", "baseLatVal", default=37.5635)
    lon = _number(request, "longVal", "baseLongVal", default=126.9839)
    with_stock = bool(_text(request, "itemCd", "item_cd"))
    rows = []
    for index, (name, _address, _slat, _slon) in enumerate(rng.sample(_STORES, 5)):
        store_lat, store_lon = _near(rng, lat, lon)
        stock: int | str | None = _stock_value(index) if with_stock else None
        if with_stock and index == 3:
            stock = str(stock)  # digits as a string also happen
        rows.append(
            {
                "storeCd": _digits(rng, 5),
                "storeNm": f"CU {name}",
                "latVal": _decimal(store_lat),
                "longVal": _decimal(store_lon),
                "distance": str(rng.randrange(50, 3000)),
                "stock": stock,
                "deliveryYn": rng.choice(("Y", "N")),
                "deliveryPickYn": rng.choice(("Y", "N")),
                "jumpoPickYn": rng.choice(("Y", "N")),
                "reserveYn": "N",
            }
        )
    return {"resp_cd": "0000", "totalCnt": len(rows), "storeList": rows}


# --- GS25 -----------------------------------------------------------------------------------------


def _gs25_products(request: Mapping[str, Any], rng: random.Random, _today: date) -> Body:
    query = _text(request, "query", default="코카콜라")
    docs = []
    for index, suffix in enumerate(_GS25_ITEMS):
        docs.append(
            {
                "field": {
                    "itemCode": _barcode(rng),
                    "itemName": f"{query} {suffix}",
                    "shortItemName": f"{query[:6]} {suffix}",
                    "starPoint": "" if index == 4 else f"{rng.uniform(3.5, 5.0):.1f}",
                    "stockCheckYn": "N" if index == 3 else "Y",
                }
            }
        )
    return {
        "SearchQueryResult": {
            "Collection": [
                {"CollectionId": "product", "Documentset": {"totalCount": len(docs), "Document": docs}}
            ]
        },
        "keywordInfo": {"keyword": query, "normalizedKeyword": query.replace(" ", "")},
    }


def _gs25_stock(request: Mapping[str, Any], rng: random.Random, _today: date) -> Body:
    lat = _number(request, "myPositionYCoordination", "centerPositionYCoordination", default=37.5635)
    lon = _number(request, "myPositionXCoordination", "centerPositionXCoordination", default=126.9839)
    item = _text(request, "keyword", default="코카콜라")
    rows: list[Body] = []
    for index, (name, address, _slat, _slon) in enumerate(rng.sample(_STORES, 5)):
        store_lat, store_lon = _near(rng, lat, lon)
        quantity = _stock_value(index)
        rows.append(
            {
                "storeCode": f"V{_digits(rng, 4)}",
                "storeName": f"GS25 {name}",
                "storeAddress": address,
                "storeXCoordination": _decimal(store_lon),
                "storeYCoordination": _decimal(store_lat),
                "realStockQuantity": str(quantity) if index == 3 else quantity,
                "pickupStkQty": max(quantity, 0),
                "dlvyStkQty": max(quantity - 1, 0),
                "isSoldOutYn": "Y" if quantity == 0 else "N",
                "searchItemName": f"{item} 500ml",
                "searchItemSellPrice": 2200,
                "propertyList": [],
            }
        )
    return {"stores": rows}


# --- 7-Eleven -------------------------------------------------------------------------------------


def _seven_goods_row(rng: random.Random, name: str, index: int) -> Body:
    price = _price(rng, 1000, 5000)
    return {
        "itemCd": _barcode(rng),
        "itemOnm": name,
        "prdNo": _digits(rng, 7),
        "onlinePrice": str(price) if index % 2 else price,
        "onlineCost": price,
        "avgEvalScore": "" if index == 2 else round(rng.uniform(3.0, 5.0), 1),
        "productReviewCnt": rng.randrange(0, 300),
        "repImgUrl": f"https://new.7-elevenapp.co.kr/images/goods/{_digits(rng, 7)}.jpg",
        "eventGbnNm": rng.choice(("1+1", "2+1", "")),
    }


def _seven_goods(request: Mapping[str, Any], rng: random.Random, _today: date) -> Body:
    query = _text(request, "query", default="코카콜라")
    size = _count(request, "listCount", "pageSize", default=10)
    rows = [_seven_goods_row(rng, f"{query} {_SEVEN_ITEMS[i % len(_SEVEN_ITEMS)]}", i) for i in range(size)]
    total = size + rng.randrange(0, 40)
    if "pageNo" in request:  # the client's body shape gets the paged answer
        return {"success": True, "code": 200, "data": {"content": rows, "totalElements": total}}
    documents = [{"field": row} for row in rows]
    return {
        "success": True,
        "code": 200,
        "data": {
            "SearchQueryResult": {
                "Collection": [
                    {"CollectionId": "goods", "Documentset": {"totalCount": total, "Document": documents}}
                ]
            }
        },
    }


def _seven_store(request: Mapping[str, Any], rng: random.Random, _today: date) -> Body:
    query = _text(request, "query", default="강남")
    size = _count(request, "listCount", default=10, cap=5)
    documents = []
    for index, (name, address, lat, lon) in enumerate(rng.sample(_STORES, size)):
        street, _, rest = address.rpartition(" ")
        documents.append(
            {
                "field": {
                    "storeCd": _digits(rng, 5),
                    "storeNm": f"{query}점" if index == 0 and len(query) <= 10 else name,
                    "addr1": street,
                    "addr2": rest,
                    "lat": _decimal(lat),
                    "lng": _decimal(lon),
                    "pickupYn": rng.choice(("Y", "N")),
                    "dlvyYn": rng.choice(("Y", "N")),
                    "closeYn": "N",
                }
            }
        )
    result = {
        "Collection": [{"CollectionId": "store", "Documentset": {"totalCount": size, "Document": documents}}]
    }
    return {"success": True, "code": 200, "data": {"SearchQueryResult": result}}


def _seven_popwords(request: Mapping[str, Any], rng: random.Random, _today: date) -> Body:
    words = rng.sample(_POPWORDS, 6)
    if _text(request, "label", default="home") == "home":
        return {
            "success": True,
            "code": 200,
            "data": {"keywords": [{"rank": i, "keyword": w} for i, w in enumerate(words, start=1)]},
        }
    return {"success": True, "code": 200, "data": words}


def _seven_stock_meta(request: Mapping[str, Any], rng: random.Random, _today: date) -> Body:
    item = _text(request, "itemCd", default="8801056018979")
    sm_code = "161260" if item == "8801056018979" else _digits(rng, 6)
    return {
        "itemCd": item,
        "smCd": sm_code,
        "stokMngCd": sm_code,
        "stokMngQty": 1,
        "stockApplicationRate": "100",
        "prdNo": _digits(rng, 7),
        "itemOnm": f"롯데 칠성사이다 {rng.choice(_SEVEN_ITEMS)}",
    }


def _seven_stock(request: Mapping[str, Any], _rng: random.Random, _today: date) -> Body:
    stores = request.get("storeList")
    codes = [s for s in stores if isinstance(s, str)] if isinstance(stores, list) else []
    rows: list[Body] = []
    for index, code in enumerate(codes or ["64676"]):
        # One store per request is the norm: derive its stock from its code so each store is stable.
        value = int(hashlib.sha256(code.encode()).hexdigest(), 16) % len(_STOCK_PATTERN)
        quantity = _stock_value(value if len(codes) < 3 else index)
        rows.append({"storeCd": code, "stock": str(quantity) if quantity > 0 and index % 2 else quantity})
    return {"success": True, "code": 200, "message": "성공", "data": {"storeList": rows}}


def _seven_products_listing(request: Mapping[str, Any], rng: random.Random, *, as_array: bool) -> Body:
    rows = [
        _seven_goods_row(rng, f"{rng.choice(('롯데', '해태', '농심', '빙그레'))} {name}", i)
        for i, name in enumerate(("바나나우유 240ml", "새우깡 90g", "초코파이 12입", "메로나 75ml"))
    ]
    return {"success": True, "code": 200, "data": rows if as_array else {"content": rows}}


def _seven_pages(request: Mapping[str, Any], rng: random.Random, _today: date) -> Body:
    return _seven_products_listing(request, rng, as_array=False)


def _seven_issues(request: Mapping[str, Any], rng: random.Random, _today: date) -> Body:
    return _seven_products_listing(request, rng, as_array=True)


def _seven_exhibitions(_request: Mapping[str, Any], rng: random.Random, _today: date) -> Body:
    names = ("여름 음료 대전", "1+1 간식 기획전", "도시락 신상품 모음")
    rows = [
        {
            "exhibitionIdx": 100 + index,
            "exhibitionName": name,
            "exhibitionStartDate": "2025-06-01",
            "exhibitionEndDate": "2025-06-30",
            "exhibitionProductList": [
                {"itemCd": _barcode(rng), "itemOnm": f"기획 상품 {n + 1}"} for n in range(index + 1)
            ],
        }
        for index, name in enumerate(names)
    ]
    return {"success": True, "code": 200, "data": {"list": rows}}


# --- Dtryx ----------------------------------------------------------------------------------------


def _dtryx_envelope(rows: list[Body]) -> Body:
    return {"RetCode": "success", "RetMsg": "", "RecordCount": len(rows), "Recordset": rows}


def _dtryx_movies(_request: Mapping[str, Any], rng: random.Random, _today: date) -> Body:
    movies = rng.sample(_MOVIES, 4)
    return _dtryx_envelope(
        [
            {"MovieCd": code, "MovieNm": name, "RunningTime": str(minutes), "RatingNm": rating}
            for code, name, minutes, rating in movies
        ]
    )


def _dtryx_play_dates(_request: Mapping[str, Any], _rng: random.Random, today: date) -> Body:
    return _dtryx_envelope(
        [
            {
                "PlaySDT": (today + timedelta(days=offset)).isoformat(),
                "HiddenYn": "N",
                "RestYn": "Y" if offset == 5 else "N",
            }
            for offset in range(7)
        ]
    )


def _requested_play_date(request: Mapping[str, Any], today: date) -> str:
    text = _text(request, "PlaySDT", "playDate")
    for layout in ("%Y-%m-%d", "%Y%m%d"):
        try:
            return datetime.strptime(text, layout).date().isoformat()
        except ValueError:
            continue
    return today.isoformat()


def _dtryx_timetable(request: Mapping[str, Any], rng: random.Random, today: date) -> Body:
    cinema = _text(request, "CinemaCd", "cinemaCode", default="000067")
    play_date = _requested_play_date(request, today)
    rows = []
    for index, start in enumerate(("10:30", "13:10", "15:45", "19:20", "21:50")):
        code, name, minutes, rating = _MOVIES[index % len(_MOVIES)]
        total = rng.choice((48, 64, 92))
        remain: int | str = _stock_value(index + 1)  # 0 (sold out) and -1 (unknown) included
        remain = max(min(int(remain), total), -1)
        hours, mins = divmod(int(start[:2]) * 60 + int(start[3:]) + minutes, 60)
        rows.append(
            {
                "MovieCd": code,
                "MovieNm": name,
                "CinemaCd": cinema,
                "CinemaNm": _CINEMA_NAMES.get(cinema, "독립예술영화관"),
                "ScreenCd": f"0{index % 2 + 1}",
                "ScreenNm": f"{index % 2 + 1}관",
                "PlaySDT": play_date,
                "ShowSeq": str(index + 1),
                "StartTime": start if index % 2 == 0 else start.replace(":", ""),
                "EndTime": f"{hours % 24:02d}:{mins:02d}",
                "TotalSeatCnt": total,
                "RemainSeatCnt": str(remain) if remain > 0 and index == 3 else remain,
                "RunningTime": minutes,
                "RatingNm": rating,
                "PlanStatus": "예매가능",
            }
        )
    return _dtryx_envelope(rows)


# --- CGV ------------------------------------------------------------------------------------------

_CGV_REGIONS = (
    ("01", "서울", (("0056", "강남"), ("0001", "강변"), ("0013", "용산아이파크몰"), ("0074", "왕십리"))),
    ("02", "경기", (("0211", "안산"), ("0012", "수원"), ("0255", "판교"))),
    ("03", "인천", (("0002", "인천"), ("0258", "송도타임스페이스"))),
    ("05", "부산/울산", (("0005", "서면"), ("0160", "센텀시티"))),
)
_CGV_MOVIES = (
    ("30000985", "하얼빈", "15세이상관람가", 114),
    ("30000971", "모아나 2", "전체관람가", 100),
    ("30000990", "검은 수녀들", "15세이상관람가", 114),
    ("30000993", "말할 수 없는 비밀", "12세이상관람가", 104),
    ("30000999", "히트맨2", None, 118),  # CGV sends no rating for some films
)
CGV_EMPTY_SITE_TIMETABLE = "0211"
"""A theater whose site timetable CGV answers empty while its per-movie timetables have screenings (the
case the REST timetable's fallback exists for)."""


def _cgv_envelope(rows: list[Body]) -> Body:
    return {"statusCode": 0, "statusMessage": "조회 되었습니다.", "data": rows}


def _cgv_theaters(_request: Mapping[str, Any], _rng: random.Random, _today: date) -> Body:
    return _cgv_envelope(
        [
            {
                "regnGrpCd": code,
                "regnGrpNm": name,
                "siteList": [{"siteNo": site, "siteNm": site_name} for site, site_name in sites],
            }
            for code, name, sites in _CGV_REGIONS
        ]
    )


def _cgv_theater_name(code: str) -> str:
    names = {site: name for _code, _name, sites in _CGV_REGIONS for site, name in sites}
    return f"CGV {names.get(code, '강남')}"


def _cgv_showing(theater: str) -> list[tuple[str, str, str | None, int]]:
    """The films a theater shows: four of the five, which four by the theater."""
    skip = int(hashlib.sha256(theater.encode()).hexdigest(), 16) % len(_CGV_MOVIES)
    return [movie for index, movie in enumerate(_CGV_MOVIES) if index != skip]


def _cgv_movies(request: Mapping[str, Any], _rng: random.Random, _today: date) -> Body:
    theater = _text(request, "siteNo", "theaterCode", default="0056")
    return _cgv_envelope(
        [
            {"movNo": code, "movNm": name, "cratgClsNm": rating, "rnTm": str(minutes)}
            for code, name, rating, minutes in _cgv_showing(theater)
        ]
    )


def _cgv_screenings(request: Mapping[str, Any], rng: random.Random, today: date, movie: str | None) -> Body:
    theater = _text(request, "siteNo", "theaterCode", default="0056")
    play_date = _text(request, "scnYmd", "playDate", default=today.strftime("%Y%m%d"))
    films = [film for film in _cgv_showing(theater) if movie is None or film[0] == movie]
    rows: list[Body] = []
    for index, start in enumerate(("0930", "1230", "1505", "1840", "2155")):
        if not films:
            break
        code, name, _rating, minutes = films[index % len(films)]
        total = rng.choice((123, 172, 236))
        hours, mins = divmod(int(start[:2]) * 60 + int(start[2:]) + minutes, 60)
        row: Body = {
            "siteNo": theater,
            "siteNm": _cgv_theater_name(theater),
            "scnYmd": play_date,
            "scnSseq": str(index + 1),
            "movNo": code,
            "movNm": name,
            "scnsrtTm": start,
            "scnendTm": f"{hours % 24:02d}{mins:02d}",
            "stcnt": str(total),
            "frSeatCnt": 0 if index == 2 else str(rng.randrange(1, total)),  # 0: sold out
        }
        if index == 3:  # a special screening named by its product; only the temporary count known
            del row["movNm"], row["frSeatCnt"]
            row["prodNm"] = f"{name} 무대인사"
            row["frtmpSeatCnt"] = str(rng.randrange(1, total))
        if index == 4:
            row["frSeatCnt"] = ""  # CGV could not say: unknown, never 0
        rows.append(row)
    if movie is not None:  # the per-movie timetable names every screening by its film
        for row in rows:
            row.setdefault("movNm", next(film[1] for film in films if film[0] == row["movNo"]))
    return _cgv_envelope(rows)


def _cgv_timetable(request: Mapping[str, Any], rng: random.Random, today: date) -> Body:
    if _text(request, "siteNo", "theaterCode") == CGV_EMPTY_SITE_TIMETABLE:
        return _cgv_envelope([])
    return _cgv_screenings(request, rng, today, None)


def _cgv_timetable_movie(request: Mapping[str, Any], rng: random.Random, today: date) -> Body:
    return _cgv_screenings(request, rng, today, _text(request, "movNo", "movieCode"))


def realistic_payload(key: RouteKey, request: Mapping[str, Any], *, today: date | None = None) -> object:
    """A body the real upstream could have sent for `request`; it passes `spec_for(key).validate`.

    `today` anchors Dtryx dates (pass the sandbox clock's Korean date); without it a fixed date is used.
    """
    return SIMULATED[key].body(request, _rng(key, request), today or DEFAULT_TODAY)


def request_fields(url: str, json_body: object | None) -> dict[str, Any]:
    """What a retailer receives: the query parameters, overlaid by a JSON object body if any."""
    fields: dict[str, Any] = dict(parse_qsl(urlsplit(url).query, keep_blank_values=True))
    if isinstance(json_body, dict):
        fields.update(json_body)
    return fields


def probe_request(key: RouteKey, now_ms: int = DEFAULT_PROBE_NOW_MS) -> dict[str, Any]:
    """The fields of the probe's request for `key`, as the retailer would receive them."""
    spec = spec_for(key)
    request = spec.build_request(spec.probe_params(now_ms))
    return request_fields(request.url, request.json_body)


# --- soft failures ---------------------------------------------------------------------------------

Mutation = Callable[[Body], None]


def _set(path: tuple[str | int, ...], value: object) -> Mutation:
    def mutate(body: Body) -> None:
        target: Any = body
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value

    return mutate


def _drop(path: tuple[str | int, ...]) -> Mutation:
    def mutate(body: Body) -> None:
        target: Any = body
        for step in path[:-1]:
            target = target[step]
        del target[path[-1]]

    return mutate


def _replace(new_body: Body) -> Mutation:
    def mutate(body: Body) -> None:
        body.clear()
        body.update(copy.deepcopy(new_body))

    return mutate


def _merge(fields: Body) -> Mutation:
    return lambda body: body.update(copy.deepcopy(fields))


def _oy_list_name(body: Body) -> str:
    return "searchList" if "searchList" in body["data"] else "serachList"


def _oy_product_row(field: str, value: object) -> Mutation:
    return lambda body: body["data"][_oy_list_name(body)][0].__setitem__(field, value)


_OY_COMMON: dict[str, Mutation] = {
    "status-fail": _set(("status",), "FAIL"),
    "status-missing": _drop(("status",)),
    "status-lowercase": _set(("status",), "success"),
}
_CU_COMMON: dict[str, Mutation] = {
    "resp-cd-3000": _set(("resp_cd",), "3000"),
    "success-false": _set(("success",), False),
    "error-key": _set(("error",), "조회에 실패했습니다."),
}
_SEVEN_ENVELOPE: dict[str, Mutation] = {
    "code-500": _set(("code",), 500),
    "code-199": _set(("code",), 199),
    "code-300": _set(("code",), 300),
    "success-false": _set(("success",), False),
    "data-missing": _drop(("data",)),
    "error-key": _set(("error",), "Internal Server Error"),
}
_DTRYX_COMMON: dict[str, Mutation] = {
    "retcode-fail": _set(("RetCode",), "fail"),
    "recordset-not-array": _set(("Recordset",), {}),
    "recordset-not-objects": _set(("Recordset",), [1, 2]),
    "recordset-missing": _drop(("Recordset",)),
}

_CGV_COMMON: dict[str, Mutation] = {
    "status-code-1": _set(("statusCode",), 1),
    "status-code-text": _set(("statusCode",), "0"),
    "status-code-false": _set(("statusCode",), False),
    "status-code-missing": _drop(("statusCode",)),
    "data-null": _set(("data",), None),
    "data-missing": _drop(("data",)),
    "data-row-null": _set(("data",), [None]),
    "data-row-array": _set(("data",), [[]]),
}


@dataclass(frozen=True, slots=True)
class SimulatedUpstream:
    """One operation as the simulator answers it: a realistic body, and the catalog's soft failures, each a
    change to that body that `spec.validate` must reject."""

    body: Callable[[Mapping[str, Any], random.Random, date], Body]
    soft_failures: Mapping[str, Mutation]


SIMULATED: Mapping[RouteKey, SimulatedUpstream] = {
    RouteKey.OY_FIND_STORE: SimulatedUpstream(
        _oy_find_store,
        {
            **_OY_COMMON,
            "store-list-missing": _drop(("data", "storeList")),
            "store-code-empty": _set(("data", "storeList", 0, "storeCode"), ""),
            "latitude-out-of-range": _set(("data", "storeList", 0, "latitude"), 137.5),
            "remain-negative": _set(("data", "storeList", 0, "remainQuantity"), -1),
        },
    ),
    RouteKey.OY_PRODUCT_SEARCH: SimulatedUpstream(
        _oy_product_search,
        {
            **_OY_COMMON,
            "search-list-missing": lambda body: body["data"].pop(_oy_list_name(body)),
            "goods-name-empty": _oy_product_row("goodsName", ""),
            "price-negative": _oy_product_row("priceToPay", -100),
            "discount-over-100": _oy_product_row("discountRate", 130),
            "stock-flag-not-bool": _oy_product_row("o2oStockFlag", "Y"),
        },
    ),
    RouteKey.OY_GOODS_INFO: SimulatedUpstream(
        _oy_goods_info,
        {
            **_OY_COMMON,
            "master-goods-number-empty": _set(("data", "goodsInfo", "masterGoodsNumber"), ""),
            "goods-info-missing": _drop(("data", "goodsInfo")),
        },
    ),
    RouteKey.OY_STOCK_STORES: SimulatedUpstream(
        _oy_stock_stores,
        {
            **_OY_COMMON,
            "store-list-missing": _drop(("data", "storeList")),
            "sales-store-missing": _drop(("data", "storeList", 0, "salesStoreYn")),
            "remain-not-int": _set(("data", "storeList", 0, "remainQuantity"), "many"),
        },
    ),
    RouteKey.CU_PRIME: SimulatedUpstream(
        _cu_prime,
        {
            **_CU_COMMON,
            "empty-object": _replace({}),
            "empty-row": _set(("areaCateList",), [{}]),
        },
    ),
    RouteKey.CU_STOCK: SimulatedUpstream(
        _cu_stock,
        {
            **_CU_COMMON,
            "rows-missing": _drop(("data", "stockResult", "result", "rows")),
            "item-name-empty": _set(("data", "stockResult", "result", "rows", 0, "fields", "item_nm"), ""),
            "price-not-numeric": _set(
                ("data", "stockResult", "result", "rows", 0, "fields", "hyun_maega"), "oops"
            ),
        },
    ),
    RouteKey.CU_STORE: SimulatedUpstream(
        _cu_store,
        {
            **_CU_COMMON,
            "store-list-missing": _drop(("storeList",)),
            "store-name-empty": _set(("storeList", 0, "storeNm"), ""),
            "stock-below-unknown": _set(("storeList", 0, "stock"), -2),
            "stock-not-numeric": _set(("storeList", 0, "stock"), "oops"),
        },
    ),
    RouteKey.GS25_PRODUCTS: SimulatedUpstream(
        _gs25_products,
        {
            "collection-missing": _set(("SearchQueryResult",), {}),
            "item-name-empty": _set(
                ("SearchQueryResult", "Collection", 0, "Documentset", "Document", 0, "field", "itemName"), ""
            ),
        },
    ),
    RouteKey.GS25_STOCK: SimulatedUpstream(
        _gs25_stock,
        {
            "stores-missing": _drop(("stores",)),
            "store-not-an-object": _set(("stores", 0), "VQ670"),
            "stock-not-numeric": _set(("stores", 0, "realStockQuantity"), "many"),
        },
    ),
    RouteKey.SEVEN_GOODS: SimulatedUpstream(
        _seven_goods,
        {
            **_SEVEN_ENVELOPE,
            "no-rows-container": _set(("data",), {}),
            "item-name-empty": _set(
                (
                    "data",
                    "SearchQueryResult",
                    "Collection",
                    0,
                    "Documentset",
                    "Document",
                    0,
                    "field",
                    "itemOnm",
                ),
                "",
            ),
        },
    ),
    RouteKey.SEVEN_STORE: SimulatedUpstream(
        _seven_store,
        {
            **_SEVEN_ENVELOPE,
            "no-rows-container": _set(("data",), {}),
            "store-without-id-name": _set(
                ("data", "SearchQueryResult", "Collection", 0, "Documentset", "Document", 0, "field"),
                {"addr1": "서울"},
            ),
        },
    ),
    RouteKey.SEVEN_POPWORDS: SimulatedUpstream(
        _seven_popwords,
        {
            **_SEVEN_ENVELOPE,
            "empty-data-without-success": _replace({"data": {}, "code": 200}),
            "empty-data-without-code": _replace({"data": {}, "success": True}),
            "data-without-word-list": _set(("data",), {"updatedAt": "2025-06-02"}),
            "word-item-without-word": _set(("data", "keywords", 0), {"rank": 1}),
        },
    ),
    RouteKey.SEVEN_STOCK_META: SimulatedUpstream(
        _seven_stock_meta,
        {
            "failure-envelope": _replace({"code": 500, "message": "Internal Server Error"}),
            "sm-code-empty": _set(("smCd",), ""),
            "stock-quantity-missing": _drop(("stokMngQty",)),
            "stock-quantity-below-unknown": _set(("stokMngQty",), -5),
        },
    ),
    RouteKey.SEVEN_STOCK: SimulatedUpstream(
        _seven_stock,
        {
            **_SEVEN_ENVELOPE,
            "relay-store-rejection": _merge(
                {
                    "success": False,
                    "error": "Relay request failed",
                    "upstreamError": {
                        "status": 400,
                        "code": 501,
                        "message": "정상적인 점포 조회 요청이 아닙니다.",
                    },
                }
            ),
            "store-list-missing": _drop(("data", "storeList")),
            "stock-ten-digits": _set(("data", "storeList", 0, "stock"), "1234567890"),
            "stock-below-unknown": _set(("data", "storeList", 0, "stock"), -2),
        },
    ),
    RouteKey.SEVEN_PAGES: SimulatedUpstream(
        _seven_pages,
        {
            **_SEVEN_ENVELOPE,
            "price-blank": _set(("data", "content", 0, "onlinePrice"), ""),
            "price-not-numeric": _set(("data", "content", 0, "onlinePrice"), "oops"),
            "no-rows-container": _set(("data",), {"total": 3}),
        },
    ),
    RouteKey.SEVEN_ISSUES: SimulatedUpstream(
        _seven_issues,
        {
            **_SEVEN_ENVELOPE,
            "price-blank": _set(("data", 0, "onlinePrice"), ""),
            "item-code-missing": _drop(("data", 0, "itemCd")),
        },
    ),
    RouteKey.SEVEN_EXHIBITIONS: SimulatedUpstream(
        _seven_exhibitions,
        {
            **_SEVEN_ENVELOPE,
            "data-not-a-list": _set(("data",), "전시 없음"),
            "no-rows-container": _set(("data",), {}),
            "row-not-object": _set(("data", "list"), ["여름 음료 대전"]),
        },
    ),
    RouteKey.DTRYX_MOVIES: SimulatedUpstream(
        _dtryx_movies, {**_DTRYX_COMMON, "movie-name-empty": _set(("Recordset", 0, "MovieNm"), "")}
    ),
    RouteKey.DTRYX_PLAY_DATES: SimulatedUpstream(
        _dtryx_play_dates,
        {
            **_DTRYX_COMMON,
            "play-date-compact": _set(("Recordset", 0, "PlaySDT"), "20250602"),
        },
    ),
    RouteKey.DTRYX_TIMETABLE: SimulatedUpstream(
        _dtryx_timetable,
        {
            **_DTRYX_COMMON,
            "screen-code-missing": _drop(("Recordset", 0, "ScreenCd")),
            "remaining-seats-not-numeric": _set(("Recordset", 0, "RemainSeatCnt"), "oops"),
            "start-time-garbled": _set(("Recordset", 0, "StartTime"), "10시30분"),
        },
    ),
    # CGV's rows are not checked (only the envelope), as its own clients read them: what a row lacks, the
    # normalizer leaves out or reports as unknown.
    RouteKey.CGV_THEATERS: SimulatedUpstream(_cgv_theaters, _CGV_COMMON),
    RouteKey.CGV_MOVIES: SimulatedUpstream(_cgv_movies, _CGV_COMMON),
    RouteKey.CGV_TIMETABLE: SimulatedUpstream(_cgv_timetable, _CGV_COMMON),
    RouteKey.CGV_TIMETABLE_MOVIE: SimulatedUpstream(_cgv_timetable_movie, _CGV_COMMON),
}


def soft_failure_payloads(key: RouteKey, request: Mapping[str, Any] | None = None) -> dict[str, object]:
    """Every catalog soft failure for `key`, by name: a realistic 200 body with one failure signal in it."""
    base = realistic_payload(key, request if request is not None else probe_request(key))
    bodies: dict[str, object] = {}
    for name, mutate in SIMULATED[key].soft_failures.items():
        body = copy.deepcopy(base)
        assert isinstance(body, dict)
        mutate(body)
        bodies[name] = body
    return bodies


def bad_shape_payload(key: RouteKey, request: Mapping[str, Any] | None = None) -> object:
    """The sandbox's `bad-shape` fault: JSON that parses but fails validation with `Reason.SHAPE`.

    The retailer's own failure signal where it has one: OY status "FAIL", CU resp_cd "3000", 7-Eleven
    code 500, Dtryx RetCode "fail", CGV statusCode 1; for GS25 (no envelope) a body missing its required list.
    """
    return next(iter(soft_failure_payloads(key, request).values()))


def wrong_kind_payload(_key: RouteKey) -> object:
    """Valid JSON of the wrong kind (an array where an object is expected): `Reason.INVALID_RESPONSE`."""
    return [{"error": "unexpected"}]
