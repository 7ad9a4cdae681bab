"""Upstream text is made valid before it is served: a retailer name holding a lone UTF-16 surrogate (a backend
that cut it mid-emoji) is answered with U+FFFD in its place, whichever path served it, through the real
`lambda_handler`, the reference relay and the simulated retailer; an answer that cannot be made valid is a
route failure like any other invalid answer, never a 500."""

from __future__ import annotations

import json
from typing import Any

import pytest

from functions.core import RouteKey
from sandbox.simulator.faults import parse_fault
from sandbox.simulator.payloads import realistic_payload
from tests.integration.conftest import Lambdas, error_body
from tests.support.catalog_fixtures import ENDPOINT_OF
from tests.support.telemetry import TelemetryOutput

THEATERS = ENDPOINT_OF[RouteKey.CGV_THEATERS]
CUT_NAME = "강남 \ud800 X"
SHOWN_NAME = "강남 \ufffd X"


def theaters_with_a_cut_name() -> str:
    """CGV's theater list, one name holding a lone surrogate, as JSON text (`\\ud800` escaped, as JSON has it)."""
    payload = realistic_payload(RouteKey.CGV_THEATERS, {})
    assert isinstance(payload, dict)
    payload["data"][0]["siteList"][0]["siteNm"] = CUT_NAME
    return json.dumps(payload)


def theater_names(data: dict[str, object]) -> list[str]:
    theaters = data["theaters"]
    assert isinstance(theaters, list)
    return [theater["theaterName"] for theater in theaters]


def unexpected_errors(telemetry: TelemetryOutput) -> list[object]:
    return [metric for metric in telemetry.metrics() if metric["name"] == "UnexpectedError"]


@pytest.mark.parametrize(
    ("direct_verified", "fault_at", "served_by"),
    [(True, "direct", "direct"), (False, "relay-upstream", "relay")],
    ids=["direct", "relay"],
)
def test_a_lone_surrogate_is_served_as_u_fffd_whichever_path_serves_it(
    lambdas: Lambdas, telemetry: TelemetryOutput, direct_verified: bool, fault_at: str, served_by: str
) -> None:
    lambdas.write_verdicts(direct=direct_verified)
    lambdas.loaded(lambdas.deploy())
    fault = parse_fault("respond", status=200, body=theaters_with_a_cut_name())
    lambdas.simulator.faults.set(f"{fault_at}:{RouteKey.CGV_THEATERS}", fault)

    answer = lambdas.lookup_endpoint(THEATERS)

    assert answer.status == 200, answer.body
    assert SHOWN_NAME in theater_names(answer.body["data"])
    assert lambdas.used() == {f"{served_by}:{RouteKey.CGV_THEATERS}": 1}
    assert unexpected_errors(telemetry) == []


def test_a_number_no_json_can_carry_is_a_direct_failure_that_falls_back_to_the_relay(
    lambdas: Lambdas, telemetry: TelemetryOutput
) -> None:
    lambdas.ready()
    payload = realistic_payload(RouteKey.CGV_THEATERS, {})
    assert isinstance(payload, dict)
    payload["data"][0]["siteList"][0]["mapX"] = "OVERFLOW"  # a field the lookup does not even read
    overflowing = json.dumps(payload).replace('"OVERFLOW"', "1e999")  # Infinity once decoded
    lambdas.simulator.faults.set(
        f"direct:{RouteKey.CGV_THEATERS}", parse_fault("respond", status=200, body=overflowing)
    )

    answer = lambdas.lookup_endpoint(THEATERS)

    assert answer.status == 200, answer.body  # the relay's answer
    assert lambdas.used() == {f"direct:{RouteKey.CGV_THEATERS}": 1, f"relay:{RouteKey.CGV_THEATERS}": 1}
    assert unexpected_errors(telemetry) == []


def test_an_answer_that_still_cannot_be_written_is_upstream_bad_response_not_a_500(
    lambdas: Lambdas, telemetry: TelemetryOutput, monkeypatch: pytest.MonkeyPatch
) -> None:
    router = lambdas.ready().router
    serve = router.route_operation

    def serve_a_lone_surrogate(*args: Any, **kwargs: Any) -> Any:
        answer = serve(*args, **kwargs)
        answer.data[0]["siteList"][0]["siteNm"] = CUT_NAME  # as if decoding had let it through
        return answer

    monkeypatch.setattr(router, "route_operation", serve_a_lone_surrogate)

    answer = lambdas.lookup_endpoint(THEATERS)

    assert answer.status == 502
    assert answer.body == error_body(
        "UPSTREAM_BAD_RESPONSE", "The upstream service answered with an unusable response."
    )
    assert unexpected_errors(telemetry) == []
