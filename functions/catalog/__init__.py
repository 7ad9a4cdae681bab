"""One spec per route key, and the spec is the operation (docs/design.md, "Route keys and relay groups"; one
module per retailer, which ends with its lookups' contracts, `LOOKUPS`). Lookups, probes, relays and the
sandbox all read these specs, which only build requests, validate and normalize answers: nothing here sends
anything."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from functions.catalog.spec import HttpRequest, OperationSpec
from functions.core import RouteKey

if TYPE_CHECKING:
    from functions.catalog.contract import LookupQuery

    CATALOG: Mapping[RouteKey, OperationSpec[Any, Any]]
    """Every route key's spec."""
    LOOKUPS: tuple[type[LookupQuery], ...]
    """Every lookup endpoint's contract, in the document's order: the REST routes, the OpenAPI paths, the MCP
    tools and the CLI's operations follow it."""


@cache
def _loaded() -> tuple[Mapping[RouteKey, OperationSpec[Any, Any]], tuple[type[LookupQuery], ...]]:
    # The retailer modules load on the first use of `CATALOG`, `LOOKUPS` or `spec_for`, not on an import of
    # the package: the operator function answers reads and overrides without them (its POST probe loads them).
    from functions.catalog import (
        cgv,
        compare,  # noqa: F401  (its lookup only: it has no operation of its own)
        contract,
        cu,
        dtryx,
        gs25,
        oliveyoung,
        seveneleven,
    )

    specs = (*oliveyoung.SPECS, *cu.SPECS, *gs25.SPECS, *seveneleven.SPECS, *dtryx.SPECS, *cgv.SPECS)
    catalog = MappingProxyType({key: spec for key in RouteKey for spec in specs if spec.key is key})
    assert len(catalog) == len(RouteKey) == len(specs), "exactly one spec per route key"
    return catalog, contract.in_document_order(contract.DECLARED)


def __getattr__(name: str) -> Any:
    if name == "CATALOG":
        return _loaded()[0]
    if name == "LOOKUPS":
        return _loaded()[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def spec_for(key: RouteKey) -> OperationSpec[Any, Any]:
    return _loaded()[0][key]


__all__ = ["CATALOG", "LOOKUPS", "HttpRequest", "OperationSpec", "spec_for"]
