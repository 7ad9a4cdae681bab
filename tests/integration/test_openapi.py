"""The OpenAPI document at GET /api/openapi.json is true: it is served, and the real answers of the real
handlers validate against it (status, body schema, documented headers)."""

from __future__ import annotations

import pytest
from openapi_schema_validator import OAS31Validator

from functions.adapters.secrets import Secrets
from functions.core import RouteKey
from functions.handlers import api
from functions.handlers.ops import ROUTES_PATH
from tests.integration.conftest import Answer, Lambdas
from tests.support.catalog_fixtures import ENDPOINT_OF, ENDPOINTS, Endpoint
from tests.support.openapi import served_document, template_of


def assert_documented(method: str, answer: Answer, path: str) -> None:
    """The answer's body matches the documented schema of its status, and carries the documented headers."""
    document = served_document()
    responses = document["paths"][template_of(path)][method]["responses"]
    assert str(answer.status) in responses, f"{method.upper()} {path}: {answer.status} is not documented"
    response = responses[str(answer.status)]
    schema = response["content"]["application/json"]["schema"]
    OAS31Validator({**schema, "components": document["components"]}).validate(answer.body)
    present = {name.lower() for name in answer.headers}
    for name in response.get("headers", {}):
        assert name.lower() in present, f"{method.upper()} {path} {answer.status}: no {name} header"


def test_the_document_is_served_at_api_openapi_json(lambdas: Lambdas) -> None:
    lambdas.deploy()
    status, headers, body = lambdas.lookup(api.OPENAPI_PATH)
    assert (status, headers["Content-Type"]) == (200, "application/json")
    assert body == served_document()


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e.path for e in ENDPOINTS])
def test_every_endpoints_real_200_answer_matches_the_document(lambdas: Lambdas, endpoint: Endpoint) -> None:
    lambdas.deploy()
    answer = lambdas.lookup_endpoint(endpoint)
    assert answer.status == 200
    assert_documented("get", answer, endpoint.path)


def test_a_real_cu_stores_answer_without_an_item_matches_the_document(lambdas: Lambdas) -> None:
    lambdas.deploy()
    answer = lambdas.lookup("/api/cu/stores", {"lat": "37.5", "lon": "127.0"})
    assert answer.status == 200
    assert all("stock" not in store for store in answer.body["data"]["stores"])  # documented as optional
    assert_documented("get", answer, "/api/cu/stores")


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
    lambdas: Lambdas, path: str, query: dict[str, str]
) -> None:
    lambdas.deploy()
    answer = lambdas.lookup(path, query)
    assert (answer.status, answer.body["error"]["code"]) == (400, "INVALID_INPUT")
    assert_documented("get", answer, path)


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
    lambdas: Lambdas, target: str, fault: str, status: int, code: str
) -> None:
    if target.startswith("direct:"):
        lambdas.write_verdicts()  # direct verdicts: the lookup goes direct
    lambdas.loaded(lambdas.deploy())
    lambdas.simulator.faults.set(target, fault)
    endpoint = ENDPOINT_OF[RouteKey.DTRYX_MOVIES]

    answer = lambdas.lookup_endpoint(endpoint)

    assert (answer.status, answer.body["error"]["code"]) == (status, code)
    assert_documented("get", answer, endpoint.path)


def test_a_real_daily_limit_answer_matches_the_document(lambdas: Lambdas) -> None:
    lambdas.deploy(DAILY_RATE_LIMIT="1")
    endpoint = ENDPOINT_OF[RouteKey.GS25_PRODUCTS]
    assert lambdas.lookup_endpoint(endpoint).status == 200
    answer = lambdas.lookup_endpoint(endpoint)
    assert (answer.status, answer.body["error"]["code"]) == (429, "DAILY_RATE_LIMIT_EXCEEDED")
    assert_documented("get", answer, endpoint.path)


def test_real_operator_answers_match_the_document(lambdas: Lambdas) -> None:
    lambdas.deploy()
    answers = [
        ("post", lambdas.operator("POST")),  # probes: 200
        ("post", lambdas.operator("POST")),  # same slot: 429 PROBE_SLOT_TAKEN
        ("get", lambdas.operator("GET")),
        ("get", lambdas.operator("GET", headers={"Authorization": "Bearer wrong"})),
        ("post", lambdas.operator("POST", body="{}")),
    ]
    assert [answer.status for _, answer in answers] == [200, 429, 200, 401, 400]
    assert answers[2][1].body["data"]["routes"]  # verdicts after the probe, in the wire format
    for method, answer in answers:
        assert_documented(method, answer, ROUTES_PATH)


def test_a_real_operator_answer_without_a_secret_matches_the_document(lambdas: Lambdas) -> None:
    lambdas.deploy(secrets=Secrets.from_mapping({}, source="test"))
    answer = lambdas.operator("GET")
    assert (answer.status, answer.body["error"]["code"]) == (503, "HEALTH_CHECK_SECRET_NOT_CONFIGURED")
    assert_documented("get", answer, ROUTES_PATH)


def test_real_override_answers_match_the_document(lambdas: Lambdas) -> None:
    lambdas.write_verdicts()  # an override shows on a route with a verdict
    lambdas.deploy()
    cu_stock = "/api/health/routes/cu-stock/override"
    body = {"mode": "force-relay", "reason": "CU maintenance", "ttlSeconds": 600}
    answers = [
        ("put", cu_stock, lambdas.operator("PUT", cu_stock, body=body)),
        ("get", ROUTES_PATH, lambdas.operator("GET")),
        ("delete", cu_stock, lambdas.operator("DELETE", cu_stock)),
        ("delete", cu_stock, lambdas.operator("DELETE", cu_stock)),
        ("put", cu_stock, lambdas.operator("PUT", cu_stock, body='{"mode": "sideways"}')),
        (
            "put",
            "/api/health/routes/nope/override",
            lambdas.operator("PUT", "/api/health/routes/nope/override", body=body),
        ),
    ]
    codes = [(answer.status, answer.body.get("error", {}).get("code")) for _, _, answer in answers]
    assert codes == [
        (200, None),
        (200, None),
        (200, None),
        (404, "NO_OVERRIDE"),
        (400, "INVALID_INPUT"),
        (404, "UNKNOWN_ROUTE_KEY"),
    ]
    assert answers[1][2].body["data"]["routes"]["cu-stock"]["override"]["mode"] == "force-relay"
    for method, path, answer in answers:
        assert_documented(method, answer, path)
