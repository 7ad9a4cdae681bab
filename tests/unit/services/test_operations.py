"""API queries -> operation params (upstream names), composite endpoints and the shared budget, with the real
Router and catalog but recording in-memory transports (every call counted exactly)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date
from typing import Any

import pytest
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from functions.catalog.cgv import CgvMoviesQuery, CgvTheatersQuery, CgvTimetableQuery
from functions.catalog.contract import InvalidParams, LookupQuery, operation_params
from functions.catalog.cu import CuProductsQuery, CuStoresQuery
from functions.catalog.dtryx import DtryxMoviesQuery, DtryxTimetableQuery
from functions.catalog.gs25 import Gs25StockQuery
from functions.catalog.oliveyoung import (
    SEOUL_CITY_HALL_LAT,
    SEOUL_CITY_HALL_LON,
    OliveyoungGoodsQuery,
    OliveyoungProductsQuery,
    OliveyoungStockQuery,
    OliveyoungStoresQuery,
)
from functions.catalog.seveneleven import (
    SevenElevenExhibitionsQuery,
    SevenElevenPagesQuery,
    SevenElevenProductsQuery,
    SevenElevenStockQuery,
    SevenElevenStoresQuery,
)
from functions.catalog.spec import OperationSpec
from functions.core import ApiError, RelayGroup, RouteKey, group_of
from functions.core.errors import error_headers
from functions.services.lookup import MAX_RELAY_CALLS_PER_LOOKUP, RELAY_CALLS_SPENT, Lookup
from functions.services.routing import Router
from sandbox.simulator.payloads import realistic_payload, request_fields
from tests.support.clock import ManualClock
from tests.support.core_fakes import RecordingEvents
from tests.support.examples import examples
from tests.support.queries import QueryCases, for_every_accepted_query, query_fields

NOW = 1_767_225_600_000


class RecordingTransport:
    """A transport answering with the simulator's realistic payloads; records (key, params, timeout_ms)."""

    def __init__(
        self,
        clock: ManualClock,
        *,
        takes_ms: int = 0,
        answers: Mapping[RouteKey, Callable[[Mapping[str, Any]], object]] | None = None,
    ) -> None:
        self.clock = clock
        self.takes_ms = takes_ms
        self.answers = dict(answers or {})
        self.calls: list[tuple[RouteKey, dict[str, Any], int]] = []

    def fetch(self, spec: OperationSpec[Any, Any], params: BaseModel, *, timeout_ms: int) -> Any:
        self.calls.append((spec.key, params.model_dump(), timeout_ms))
        self.clock.now += self.takes_ms
        request = spec.build_request(params)
        fields = request_fields(request.url, request.json_body)
        answer = self.answers.get(spec.key)
        body = answer(fields) if answer else realistic_payload(spec.key, fields)
        return spec.validate(body)

    @property
    def keys(self) -> list[RouteKey]:
        return [key for key, _, _ in self.calls]

    def params_of(self, key: RouteKey) -> dict[str, Any]:
        return next(params for called, params, _ in self.calls if called is key)


def lookup_with(
    transport: RecordingTransport, clock: ManualClock, *, via_relay: bool = False, budget_ms: int = 10_000
) -> Lookup:
    """A Lookup over the real Router in legacy mode: always the relay when `via_relay`, else always direct."""
    router = Router(
        clock=clock,
        snapshots=None,
        reporter=None,
        relay_configured=lambda _group: via_relay,
        events=RecordingEvents(),
    )
    unused = RecordingTransport(clock)
    return Lookup(
        router=router,
        direct=unused if via_relay else transport,
        relays=transport if via_relay else unused,
        clock=clock,
        budget_ms=budget_ms,
    )


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(NOW)


@pytest.fixture
def transport(clock: ManualClock) -> RecordingTransport:
    return RecordingTransport(clock)


# --- mapping onto upstream names ------------------------------------------------------------------


def test_oliveyoung_stores_defaults_to_seoul_city_hall(
    transport: RecordingTransport, clock: ManualClock
) -> None:
    data = OliveyoungStoresQuery().fetch(lookup_with(transport, clock))

    assert transport.keys == [RouteKey.OY_FIND_STORE]
    assert transport.params_of(RouteKey.OY_FIND_STORE) == {
        "lat": SEOUL_CITY_HALL_LAT,
        "lon": SEOUL_CITY_HALL_LON,
        "mapLat": SEOUL_CITY_HALL_LAT,
        "mapLon": SEOUL_CITY_HALL_LON,
        "pageIdx": 1,
        "searchWords": "",
        "pogKeys": "",
        "serviceKeys": "",
    }
    assert all(store["storeCode"] and store["storeName"] for store in data["stores"])


def test_oliveyoung_products_and_stock_use_the_upstream_names(
    transport: RecordingTransport, clock: ManualClock
) -> None:
    lookup = lookup_with(transport, clock)
    OliveyoungProductsQuery(keyword=" 립밤 ", page=2, size=5).fetch(lookup)
    OliveyoungStockQuery(productId="8800362322138", keyword="명동", lat=37.56, lon=126.98, page=3).fetch(
        lookup
    )

    assert transport.params_of(RouteKey.OY_PRODUCT_SEARCH) == {
        "keyword": "립밤",
        "page": 2,
        "size": 5,
        "sort": "01",
        "includeSoldOut": True,
    }
    assert transport.params_of(RouteKey.OY_STOCK_STORES) == {
        "productId": "8800362322138",
        "lat": 37.56,
        "lon": 126.98,
        "mapLat": 37.56,
        "mapLon": 126.98,
        "pageIdx": 3,
        "searchWords": "명동",
    }


def test_cu_products_primes_then_searches(transport: RecordingTransport, clock: ManualClock) -> None:
    data = CuProductsQuery(keyword="레쓰비", offset=10, limit=5).fetch(lookup_with(transport, clock))

    assert transport.keys == [RouteKey.CU_PRIME, RouteKey.CU_STOCK]
    assert transport.params_of(RouteKey.CU_PRIME) == {}
    assert transport.params_of(RouteKey.CU_STOCK) == {
        "searchWord": "레쓰비",
        "prevSearchWord": "",
        "spellModifyUseYn": "Y",
        "offset": 10,
        "limit": 5,
        "searchSort": "recom",
    }
    assert data["products"]
    assert all(row["itemCode"] for row in data["products"])


def test_cu_stores_sends_every_fixed_field_and_the_item(
    transport: RecordingTransport, clock: ManualClock
) -> None:
    data = CuStoresQuery(lat=37.5, lon=127.0, keyword="강남", itemCd="8801056018979").fetch(
        lookup_with(transport, clock)
    )

    params = transport.params_of(RouteKey.CU_STORE)
    assert params["latVal"] == params["baseLatVal"] == "37.5"
    assert params["longVal"] == params["baseLongVal"] == "127"
    assert params["itemCd"] == params["item_cd"] == "8801056018979"
    assert params["searchWord"] == "강남"
    assert params["tabId"] == "2"
    assert params["getRoute"] == "IOS"
    assert params["filterSvcList"] == []
    assert all(
        store["stock"]["status"] in {"in_stock", "out_of_stock", "unknown"} for store in data["stores"]
    )


def test_gs25_stock_sends_position_as_centre_and_only_what_was_given(
    transport: RecordingTransport, clock: ManualClock
) -> None:
    lookup = lookup_with(transport, clock, via_relay=True)
    Gs25StockQuery(itemCode="8801094017200", lat=37.5, lon=127.0).fetch(lookup)

    params = transport.params_of(RouteKey.GS25_STOCK)
    assert params["itemCode"] == "8801094017200"
    assert params["keyword"] is None
    assert params["myPositionYCoordination"] == params["centerPositionYCoordination"] == 37.5
    assert params["myPositionXCoordination"] == params["centerPositionXCoordination"] == 127.0


def test_seven_goods_uses_the_probes_body_shape(transport: RecordingTransport, clock: ManualClock) -> None:
    lookup = lookup_with(transport, clock)
    SevenElevenProductsQuery(keyword="커피", page=3, size=20).fetch(lookup)
    SevenElevenStoresQuery(keyword="강남", limit=7).fetch(lookup)

    assert transport.params_of(RouteKey.SEVEN_GOODS) == {
        "query": "커피",
        "collection": "goods",
        "sort": "quantity/desc,itemOnm/asc",
        "startCount": 40,
        "listCount": 20,
        "pageNo": None,
        "pageSize": None,
    }
    assert transport.params_of(RouteKey.SEVEN_STORE) == {
        "collection": "store",
        "query": "강남",
        "sort": "Date/desc",
        "listCount": 7,
    }


def test_dtryx_timetable_passes_a_real_date(transport: RecordingTransport, clock: ManualClock) -> None:
    query = DtryxTimetableQuery.model_validate(
        {"brandCode": "indieart", "cinemaCode": "000067", "playDate": "2026-01-02"}
    )
    data = query.fetch(lookup_with(transport, clock))

    assert transport.params_of(RouteKey.DTRYX_TIMETABLE) == {
        "brandCode": "indieart",
        "cinemaCode": "000067",
        "playDate": date(2026, 1, 2),
    }
    assert "showtimes" in data


# --- 7-Eleven stock composite -----------------------------------------------------------------------


def test_seven_stock_reads_the_meta_then_asks_for_one_store(
    transport: RecordingTransport, clock: ManualClock
) -> None:
    data = SevenElevenStockQuery(itemCd="8801056018979", storeCd="64676").fetch(lookup_with(transport, clock))

    assert transport.keys == [RouteKey.SEVEN_STOCK_META, RouteKey.SEVEN_STOCK]
    assert transport.params_of(RouteKey.SEVEN_STOCK_META) == {"itemCd": "8801056018979"}
    assert transport.params_of(RouteKey.SEVEN_STOCK) == {
        "smCd": "161260",
        "stokMngCd": "161260",
        "stokMngQty": 1,
        "stockApplicationRate": "100",
        "storeList": ["64676"],
    }
    assert data["itemCode"] == "8801056018979"
    assert data["storeCode"] == "64676"
    assert data["stock"]["status"] in {"in_stock", "out_of_stock", "unknown"}


def test_seven_stock_with_unusable_meta_codes_is_502_and_never_asks_for_stock(clock: ManualClock) -> None:
    meta = {
        "itemCd": "8801056018979",
        "smCd": "16 12/60",
        "stokMngCd": "161260",
        "stokMngQty": 1,
        "stockApplicationRate": "100",
    }
    transport = RecordingTransport(clock, answers={RouteKey.SEVEN_STOCK_META: lambda _f: meta})

    with pytest.raises(ApiError) as raised:
        SevenElevenStockQuery(itemCd="8801056018979", storeCd="64676").fetch(lookup_with(transport, clock))

    assert raised.value.status == 502
    assert transport.keys == [RouteKey.SEVEN_STOCK_META]


@pytest.mark.parametrize("quantity", [-1, "-1"])
def test_seven_stock_with_an_unknown_management_quantity_is_unknown_without_asking_for_stock(
    clock: ManualClock, quantity: object
) -> None:
    # stokMngQty -1 means unknown; the relays refuse it in a stock request (a count 0..9999), so never send it.
    meta = {
        "itemCd": "8801056018979",
        "smCd": "161260",
        "stokMngCd": "161260",
        "stokMngQty": quantity,
        "stockApplicationRate": "100",
        "itemOnm": "롯데 칠성사이다",
    }
    for via_relay in (False, True):
        transport = RecordingTransport(clock, answers={RouteKey.SEVEN_STOCK_META: lambda _f: meta})
        data = SevenElevenStockQuery(itemCd="8801056018979", storeCd="64676").fetch(
            lookup_with(transport, clock, via_relay=via_relay)
        )

        assert transport.keys == [RouteKey.SEVEN_STOCK_META]
        assert data == {
            "itemCode": "8801056018979",
            "itemName": "롯데 칠성사이다",
            "storeCode": "64676",
            "stock": {"quantity": None, "status": "unknown"},
        }


def test_seven_stock_for_a_store_missing_from_the_answer_is_unknown(clock: ManualClock) -> None:
    other_store = {"success": True, "code": 200, "data": {"storeList": [{"storeCd": "99999", "stock": 0}]}}
    transport = RecordingTransport(clock, answers={RouteKey.SEVEN_STOCK: lambda _f: other_store})

    data = SevenElevenStockQuery(itemCd="8801056018979", storeCd="64676").fetch(lookup_with(transport, clock))

    assert data["stock"] == {"quantity": None, "status": "unknown"}


def test_seven_stock_minus_one_is_unknown_not_out_of_stock(clock: ManualClock) -> None:
    unknown = {"success": True, "code": 200, "data": {"storeList": [{"storeCd": "64676", "stock": -1}]}}
    transport = RecordingTransport(clock, answers={RouteKey.SEVEN_STOCK: lambda _f: unknown})

    data = SevenElevenStockQuery(itemCd="8801056018979", storeCd="64676").fetch(lookup_with(transport, clock))

    assert data["stock"] == {"quantity": None, "status": "unknown"}


# --- CGV ---------------------------------------------------------------------------------------------

KOREA_NEW_YEAR = 1_767_193_200_000  # 2026-01-01 00:00 KST, still 2025-12-31 in UTC


def cgv_answer(rows: list[dict[str, Any]]) -> Callable[[Mapping[str, Any]], object]:
    return lambda _fields: {"statusCode": 0, "data": rows}


def test_cgv_theaters_by_region_and_name_words(transport: RecordingTransport, clock: ManualClock) -> None:
    lookup = lookup_with(transport, clock)
    everything = CgvTheatersQuery().fetch(lookup)
    assert everything["filters"] == {"keyword": None, "regionCode": None}
    assert len(everything["theaters"]) == 11
    assert CgvTheatersQuery(limit=2).fetch(lookup)["theaters"] == everything["theaters"][:2]
    gyeonggi = CgvTheatersQuery(regionCode="02").fetch(lookup)["theaters"]
    assert [t["theaterName"] for t in gyeonggi] == ["안산", "수원", "판교"]
    named = CgvTheatersQuery(keyword="CGV 강남 근처 극장").fetch(lookup)
    assert named["theaters"] == [{"theaterCode": "0056", "theaterName": "강남", "regionCode": "01"}]
    assert named["filters"] == {"keyword": "CGV 강남 근처 극장", "regionCode": None}
    assert transport.keys == [RouteKey.CGV_THEATERS] * 4


@pytest.mark.parametrize("keyword", ["CGV 근처 극장", "역", "해운대"])
def test_a_cgv_keyword_that_names_no_theater_finds_none_rather_than_any(
    transport: RecordingTransport, clock: ManualClock, keyword: str
) -> None:
    assert CgvTheatersQuery(keyword=keyword).fetch(lookup_with(transport, clock))["theaters"] == []


def test_cgv_words_matching_more_of_a_name_come_first(clock: ManualClock) -> None:
    rows = [
        {
            "regnGrpCd": "01",
            "siteList": [
                {"siteNo": "0001", "siteNm": "용산"},
                {"siteNo": "0013", "siteNm": "용산아이파크몰"},
            ],
        }
    ]
    transport = RecordingTransport(clock, answers={RouteKey.CGV_THEATERS: cgv_answer(rows)})
    found = CgvTheatersQuery(keyword="용산 아이파크몰").fetch(lookup_with(transport, clock))["theaters"]
    assert [t["theaterCode"] for t in found] == ["0013", "0001"]


def test_cgv_movies_of_a_theater_default_to_today_in_korea(transport: RecordingTransport) -> None:
    clock = ManualClock(KOREA_NEW_YEAR)
    data = CgvMoviesQuery(theaterCode="0056").fetch(lookup_with(RecordingTransport(clock), clock))
    assert (data["playDate"], data["filters"], data["resolvedTheater"]) == (
        "20260101",
        {"theaterCode": "0056", "keyword": None},
        None,
    )
    assert [movie["movieCode"] for movie in data["movies"]]


def test_cgv_movies_by_a_theaters_name(transport: RecordingTransport, clock: ManualClock) -> None:
    data = CgvMoviesQuery(keyword="안산", playDate="20260304").fetch(lookup_with(transport, clock))
    assert transport.keys == [RouteKey.CGV_THEATERS, RouteKey.CGV_MOVIES]
    assert transport.params_of(RouteKey.CGV_MOVIES) == {"theaterCode": "0211", "playDate": "20260304"}
    assert data["resolvedTheater"] == {"theaterCode": "0211", "theaterName": "안산", "regionCode": "02"}
    assert data["filters"] == {"theaterCode": "0211", "keyword": "안산"}


def test_cgv_movies_for_a_name_no_theater_has_are_none_and_cost_no_movies_call(
    transport: RecordingTransport, clock: ManualClock
) -> None:
    data = CgvMoviesQuery(keyword="해운대").fetch(lookup_with(transport, clock))
    assert transport.keys == [RouteKey.CGV_THEATERS]
    assert (data["movies"], data["resolvedTheater"], data["filters"]["theaterCode"]) == ([], None, None)


def test_cgv_movies_without_a_theater_are_the_first_listed_theaters(clock: ManualClock) -> None:
    for rows, theater in (
        ([{"siteList": [{"siteNo": "0001", "siteNm": "강변"}]}], "0001"),
        ([], "0056"),  # CGV lists none: 강남
    ):
        transport = RecordingTransport(clock, answers={RouteKey.CGV_THEATERS: cgv_answer(rows)})
        CgvMoviesQuery().fetch(lookup_with(transport, clock))
        assert transport.params_of(RouteKey.CGV_MOVIES)["theaterCode"] == theater


def test_a_theater_code_cgv_lists_but_its_api_refuses_is_its_unusable_answer(clock: ManualClock) -> None:
    rows = [{"siteList": [{"siteNo": "56", "siteNm": "강남"}]}]
    transport = RecordingTransport(clock, answers={RouteKey.CGV_THEATERS: cgv_answer(rows)})
    with pytest.raises(ApiError) as raised:
        CgvMoviesQuery(keyword="강남").fetch(lookup_with(transport, clock))
    assert (raised.value.status, raised.value.code) == (502, "UPSTREAM_BAD_RESPONSE")
    assert transport.keys == [RouteKey.CGV_THEATERS]


def test_cgv_timetable_of_a_theater_is_one_call_sorted_and_cut(
    transport: RecordingTransport, clock: ManualClock
) -> None:
    data = CgvTimetableQuery(theaterCode="0056", playDate="20260304", limit=3).fetch(
        lookup_with(transport, clock)
    )
    assert transport.keys == [RouteKey.CGV_TIMETABLE]
    assert [row["startTime"] for row in data["timetable"]] == ["09:30", "12:30", "15:05"]
    assert (data["playDate"], data["filterRelaxed"], data["resolvedTheater"]) == ("20260304", False, None)
    assert data["filters"] == {"theaterCode": "0056", "movieCode": None}


def test_cgv_timetable_sorts_by_start_then_theater_name(clock: ManualClock) -> None:
    def row(start: str, name: str) -> dict[str, Any]:
        return {"siteNo": "0056", "siteNm": name, "scnYmd": "20260304", "movNo": "1", "scnsrtTm": start}

    rows = [row("1800", "CGV 강남"), row("0930", "CGV 용산"), row("0930", "CGV 강남")]
    transport = RecordingTransport(clock, answers={RouteKey.CGV_TIMETABLE: cgv_answer(rows)})
    data = CgvTimetableQuery(theaterCode="0056").fetch(lookup_with(transport, clock))
    assert [(r["startTime"], r["theaterName"]) for r in data["timetable"]] == [
        ("09:30", "CGV 강남"),
        ("09:30", "CGV 용산"),
        ("18:00", "CGV 강남"),
    ]


def test_a_movie_in_the_site_timetable_costs_no_other_call(
    transport: RecordingTransport, clock: ManualClock
) -> None:
    data = CgvTimetableQuery(theaterCode="0056", movieCode="30000971").fetch(lookup_with(transport, clock))
    assert transport.keys == [RouteKey.CGV_TIMETABLE]
    assert {row["movieCode"] for row in data["timetable"]} == {"30000971"}


def test_a_movie_missing_from_the_site_timetable_is_asked_for_on_its_own(
    transport: RecordingTransport, clock: ManualClock
) -> None:
    data = CgvTimetableQuery(theaterCode="0056", movieCode="20000000").fetch(lookup_with(transport, clock))
    assert transport.keys == [RouteKey.CGV_TIMETABLE, RouteKey.CGV_TIMETABLE_MOVIE]
    assert transport.params_of(RouteKey.CGV_TIMETABLE_MOVIE)["movieCode"] == "20000000"
    assert data["timetable"] == []


def test_an_empty_site_timetable_asks_each_movie_of_that_theater(
    transport: RecordingTransport, clock: ManualClock
) -> None:
    data = CgvTimetableQuery(theaterCode="0211").fetch(
        lookup_with(transport, clock)
    )  # empty in the simulator
    movies = len([m for m in realistic_payload(RouteKey.CGV_MOVIES, {"siteNo": "0211"})["data"]])  # type: ignore[index]
    assert (
        transport.keys
        == [RouteKey.CGV_TIMETABLE, RouteKey.CGV_MOVIES] + [RouteKey.CGV_TIMETABLE_MOVIE] * movies
    )
    assert data["timetable"]
    assert {row["theaterCode"] for row in data["timetable"]} == {"0211"}
    assert len(transport.calls) > MAX_RELAY_CALLS_PER_LOOKUP  # direct calls cost no relay: not counted


def test_the_same_fallback_over_the_relay_stops_at_the_lookups_relay_calls_and_says_so(
    transport: RecordingTransport, clock: ManualClock
) -> None:
    """Issue 31: this lookup spent six relay ledger units; now at most the lookup's relay calls, and the
    caller is told to ask for one film rather than given a timetable cut short."""
    lookup = lookup_with(transport, clock, via_relay=True)
    with pytest.raises(ApiError) as raised:
        CgvTimetableQuery(theaterCode="0211", playDate="20260304").fetch(lookup)
    error = raised.value
    assert (error.status, error.code, error.message) == (429, "RELAY_QUOTA_EXCEEDED", RELAY_CALLS_SPENT)
    assert (error.retry_after, error_headers(error)) == (None, {"Cache-Control": "no-store"})
    assert len(transport.calls) == lookup.relay_calls == MAX_RELAY_CALLS_PER_LOOKUP
    assert transport.keys[:2] == [RouteKey.CGV_TIMETABLE, RouteKey.CGV_MOVIES]
    one_film = CgvTimetableQuery(theaterCode="0211", playDate="20260304", movieCode="30000985")
    one_film.fetch(lookup_with(transport, clock, via_relay=True))  # what the message says to do: 2 calls
    assert transport.keys[MAX_RELAY_CALLS_PER_LOOKUP:] == [
        RouteKey.CGV_TIMETABLE,
        RouteKey.CGV_TIMETABLE_MOVIE,
    ]


def test_without_a_theater_the_fallback_tries_five_theaters_gangnam_first(clock: ManualClock) -> None:
    empty = cgv_answer([])
    transport = RecordingTransport(
        clock, answers={RouteKey.CGV_TIMETABLE: empty, RouteKey.CGV_TIMETABLE_MOVIE: empty}
    )
    data = CgvTimetableQuery().fetch(lookup_with(transport, clock))
    assert data["timetable"] == []
    assert data["resolvedTheater"] == {"theaterCode": "0056", "theaterName": "강남", "regionCode": "01"}
    tried = [params["theaterCode"] for key, params, _ in transport.calls if key is RouteKey.CGV_MOVIES]
    assert tried == ["0056", "0001", "0013", "0074", "0211"]


def test_the_fallback_stops_at_the_lookups_budget(clock: ManualClock) -> None:
    empty = cgv_answer([])
    transport = RecordingTransport(
        clock, takes_ms=1_000, answers={RouteKey.CGV_TIMETABLE: empty, RouteKey.CGV_TIMETABLE_MOVIE: empty}
    )
    with pytest.raises(ApiError) as raised:
        CgvTimetableQuery().fetch(lookup_with(transport, clock))
    assert (raised.value.status, raised.value.code) == (504, "UPSTREAM_TIMEOUT")
    assert len(transport.calls) == 10  # one second each: the 10 s budget, then no further call


# --- one budget per request -------------------------------------------------------------------------


def test_composite_steps_share_one_budget(clock: ManualClock) -> None:
    transport = RecordingTransport(clock, takes_ms=4_000)
    CuProductsQuery(keyword="레쓰비").fetch(lookup_with(transport, clock, via_relay=True))

    assert [timeout for _, _, timeout in transport.calls] == [10_000, 6_000]


def test_no_budget_left_for_the_second_step_is_a_timeout_without_calling(clock: ManualClock) -> None:
    transport = RecordingTransport(clock, takes_ms=10_000)

    with pytest.raises(ApiError) as raised:
        CuProductsQuery(keyword="레쓰비").fetch(lookup_with(transport, clock, via_relay=True))

    assert (raised.value.status, raised.value.code) == (504, "UPSTREAM_TIMEOUT")
    assert transport.keys == [RouteKey.CU_PRIME]


def test_direct_gets_at_most_three_seconds_of_the_budget(
    transport: RecordingTransport, clock: ManualClock
) -> None:
    SevenElevenPagesQuery().fetch(lookup_with(transport, clock))
    assert transport.calls[0][2] == 3_000


# --- validation ---------------------------------------------------------------------------------------


def test_operation_params_use_the_catalogs_strict_models() -> None:
    assert operation_params(RouteKey.GS25_PRODUCTS, {"query": "콜라"}).model_dump() == {"query": "콜라"}
    with pytest.raises(InvalidParams):
        operation_params(RouteKey.GS25_PRODUCTS, {"query": "콜라", "extra": 1})
    with pytest.raises(InvalidParams) as raised:
        operation_params(RouteKey.DTRYX_MOVIES, {"brandCode": "indieart", "cinemaCode": "67"})
    assert [error["loc"] for error in raised.value.errors] == [("cinemaCode",)]
    assert all("input" not in error for error in raised.value.errors)


@pytest.mark.parametrize(
    ("model", "values"),
    [
        (Gs25StockQuery, {"lat": "37.5", "lon": "127"}),
        (OliveyoungStoresQuery, {"lat": "nan"}),
        (OliveyoungStoresQuery, {"keyword": "a\x00b"}),
        (CuProductsQuery, {"keyword": "   "}),
        (DtryxTimetableQuery, {"brandCode": "indieart", "cinemaCode": "000067", "playDate": "20260101"}),
        (DtryxTimetableQuery, {"brandCode": "indieart", "cinemaCode": "000067", "playDate": "2026-02-29"}),
        (DtryxTimetableQuery, {"brandCode": "indieart", "cinemaCode": "000067", "playDate": "1767225600"}),
        (OliveyoungStockQuery, {"productId": "88-00"}),
        (SevenElevenProductsQuery, {"keyword": "a\x85b"}),  # C1 control character
        (CuStoresQuery, {"lat": 37.5, "lon": 127.0, "keyword": "강\x9f남"}),
        (CgvMoviesQuery, {"theaterCode": "56"}),
        (CgvMoviesQuery, {"playDate": "2026-03-04"}),
        (CgvMoviesQuery, {"playDate": "20260230"}),
        (CgvTimetableQuery, {"movieCode": "3000098x"}),
        (CgvTimetableQuery, {"limit": "0"}),
        (CgvTheatersQuery, {"regionCode": "01&x"}),
    ],
)
def test_query_models_reject(model: type[BaseModel], values: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        model.model_validate(values)


def test_query_models_accept_and_trim() -> None:
    query = Gs25StockQuery.model_validate({"keyword": " 콜라 ", "lat": "37.5", "lon": "127"})
    assert (query.keyword, query.itemCode, query.lat) == ("콜라", None, 37.5)
    timetable = DtryxTimetableQuery.model_validate(
        {"brandCode": "indieart", "cinemaCode": "000067", "playDate": "2028-02-29"}
    )
    assert timetable.playDate == date(2028, 2, 29)


def test_every_group_is_reachable_through_the_relay(clock: ManualClock) -> None:
    transport = RecordingTransport(clock)
    lookup = lookup_with(transport, clock, via_relay=True)
    OliveyoungGoodsQuery(goodsNo="A000000165760").fetch(lookup)
    SevenElevenExhibitionsQuery().fetch(lookup)
    DtryxMoviesQuery(brandCode="indieart", cinemaCode="000067").fetch(lookup)
    CgvTheatersQuery().fetch(lookup)
    assert {group_of(key) for key in transport.keys} == set(RelayGroup)


def test_seven_products_past_the_search_window_names_the_callers_fields() -> None:
    SevenElevenProductsQuery(keyword="커피", page=100, size=100)  # startCount 9900: still inside
    with pytest.raises(ValidationError) as raised:
        SevenElevenProductsQuery(keyword="커피", page=1000, size=100)
    assert [error["loc"] for error in raised.value.errors()] == [("page",), ("size",)]


class Reached(Exception):
    """The operation built valid params for every step and made its first upstream call."""


class FirstCall:
    """A lookup that stops at the endpoint's first upstream call."""

    clock = staticmethod(lambda: NOW)

    def __call__(self, _key: RouteKey, _params: BaseModel) -> Any:
        raise Reached

    def data(self, _key: RouteKey, _params: BaseModel) -> Any:
        raise Reached

    def each(self, _calls: Mapping[str, Any], *, lookup_name: str) -> Any:
        raise Reached  # the members' first calls: every member has prepared (validated) its steps


TEXT = st.one_of(
    st.text(max_size=8),
    st.text(min_size=195, max_size=205),
    st.sampled_from(["a\x85b", "\x9f", " 콜라 ", "a\u2028b", "\ufeff", "\x00"]),
)
NUMBER = st.integers(min_value=-2, max_value=20_000)
COORDINATE = st.floats(min_value=-200, max_value=200)
CINEMA = st.sampled_from(
    ["000067", " 000067 ", "٠٠٠٠٦٧", "０００００６７", "00067"]
)  # Arabic-Indic, full-width
ENDPOINTS: QueryCases = [
    *query_fields(
        {
            "text": TEXT,
            "count": NUMBER,
            "coordinate": COORDINATE,
            "code": TEXT,
            "product": st.just("8800362322138"),
        }
    ),
    (
        DtryxMoviesQuery,
        {"brandCode": st.sampled_from(["indieart", " indieart", "Indieart"]), "cinemaCode": CINEMA},
    ),
]


@for_every_accepted_query(ENDPOINTS, max_examples=examples(150))
def test_what_the_query_accepts_the_operation_accepts(query: LookupQuery) -> None:
    """No query passes the API's checks and then fails the catalog's on a field the caller never sent."""
    with pytest.raises(Reached):
        query.fetch(FirstCall())  # type: ignore[arg-type]
