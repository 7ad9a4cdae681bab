"""The operator API's snapshot read back into the core's `Snapshot` with the API's own wire models
(functions/handlers/wire.py), validated with their context `READ_NEWER`: the API may be newer than this CLI, so
unknown fields, route keys, relay groups and reason codes are left out; a wrong type (a time, a boolean) or an
unknown override mode is refused.
"""

from __future__ import annotations

from pydantic import ValidationError

from functions.core.model import RelayCheck, RouteOverride, RouteVerdict, Snapshot
from functions.handlers.wire import READ_NEWER, RouteHealth
from ops_cli.connection import CliError


def snapshot_from_wire(data: object) -> Snapshot:
    """Each override from `overrides`, else (an API older than that map) from its route's verdict."""
    try:
        health = RouteHealth.model_validate(data, context=READ_NEWER, by_name=False)
    except ValidationError:
        raise CliError(
            "the API answered a snapshot this CLI cannot read (is the CLI older than the API?)"
        ) from None
    with_verdicts = {key: route.override for key, route in health.routes.items() if route.override}
    return Snapshot(
        routes={
            key: RouteVerdict(**route.model_dump(exclude={"override"}))
            for key, route in health.routes.items()
        },
        relays={group: RelayCheck(**relay.model_dump()) for group, relay in health.relays.items()},
        overrides={
            key: RouteOverride(key, **override.model_dump(exclude={"key"}))
            for key, override in {**with_verdicts, **health.overrides}.items()
        },
    )
