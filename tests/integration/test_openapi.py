"""The OpenAPI document at GET /api/openapi.json: a valid 3.1 document, a true one (real answers of the real
handlers validate against it), with exact error codes, the query models' constraints, stable operationIds
and the operator API's security schemes."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import pytest
from openapi_schema_validator import OAS31Validator
from openapi_spec_validator import validate as validate_openapi

from functions.adapters.secrets import Secrets
from functions.core import RouteKey
from functions.handlers import api, ops, wiring
from functions.handlers.metrics import LOOKUP_ERROR_CODES
from functions.handlers.openapi import OVERRIDE_PATH, ROUTES_PATH
from sandbox.simulator.server import Simulator
from tests.integration.test_api import ENDPOINT_OF, ENDPOINTS, Endpoint, loaded, write_verdicts

OPERATOR_AUTH = {"x-health-check-key": "hc-secret-Zq81"}  # HEALTH_CHECK_SECRET of conftest's test secrets


@cache
def served_document() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(api._openapi_document())
    return document


def operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, operation)
        for path, item in served_document()["paths"].items()
        for method, operation in item.items()
    ]


def template_of(path: str) -> str:
    templates: list[str] = list(served_document()["paths"])
    for template in templates:
        if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), path):
            return template
    raise AssertionError(f"{path} is not documented")


def assert_documented(method: str, path: str, status: int, body: Any, headers: Mapping[str, str]) -> None:
    """The answer's body matches the documented schema of its status, and carries the documented headers."""
    document = served_document()
    responses = document["paths"][template_of(path)][method]["responses"]
    assert str(status) in responses, f"{method.upper()} {path}: {status} is not documented"
    response = responses[str(status)]
    schema = response["content"]["application/json"]["schema"]
    OAS31Validator({**schema, "components": document["components"]}).validate(body)
    present = {name.lower() for name in headers}
    for name in response.get("headers", {}):
        assert name.lower() in present, f"{method.upper()} {path} {status}: no {name} header"


# --- the document itself -------------------------------------------------------------------------


def test_the_document_is_served_at_api_openapi_json(lookup_call: Call) -> None:
    status, headers, body = lookup_call(api.OPENAPI_PATH)
    assert (status, headers["Content-Type"]) == (200, "application/json")
    assert body == served_document()


def test_the_document_is_a_valid_openapi_3_1_document():
    document = served_document()
    validate_openapi(document)
    assert document["openapi"] == "3.1.0"
    assert document["servers"] == [{"url": "/", "description": "The API that serves this document"}]


def test_every_lookup_endpoint_and_the_operator_api_are_documented():
    documented = {(path, method) for path, method, _ in operations()}
    lookups = {(template_of(endpoint.path), "get") for endpoint in ENDPOINTS}
    operator = {
        (ROUTES_PATH, "get"),
        (ROUTES_PATH, "post"),
        (OVERRIDE_PATH, "put"),
        (OVERRIDE_PATH, "delete"),
    }
    assert documented == lookups | operator


def test_operation_ids_are_stable_and_readable():
    ids = {operation["operationId"] for _, _, operation in operations()}
    assert ids == {
        "oliveyoungStores",
        "oliveyoungProducts",
        "oliveyoungGoodsInfo",
        "oliveyoungStock",
        "cuProducts",
        "cuStores",
        "gs25Products",
        "gs25Stock",
        "sevenelevenProducts",
        "sevenelevenStores",
        "sevenelevenPopwords",
        "sevenelevenStock",
        "sevenelevenPages",
        "sevenelevenIssues",
        "sevenelevenExhibitions",
        "dtryxMovies",
        "dtryxPlayDates",
        "dtryxTimetable",
        "getRouteHealth",
        "probeRoutes",
        "setRouteOverride",
        "clearRouteOverride",
    }


def _codes(response: dict[str, Any]) -> list[str]:
    schema = response["content"]["application/json"]["schema"]
    envelopes = schema.get("oneOf", [schema])
    return [code for env in envelopes if "error" in env.get("properties", {}) for code in _enum(env)]


def _enum(envelope: dict[str, Any]) -> list[str]:
    codes: list[str] = envelope["properties"]["error"]["properties"]["code"]["enum"]
    return codes


def test_each_lookup_documents_its_typed_200_data_and_exactly_its_error_codes():
    document = served_document()
    for path, _, operation in operations():
        if path in (ROUTES_PATH, OVERRIDE_PATH):
            continue
        responses = operation["responses"]
        data = responses["200"]["content"]["application/json"]["schema"]["properties"]["data"]
        assert data["$ref"].startswith("#/components/schemas/"), path
        assert "properties" in document["components"]["schemas"][data["$ref"].rsplit("/", 1)[1]]
        codes = {status: _codes(response) for status, response in responses.items() if status != "200"}
        takes_input = bool(operation.get("parameters"))
        assert codes["400"] == (["INVALID_INPUT"] if takes_input else []) + ["UPSTREAM_REJECTED"], path
        assert codes["422"] == ["UPSTREAM_REJECTED"]  # the upstream's own 422, never a validation error
        assert codes["404"] == ["UPSTREAM_NOT_FOUND"]
        limited = path.startswith(("/api/oliveyoung/", "/api/cu/", "/api/gs25/"))
        assert codes["429"] == (["DAILY_RATE_LIMIT_EXCEEDED"] if limited else []) + ["RELAY_QUOTA_EXCEEDED"]
        assert (codes["500"], codes["502"], codes["503"], codes["504"]) == (
            ["INTERNAL_ERROR"],
            ["UPSTREAM_BAD_RESPONSE"],
            ["UPSTREAM_ROUTE_UNAVAILABLE"],
            ["UPSTREAM_TIMEOUT"],
        )
        documented = {code for status_codes in codes.values() for code in status_codes}
        assert documented <= LOOKUP_ERROR_CODES  # the codes the LookupError metric knows
    assert "HTTPValidationError" not in json.dumps(document)


def test_api_gateways_own_answers_are_documented():
    document = served_document()
    for path, method, operation in operations():
        throttled = json.dumps(operation["responses"]["429"])
        assert "GatewayMessage" in throttled, (method, path)
        assert "Retry-After" in operation["responses"]["429"].get("headers", {}) or operation["tags"] == [
            "Operator"
        ]
    assert "GatewayNotFound" in document["components"]["responses"]
    assert "404" in document["info"]["description"]


def _parameters(path: str) -> dict[str, dict[str, Any]]:
    operation = served_document()["paths"][path]["get"]
    return {parameter["name"]: parameter for parameter in operation.get("parameters", [])}


def test_parameters_carry_the_query_models_constraints_and_defaults():
    cu = _parameters("/api/cu/products")
    assert cu["keyword"]["required"] is True
    assert cu["keyword"]["schema"] == {"type": "string", "minLength": 1, "maxLength": 200}
    assert cu["offset"]["schema"] == {"type": "integer", "minimum": 0, "maximum": 9999, "default": 0}
    assert cu["limit"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}

    stores = _parameters("/api/oliveyoung/stores")
    assert stores["keyword"]["required"] is False
    assert "null" not in json.dumps(stores["keyword"]["schema"])  # absent, never null
    assert stores["lat"]["schema"]["minimum"] == -90
    assert stores["lat"]["schema"]["maximum"] == 90
    assert stores["lat"]["schema"]["default"] == 37.5665

    assert _parameters("/api/seveneleven/popwords")["label"]["schema"]["default"] == "home"
    assert "pattern" in _parameters("/api/seveneleven/popwords")["label"]["schema"]
    assert _parameters("/api/dtryx/movies")["cinemaCode"]["schema"]["pattern"] == "^[0-9]{6}$"
    assert _parameters("/api/dtryx/timetable")["playDate"]["schema"]["format"] == "date"
    goods = _parameters("/api/oliveyoung/products/{goodsNo}")["goodsNo"]
    assert goods["in"] == "path"
    assert goods["schema"]["pattern"] == "^[A-Za-z0-9]{1,32}$"


def test_the_operator_api_is_documented_with_its_security_schemes():
    document = served_document()
    schemes = document["components"]["securitySchemes"]
    assert schemes["healthCheckKey"] == {"type": "apiKey", "in": "header", "name": "x-health-check-key"}
    assert schemes["bearer"]["type"] == "http"
    assert schemes["bearer"]["scheme"] == "bearer"
    for path, method in (
        (ROUTES_PATH, "get"),
        (ROUTES_PATH, "post"),
        (OVERRIDE_PATH, "put"),
        (OVERRIDE_PATH, "delete"),
    ):
        operation = document["paths"][path][method]
        assert operation["security"] == [{"healthCheckKey": []}, {"bearer": []}]
        assert operation["responses"]["401"]["headers"]["WWW-Authenticate"]["schema"] == {"const": "Bearer"}
        assert _codes(operation["responses"]["503"]) == [
            "HEALTH_CHECK_SECRET_NOT_CONFIGURED",
            "ROUTE_HEALTH_NOT_CONFIGURED",
            "ROUTE_HEALTH_FAILED",
        ]
    assert _codes(document["paths"][ROUTES_PATH]["post"]["responses"]["429"]) == ["PROBE_SLOT_TAKEN"]
    overrides = document["paths"][OVERRIDE_PATH]
    assert _codes(overrides["put"]["responses"]["404"]) == ["UNKNOWN_ROUTE_KEY"]
    assert _codes(overrides["delete"]["responses"]["404"]) == ["UNKNOWN_ROUTE_KEY", "NO_OVERRIDE"]
    body = document["components"]["schemas"]["OverrideRequestBody"]
    assert body["required"] == ["mode", "reason", "ttlSeconds"]
    assert (body["properties"]["ttlSeconds"]["minimum"], body["properties"]["ttlSeconds"]["maximum"]) == (
        1,
        86400,
    )
    assert body["properties"]["reason"]["maxLength"] == 200
    assert "400" not in document["paths"][ROUTES_PATH]["get"]["responses"]
    for _, _, operation in operations():
        assert ("security" in operation) == (operation["tags"] == ["Operator"])


# --- real answers against the document -----------------------------------------------------------

Call = Callable[..., tuple[int, dict[str, str], Any]]


@pytest.fixture
def lookup_call(api_event: Callable[..., dict[str, Any]], lambda_context: Any) -> Call:
    def invoke(path: str, query: Mapping[str, str] | None = None) -> tuple[int, dict[str, str], Any]:
        answer = api.lambda_handler(api_event("GET", path, query=query), lambda_context)
        return answer["statusCode"], answer.get("headers") or {}, json.loads(answer["body"])

    return invoke


@pytest.fixture
def operator_call(api_event: Callable[..., dict[str, Any]], lambda_context: Any) -> Call:
    def invoke(method: str, path: str = ROUTES_PATH, **kwargs: Any) -> tuple[int, dict[str, str], Any]:
        answer = ops.lambda_handler(api_event(method, path, **kwargs), lambda_context)
        return answer["statusCode"], answer.get("headers") or {}, json.loads(answer["body"])

    return invoke


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e.path for e in ENDPOINTS])
def test_every_endpoints_real_200_answer_matches_the_document(
    make_container: Callable[..., wiring.Container], lookup_call: Call, endpoint: Endpoint
) -> None:
    make_container()
    status, headers, body = lookup_call(endpoint.path, endpoint.query)
    assert status == 200
    assert_documented("get", endpoint.path, status, body, headers)


def test_a_real_cu_stores_answer_without_an_item_matches_the_document(
    make_container: Callable[..., wiring.Container], lookup_call: Call
) -> None:
    make_container()
    status, headers, body = lookup_call("/api/cu/stores", {"lat": "37.5", "lon": "127.0"})
    assert status == 200
    assert all("stock" not in store for store in body["data"]["stores"])  # documented as optional
    assert_documented("get", "/api/cu/stores", status, body, headers)


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/api/cu/products", {}),
        ("/api/cu/products", {"keyword": "x" * 201, "limit": "0"}),
        ("/api/gs25/stock", {"lat": "37.5", "lon": "127.0"}),  # a rule across parameters: field null
        ("/api/oliveyoung/products/A-B", {}),
        ("/api/seveneleven/popwords", {"label": "!!"}),
        ("/api/dtryx/timetable", {"brandCode": "indieart", "cinemaCode": "000067", "playDate": "20260101"}),
    ],
)
def test_real_invalid_input_answers_match_the_document(
    make_container: Callable[..., wiring.Container], lookup_call: Call, path: str, query: dict[str, str]
) -> None:
    make_container()
    status, headers, body = lookup_call(path, query)
    assert (status, body["error"]["code"]) == (400, "INVALID_INPUT")
    assert_documented("get", path, status, body, headers)


@pytest.mark.parametrize(
    ("target", "fault", "status", "code"),
    [
        ("relay:dtryx", "http-429", 429, "RELAY_QUOTA_EXCEEDED"),
        ("relay:dtryx", "http-503", 503, "UPSTREAM_ROUTE_UNAVAILABLE"),
        ("relay:dtryx", "http-500", 502, "UPSTREAM_BAD_RESPONSE"),
        ("relay:dtryx", "invalid-json", 502, "UPSTREAM_BAD_RESPONSE"),
        ("direct:dtryx-movies", "http-404", 404, "UPSTREAM_NOT_FOUND"),
        ("direct:dtryx-movies", "http-400", 400, "UPSTREAM_REJECTED"),
        ("direct:dtryx-movies", "http-422", 422, "UPSTREAM_REJECTED"),
    ],
)
def test_real_upstream_error_answers_match_the_document(
    make_container: Callable[..., wiring.Container],
    lookup_call: Call,
    simulator: Simulator,
    store: Any,
    clock: Any,
    target: str,
    fault: str,
    status: int,
    code: str,
) -> None:
    if target.startswith("direct:"):
        write_verdicts(store, clock())  # direct verdicts: the lookup goes direct
    loaded(make_container())
    simulator.faults.set(target, fault)
    endpoint = ENDPOINT_OF[RouteKey.DTRYX_MOVIES]

    answer_status, headers, body = lookup_call(endpoint.path, endpoint.query)

    assert (answer_status, body["error"]["code"]) == (status, code)
    assert_documented("get", endpoint.path, answer_status, body, headers)


def test_a_real_daily_limit_answer_matches_the_document(
    make_container: Callable[..., wiring.Container], lookup_call: Call
) -> None:
    make_container(DAILY_RATE_LIMIT="1")
    endpoint = ENDPOINT_OF[RouteKey.GS25_PRODUCTS]
    assert lookup_call(endpoint.path, endpoint.query)[0] == 200
    status, headers, body = lookup_call(endpoint.path, endpoint.query)
    assert (status, body["error"]["code"]) == (429, "DAILY_RATE_LIMIT_EXCEEDED")
    assert_documented("get", endpoint.path, status, body, headers)


def test_real_operator_answers_match_the_document(
    make_container: Callable[..., wiring.Container], operator_call: Call
) -> None:
    make_container()
    answers = [
        ("post", operator_call("POST", headers=OPERATOR_AUTH)),  # probes: 200
        ("post", operator_call("POST", headers=OPERATOR_AUTH)),  # same slot: 429 PROBE_SLOT_TAKEN
        ("get", operator_call("GET", headers=OPERATOR_AUTH)),
        ("get", operator_call("GET", headers={"Authorization": "Bearer wrong"})),
        ("post", operator_call("POST", headers=OPERATOR_AUTH, body="{}")),
    ]
    assert [status for _, (status, _, _) in answers] == [200, 429, 200, 401, 400]
    assert answers[2][1][2]["data"]["routes"]  # verdicts after the probe, in the wire format
    for method, (status, headers, body) in answers:
        assert_documented(method, ROUTES_PATH, status, body, headers)


def test_a_real_operator_answer_without_a_secret_matches_the_document(
    make_container: Callable[..., wiring.Container], operator_call: Call
) -> None:
    make_container(secrets=Secrets.from_mapping({}, source="test"))
    status, headers, body = operator_call("GET", headers=OPERATOR_AUTH)
    assert (status, body["error"]["code"]) == (503, "HEALTH_CHECK_SECRET_NOT_CONFIGURED")
    assert_documented("get", ROUTES_PATH, status, body, headers)


def test_real_override_answers_match_the_document(
    make_container: Callable[..., wiring.Container], operator_call: Call, store: Any, clock: Any
) -> None:
    write_verdicts(store, clock())  # an override shows on a route with a verdict
    make_container()
    cu_stock = "/api/health/routes/cu-stock/override"
    body = json.dumps({"mode": "force-relay", "reason": "CU maintenance", "ttlSeconds": 600})
    answers = [
        ("put", cu_stock, operator_call("PUT", cu_stock, headers=OPERATOR_AUTH, body=body)),
        ("get", ROUTES_PATH, operator_call("GET", headers=OPERATOR_AUTH)),
        ("delete", cu_stock, operator_call("DELETE", cu_stock, headers=OPERATOR_AUTH)),
        ("delete", cu_stock, operator_call("DELETE", cu_stock, headers=OPERATOR_AUTH)),
        ("put", cu_stock, operator_call("PUT", cu_stock, headers=OPERATOR_AUTH, body='{"mode": "sideways"}')),
        (
            "put",
            "/api/health/routes/nope/override",
            operator_call("PUT", "/api/health/routes/nope/override", headers=OPERATOR_AUTH, body=body),
        ),
    ]
    codes = [(status, body.get("error", {}).get("code")) for _, _, (status, _, body) in answers]
    assert codes == [
        (200, None),
        (200, None),
        (200, None),
        (404, "NO_OVERRIDE"),
        (400, "INVALID_INPUT"),
        (404, "UNKNOWN_ROUTE_KEY"),
    ]
    assert answers[1][2][2]["data"]["routes"]["cu-stock"]["override"]["mode"] == "force-relay"
    for method, path, (status, headers, answer) in answers:
        assert_documented(method, path, status, answer, headers)
