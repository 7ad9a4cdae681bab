"""The scheduled probe (EventBridge, every 5 minutes; DESIGN §4).

The slot comes from the event's scheduled `time`, not from the clock, so a redelivered event claims the same
slot and never probes again. Store errors propagate: the invocation fails visibly (logs, metrics, alarms).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.parser import event_parser
from aws_lambda_powertools.utilities.parser.models import EventBridgeModel
from aws_lambda_powertools.utilities.typing import LambdaContext

from functions.handlers.settings import ProbeSettings
from functions.handlers.telemetry import logger
from functions.handlers.tracing import tracer
from functions.handlers.wiring import get_container, prepare_container_at_init
from functions.services.probe_run import slot_start_of


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@event_parser(model=EventBridgeModel)
def lambda_handler(event: EventBridgeModel, context: LambdaContext) -> dict[str, Any]:
    scheduled_ms = int(event.time.timestamp() * 1000)
    logger.append_keys(event_id=event.id, scheduled_at=event.time.isoformat())
    summary = get_container(ProbeSettings).probe(slot_start=slot_start_of(scheduled_ms), trigger="schedule")
    return summary.to_dict()


prepare_container_at_init(ProbeSettings)
