"""The relay route: the self-hosted relay servers, one per relay group. docs/design.md, "Relay protocol",
gives the requests and the lookup answer for each relay answer.

Credentials live only in `RelayEndpoint`s and are sent only to URLs under the endpoint's base URL; a
retailer API key only in the body field its operation's spec names.
"""

from __future__ import annotations

import email.utils
import math
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx
from pydantic import BaseModel, TypeAdapter, ValidationError

from functions.adapters.http import OK_ONLY, decode_json, exchange, reason_for_status
from functions.catalog.relay_rules import ApiKey
from functions.catalog.spec import OperationSpec
from functions.core import ApiError, Clock, Reason, RelayCheck, RelayGroup, RouteFailure, RouteKey, group_of
from functions.core.errors import GS25_SESSION_UNAVAILABLE, ErrorCode

LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
MAX_RETRY_AFTER_S = 86_400
DEFAULT_RETRY_AFTER_S = 60
"""The `Retry-After` answered when a relay's 429 has none or an unreadable one: a 429 always has one."""
RELAY_FAILURE_BODY = {"error": "Relay request failed"}
"""What the convenience relay answers for any failure of its own or of the retailer behind it."""
UPSTREAM_AUTH_STATUSES = frozenset({401, 403})
"""The gs25-stock statuses the convenience relay passes on from GS25 (its own refusal of us is a 401 too)."""
OK_AND_AUTH = frozenset({200, *UPSTREAM_AUTH_STATUSES})
HEALTH_PATHS: Mapping[RelayGroup, str] = {
    RelayGroup.OLIVEYOUNG: "/health",
    RelayGroup.CONVENIENCE: "/v1/convenience/health",
    RelayGroup.DTRYX: "/v1/dtryx/health",
    RelayGroup.CGV: "/v1/cgv/health",
}


class RelayConfigError(ValueError):
    """A relay's URL or credentials are unusable. The message names the problem, never a secret value."""


@dataclass(frozen=True, slots=True)
class RelayCredentials:
    """A relay's Bearer token, optional Cloudflare Access pair and optional retailer API key (the convenience
    relay's GS25 key, which it passes on to GS25). Their values never appear in repr/str."""

    token: str
    access_client_id: str | None = None
    access_client_secret: str | None = None
    api_key: str | None = None

    def __repr__(self) -> str:
        access, api_key = ("***" if value else None for value in (self.access_client_id, self.api_key))
        return f"RelayCredentials(token=***, access={access}, api_key={api_key})"

    __str__ = __repr__


@dataclass(frozen=True, slots=True)
class RelayEndpoint:
    """A validated relay: its group, base URL (no trailing slash) and credentials."""

    group: RelayGroup
    base_url: str
    credentials: RelayCredentials

    @classmethod
    def parse(cls, group: RelayGroup, base_url: str, credentials: RelayCredentials) -> RelayEndpoint:
        try:
            url = urlsplit(base_url.strip())
            host = url.hostname or ""
            url.port  # noqa: B018  (raises ValueError on a malformed port)
        except ValueError:
            raise RelayConfigError(f"{group} relay URL is not a valid URL") from None
        if not host:
            raise RelayConfigError(f"{group} relay URL needs a host")
        if url.scheme != "https" and not (url.scheme == "http" and host in LOOPBACK_HOSTS):
            raise RelayConfigError(f"{group} relay URL must be https (http only for loopback)")
        if url.username is not None or url.password is not None or "@" in url.netloc:
            raise RelayConfigError(f"{group} relay URL must not contain credentials")
        if url.query or url.fragment or base_url.rstrip().endswith(("?", "#")):
            raise RelayConfigError(f"{group} relay URL must not have a query or fragment")
        if not credentials.token.strip():
            raise RelayConfigError(f"{group} relay token is missing")
        if bool(credentials.access_client_id) != bool(credentials.access_client_secret):
            raise RelayConfigError(f"{group} relay Access client id and secret must be set together")
        for name, value in (
            ("token", credentials.token),
            ("Access client id", credentials.access_client_id),
            ("Access client secret", credentials.access_client_secret),
        ):
            # They go into header values: anything else fails later, with the value in the error text.
            if value and not _is_visible_ascii(value):
                raise RelayConfigError(f"{group} relay {name} must be visible ASCII (no spaces or controls)")
        if credentials.api_key is not None and not _is_valid_api_key(credentials.api_key):
            raise RelayConfigError(f"{group} relay API key must be 1 to 512 characters without controls")
        return cls(group, f"{url.scheme}://{url.netloc}{url.path.rstrip('/')}", credentials)

    def url(self, path: str) -> str:
        built = f"{self.base_url}{path}"
        # Credentials are attached to this URL; it must stay under the relay's own base.
        if not built.startswith(self.base_url + "/"):
            raise RuntimeError("relay URL escaped its base")
        return built

    def headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json", "Authorization": f"Bearer {self.credentials.token}"}
        if self.credentials.access_client_id and self.credentials.access_client_secret:
            headers["CF-Access-Client-Id"] = self.credentials.access_client_id
            headers["CF-Access-Client-Secret"] = self.credentials.access_client_secret
        return headers


def _is_visible_ascii(value: str) -> bool:
    return all("!" <= char <= "~" for char in value)


API_KEY = TypeAdapter(ApiKey)
"""The relays' rule for a retailer API key in a relay body: a key that breaks it is never sent."""


def _is_valid_api_key(value: str) -> bool:
    try:
        API_KEY.validate_python(value)
    except ValidationError:  # its text quotes the value: never let it escape
        return False
    return True


class RelayEvents(Protocol):
    """What the relay transport tells the outside world (logs and metrics); must not raise or block."""

    def gs25_session_expired(self) -> None: ...


class RelayTransport:
    """Calls the relays. `endpoints` holds each configured group's endpoint or the reason it is unusable."""

    def __init__(
        self,
        client: httpx.Client,
        endpoints: Mapping[RelayGroup, RelayEndpoint | RelayConfigError],
        *,
        events: RelayEvents,
        clock: Clock | None = None,
    ) -> None:
        self._client = client
        self._endpoints = dict(endpoints)
        self._clock: Clock = clock or (lambda: int(time.time() * 1000))
        self._events = events

    def fetch(self, spec: OperationSpec[Any, Any], params: BaseModel, *, timeout_ms: int) -> Any:
        """The validated body of the relay's answer; raises `ApiError` (429, 502, 503 or 504)."""
        endpoint = self._endpoints.get(group_of(spec.key))
        if not isinstance(endpoint, RelayEndpoint):
            raise ApiError(ErrorCode.UPSTREAM_ROUTE_UNAVAILABLE)
        group = endpoint.group
        payload = dict(spec.relay_body(params))
        api_key = endpoint.credentials.api_key
        if spec.relay_api_key_field is not None and api_key:
            payload[spec.relay_api_key_field] = api_key
        request = self._client.build_request(
            "POST",
            endpoint.url(f"/v1/{group}/{spec.relay_operation}"),
            headers={
                **endpoint.headers(),
                "Content-Type": "application/json",
                "x-request-id": uuid.uuid4().hex,
            },
            json=payload,
        )
        passes_on_gs25_auth = spec.key is RouteKey.GS25_STOCK
        try:
            answer = exchange(
                self._client,
                request,
                timeout_ms=timeout_ms,
                body_statuses=OK_AND_AUTH if passes_on_gs25_auth else OK_ONLY,
            )
        except RouteFailure as failure:
            if failure.reason is Reason.TIMEOUT:
                raise ApiError(ErrorCode.UPSTREAM_TIMEOUT) from None
            raise ApiError(ErrorCode.UPSTREAM_BAD_RESPONSE) from None
        if passes_on_gs25_auth and answer.status in UPSTREAM_AUTH_STATUSES and _is_relay_failure(answer.body):
            self._events.gs25_session_expired()
            raise ApiError(ErrorCode.UPSTREAM_ROUTE_UNAVAILABLE, GS25_SESSION_UNAVAILABLE)
        if answer.status != 200:
            raise self._status_error(answer.status, answer.headers)
        try:
            body = decode_json(answer.body)
            if is_failure_envelope(group, body):
                raise ApiError(ErrorCode.UPSTREAM_BAD_RESPONSE)
            return spec.validate(body)
        except RouteFailure:
            raise ApiError(ErrorCode.UPSTREAM_BAD_RESPONSE) from None

    def check_health(self, group: RelayGroup, *, timeout_ms: int, now: int) -> RelayCheck:
        """One health check of the group's relay; `now` is taken by the caller before the request. Never raises."""
        endpoint = self._endpoints.get(group)
        if not isinstance(endpoint, RelayEndpoint):
            return RelayCheck(group, healthy=False, checked_at=now, reason=Reason.CONFIGURATION)
        try:
            request = self._client.build_request(
                "GET", endpoint.url(HEALTH_PATHS[group]), headers=endpoint.headers()
            )
            answer = exchange(self._client, request, timeout_ms=timeout_ms)
            if answer.status != 200:
                return RelayCheck(group, False, now, reason_for_status(answer.status))
            body = decode_json(answer.body)
        except RouteFailure as failure:
            return RelayCheck(group, healthy=False, checked_at=now, reason=failure.reason)
        except Exception:  # a health check reports; it never takes the probe down
            return RelayCheck(group, healthy=False, checked_at=now, reason=Reason.NETWORK_ERROR)
        if not isinstance(body, dict):
            return RelayCheck(group, healthy=False, checked_at=now, reason=Reason.INVALID_RESPONSE)
        if not is_ready(group, body):
            return RelayCheck(group, healthy=False, checked_at=now, reason=Reason.UNAVAILABLE)
        return RelayCheck(group, healthy=True, checked_at=now, reason=Reason.OK)

    def _status_error(self, status: int, headers: httpx.Headers) -> ApiError:
        if status == 429:
            retry_after = parse_retry_after(headers.get("retry-after"), now=self._clock())
            return ApiError(
                ErrorCode.RELAY_QUOTA_EXCEEDED,
                retry_after=DEFAULT_RETRY_AFTER_S if retry_after is None else retry_after,
            )
        if status == 503:
            return ApiError(ErrorCode.UPSTREAM_ROUTE_UNAVAILABLE)
        if status == 504:
            return ApiError(ErrorCode.UPSTREAM_TIMEOUT)
        return ApiError(ErrorCode.UPSTREAM_BAD_RESPONSE)


def _is_relay_failure(body: bytes) -> bool:
    try:
        return decode_json(body) == RELAY_FAILURE_BODY
    except RouteFailure:
        return False


def is_ready(group: RelayGroup, body: Mapping[str, object]) -> bool:
    """The documented healthy body: `state == "ready"` for Olive Young, `status == "ok"` for the others."""
    if group is RelayGroup.OLIVEYOUNG:
        return body.get("state") == "ready"
    return body.get("status") == "ok"


def is_failure_envelope(group: RelayGroup, body: object) -> bool:
    """A 200 whose body says the relay (or the retailer behind it) failed; e.g. the 7-Eleven store rejection
    `{success: false, error, upstreamError: {status: 400, code: 501, message}}`."""
    if not isinstance(body, dict):
        return True
    if body.get("success") is False or "error" in body or "upstreamError" in body:
        return True
    if group is RelayGroup.CONVENIENCE:
        return "resp_cd" in body and body["resp_cd"] != "0000"
    if group is RelayGroup.OLIVEYOUNG:
        return body.get("status") != "SUCCESS"
    if group is RelayGroup.CGV:
        return body.get("statusCode") != 0
    return body.get("RetCode") != "success"


def parse_retry_after(value: str | None, *, now: int) -> int | None:
    """Seconds to wait from a `Retry-After` of delta-seconds or an HTTP date, clamped to 1..86,400; None when
    absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # str.isdigit alone accepts "²", which int() refuses
        digits = value.lstrip("0") or "0"
        # More digits than the clamp has are past it; int() would refuse very long ones (over 4,300 digits).
        seconds = int(digits) if len(digits) <= len(str(MAX_RETRY_AFTER_S)) else MAX_RETRY_AFTER_S
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, OverflowError):  # OverflowError: fields no datetime can hold
            return None
        if when.tzinfo is None:
            return None
        seconds = math.ceil(when.timestamp() - now / 1000)
    return min(max(seconds, 1), MAX_RETRY_AFTER_S)
