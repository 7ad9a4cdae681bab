"""Every body the Lambda sends to a relay passes that relay's input rules: all 24 operations, through the real
lookups, router and relay transport, with the request bytes checked as the relay receives them."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import date
from typing import Any

import httpx
import pytest
from hypothesis import strategies as st
from pydantic import ValidationError

from functions.adapters.http import new_http_client
from functions.adapters.relay import RelayCredentials, RelayEndpoint, RelayTransport
from functions.catalog import CATALOG, LOOKUPS
from functions.catalog.cgv import CgvMoviesQuery, CgvTheatersQuery, CgvTimetableQuery
from functions.catalog.contract import InvalidParams, LookupQuery
from functions.catalog.cu import CuProductsQuery, CuStoresQuery
from functions.catalog.dtryx import DtryxMoviesQuery, DtryxPlayDatesQuery, DtryxTimetableQuery
from functions.catalog.gs25 import Gs25ProductsQuery, Gs25StockQuery
from functions.catalog.oliveyoung import (
    OliveyoungGoodsQuery,
    OliveyoungProductsQuery,
    OliveyoungStockQuery,
    OliveyoungStoresQuery,
)
from functions.catalog.seveneleven import (
    SevenElevenExhibitionsQuery,
    SevenElevenIssuesQuery,
    SevenElevenPagesQuery,
    SevenElevenPopwordsQuery,
    SevenElevenProductsQuery,
    SevenElevenStockQuery,
    SevenElevenStoresQuery,
)
from functions.core import ApiError, RelayGroup, RouteKey
from functions.services.lookup import RELAY_CALLS_SPENT, Lookup
from functions.services.routing import Router
from relay.inputs import RelayInputRejected, read_relay_input
from sandbox.simulator.payloads import realistic_payload
from sandbox.simulator.routes import relay_route
from tests.support.catalog_fixtures import ENDPOINTS, Endpoint
from tests.support.core_fakes import RecordingEvents, RecordingRelayEvents
from tests.support.examples import examples
from tests.support.queries import for_every_accepted_query, query_fields

NOW = 1_767_225_600_000
CREDENTIALS = {
    RelayGroup.OLIVEYOUNG: RelayCredentials("oy-token"),
    RelayGroup.CONVENIENCE: RelayCredentials("conv-token", api_key="gs25-api-key"),  # gs25-stock's apiKey
    RelayGroup.DTRYX: RelayCredentials("dtryx-token"),
    RelayGroup.CGV: RelayCredentials("dtryx-token"),
}


class StrictRelays:
    """The relays as a MockTransport: each body must pass the relay's rules, else the test fails."""

    def __init__(self) -> None:
        self.bodies: list[tuple[RouteKey, dict[str, Any]]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        group, _, operation = request.url.path.removeprefix("/v1/").partition("/")
        key = relay_route(RelayGroup(group), operation)
        assert key is not None, request.url
        try:
            body = read_relay_input(key, request.content)
        except RelayInputRejected:
            pytest.fail(f"the {key} relay refuses the Lambda's body {request.content.decode()}")
        self.bodies.append((key, body))
        return httpx.Response(200, json=realistic_payload(key, body))

    def lookup(self) -> Lookup:
        """A lookup that always takes the relay (legacy order: no verdict store, every relay configured)."""
        relays = RelayTransport(
            new_http_client(httpx.MockTransport(self)),
            {
                group: RelayEndpoint.parse(group, "https://relay.example", creds)
                for group, creds in CREDENTIALS.items()
            },
            clock=lambda: NOW,
            events=RecordingRelayEvents(),
        )
        router = Router(
            clock=lambda: NOW,
            snapshots=None,
            reporter=None,
            relay_configured=lambda _g: True,
            events=RecordingEvents(),
        )
        return Lookup(router=router, direct=relays, relays=relays, clock=lambda: NOW, budget_ms=10_000)

    def keys(self) -> set[RouteKey]:
        return {key for key, _ in self.bodies}


Operation = Callable[[Lookup], object]


def query(model: type[LookupQuery], **values: Any) -> Operation:
    return lambda lookup: model.model_validate(values).fetch(lookup)


def within_the_relay_calls(operation: Operation) -> Operation:
    """A lookup that may stop at the relay calls one lookup may make (429, `MAX_RELAY_CALLS_PER_LOOKUP`): the
    bodies it sent before are the ones to check."""

    def run(lookup: Lookup) -> object:
        try:
            return operation(lookup)
        except ApiError as error:
            if error.message != RELAY_CALLS_SPENT:
                raise
            return None

    return run


def endpoint_query(endpoint: Endpoint) -> Operation:
    """The fixture's valid query of `endpoint`, its path parameters included, as its lookup runs it."""
    for model in LOOKUPS:
        found = re.fullmatch(re.sub(r"{(\w+)}", r"(?P<\1>[^/]+)", model.path), endpoint.path)
        if found:
            return query(model, **endpoint.query, **found.groupdict())
    raise AssertionError(f"no lookup serves {endpoint.path}")


SEVEN_CATALOG = (
    SevenElevenPagesQuery,
    SevenElevenIssuesQuery,
    SevenElevenExhibitionsQuery,
)
SEOUL = {"lat": 37.5635, "lon": 126.9839}
LONG_TEXT = "😀" * 100  # 200 UTF-16 code units: the most any search field may hold
VARIANTS: dict[str, Operation] = {
    **{endpoint.path: endpoint_query(endpoint) for endpoint in ENDPOINTS},
    "oy-stores-defaults": query(OliveyoungStoresQuery),
    "oy-stores-all": query(OliveyoungStoresQuery, keyword="명동", lat=1e-5, lon=-180, page=1000),
    "oy-products": query(OliveyoungProductsQuery, keyword="립밤"),
    "oy-products-all": query(OliveyoungProductsQuery, keyword=LONG_TEXT, page=1000, size=100),
    "oy-goods-info": query(OliveyoungGoodsQuery, goodsNo="A000000165760"),
    "oy-stock": query(OliveyoungStockQuery, productId="8800362322138"),
    "oy-stock-all": query(
        OliveyoungStockQuery,
        productId="8800362322138",
        keyword="DF23",
        lat=-90,
        lon=180,
        page=3,
    ),
    "cu-products": query(CuProductsQuery, keyword="레쓰비"),
    "cu-products-all": query(CuProductsQuery, keyword=LONG_TEXT, offset=9999, limit=100),
    "cu-stores": query(CuStoresQuery, **SEOUL),
    "cu-stores-all": query(CuStoresQuery, lat=1e-7, lon=-1e-5, keyword="강남", itemCd="8801056038861"),
    "gs25-products": query(Gs25ProductsQuery, keyword="코카콜라"),
    "gs25-stock-keyword": query(Gs25StockQuery, keyword="코카콜라", **SEOUL),
    "gs25-stock-item-near-zero": query(Gs25StockQuery, itemCode="8801094082604", lat=1e-5, lon=-1e-5),
    "gs25-stock-both-at-the-edges": query(
        Gs25StockQuery, itemCode="8801094082604", keyword=LONG_TEXT, lat=-90, lon=180
    ),
    "seven-products": query(SevenElevenProductsQuery, keyword="커피"),
    "seven-products-deep": query(SevenElevenProductsQuery, keyword="커피", page=500, size=20),
    "seven-stores": query(SevenElevenStoresQuery, keyword="강남", limit=100),
    "seven-popwords-default": query(SevenElevenPopwordsQuery),
    "seven-popwords": query(SevenElevenPopwordsQuery, label="home"),
    "seven-stock": query(SevenElevenStockQuery, itemCd="8801056018979", storeCd="64676"),
    **{f"seven-catalog-{listing.key}": query(listing) for listing in SEVEN_CATALOG},
    "dtryx-movies": query(DtryxMoviesQuery, brandCode="indieart", cinemaCode="000067"),
    "dtryx-play-dates": query(DtryxPlayDatesQuery, brandCode="indieart", cinemaCode="000067"),
    "dtryx-timetable": query(
        DtryxTimetableQuery,
        brandCode="indieart",
        cinemaCode="000067",
        playDate=date(2028, 2, 29),
    ),
    "cgv-theaters": query(CgvTheatersQuery),
    "cgv-theaters-all": query(CgvTheatersQuery, keyword="CGV 강남 근처", regionCode="01", limit=100),
    "cgv-movies-default-theater": query(CgvMoviesQuery),
    "cgv-movies-all": query(CgvMoviesQuery, theaterCode="0056", playDate="20280229", keyword="강남"),
    "cgv-movies-by-keyword": query(CgvMoviesQuery, keyword="안산"),
    "cgv-timetable": query(CgvTimetableQuery, theaterCode="0056"),
    "cgv-timetable-movie-not-in-the-site-rows": query(
        CgvTimetableQuery, theaterCode="0056", movieCode="1234567890123456", limit=1
    ),
    # 안산's site timetable is empty in the simulator: every movie's timetable there instead.
    "cgv-timetable-fallback": within_the_relay_calls(
        query(CgvTimetableQuery, theaterCode="0211", playDate="20280229")
    ),
}


def test_the_variants_reach_every_operation() -> None:
    relays = StrictRelays()
    for run in VARIANTS.values():
        run(relays.lookup())
    assert relays.keys() == set(RouteKey)
    assert {key for key, body in relays.bodies if "apiKey" in body} == {RouteKey.GS25_STOCK}


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_relay_accepts_every_lookup_body(variant: str) -> None:
    relays = StrictRelays()
    VARIANTS[variant](relays.lookup())
    assert relays.bodies


@pytest.mark.parametrize("key", list(RouteKey))
def test_the_relay_accepts_every_probe_body(key: RouteKey) -> None:
    relays = StrictRelays()
    spec = CATALOG[key]
    relays.lookup()(key, spec.probe_params(NOW))
    assert relays.keys() == {key}


TEXT = st.text(max_size=210)
COORDINATE = st.one_of(st.floats(-90, 90), st.sampled_from([0.0, -0.0, 1e-9, -1e-5, 90.0, -180.0]))
COUNT = st.integers(min_value=0, max_value=10_000)
CODE = st.from_regex(r"[A-Za-z0-9_-]{1,41}", fullmatch=True)
QUERIES = query_fields(
    {"text": TEXT, "count": COUNT, "coordinate": COORDINATE, "code": CODE, "product": CODE}
)


@for_every_accepted_query(QUERIES, max_examples=examples(60))
def test_whatever_the_api_accepts_the_relay_accepts(query: LookupQuery) -> None:
    relays = StrictRelays()
    try:
        within_the_relay_calls(query.fetch)(relays.lookup())
    except InvalidParams:
        return  # also a 400 before any call
    assert relays.bodies
    assert all(json.dumps(body) for _, body in relays.bodies)


@pytest.mark.parametrize("text", ["😀" * 101, "a" * 199 + "😀"])
def test_text_a_relay_would_refuse_is_refused_before_any_call(text: str) -> None:
    """The relays count UTF-16 code units (200 at most): a character beyond the BMP counts twice."""
    with pytest.raises(ValidationError):
        CuProductsQuery(keyword=text)
    with pytest.raises(ValidationError):
        CATALOG[RouteKey.CU_STOCK].params.model_validate({"searchWord": text})
