"""Which simulated upstream a request is for: retailer (host, path) and relay (group, operation) -> route key.

Both tables come from the specs in `functions/catalog/`, and the relays' health paths from the relay
transport, so the simulator serves exactly what the Lambda calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from functions.adapters.relay import HEALTH_PATHS
from functions.catalog import CATALOG
from functions.core import RelayGroup, RouteKey, group_of

# gs25-stock is pinned to the relay and never called direct; it is served anyway, so that a mistake shows up
# in the call counts.
RETAILER_ROUTES: Mapping[tuple[str, str], RouteKey] = {
    (urlsplit(spec.url).netloc, urlsplit(spec.url).path): key for key, spec in CATALOG.items()
}

RELAY_OPERATIONS: Mapping[RelayGroup, Mapping[str, RouteKey]] = {
    group: {spec.relay_operation: key for key, spec in CATALOG.items() if group_of(key) is group}
    for group in RelayGroup
}

RELAY_HEALTH_PATHS: Mapping[RelayGroup, str] = HEALTH_PATHS


def retailer_route(host: str, path: str) -> RouteKey | None:
    """The route key for a request to a retailer host and path (no query), if it is a simulated one."""
    return RETAILER_ROUTES.get((host.lower(), path.rstrip("/") or "/"))


def relay_route(group: RelayGroup, operation: str) -> RouteKey | None:
    """The route key a relay operation serves, if the relay knows that operation."""
    return RELAY_OPERATIONS[group].get(operation)
