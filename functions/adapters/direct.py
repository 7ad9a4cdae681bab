"""The direct route: one bounded call to the retailer's own API, exactly as its spec describes.

The transport holds an httpx client and, for the operations that sign their requests (CGV), a way to read
their signing key; the request comes only from the spec, whose headers are the retailer's public ones plus
any signature (never the key). Relay tokens and Access keys are never in reach, and a last check refuses to
send anything that looks like one.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
from pydantic import BaseModel

from functions.adapters.http import Answer, decode_json, exchange, reason_for_status
from functions.catalog.spec import OperationSpec, SigningKeys, no_keys
from functions.core import PINNED_TO_RELAY, Clock, Reason, RouteFailure, UpstreamRejected

CREDENTIAL_HEADERS = frozenset({"authorization", "cf-access-client-id", "cf-access-client-secret"})
"""Headers that carry relay credentials; none of them may ever reach a retailer."""
CALLER_MEANINGFUL_STATUSES = frozenset({400, 404, 422})
"""Upstream answers that mean something to the caller and say nothing about the route's health."""


class DirectTransport:
    """Calls a retailer directly. Raises `RouteFailure(reason)` or `UpstreamRejected(400/404/422)`.

    `keys` reads a signing key (a secret value) when a signed request is built, so a rotated key is used from
    the next request on; `clock` stamps the signature."""

    def __init__(
        self, client: httpx.Client, *, keys: SigningKeys = no_keys, clock: Clock | None = None
    ) -> None:
        self._client = client
        self._keys = keys
        self._clock: Clock = clock or (lambda: time.time_ns() // 1_000_000)

    def fetch(
        self,
        spec: OperationSpec[Any, Any],
        params: BaseModel,
        *,
        timeout_ms: int,
    ) -> Any:
        if spec.key in PINNED_TO_RELAY:
            raise RouteFailure(Reason.PINNED_RELAY)
        built = spec.request_to_send(params, keys=self._keys, now=self._clock())
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
