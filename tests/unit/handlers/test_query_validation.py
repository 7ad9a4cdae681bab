"""The lookup endpoints validate their input exactly as Powertools' OpenAPI validation of their documented
signatures does: the same query model built from the same values, or the same 400 field errors.

The reference here is a Powertools resolver with `enable_validation=True` and each endpoint's documented
signature (its query model from the query string, or its path parameters), as the API registered them before it
validated the models itself; both sides answer with the validated model, so any difference in what passes, what
it becomes or which errors a caller sees fails a case.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock
from urllib.parse import quote, urlencode

import pytest
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from pydantic import BaseModel

from functions.handlers import api
from functions.handlers.lookup_endpoint import LookupEndpoint
from sandbox.gateway import Route, http_api_event, match_route
from tests.support.endpoints import ENDPOINTS

ODD_VALUES = (
    "",
    " ",
    "a,b",
    "  립밤  ",
    "0",
    "-1",
    "1.5",
    "37.5,127.0",
    "nan",
    "1e309",
    "99999999999999999999",
    "x" * 201,
    "tab\there",
    "2026-02-30",
    "20260101",
    "DF23",
)
"""Values tried in every field of every endpoint (on top of its valid query), and in the path parameter."""


def _answered_with(query: BaseModel) -> Response[str]:
    return Response(200, content_types.APPLICATION_JSON, json.dumps({"validated": _dumped(query)}))


def _dumped(query: BaseModel) -> dict[str, Any]:
    return {"type": type(query).__name__, **query.model_dump(mode="json")}


def _reference_resolver() -> APIGatewayHttpResolver:
    """Powertools' validation of each endpoint's documented signature, answering the validated model."""
    resolver = APIGatewayHttpResolver(enable_validation=True)
    for row, endpoint in zip(
        (row for rows in api.ENDPOINTS.values() for row in rows), api.LOOKUP_ENDPOINTS, strict=True
    ):
        resolver.get(endpoint.path.replace("{", "<").replace("}", ">"))(_reference_route(row.query, endpoint))

    def invalid(error: RequestValidationError) -> Response[str]:
        fields = []
        for item in error.errors():
            location = str(item["loc"][0])
            skip = 2 if location == "query" else 1  # ("query", <argument>, <field>) or ("path", <name>)
            name = ".".join(str(part) for part in item["loc"][skip:]) or None
            fields.append({"location": location, "field": name, "message": item["msg"]})
        return Response(400, content_types.APPLICATION_JSON, json.dumps({"fields": fields}))

    resolver.exception_handler(RequestValidationError)(invalid)
    return resolver


def _reference_route(query: type[BaseModel], endpoint: LookupEndpoint) -> Callable[..., Response[str]]:
    arguments = endpoint.arguments()

    def route(**values: Any) -> Response[str]:
        return _answered_with(values["query"] if "query" in arguments else query(**values))

    route.__name__ = endpoint.handler.__name__
    route.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=t)
            for name, t in arguments.items()
        ],
        return_annotation=Response[str],
    )
    route.__annotations__ = {**arguments, "return": Response[str]}
    return route


@pytest.fixture(scope="module")
def reference() -> APIGatewayHttpResolver:
    return _reference_resolver()


@pytest.fixture
def lookup_api() -> Iterator[Callable[[dict[str, Any]], dict[str, Any]]]:
    """The API's own resolver, each lookup answering its validated query instead of fetching it."""
    with mock.patch.object(api, "_answer", _answered_with):
        yield lambda event: api.app.resolve(event, None)  # type: ignore[arg-type]


def _event(path: str, pairs: list[tuple[str, str]]) -> dict[str, Any]:
    target = f"{path}?{urlencode(pairs)}" if pairs else path
    return http_api_event(
        route=match_route("GET", path) or Route("$default", "api"),
        method="GET",
        target=target,
        headers=(),
        body=b"",
        source_ip="127.0.0.1",
        now_ms=0,
    )


def _outcome(response: dict[str, Any]) -> tuple[int, Any]:
    status, body = response["statusCode"], json.loads(response["body"])
    if status == 200:
        return 200, body["validated"]
    if status == 404:  # an empty path parameter: no route matches
        return 404, None
    assert status == 400, response
    return 400, body["fields"] if "fields" in body else body["error"]["fields"]


def _cases() -> Iterator[tuple[str, list[tuple[str, str]]]]:
    fields = {row.path: row.query.model_fields for rows in api.ENDPOINTS.values() for row in rows}
    for endpoint in ENDPOINTS:
        valid = list(endpoint.query.items())
        yield endpoint.path, valid
        yield endpoint.path, []
        yield endpoint.path, [*valid, ("unknown", "1")]
        if endpoint.path not in fields:  # the path parameter's endpoint
            base = endpoint.path.rsplit("/", 1)[0]
            for value in ODD_VALUES:
                yield f"{base}/{quote(value, safe='')}", []
            continue
        for name in fields[endpoint.path]:
            for value in ODD_VALUES:
                yield endpoint.path, [*((k, v) for k, v in valid if k != name), (name, value)]
            # A repeated key: API Gateway joins the values with commas.
            others = [(k, v) for k, v in valid if k != name]
            yield endpoint.path, [*valid, (name, "again")]
            yield endpoint.path, [*others, (name, ""), (name, "1")]
            yield endpoint.path, [*others, (name, "1,2"), (name, "3")]


CASES = sorted({(path, tuple(pairs)) for path, pairs in _cases()})


def test_the_cases_cover_every_endpoint_and_both_answers(reference: APIGatewayHttpResolver) -> None:
    statuses = {_outcome(reference.resolve(_event(path, list(pairs)), None))[0] for path, pairs in CASES}  # type: ignore[arg-type]
    assert statuses >= {200, 400}
    assert {path for path, _ in CASES} >= {endpoint.path for endpoint in ENDPOINTS}


def test_every_endpoint_validates_as_powertools_validation_of_its_signature(
    reference: APIGatewayHttpResolver, lookup_api: Callable[[dict[str, Any]], dict[str, Any]]
) -> None:
    differences = []
    for path, pairs in CASES:
        event = _event(path, list(pairs))
        expected = _outcome(reference.resolve(event, None))  # type: ignore[arg-type]
        found = _outcome(lookup_api(event))
        if found != expected:
            differences.append((path, pairs, found, expected))

    assert differences == []
