"""The operator endpoints over HTTP (httpx), with every failure turned into a message an operator can act on."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from functions.core.model import OverrideMode
from functions.handlers.wire import OverrideRequestBody
from ops_cli.connection import CliError, Connection
from ops_cli.untrusted import Reply, printable, send

ROUTES_PATH = "/api/health/routes"
TIMEOUT = httpx.Timeout(10.0, read=40.0)
"""A probe POST runs the full check (up to about 30 s behind API Gateway)."""
ANSWER_WITHIN_S = 50.0
"""An answer still arriving after this long is not the API's."""


class ApiError(CliError):
    """The API answered with its error envelope: status, code, message and any field errors."""

    def __init__(self, status: int, code: str, message: str, fields: Sequence[Mapping[str, Any]]) -> None:
        # One line per field error; each part from the answer is made printable, so these are the only breaks.
        details = "".join(
            f"\n  {printable(str(f.get('field') or 'body'))}: {printable(str(f.get('message')))}"
            for f in fields
        )
        super().__init__(f"{printable(message)} ({status} {printable(code)}){details}")
        self.status = status
        self.code = code


@dataclass(frozen=True)
class Answer:
    """A successful answer's `data`, and the server's clock (epoch ms) from its Date header."""

    data: Any
    server_now: int


@dataclass(frozen=True)
class SlotTaken:
    """POST in a slot that was already probed: when the next slot starts, and the current snapshot."""

    retry_after_s: int
    data: Any
    server_now: int


class OpsApi:
    def __init__(self, connection: Connection, *, transport: httpx.BaseTransport | None = None) -> None:
        self._connection = connection
        self._http = httpx.Client(
            base_url=connection.url,
            headers={"Authorization": f"Bearer {connection.secret}"},
            timeout=TIMEOUT,
            transport=transport,
            follow_redirects=False,
        )

    def __enter__(self) -> OpsApi:
        return self

    def __exit__(self, *_: object) -> None:
        self._http.close()

    def routes(self) -> Answer:
        return self._answer(self._request("GET", ROUTES_PATH))

    def probe(self) -> Answer | SlotTaken:
        response = self._request("POST", ROUTES_PATH)
        if response.status_code == 429:
            body = self._envelope(response)
            retry_after = _seconds(response.headers.get("retry-after")) or _seconds(
                (body.get("error") or {}).get("retryAfter")
            )
            return SlotTaken(retry_after or 0, body.get("data"), _server_now(response))
        return self._answer(response)

    def set_override(self, key: str, mode: OverrideMode, reason: str, ttl_seconds: int) -> Answer:
        body = OverrideRequestBody.model_validate({"mode": mode, "reason": reason, "ttlSeconds": ttl_seconds})
        return self._answer(self._request("PUT", _override_path(key), json=body.to_json()))

    def clear_override(self, key: str) -> Answer | None:
        """The removed override, or None when the key had none."""
        response = self._request("DELETE", _override_path(key))
        if (
            response.status_code == 404
            and (self._envelope(response).get("error") or {}).get("code") == "NO_OVERRIDE"
        ):
            return None
        return self._answer(response)

    def _request(self, method: str, path: str, *, json: object = None) -> Reply:
        url = self._connection.url
        try:
            request = self._http.build_request(method, path, json=json)
            return send(self._http, request, where=url, within_s=ANSWER_WITHIN_S)
        except httpx.TimeoutException:
            raise CliError(f"no answer from {url} in time (network or API down?)") from None
        except httpx.TransportError as error:
            raise CliError(f"cannot reach {url}: {type(error).__name__}: {error}") from None

    def _answer(self, response: Reply) -> Answer:
        body = self._envelope(response)
        if response.status_code == 200 and body.get("success") is True:
            return Answer(body.get("data"), _server_now(response))
        error = body.get("error") or {}
        code, message = str(error.get("code", "UNKNOWN")), str(error.get("message", ""))
        if code == "UNAUTHORIZED_HEALTH_CHECK":
            message = f"the API refused the operator secret from {self._connection.source}"
        fields = error.get("fields")
        listed = [f for f in fields if isinstance(f, dict)] if isinstance(fields, list) else []
        raise ApiError(response.status_code, code, message, listed)

    def _envelope(self, response: Reply) -> dict[str, Any]:
        body = response.body
        if not isinstance(body, dict) or not isinstance(body.get("error", {}), dict):
            raise CliError(
                f"unexpected answer from {self._connection.url}: HTTP {response.status_code} "
                "without the API's JSON envelope (is this the Route Health API URL?)"
            )
        return body


def _override_path(key: str) -> str:
    return f"{ROUTES_PATH}/{key}/override"


def _seconds(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


def _server_now(response: Reply) -> int:
    """The server's clock (its Date header; the sandbox's follows the sandbox clock), else this machine's."""
    try:
        return int(parsedate_to_datetime(response.headers["date"]).timestamp() * 1000)
    except (KeyError, TypeError, ValueError):
        return time.time_ns() // 1_000_000
