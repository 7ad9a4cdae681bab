"""Who the client is: the viewer's address only behind the stack's edge (the right origin key), else the source
IP, whatever the request says about itself."""

from __future__ import annotations

import hmac
from typing import Any

import pytest

from functions.adapters.secrets import Secrets
from functions.handlers import viewer
from functions.handlers.viewer import client_address, from_the_edge
from tests.support.telemetry import TelemetryOutput

EDGE_KEY = "edge-key-Vb83"
EDGE_IP = "130.176.0.9"
"""An edge server's address: what API Gateway sees behind CloudFront."""
SECRETS = Secrets.from_mapping({"EDGE_ORIGIN_SECRET": EDGE_KEY}, source="test")


def event(headers: dict[str, str], source_ip: str = EDGE_IP) -> dict[str, Any]:
    """A payload 2.0 event as API Gateway builds it (header names in lower case)."""
    return {
        "headers": {name.lower(): value for name, value in headers.items()},
        "requestContext": {"http": {"sourceIp": source_ip}},
    }


def through_the_edge(address: str, key: str = EDGE_KEY) -> dict[str, Any]:
    return event({"x-origin-verify": key, "CloudFront-Viewer-Address": address})


@pytest.mark.parametrize(
    ("address", "client"),
    [
        ("203.0.113.7:46532", "203.0.113.7"),
        ("2001:db8::1:46532", "2001:db8::1"),  # IPv6 comes without brackets
        ("2001:0db8:0000::0001:443", "2001:db8::1"),  # one client, however it is written
    ],
)
def test_behind_the_edge_the_viewer_is_the_client(address: str, client: str) -> None:
    assert client_address(through_the_edge(address), lambda: SECRETS) == client


@pytest.mark.parametrize(
    "headers",
    [
        {"x-origin-verify": "edge-key-Vb84", "CloudFront-Viewer-Address": "203.0.113.7:1"},  # a wrong key
        {"x-origin-verify": "", "CloudFront-Viewer-Address": "203.0.113.7:1"},
        {"CloudFront-Viewer-Address": "203.0.113.7:1"},  # no key at all: anyone can send the address
        {"x-origin-verify": EDGE_KEY},  # the key, but no address
        {"x-origin-verify": EDGE_KEY, "CloudFront-Viewer-Address": "203.0.113.7"},  # no port
        {"x-origin-verify": EDGE_KEY, "CloudFront-Viewer-Address": "not-an-ip:80"},
        {"x-origin-verify": EDGE_KEY, "CloudFront-Viewer-Address": "[2001:db8::1]:80"},
    ],
)
def test_otherwise_the_source_ip_is_the_client(headers: dict[str, str]) -> None:
    assert client_address(event(headers), lambda: SECRETS) == EDGE_IP


def test_a_request_straight_to_the_api_is_its_own_source_ip() -> None:
    assert client_address(event({}, source_ip="198.51.100.23"), lambda: SECRETS) == "198.51.100.23"


def test_without_a_configured_key_no_viewer_address_is_trusted_and_that_is_logged_once(
    telemetry: TelemetryOutput,
) -> None:
    viewer._warn_no_edge_key.cache_clear()
    no_key = Secrets.from_mapping({}, source="test")

    for _ in range(2):
        assert client_address(through_the_edge("203.0.113.7:1", key="anything"), lambda: no_key) == EDGE_IP

    warnings = [line for line in telemetry.logs() if line["message"] == "edge origin key missing"]
    assert len(warnings) == 1
    assert warnings[0]["level"] == "WARNING"
    assert warnings[0]["key"] == "EDGE_ORIGIN_SECRET"
    assert "anything" not in telemetry.text()


def test_the_secrets_are_read_only_when_the_request_presents_a_key() -> None:
    reads: list[int] = []

    def secrets() -> Secrets:
        reads.append(1)
        return SECRETS

    client_address(event({"CloudFront-Viewer-Address": "203.0.113.7:1"}), secrets)
    client_address(event({}), secrets)
    assert reads == []
    client_address(through_the_edge("203.0.113.7:1"), secrets)
    assert reads == [1]


def test_the_key_is_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    compared: list[tuple[bytes, bytes]] = []
    constant_time = hmac.compare_digest

    def compare_digest(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return constant_time(a, b)

    monkeypatch.setattr("functions.handlers.operator_auth.hmac.compare_digest", compare_digest)

    assert from_the_edge({"x-origin-verify": EDGE_KEY}, lambda: SECRETS)
    assert not from_the_edge({"x-origin-verify": EDGE_KEY + "x"}, lambda: SECRETS)
    assert len(compared) == 2
    # Digests of equal length whatever was presented: neither the key nor its length leaks through timing.
    assert {len(a) for a, _ in compared} == {len(b) for _, b in compared} == {32}
