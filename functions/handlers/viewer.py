"""Who the client is, for the daily quota and the operator audit (docs/operations.md, "Daily rate limit (per client)").

Behind the stack's CloudFront distribution API Gateway's `sourceIp` is an edge server's address, shared by
everyone that edge serves. The distribution forwards the viewer's own address in `CloudFront-Viewer-Address`
(`ip:port`, an IPv6 address without brackets) and adds `x-origin-verify` with the stack's generated key. A
request carrying that key is trusted to come from the distribution, and so is its viewer address; any other
request (straight to `execute-api`, or with a wrong key) is the client its `sourceIp` says, whatever headers
it sends. The key is read from the secrets only when the header is there, and compared in constant time.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

from functions.adapters.secrets import EDGE_ORIGIN_SECRET_KEY, Secrets
from functions.handlers.operator_auth import secrets_match
from functions.handlers.telemetry import logger

ORIGIN_VERIFY_HEADER = "x-origin-verify"
VIEWER_ADDRESS_HEADER = "CloudFront-Viewer-Address"


def source_ip(event: Mapping[str, Any]) -> str:
    """API Gateway's `requestContext.http.sourceIp` (the TCP peer it saw), or "" if absent."""
    http = (event.get("requestContext") or {}).get("http") or {}
    return str(http.get("sourceIp") or "")


def client_address(event: Mapping[str, Any], secrets: Callable[[], Secrets]) -> str:
    """The viewer's address when the request comes through the stack's edge, else its source IP."""
    headers: Mapping[str, str] = event.get("headers") or {}
    viewer = _viewer_address(headers.get(VIEWER_ADDRESS_HEADER.lower()))
    if viewer is not None and from_the_edge(headers, secrets):
        return viewer
    return source_ip(event)


def from_the_edge(headers: Mapping[str, str], secrets: Callable[[], Secrets]) -> bool:
    """The request carries the stack's origin key (API Gateway gives header names in lower case)."""
    presented = headers.get(ORIGIN_VERIFY_HEADER)
    if not presented:
        return False
    expected = secrets().edge_origin_secret
    if expected is None:
        _warn_no_edge_key()
        return False
    return secrets_match(presented, expected.get_secret_value())


@cache
def _warn_no_edge_key() -> None:
    # Once per container: requests come through an edge, but the secret has lost the key it sends.
    logger.warning(
        "edge origin key missing",
        extra={
            "key": EDGE_ORIGIN_SECRET_KEY,
            "effect": "clients behind the edge count by the edge's address",
        },
    )


def _viewer_address(value: str | None) -> str | None:
    """`203.0.113.7:46532` -> `203.0.113.7`; `2001:db8::1:46532` -> `2001:db8::1`; None if not an address."""
    host, separator, port = (value or "").strip().rpartition(":")
    if not separator or not port.isdigit():
        return None
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return None
