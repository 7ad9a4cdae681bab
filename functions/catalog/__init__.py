"""One spec per route key, and the spec is the operation (docs/design.md, "Route keys and relay groups"; one
module per retailer, which ends with its lookups' contracts, `LOOKUPS`). Lookups, probes, relays and the
sandbox all read these specs, which only build requests, validate and normalize answers: nothing here sends
anything."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from functions.catalog import cgv, contract, cu, dtryx, gs25, oliveyoung, seveneleven
from functions.catalog.contract import LookupQuery
from functions.catalog.spec import HttpRequest, OperationSpec
from functions.core import RouteKey

_ALL_SPECS: tuple[OperationSpec[Any, Any], ...] = (
    *oliveyoung.SPECS,
    *cu.SPECS,
    *gs25.SPECS,
    *seveneleven.SPECS,
    *dtryx.SPECS,
    *cgv.SPECS,
)

CATALOG: Mapping[RouteKey, OperationSpec[Any, Any]] = MappingProxyType(
    {key: spec for key in RouteKey for spec in _ALL_SPECS if spec.key is key}
)
assert len(CATALOG) == len(RouteKey) == len(_ALL_SPECS), "exactly one spec per route key"


LOOKUPS: tuple[type[LookupQuery], ...] = contract.in_document_order(contract.DECLARED)
"""Every lookup endpoint's contract, in the document's order: the REST routes, the OpenAPI paths, the MCP tools
and the CLI's operations follow it."""


def spec_for(key: RouteKey) -> OperationSpec[Any, Any]:
    return CATALOG[key]


__all__ = ["CATALOG", "LOOKUPS", "HttpRequest", "LookupQuery", "OperationSpec", "spec_for"]
