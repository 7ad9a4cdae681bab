"""The direct route: one bounded call to the retailer's own API, exactly as its spec describes.

The transport holds nothing but an httpx client; the request comes only from the spec, whose headers are the
retailer's public ones. Relay tokens and Access keys are never in reach, and a last check refuses to send
anything that looks like one.
"""

from __future__ import annotations

from typing import Any

import httpx
from pydantic import BaseModel

from functions.adapters.http import Answer, decode_json, exchange, reason_for_status
from functions.catalog.spec import OperationSpec
from functions.core import PINNED_TO_RELAY, Reason, RouteFailure, UpstreamRejected

CREDENTIAL_HEADERS = frozenset({"authorization", "cf-access-client-id", "cf-access-client-secret"})
"""Headers that carry relay credentials; none of them may ever reach a retailer."""
CALLER_MEANINGFUL_STATUSES = frozenset({400, 404, 422})
"""Upstream answers that mean something to the caller and say nothing about the route's health."""


class DirectTransport:
    """Calls a retailer directly. Raises `RouteFailure(reason)` or `UpstreamRejected(400/404/422)`."""

    def __init__(self, client: httpx.Client) -> None:
        self._client = client

    def fetch(
        self,
        spec: OperationSpec[Any, Any],
        params: BaseModel,
        *,
        timeout_ms: int,
    ) -> Any:
        if spec.key in PINNED_TO_RELAY:
            raise RouteFailure(Reason.PINNED_RELAY)
        built = spec.build_request(params)
        request = self._client.build_request(
            built.method, built.url, headers=dict(built.headers), json=built.json_body
        )
        leaked = CREDENTIAL_HEADERS.intersection(name.lower() for name in request.headers)
        if leaked:
            raise RuntimeError(f"refusing to send {sorted(leaked)} to a retailer")
        answer = exchange(self._client, request, timeout_ms=timeout_ms)
        return spec.validate(decode_json(_body_of(answer)))


def _body_of(answer: Answer) -> bytes:
    if answer.status == 200:
        return answer.body
    if answer.status in CALLER_MEANINGFUL_STATUSES:
        raise UpstreamRejected(answer.status)
    raise RouteFailure(reason_for_status(answer.status))
