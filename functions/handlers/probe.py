"""The scheduled probe (EventBridge, every 5 minutes; docs/design.md, "Probe").

The slot comes from the event's scheduled `time`, not from the clock, so a redelivered event claims the same
slot and never probes again. Store errors propagate: the invocation fails visibly (logs, metrics, alarms).
The probe checks every route, overridden or not, so the verdicts stay true under an override; each
invocation then reports how many overrides count (the OverridesActive gauge).
"""

from __future__ import annotations

from functions.handlers.init_collection import pause_for_init

pause_for_init()  # until INIT is done: everything INIT creates stays (functions/handlers/init_collection.py)

from typing import Any

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.catalog import CATALOG
from functions.core import StoreError
from functions.core.overrides import with_active_overrides
from functions.handlers.composition import PROBE_FUNCTION, ProbeFunction, prepare_at_init
from functions.handlers.telemetry import emit_overrides_active, logger
from functions.handlers.tracing import traced
from functions.services.probe_run import slot_start_of


@logger.inject_lambda_context(clear_state=True)
@traced
@event_parser(model=EventBridgeModel)
def lambda_handler(event: EventBridgeModel, context: LambdaContext) -> dict[str, Any]:
    scheduled_ms = int(event.time.timestamp() * 1000)
    logger.append_keys(event_id=event.id, scheduled_at=event.time.isoformat())
    function = PROBE_FUNCTION.get()
    summary = function.probe(CATALOG, slot_start=slot_start_of(scheduled_ms), trigger="schedule")
    _report_overrides(function)
    return summary.to_dict()


def _report_overrides(function: ProbeFunction) -> None:
    """The OverridesActive gauge and which routes they hold; a store error only costs this data point."""
    if function.store is None:
        return
    try:
        snapshot = function.store.read_snapshot()
    except StoreError as error:
        logger.warning("active overrides not counted", extra={"error_type": type(error).__name__})
        return
    active = with_active_overrides(snapshot, function.upstreams.clock()).overrides
    emit_overrides_active(len(active))
    if active:
        logger.info(
            "operator overrides active",
            extra={"overrides": {k.value: o.mode.value for k, o in active.items()}},
        )


prepare_at_init(PROBE_FUNCTION)
