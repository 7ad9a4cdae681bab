"""The relay's call to the retailer: the operation's catalog spec builds the request and validates the answer,
exactly as for a direct lookup and the probe, over the same bounded exchange (`functions/adapters/http.py`).

What the relay adds: the retailer's answer is also held to everything the Lambda's relay transport checks
(no failure envelope), stock quantities must be readable where a stock lookup asked for them, GS25 stock gets
its credentials (`relay/gs25.py`) and passes GS25's 401/403 on, and 7-Eleven's refusal of a store lookup
becomes its documented soft-failure envelope. Nothing from the caller's request but the validated body goes
upstream: never its headers, never the relay token.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from typing import Any

import httpx
from pydantic import BaseModel, ValidationError

from functions.adapters.http import OK_ONLY, Answer, decode_json, exchange
from functions.adapters.relay import is_failure_envelope
from functions.catalog import spec_for
from functions.catalog.spec import SigningKeys, no_keys
from functions.core import Clock, Reason, RouteFailure, RouteKey, group_of
from relay.config import visible_ascii
from relay.gs25 import Gs25Auth, Gs25Refused

SEVEN_STOCK_REJECTION = "정상적인 점포 조회 요청이 아닙니다."
"""7-Eleven's answer (HTTP 400, code 501) to a store lookup it will not serve."""
MAX_REJECTION_BYTES = 16_384
API_KEY_FIELD = "apiKey"
_QUANTITY_TEXT = re.compile(r"-1|[0-9]{1,9}")


class UpstreamFailed(Exception):
    """No usable answer. `status` is what the shared relay core answers (502, 504, or GS25's 401/403);
    `envelope`, when set, is 7-Eleven's soft failure, which that core answers with HTTP 200."""

    def __init__(self, status: int = 502, envelope: Mapping[str, Any] | None = None) -> None:
        super().__init__(f"upstream failed ({status})")
        self.status = status
        self.envelope = envelope


class InputUnusable(Exception):
    """A body that passes the relay's input rule but can make no request (the Lambda never sends one)."""


def relay_params(key: RouteKey, body: Mapping[str, Any]) -> BaseModel:
    """The spec's parameters for a relay body (which passed the relay's input rule). Raises `InputUnusable`
    for a body that makes no valid request, or carries an API key no header can hold as is (it would fail
    after its quota unit was spent)."""
    spec = spec_for(key)
    api_key = body.get(spec.relay_api_key_field) if spec.relay_api_key_field else None
    if isinstance(api_key, str) and not visible_ascii(api_key):
        raise InputUnusable(f"{spec.relay_api_key_field} is not visible ASCII")
    fields = {name: value for name, value in body.items() if name != spec.relay_api_key_field}
    try:
        params: BaseModel = spec.params.model_validate(fields, strict=False)
    except ValidationError:
        raise InputUnusable("no valid request") from None
    return params


def compact_json(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


class UpstreamCaller:
    """Synchronous (the relay runs it on a worker thread); thread-safe."""

    def __init__(
        self,
        client: httpx.Client,
        *,
        gs25: Gs25Auth | None = None,
        keys: SigningKeys = no_keys,
        clock: Clock = lambda: time.time_ns() // 1_000_000,
    ) -> None:
        self._client = client
        self._gs25 = gs25 or Gs25Auth()
        self._keys = keys  # CGV's signing key, for the operations that sign their requests
        self._clock = clock

    def certain_refusal(self, key: RouteKey, body: Mapping[str, Any]) -> int | None:
        """The status a call would end with before reaching the retailer (GS25 stock without a usable
        credential: 403), so that it spends no quota unit; None when only the call can tell."""
        if key is RouteKey.GS25_STOCK and self._gs25.certainly_refused(_caller_api_key(body)):
            return 403
        return None

    def call(self, key: RouteKey, body: Mapping[str, Any], params: BaseModel, *, timeout_ms: int) -> bytes:
        """The retailer's validated answer as compact JSON. Raises `UpstreamFailed`.

        Runs on the calling thread until its request has ended (`exchange` ends it at `timeout_ms`): the
        relay bounds its upstream calls by the threads running this."""
        spec = spec_for(key)
        built = spec.request_to_send(params, keys=self._keys, now=self._clock())
        statuses = frozenset({200, 400}) if key is RouteKey.SEVEN_STOCK else OK_ONLY

        def send(auth_headers: Mapping[str, str]) -> Answer:
            request = self._client.build_request(
                built.method, built.url, headers={**built.headers, **auth_headers}, json=built.json_body
            )
            return exchange(self._client, request, timeout_ms=timeout_ms, body_statuses=statuses)

        try:
            gs25 = key is RouteKey.GS25_STOCK
            answer = self._gs25.call(send, _caller_api_key(body)) if gs25 else send({})
            if key is RouteKey.GS25_STOCK and answer.status in (401, 403):
                raise UpstreamFailed(answer.status)
            if key is RouteKey.SEVEN_STOCK and answer.status == 400:
                raise UpstreamFailed(502, _seven_stock_envelope(answer.body))
            if answer.status != 200:
                raise UpstreamFailed(502)
            decoded = decode_json(answer.body)
            if is_failure_envelope(group_of(key), decoded) or not _quantities_readable(key, body, decoded):
                raise UpstreamFailed(502)
            spec.validate(decoded)
        except Gs25Refused as refused:
            raise UpstreamFailed(refused.status) from None
        except RouteFailure as failure:
            raise UpstreamFailed(504 if failure.reason is Reason.TIMEOUT else 502) from None
        except ValidationError:
            raise UpstreamFailed(502) from None
        try:
            return compact_json(decoded)
        except ValueError:  # UnicodeEncodeError: decode_json makes text valid, so this is a last guard
            raise UpstreamFailed(502) from None


def _caller_api_key(body: Mapping[str, Any]) -> str | None:
    api_key = body.get(API_KEY_FIELD)
    return api_key if isinstance(api_key, str) else None


def _seven_stock_envelope(body: bytes) -> Mapping[str, Any] | None:
    """The soft-failure envelope for 7-Eleven's exact store-lookup refusal; None for any other 400."""
    if len(body) > MAX_REJECTION_BYTES:
        return None
    try:
        refusal = decode_json(body)
    except RouteFailure:
        return None
    if not (
        isinstance(refusal, dict)
        and refusal.get("success") is False
        and refusal.get("code") == 501
        and refusal.get("message") == SEVEN_STOCK_REJECTION
    ):
        return None
    return {
        "success": False,
        "error": "Relay request failed",
        "upstreamError": {"status": 400, "code": 501, "message": SEVEN_STOCK_REJECTION},
    }


def is_quantity(value: object) -> bool:
    """A stock count the relay passes on: an integer >= -1 (-1: unknown) or such a string."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value >= -1
    return isinstance(value, str) and _QUANTITY_TEXT.fullmatch(value) is not None


def _quantities_readable(key: RouteKey, request: Mapping[str, Any], answer: object) -> bool:
    """Where the request asked for one item's stock, every row must carry a readable quantity (never a
    missing value read as 0)."""
    if not isinstance(answer, dict):
        return True  # the spec refuses it
    if key is RouteKey.CU_STORE and request.get("itemCd"):
        rows, field = answer.get("storeList"), "stock"
    elif key is RouteKey.GS25_STOCK and (request.get("itemCode") or request.get("keyword")):
        rows, field = answer.get("stores"), "realStockQuantity"
    else:
        return True
    return isinstance(rows, list) and all(
        isinstance(row, dict) and is_quantity(row.get(field)) for row in rows
    )
