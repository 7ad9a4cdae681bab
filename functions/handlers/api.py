"""The lookup API (docs/design.md, "HTTP API"): 21 GET endpoints over the 24 route keys, documented at
`GET /api/openapi.json` (`functions/handlers/openapi.py`, from the table `ENDPOINTS` below, from which the
routes are registered too).

Query parameters (or an endpoint's path parameters) are validated with the endpoints' query models
(`functions.services.queries`); bad input answers 400 `INVALID_INPUT` with the field errors before any upstream
call. Each endpoint's query fetches its data through one `Lookup`, whose every upstream call goes through the
router. Responses are `{"success": true, "data": ...}` or `{"success": false, "error": {...}}` and never say
which path served them: routing shows up in logs and metrics only. Before any of that, lookups under the
limited prefixes count against the per-client daily rate limit (`functions.handlers.daily_quota`): past it, 429
`DAILY_RATE_LIMIT_EXCEEDED`; every answer of a limited endpoint carries the `X-RateLimit-*` headers.
"""

from __future__ import annotations

from functions.handlers.init_collection import pause_for_init

pause_for_init()  # until INIT is done: everything INIT creates stays (functions/handlers/init_collection.py)

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, partial
from typing import Any, Literal
from urllib.parse import parse_qs

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.shared.json_encoder import Encoder
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import ValidationError
from pydantic_core import to_json

from functions.core import ApiError, ErrorCode, LookupCancelled
from functions.core.errors import field_errors
from functions.core.input_rules import broken_rules_message
from functions.core.quota import QuotaDecision
from functions.handlers.daily_quota import rate_limit_headers
from functions.handlers.lookup_endpoint import LookupEndpoint, path_parameters
from functions.handlers.settings import ApiSettings
from functions.handlers.telemetry import (
    count_error_answer,
    emit_snapshot_age,
    logger,
    one_metrics_document,
    report_unexpected_error,
)
from functions.handlers.wiring import Container, get_container, prepare_container_at_init
from functions.services import queries
from functions.services.lookup import Lookup

OPENAPI_PATH = "/api/openapi.json"
LAMBDA_SAFETY_MS = 500
"""Leave this much of the invocation's time to answer with an error instead of being killed."""

app = APIGatewayHttpResolver(
    # Korean names stay readable (and shorter) on the wire instead of \uXXXX escapes.
    serializer=partial(json.dumps, ensure_ascii=False, separators=(",", ":"), cls=Encoder),
)


# --- response envelope ---------------------------------------------------------------------------


def _error(error: ApiError, headers: Mapping[str, str] | None = None) -> Response[str]:
    return Response(
        status_code=error.status,
        content_type=content_types.APPLICATION_JSON,
        body=_error_json(error),
        headers={**error.headers(), **(headers or {})},
    )


def _error_json(error: ApiError) -> str:
    count_error_answer(error.code)  # every error answer's body is made here
    return to_json(error.envelope()).decode()


# --- the lookup of one request -------------------------------------------------------------------


def _lookup() -> Lookup:
    container = get_container(ApiSettings)
    budget_ms = container.lookup_budget_ms
    context: LambdaContext | None = app.lambda_context
    if context is not None:
        budget_ms = min(budget_ms, context.get_remaining_time_in_millis() - LAMBDA_SAFETY_MS)
    return Lookup(
        router=container.router,
        direct=container.direct,
        relays=container.relays,
        clock=container.clock,
        budget_ms=budget_ms,
    )


def _answer(query: queries.LookupQuery) -> Response[str]:
    # Serialized here, once, by pydantic-core: the bytes an envelope model's `model_dump_json` gives, without
    # validating `data` (any dict: that checks nothing; the tests check each endpoint's real `data` against the
    # document), 10.6 → 8.2 µs for a 2.7 KB answer. Returned as a model, Powertools would validate it again and
    # serialize it twice over; that was about a tenth of a lookup's overhead.
    body = to_json({"success": True, "data": query.fetch(_lookup())}).decode()
    return Response(status_code=200, content_type=content_types.APPLICATION_JSON, body=body)


# --- the lookup endpoints ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One GET lookup endpoint: the rest of its registration is derived from this row."""

    name: str
    """Its function's name; the OpenAPI operationId is this name in camelCase, so it must not change."""
    path: str
    """OpenAPI form: `/api/oliveyoung/products/{goodsNo}`."""
    query: type[queries.LookupQuery]
    """Validates the caller's parameters (from the query string, or the path's parameters) and fetches."""
    data: str
    """The model of its 200 answer's `data` in `functions/handlers/lookup_data.py`, by name: only the OpenAPI
    document loads those models."""
    summary: str


ENDPOINTS: dict[str, tuple[Endpoint, ...]] = {
    "Olive Young": (
        Endpoint(
            "oliveyoung_stores",
            "/api/oliveyoung/stores",
            queries.OliveyoungStoresQuery,
            "OliveyoungStores",
            "Olive Young stores",
        ),
        Endpoint(
            "oliveyoung_products",
            "/api/oliveyoung/products",
            queries.OliveyoungProductsQuery,
            "OliveyoungProducts",
            "Olive Young product search",
        ),
        Endpoint(
            "oliveyoung_goods_info",
            "/api/oliveyoung/products/{goodsNo}",
            queries.OliveyoungGoodsQuery,
            "OliveyoungGoods",
            "Olive Young goods number -> master goods number (the `productId` of stock lookups)",
        ),
        Endpoint(
            "oliveyoung_stock",
            "/api/oliveyoung/stock",
            queries.OliveyoungStockQuery,
            "OliveyoungStock",
            "Olive Young stock per store",
        ),
    ),
    "CU": (
        Endpoint(
            "cu_products",
            "/api/cu/products",
            queries.CuProductsQuery,
            "CuProducts",
            "CU product search",
        ),
        Endpoint(
            "cu_stores",
            "/api/cu/stores",
            queries.CuStoresQuery,
            "CuStores",
            "CU stores near a point (with one item's stock)",
        ),
    ),
    "GS25": (
        Endpoint(
            "gs25_products",
            "/api/gs25/products",
            queries.Gs25ProductsQuery,
            "Gs25Products",
            "GS25 product search",
        ),
        Endpoint(
            "gs25_stock",
            "/api/gs25/stock",
            queries.Gs25StockQuery,
            "Gs25Stock",
            "GS25 stock per store near a point (`itemCode` or `keyword` required)",
        ),
    ),
    "7-Eleven": (
        Endpoint(
            "seveneleven_products",
            "/api/seveneleven/products",
            queries.SevenElevenProductsQuery,
            "SevenElevenProducts",
            "7-Eleven product search",
        ),
        Endpoint(
            "seveneleven_stores",
            "/api/seveneleven/stores",
            queries.SevenElevenStoresQuery,
            "SevenElevenStores",
            "7-Eleven store search",
        ),
        Endpoint(
            "seveneleven_popwords",
            "/api/seveneleven/popwords",
            queries.SevenElevenPopwordsQuery,
            "SevenElevenPopwords",
            "7-Eleven popular keywords",
        ),
        Endpoint(
            "seveneleven_stock",
            "/api/seveneleven/stock",
            queries.SevenElevenStockQuery,
            "SevenElevenStock",
            "7-Eleven stock of one item in one store",
        ),
        Endpoint(
            "seveneleven_pages",
            "/api/seveneleven/catalog/pages",
            queries.SevenElevenPagesQuery,
            "SevenElevenCatalogProducts",
            "7-Eleven product pages",
        ),
        Endpoint(
            "seveneleven_issues",
            "/api/seveneleven/catalog/issues",
            queries.SevenElevenIssuesQuery,
            "SevenElevenCatalogProducts",
            "7-Eleven featured products",
        ),
        Endpoint(
            "seveneleven_exhibitions",
            "/api/seveneleven/catalog/exhibitions",
            queries.SevenElevenExhibitionsQuery,
            "SevenElevenExhibitions",
            "7-Eleven promotions",
        ),
    ),
    "Dtryx cinemas": (
        Endpoint(
            "dtryx_movies",
            "/api/dtryx/movies",
            queries.DtryxMoviesQuery,
            "DtryxMovies",
            "Films now showing at a cinema",
        ),
        Endpoint(
            "dtryx_play_dates",
            "/api/dtryx/play-dates",
            queries.DtryxPlayDatesQuery,
            "DtryxPlayDates",
            "Bookable screening dates",
        ),
        Endpoint(
            "dtryx_timetable",
            "/api/dtryx/timetable",
            queries.DtryxTimetableQuery,
            "DtryxTimetable",
            "Showtimes and seats for one date",
        ),
    ),
    "CGV": (
        Endpoint(
            "cgv_theaters", "/api/cgv/theaters", queries.CgvTheatersQuery, "CgvTheaters", "CGV theaters"
        ),
        Endpoint(
            "cgv_movies",
            "/api/cgv/movies",
            queries.CgvMoviesQuery,
            "CgvMovies",
            "Films showing at a CGV theater",
        ),
        Endpoint(
            "cgv_timetable",
            "/api/cgv/timetable",
            queries.CgvTimetableQuery,
            "CgvTimetable",
            "CGV screenings and seats for one date",
        ),
    ),
}
"""Every lookup endpoint by its OpenAPI tag, in the document's order."""


def _query_values(event: Mapping[str, Any]) -> dict[str, str]:
    """The query string's values as Powertools' validation reads them: API Gateway joins a repeated key's values
    with commas, and of those only the first counts; any other value is whole, commas and all."""
    values: dict[str, str] = event.get("queryStringParameters") or {}
    if not any("," in value for value in values.values()):
        return values
    repeated = {
        name
        for name, found in parse_qs(event.get("rawQueryString") or "", keep_blank_values=True).items()
        if len(found) > 1
    }
    return {name: value.partition(",")[0] if name in repeated else value for name, value in values.items()}


def _handler(endpoint: Endpoint) -> Callable[..., Response[str]]:
    """The endpoint's function: validates the query model itself, from the values Powertools' validation of the
    signature the OpenAPI document describes (`LookupEndpoint.arguments`) would give it (the path's parameters,
    or `_query_values`): its validation middleware re-derives every parameter from the signature on each
    request, about three quarters of a bare route's cost. tests/unit/handlers/test_query_validation.py holds
    the two to the same answers."""
    query = endpoint.query
    location: Literal["query", "path"] = "path" if path_parameters(endpoint.path) else "query"

    def handler(**path_values: str) -> Response[str]:
        values = path_values if location == "path" else _query_values(app.current_event.raw_event)
        try:
            validated = query.model_validate(values)
        except ValidationError as error:
            errors = error.errors(include_url=False, include_input=False)
            message = broken_rules_message(query.cross_rules, errors)
            raise ApiError(ErrorCode.INVALID_INPUT, message, fields=field_errors(location, errors)) from None
        return _answer(validated)

    handler.__name__ = handler.__qualname__ = endpoint.name
    return handler


def _register(tag: str, endpoint: Endpoint) -> LookupEndpoint:
    handler = _handler(endpoint)
    app.get(endpoint.path.replace("{", "<").replace("}", ">"), include_in_schema=False)(handler)
    return LookupEndpoint(
        path=endpoint.path,
        handler=handler,
        query=endpoint.query,
        summary=endpoint.summary,
        tag=tag,
        data=endpoint.data,
    )


LOOKUP_ENDPOINTS: tuple[LookupEndpoint, ...] = tuple(
    _register(tag, endpoint) for tag, endpoints in ENDPOINTS.items() for endpoint in endpoints
)
"""Every lookup endpoint as registered: what the OpenAPI document describes."""


# --- OpenAPI -----------------------------------------------------------------------------------


@cache
def _openapi_document() -> str:
    # Built on the first request for it: importing the builder and the data models would cost every INIT.
    from functions.handlers.openapi import openapi_document

    return json.dumps(openapi_document(LOOKUP_ENDPOINTS), ensure_ascii=False, separators=(",", ":"))


@app.get(OPENAPI_PATH, include_in_schema=False)
def openapi_json() -> Response[str]:
    return Response(status_code=200, content_type=content_types.APPLICATION_JSON, body=_openapi_document())


# --- errors ------------------------------------------------------------------------------------


def api_error(error: ApiError) -> Response[str]:
    return _error(error)


def lookup_cancelled(_: LookupCancelled) -> Response[str]:
    # API Gateway callers cannot cancel; a cancelled lookup ran out of time, so answer as a timeout.
    return _error(ApiError(ErrorCode.UPSTREAM_TIMEOUT))


def not_found(_: NotFoundError) -> Response[str]:
    return _error(ApiError(ErrorCode.NOT_FOUND))


def unexpected_error(error: Exception) -> Response[str]:
    report_unexpected_error(error)
    return _error(ApiError(ErrorCode.INTERNAL_ERROR))


# Registered by call: Powertools' decorator is untyped, and mypy --strict would lose these functions' types.
app.exception_handler(ApiError)(api_error)
app.exception_handler(LookupCancelled)(lookup_cancelled)
app.not_found(not_found)
app.exception_handler(Exception)(unexpected_error)


# --- entry point -------------------------------------------------------------------------------


@logger.inject_lambda_context(clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    # API Gateway's request id, as `correlation_paths.API_GATEWAY_HTTP` would find it, without evaluating
    # JMESPath on every lookup.
    logger.set_correlation_id((event.get("requestContext") or {}).get("requestId"))
    with one_metrics_document():
        return _handle(event, context)


def _handle(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    # The router starts the background snapshot refresh (single-flight) when a lookup finds it stale.
    container = get_container(ApiSettings)
    emit_snapshot_age(container.snapshots)
    quota = _daily_quota(container, event)
    if quota is not None and not quota.allowed:
        return _daily_limit_exceeded(quota)
    response: dict[str, Any] = app.resolve(event, context)
    if quota is not None:  # every answer of a limited endpoint, errors too
        response.setdefault("headers", {}).update(rate_limit_headers(quota))
    return response


def _daily_quota(container: Container, event: dict[str, Any]) -> QuotaDecision | None:
    """Counts the request against the daily quota (before any validation or upstream call); None: not limited."""
    limited = container.limited_lookups
    if limited is None:
        return None
    return limited.check(event, secrets=container.secret_source.get, now=container.clock())


def _daily_limit_exceeded(quota: QuotaDecision) -> dict[str, Any]:
    """The 429 in the API's error envelope, as API Gateway (payload 2.0) expects it from the function."""
    error = ApiError(ErrorCode.DAILY_RATE_LIMIT_EXCEEDED, retry_after=quota.retry_after_s)
    headers = {"Content-Type": content_types.APPLICATION_JSON, **rate_limit_headers(quota), **error.headers()}
    body = _error_json(error)
    return {
        "statusCode": error.status,
        "body": body,
        "isBase64Encoded": False,
        "headers": headers,
        "cookies": [],
    }


prepare_container_at_init(ApiSettings)
