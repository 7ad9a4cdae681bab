"""CGV through the real handlers: without CGV_SIGNING_KEY nothing is sent to CGV, the probe reports
`configuration`, lookups go through the relay (which has its own key), and with no relay either a lookup is
a 503 that names the missing key."""

from __future__ import annotations

from functions.adapters.secrets import Secrets
from functions.catalog import cgv
from functions.core import RouteKey
from tests.integration.conftest import TEST_SECRET_VALUES, Lambdas

CGV_KEYS = [key for key in RouteKey if key.value.startswith("cgv-")]
WITHOUT_THE_KEY = Secrets.from_mapping(
    {name: value for name, value in TEST_SECRET_VALUES.items() if name != cgv.SIGNING_KEY}, source="test"
)


def test_with_the_key_the_probe_finds_cgv_direct_and_its_relay_healthy(lambdas: Lambdas) -> None:
    lambdas.deploy()
    result = lambdas.probe()
    assert {key: result["routes"][key]["direct"] for key in CGV_KEYS} == dict.fromkeys(CGV_KEYS, True)
    assert result["relays"]["cgv"] == {"healthy": True, "reason": "ok"}
    assert {name: lambdas.used()[name] for name in ("relay-health:cgv", "direct:cgv-theaters")} == {
        "relay-health:cgv": 1,
        "direct:cgv-theaters": 1,
    }


def test_without_the_key_the_probe_reports_configuration_and_sends_nothing_to_cgv(lambdas: Lambdas) -> None:
    lambdas.deploy(secrets=WITHOUT_THE_KEY)
    result = lambdas.probe()
    assert {result["routes"][key]["reason"] for key in CGV_KEYS} == {"configuration"}
    assert not any(result["routes"][key]["direct"] for key in CGV_KEYS)
    assert result["relays"]["cgv"]["healthy"] is True  # the relay signs with its own copy of the key
    assert not [name for name in lambdas.used() if name.startswith("direct:cgv-")]


def test_without_the_key_lookups_go_through_the_relay(lambdas: Lambdas) -> None:
    lookups = lambdas.deploy(secrets=WITHOUT_THE_KEY)
    lambdas.probe()
    assert lookups.snapshots is not None
    lookups.snapshots.invalidate()
    lambdas.loaded(lookups)
    lambdas.simulator.reset_calls()
    answer = lambdas.lookup("/api/cgv/theaters", {"keyword": "강남"})
    assert answer.status == 200, answer.body
    assert answer.body["data"]["theaters"][0]["theaterCode"] == "0056"
    assert lambdas.used() == {"relay:cgv-theaters": 1}


def test_without_the_key_and_without_a_relay_a_lookup_is_a_503_naming_the_key(lambdas: Lambdas) -> None:
    lambdas.deploy(secrets=WITHOUT_THE_KEY, DTRYX_RELAY_URL="")  # and so no CGV relay either
    answer = lambdas.lookup("/api/cgv/movies", {"theaterCode": "0056"})
    assert answer.status == 503
    assert answer.body["error"]["code"] == "UPSTREAM_ROUTE_UNAVAILABLE"
    assert "CGV_SIGNING_KEY" in answer.body["error"]["message"]
    assert lambdas.used() == {}  # nothing was sent anywhere
