"""The MCP tool call each catalog endpoint's REST request stands for, for the tests that compare the two."""

from __future__ import annotations

import json
import re
from typing import Any

from functions.lookup_document import LookupOperation, lookup_document, lookup_operations
from tests.support.catalog_fixtures import Endpoint

OPERATIONS = lookup_operations(lookup_document())


def tool_for(endpoint: Endpoint) -> tuple[str, dict[str, Any]]:
    """The tool of an endpoint's path and its arguments: the query and the path's parameters, each as the
    JSON type its `inputSchema` declares (a query string carries only text)."""
    for operation in OPERATIONS:
        match = re.fullmatch(re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", operation.path), endpoint.path)
        if match is not None:
            return operation.name, typed(operation, {**endpoint.query, **match.groupdict()})
    raise AssertionError(f"no tool for {endpoint.path}")


def typed(operation: LookupOperation, values: dict[str, str]) -> dict[str, Any]:
    kinds = {parameter.name: parameter.schema.get("type") for parameter in operation.parameters}
    return {
        name: json.loads(value) if kinds.get(name) in ("integer", "number", "boolean") else value
        for name, value in values.items()
    }
