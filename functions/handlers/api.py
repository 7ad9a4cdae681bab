"""The lookup API (docs/design.md, "HTTP API"): one GET endpoint per lookup contract in
`functions.catalog.LOOKUPS`, on Powertools' resolver with its own validation (one annotated parameter
per field of the query model), documented at `GET /api/openapi.json` (`functions/handlers/openapi.py`).

Bad input is 400 `INVALID_INPUT` with field errors before any upstream call; answers are the one envelope and
never say which path served them; limited prefixes count against the daily quota first
(`functions/handlers/daily_quota.py`).
"""

from __future__ import annotations

from functions.handlers.init_collection import pause_for_init

pause_for_init()  # until INIT is done: everything INIT creates stays (functions/handlers/init_collection.py)

import inspect
import json
import re
import types
from collections.abc import Callable
from functools import cache, partial
from typing import Annotated, Any, Union, get_args, get_origin

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse, OpenAPIResponseHeader
from aws_lambda_powertools.shared.json_encoder import Encoder
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticSerializationError, to_json

from functions.catalog import LOOKUPS
from functions.catalog.contract import LookupQuery, description_of, retailer_of
from functions.core import ApiError, ErrorCode, LookupCancelled
from functions.core.errors import NOT_STORED, error_envelope, error_headers, field_errors
from functions.core.input_rules import broken_rules_message
from functions.core.model import SECOND_MS
from functions.core.quota import QuotaDecision
from functions.handlers import documented
from functions.handlers.composition import LOOKUP_FUNCTION, LookupFunction, prepare_at_init
from functions.handlers.daily_quota import rate_limit_headers
from functions.handlers.documented import error_responses
from functions.handlers.telemetry import (
    LogLookupEvents,
    count_error_answer,
    emit_metric,
    emit_snapshot_age,
    logger,
    report_unexpected_error,
)
from functions.services.lookup import Lookup
from functions.services.response_cache import Unshared, fetched

OPENAPI_PATH = "/api/openapi.json"
LAMBDA_SAFETY_MS = 500
"""Leave this much of the invocation's time to answer with an error instead of being killed."""
LOOKUP_EVENTS = LogLookupEvents()

app = APIGatewayHttpResolver(
    enable_validation=True,
    # Korean names stay readable (and shorter) on the wire instead of \uXXXX escapes.
    serializer=partial(json.dumps, ensure_ascii=False, separators=(",", ":"), cls=Encoder),
)


# --- answers -------------------------------------------------------------------------------------


def _error(error: ApiError) -> Response[str]:
    count_error_answer(error.code)  # every error answer is made here (the daily limit's 429 too)
    return Response(
        status_code=error.status,
        content_type=content_types.APPLICATION_JSON,
        body=to_json(error_envelope(error)).decode(),
        headers=error_headers(error),
    )


def _lookup() -> Lookup:
    function = LOOKUP_FUNCTION.get()
    budget_ms = function.budget_ms
    context: LambdaContext | None = app.lambda_context
    if context is not None:
        budget_ms = min(budget_ms, context.get_remaining_time_in_millis() - LAMBDA_SAFETY_MS)
    upstreams = function.upstreams
    return Lookup(
        router=function.router,
        direct=upstreams.direct,
        relays=upstreams.relays,
        clock=upstreams.clock,
        budget_ms=budget_ms,
        events=LOOKUP_EVENTS,
    )


def _answer(query: LookupQuery) -> Response[str]:
    """The answer from the container's cache while it is fresh, else fetched (and stored when it succeeds and
    is complete); its `Cache-Control` says how long it stays fresh from now, or `no-store` for an incomplete
    one (a comparison with a retailer in `errors`)."""

    def fetch() -> str | Unshared:
        # Serialized here, once, by pydantic-core, without validating `data` against its answer type (a
        # TypedDict the normalizer is checked against by mypy; the tests check every endpoint's real `data`
        # against the document): returned as a model, Powertools would validate it again and serialize it
        # twice over.
        data = query.fetch(_lookup())
        try:
            body = to_json({"success": True, "data": data}).decode()
        except PydanticSerializationError:
            # Upstream text is made valid as it is decoded (functions/adapters/http.py): an answer that still
            # cannot be written is the upstream's fault, not a failure of this function.
            raise ApiError(ErrorCode.UPSTREAM_BAD_RESPONSE) from None
        return body if query.answer_reusable(data) else Unshared(body)

    freshness = query.answer_freshness()
    answers = LOOKUP_FUNCTION.get().answers
    if answers is None:
        cached = fetched(fetch())
    else:
        # Validated, defaults applied: `?page=1` and no `page` are one entry.
        key = (query.name, query.model_dump_json())
        cached = answers.get_or_fetch(key, freshness.max_age * SECOND_MS, fetch)
        outcome = "hit" if cached.hit else "miss"
        emit_metric("ResponseCache", 1, Outcome=outcome)
        # Which lookup: the saved query "answer cache per lookup" reads this line (no dimension per lookup).
        logger.info("answer cache", extra={"lookup": query.name, "outcome": outcome})
    headers = (
        {"Cache-Control": freshness.cache_control(age_s=cached.age_ms // SECOND_MS)}
        if cached.reusable
        else dict(NOT_STORED)
    )
    return Response(
        status_code=200, content_type=content_types.APPLICATION_JSON, body=cached.body, headers=headers
    )


# --- the lookup endpoints, derived from the query models ------------------------------------------

_PATH_PARAMETER = re.compile(r"{(\w+)}")


def path_parameters(path: str) -> list[str]:
    """The path's parameters, in order: `["goodsNo"]` for `/api/oliveyoung/products/{goodsNo}`."""
    return _PATH_PARAMETER.findall(path)


def operation_id(query: type[LookupQuery]) -> str:
    """The query's name in camelCase: `cu_products` -> `cuProducts`."""
    first, *rest = query.name.split("_")
    return first + "".join(part.title() for part in rest)


def _parameter(name: str, field: FieldInfo, *, in_path: bool) -> inspect.Parameter:
    """One field of a query model as a Powertools parameter: its type with every constraint, where it is sent,
    its description and default. An optional field is absent or a value, never null."""
    annotation = field.annotation
    if not field.is_required() and get_origin(annotation) in (Union, types.UnionType):
        given = [arm for arm in get_args(annotation) if arm is not type(None)]
        annotation = given[0] if len(given) == 1 else annotation
    where = Path if in_path else Query
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else None
    return inspect.Parameter(
        name,
        inspect.Parameter.KEYWORD_ONLY,
        annotation=Annotated[
            (annotation, *field.metadata, where(description=field.description, json_schema_extra=extra))
        ],
        default=inspect.Parameter.empty
        if field.is_required()
        else field.get_default(call_default_factory=True),
    )


def _handler(query: type[LookupQuery]) -> Callable[..., Response[str]]:
    """The endpoint's function, with the signature Powertools validates and documents; the query model then
    applies its own rules across parameters."""
    in_path = set(path_parameters(query.path))

    def handler(**values: Any) -> Response[str]:
        try:
            validated = query.model_validate(values)
        except ValidationError as error:
            location = "path" if in_path else "query"
            errors = error.errors(include_url=False, include_input=False)
            message = broken_rules_message(query.cross_rules, errors)
            raise ApiError(ErrorCode.INVALID_INPUT, message, fields=field_errors(location, errors)) from None
        return _answer(validated)

    handler.__name__ = handler.__qualname__ = query.name
    # Not `Annotated[query, Query()]`: Powertools 3.37 documents a model's fields by basic type only, no path ones.
    handler.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [_parameter(name, field, in_path=name in in_path) for name, field in query.model_fields.items()]
    )
    return handler


def _responses(query: type[LookupQuery]) -> dict[int, OpenAPIResponse]:
    """Its 200 (`data` is its answer type: `functions/handlers/openapi.py`) and exactly its contract's errors."""
    notes = "".join(f". {note}" for note in query.freshness_notes)
    fresh: OpenAPIResponseHeader = {
        "schema": {"type": "string"},
        "description": f"`{query.freshness.cache_control()}` (max-age less the answer's age when it was kept "
        f"in the function's cache){notes}",
    }
    ok: OpenAPIResponse = {"description": "The normalized data", "headers": {"Cache-Control": fresh}}
    return {200: ok, **error_responses(query.errors(), fields=True, headers=documented.NOT_STORED)}


for _query in LOOKUPS:
    app.get(
        _query.path.replace("{", "<").replace("}", ">"),
        summary=_query.summary,
        description=description_of(_query),
        tags=[retailer_of(_query)],
        operation_id=operation_id(_query),
        responses=_responses(_query),
    )(_handler(_query))


# --- OpenAPI -------------------------------------------------------------------------------------


@cache
def openapi_json(limited_prefixes: tuple[str, ...]) -> str:
    """The document, where `limited_prefixes` count against the daily limit. Built on the first request for
    it: the document's schemas would cost every INIT."""
    from functions.handlers.openapi import openapi_document

    document = openapi_document(app, limited_prefixes)
    return json.dumps(document, ensure_ascii=False, separators=(",", ":"))


@app.get(OPENAPI_PATH, include_in_schema=False)
def openapi_answer() -> Response[str]:
    limited = LOOKUP_FUNCTION.get().limited_lookups  # the live settings: none with the limit off
    # It changes only with a deploy: a few minutes of reuse are harmless.
    headers = {"Cache-Control": "public, max-age=300"}
    return Response(
        status_code=200,
        content_type=content_types.APPLICATION_JSON,
        body=openapi_json(() if limited is None else limited.prefixes),
        headers=headers,
    )


# --- errors ------------------------------------------------------------------------------------


def invalid_request(error: RequestValidationError) -> Response[str]:
    # Powertools' own validation of the parameters: each error's `loc` is (location, name).
    fields = [
        field
        for item in error.errors()
        for field in field_errors(str(item["loc"][0]), [{**item, "loc": item["loc"][1:]}])
    ]
    return _error(ApiError(ErrorCode.INVALID_INPUT, fields=fields))


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
app.exception_handler(RequestValidationError)(invalid_request)
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
    # The router starts the background snapshot refresh (single-flight) when a lookup finds it stale.
    function = LOOKUP_FUNCTION.get()
    emit_snapshot_age(function.snapshots)
    quota = _daily_quota(function, event)
    if quota is not None and not quota.allowed:
        return _daily_limit_exceeded(quota)
    response: dict[str, Any] = app.resolve(event, context)
    headers = response.setdefault("headers", {})
    # Every answer of a limited endpoint but a cacheable one: a cache would hand one client's count to others.
    if quota is not None and not headers.get("Cache-Control", "").startswith("public"):
        headers.update(rate_limit_headers(quota))
    return response


def _daily_quota(function: LookupFunction, event: dict[str, Any]) -> QuotaDecision | None:
    """Counts the request against the daily quota (before any validation or upstream call); None: not limited."""
    limited = function.limited_lookups
    if limited is None:
        return None
    upstreams = function.upstreams
    return limited.check(event, secrets=upstreams.secret_source.get, now=upstreams.clock())


def _daily_limit_exceeded(quota: QuotaDecision) -> dict[str, Any]:
    """The 429 as every error is answered, as API Gateway (payload 2.0) expects it from the function."""
    answer = _error(ApiError(ErrorCode.DAILY_RATE_LIMIT_EXCEEDED, retry_after=quota.retry_after_s))
    headers = {"Content-Type": content_types.APPLICATION_JSON, **rate_limit_headers(quota), **answer.headers}
    return {
        "statusCode": answer.status_code,
        "body": answer.body,
        "isBase64Encoded": False,
        "headers": headers,
        "cookies": [],
    }


prepare_at_init(LOOKUP_FUNCTION)
