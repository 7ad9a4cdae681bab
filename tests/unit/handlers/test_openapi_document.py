"""The OpenAPI document at GET /api/openapi.json: a valid 3.1 document with exact error codes, the query
models' constraints, stable operationIds and the operator API's security schemes (tests/integration checks
that real answers match it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openapi_spec_validator import validate as validate_openapi

from functions.catalog import LOOKUPS
from functions.catalog.gs25 import ITEM_CODE_OR_KEYWORD
from functions.catalog.seveneleven import SEARCH_WINDOW
from functions.core.input_rules import CONTROL, DASHED_DATE, visible_text
from functions.core.overrides import PINNED_NEVER_DIRECT, REASON_PATTERN
from functions.handlers import operator_api
from functions.handlers.metrics import LOOKUP_ERROR_CODES
from tests.support.catalog_fixtures import ENDPOINTS
from tests.support.openapi import operations, served_document, template_of

ROUTES_PATH = operator_api.ROUTES_PATH
OVERRIDE_PATH = operator_api.OVERRIDE_PATH.replace("<key>", "{key}")  # as OpenAPI writes it


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
    # Each lookup's is its contract's name in camelCase (what MCP tools and CLI operations are called);
    # renaming one breaks every client that calls it.
    ids = [operation["operationId"] for _, _, operation in operations()]
    lookups = [
        "".join(part if i == 0 else part.title() for i, part in enumerate(q.name.split("_"))) for q in LOOKUPS
    ]
    assert ids == [*lookups, "getRouteHealth", "probeRoutes", "setRouteOverride", "clearRouteOverride"]
    assert {"cuProducts", "oliveyoungGoodsInfo", "gs25Stock", "dtryxPlayDates", "cgvTimetable"} <= set(ids)


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
        limited = path.startswith(
            ("/api/oliveyoung/", "/api/cu/", "/api/gs25/", "/api/cgv/", "/api/dtryx/", "/api/compare/")
        )
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
    assert cu["keyword"]["schema"] == {
        "type": "string",
        "minLength": 1,
        "maxLength": 100,
        "pattern": visible_text(CONTROL),  # not blank, no control characters
    }
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
    assert _parameters("/api/dtryx/timetable")["playDate"]["schema"] == {
        "type": "string",
        "format": "date",
        "pattern": DASHED_DATE,  # `format` only annotates
    }
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
    assert body["properties"]["reason"]["pattern"] == REASON_PATTERN
    assert "400" not in document["paths"][ROUTES_PATH]["get"]["responses"]
    for _, _, operation in operations():
        assert ("security" in operation) == (operation["tags"] == ["Operator"])


JSON_SCHEMA_KEYWORDS = {
    "type",
    "enum",
    "const",
    "default",
    "title",
    "description",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "$ref",
}
"""Every keyword a parameter or request body field uses: a constraint under any other name (pydantic's own `ge`
when it can't place a range) would be ignored by every client and validator."""


def test_parameters_and_the_override_body_state_their_rules_in_json_schema_keywords():
    schemas = [
        parameter["schema"]
        for _, _, operation in operations()
        for parameter in operation.get("parameters", [])
    ]
    schemas += served_document()["components"]["schemas"]["OverrideRequestBody"]["properties"].values()
    assert schemas
    for schema in schemas:
        assert set(schema) <= JSON_SCHEMA_KEYWORDS, schema


def test_each_rule_across_parameters_is_stated_in_its_operations_description():
    document = served_document()
    stated = {
        "/api/gs25/stock": ITEM_CODE_OR_KEYWORD,
        "/api/seveneleven/products": SEARCH_WINDOW,
    }
    for path, operation in ((path, item["get"]) for path, item in document["paths"].items() if "get" in item):
        rule = stated.get(path)
        described = operation.get("description", "")
        assert (rule is not None and rule.text in described) or "across parameters" not in described, path
    for path, rule in stated.items():
        assert rule.text in document["paths"][path]["get"]["description"]
    assert PINNED_NEVER_DIRECT.text in document["paths"][OVERRIDE_PATH]["put"]["description"]


def test_every_rule_across_parameters_is_listed_in_the_design_doc():
    rules = [rule for query in LOOKUPS for rule in query.cross_rules]
    assert rules
    design = " ".join((Path(__file__).parents[3] / "docs" / "design.md").read_text().split())
    for rule in [*rules, PINNED_NEVER_DIRECT]:
        assert rule.text in design, rule.name
