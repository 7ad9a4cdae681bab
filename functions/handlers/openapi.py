"""The OpenAPI 3.1 document at `GET /api/openapi.json` (docs/design.md, "HTTP API"): Powertools' own, from the
lookup function's and the operator API's routes (`operator_api.py`) with the answers each declares
(`documented.py`), corrected where Powertools 3.37 cannot say: each 200's `data` type (the handlers answer
bodies they serialize themselves), which lookups the live settings count against the daily limit (unknown
when routes are declared), no 422 validation answer (ours is a 400), parameters without titles, and integral
bounds (its models write 90 as 90.0).
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.event_handler.openapi import models
from aws_lambda_powertools.event_handler.openapi.merge import OpenAPIMerge
from pydantic import TypeAdapter

from functions.catalog import LOOKUPS
from functions.catalog.contract import answer_type, retailer_of
from functions.core import ErrorCode
from functions.handlers import documented, operator_api
from functions.handlers.documented import GATEWAY_MESSAGE, RATE_LIMIT_HEADERS, REF, json_answer, success
from functions.handlers.wire import OverrideRequestBody, RouteHealth, RouteOverride

DESCRIPTION = (
    "Korean retail and cinema lookups with normalized data, and the operator API. "
    'Answers: `{"success": true, "data": ...}` or `{"success": false, "error": {"code", "message"}}`. '
    "A GET of an unknown path under /api answers 404 `NOT_FOUND`; any other method or path is "
    'answered by API Gateway itself: 404 `{"message": "Not Found"}`.'
)
BOUNDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
LIMITED_NOTE = "Counts against the per-client daily rate limit (`DAILY_RATE_LIMIT_PREFIXES`)."
SECURITY_SCHEMES: dict[str, models.SecurityScheme] = {
    "healthCheckKey": models.APIKey(**{"in": models.APIKeyIn.header, "name": "x-health-check-key"}),
    "bearer": models.HTTPBearer(description="The same health check secret"),
}


def openapi_document(app: APIGatewayHttpResolver, limited_prefixes: tuple[str, ...]) -> dict[str, Any]:
    """Both resolvers' documents, merged and corrected; `limited_prefixes`: the paths the daily limit counts
    (the lookup function's settings; none with the limit off)."""
    # Not `configure_openapi_merge`: it finds resolvers by loading handler files; both are imported here.
    merge = OpenAPIMerge(
        title="Route Health",
        version="1.0.0",
        description=DESCRIPTION,
        servers=[models.Server(url="/", description="The API that serves this document")],
        tags=list(dict.fromkeys([*map(retailer_of, LOOKUPS), operator_api.OPERATOR_TAG])),
    )
    for resolver, schemes in ((app, None), (operator_api.app, SECURITY_SCHEMES)):
        generated = resolver.get_openapi_schema(security_schemes=schemes)
        merge.add_schema(generated.model_dump(mode="json", by_alias=True, exclude_none=True))
    document: dict[str, Any] = json.loads(merge.get_openapi_json_schema())
    answers = {query.path: query for query in LOOKUPS}
    paths = document["paths"]  # the lookups in the contract's order, then the operator API
    document["paths"] = {**{path: paths[path] for path in answers}, **dict(sorted(paths.items()))}
    data_types = [*(answer_type(query) for query in LOOKUPS), RouteHealth, RouteOverride, OverrideRequestBody]
    data_types += [documented.FieldError, documented.GatewayMessage]
    refs, schemas = _schemas(data_types)
    for path, item in document["paths"].items():
        for operation in item.values():
            _corrected(operation)
        if path in answers:
            ok = item["get"]["responses"]["200"]
            ok["content"] = {"application/json": {"schema": success(refs[answer_type(answers[path])])}}
            if path.startswith(limited_prefixes):
                _mark_limited(item["get"])
    components = document["components"]
    merged = sorted({**components["schemas"], **schemas}.items())  # Powertools' own validation errors: never
    components["schemas"] = {name: schema for name, schema in merged if not name.endswith("ValidationError")}
    not_found = json_answer(GATEWAY_MESSAGE, 'API Gateway: no such route, {"message": "Not Found"}')
    components["responses"] = {"GatewayNotFound": not_found}
    _integral_bounds(document)
    return document


def _corrected(operation: dict[str, Any]) -> None:
    if "HTTPValidationError" in str(operation["responses"].get("422")):  # its validation answers 400
        del operation["responses"]["422"]
    for parameter in operation.get("parameters", ()):
        schema = parameter["schema"]
        schema.pop("title", None)
        if schema.get("description") == parameter.get("description"):
            schema.pop("description", None)


def _integral_bounds(node: Any) -> None:
    """Powertools' models write every bound as a float (90 as 90.0): an integer's bounds are integers."""
    for key, value in node.items() if isinstance(node, dict) else enumerate(node):
        if key in BOUNDS and isinstance(value, float) and value.is_integer():
            node[key] = int(value)
        elif isinstance(value, dict | list):
            _integral_bounds(value)


def _mark_limited(operation: dict[str, Any]) -> None:
    """DAILY_RATE_LIMIT_EXCEEDED among its 429s, and every error answer with the day's counts."""
    daily = ErrorCode.DAILY_RATE_LIMIT_EXCEEDED.value
    for status, response in operation["responses"].items():
        if status != "200":
            response["headers"] = {**response.get("headers", {}), **RATE_LIMIT_HEADERS}
    throttled = operation["responses"]["429"]
    throttled["description"] = throttled["description"].replace(": ", f": {daily}, ", 1)
    error = throttled["content"]["application/json"]["schema"]["oneOf"][0]["properties"]["error"]
    error["properties"]["code"]["enum"].insert(0, daily)
    operation["description"] = " ".join(note for note in (operation.get("description"), LIMITED_NOTE) if note)


def _schemas(types: list[Any]) -> tuple[dict[Any, dict[str, str]], dict[str, Any]]:
    """Each type's `$ref` and every schema they need, as the answers serialize them."""
    unique = list(dict.fromkeys(types))
    adapters = [(kind, "serialization", TypeAdapter(kind)) for kind in unique]
    refs, top = TypeAdapter.json_schemas(adapters, ref_template=REF.replace("{}", "{model}"))  # type: ignore[arg-type]
    schemas = top.get("$defs", {})
    for schema in schemas.values():
        for property_schema in schema.get("properties", {}).values():
            if property_schema.get("default", 0) is None:  # an optional key left out when unknown
                del property_schema["default"]
    return {kind: refs[(kind, "serialization")] for kind in unique}, schemas
