"""The error model: every code an answer can carry (with its status and message) and the one exception that
answers with one, and the one envelope and headers every surface answers an error with (docs/design.md,
"HTTP API").

Errors carry only fixed codes and messages, never upstream text or secrets. Every raise makes a fresh object:
one raised again would chain each raise's frames (events, bodies) onto its traceback.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum
from typing import Any, Final, Self

from functions.core.model import Reason


class ErrorCode(StrEnum):
    """Every `error.code`, with its HTTP status and message, and whether the lookup API answers with it."""

    status: int
    message: str
    lookup: bool
    """The lookup API (REST and MCP) answers with it; the rest belong to the operator API."""

    def __new__(cls, code: str, status: int, message: str, lookup: bool = True) -> Self:
        member = str.__new__(cls, code)
        member._value_ = code
        member.status, member.message, member.lookup = status, message, lookup
        return member

    INVALID_INPUT = "INVALID_INPUT", 400, "The request parameters are invalid."
    UPSTREAM_REJECTED = "UPSTREAM_REJECTED", 400, "The upstream service rejected the request."
    """With the upstream's own status: 400 or 422."""
    NOT_FOUND = "NOT_FOUND", 404, "No such endpoint."
    UPSTREAM_NOT_FOUND = "UPSTREAM_NOT_FOUND", 404, "The upstream service has no such item."
    DAILY_RATE_LIMIT_EXCEEDED = (
        "DAILY_RATE_LIMIT_EXCEEDED",
        429,
        "This client has used its lookups for today; the limit resets at midnight in Korea.",
    )
    RELAY_QUOTA_EXCEEDED = (
        "RELAY_QUOTA_EXCEEDED",
        429,
        "The relay's request quota is used up; try again later.",
    )
    INTERNAL_ERROR = "INTERNAL_ERROR", 500, "Something went wrong; try again later."
    UPSTREAM_BAD_RESPONSE = (
        "UPSTREAM_BAD_RESPONSE",
        502,
        "The upstream service answered with an unusable response.",
    )
    UPSTREAM_ROUTE_UNAVAILABLE = (
        "UPSTREAM_ROUTE_UNAVAILABLE",
        503,
        "Neither the direct route nor the relay is working right now.",
    )
    UPSTREAM_TIMEOUT = "UPSTREAM_TIMEOUT", 504, "The upstream service did not answer in time."

    UNAUTHORIZED_HEALTH_CHECK = (
        "UNAUTHORIZED_HEALTH_CHECK",
        401,
        "A valid health check secret is required.",
        False,
    )
    UNKNOWN_ROUTE_KEY = "UNKNOWN_ROUTE_KEY", 404, "No such route key.", False
    NO_OVERRIDE = "NO_OVERRIDE", 404, "The route has no override to clear.", False
    PROBE_SLOT_TAKEN = (
        "PROBE_SLOT_TAKEN",
        429,
        "The routes were already checked in this 5-minute slot; try again later.",
        False,
    )
    HEALTH_CHECK_SECRET_NOT_CONFIGURED = (
        "HEALTH_CHECK_SECRET_NOT_CONFIGURED",
        503,
        "The health check secret is not configured.",
        False,
    )
    ROUTE_HEALTH_NOT_CONFIGURED = (
        "ROUTE_HEALTH_NOT_CONFIGURED",
        503,
        "The route verdict store is not configured.",
        False,
    )
    ROUTE_HEALTH_FAILED = (
        "ROUTE_HEALTH_FAILED",
        503,
        "The route health state could not be read or updated.",
        False,
    )


FieldError = Mapping[str, str | None]
"""`{"location": "query" | "path" | "body", "field": name or None (a rule across fields), "message"}`."""


def field_errors(location: str, errors: Iterable[Mapping[str, Any]]) -> list[FieldError]:
    """pydantic's validation errors as an answer's `fields`."""
    return [
        {
            "location": location,
            "field": ".".join(str(part) for part in error.get("loc", ())) or None,
            "message": str(error.get("msg", "invalid")),
        }
        for error in errors
    ]


class ApiError(Exception):
    """An error answer with the code's status, unless `status` says otherwise (an upstream's 422), and
    `Retry-After` when `retry_after` is set (`error_envelope` and `error_headers` write it out)."""

    def __init__(
        self,
        code: ErrorCode,
        message: str | None = None,
        *,
        status: int | None = None,
        retry_after: int | None = None,
        fields: Sequence[FieldError] | None = None,
    ) -> None:
        self.code = code
        self.message = message or code.message
        super().__init__(self.message)
        self.status = status or code.status
        self.retry_after = retry_after
        self.fields = None if fields is None else [dict(field) for field in fields]


NOT_STORED: Final = {"Cache-Control": "no-store"}
"""Every answer but a lookup's 200: an error or an operator's answer is never reused, by any cache."""


def error_envelope(error: ApiError, **more: Any) -> dict[str, Any]:
    """The error body of REST lookups (the daily limit's 429 too), the operator API and MCP's error results:
    `{"success": false, "error": {"code", "message", "fields"?, "retryAfter"?}}`, `fields` when there are field
    errors, `retryAfter` (seconds) whenever the answer has a `Retry-After`; `more` adds keys beside `error`
    (PROBE_SLOT_TAKEN's `data`)."""
    body: dict[str, Any] = {"code": error.code.value, "message": error.message}
    if error.fields is not None:
        body["fields"] = error.fields
    if error.retry_after is not None:
        body["retryAfter"] = error.retry_after
    return {"success": False, "error": body, **more}


def error_headers(error: ApiError) -> dict[str, str]:
    """`Retry-After` when the caller should wait, the scheme a 401 wants (RFC 9110; the x-health-check-key
    header works too), and never stored."""
    headers = {} if error.retry_after is None else {"Retry-After": str(error.retry_after)}
    if error.status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return {**headers, **NOT_STORED}


class StoreError(Exception):
    """The verdict store could not be read or written (DynamoDB down, timeout, throttled...)."""


class RouteFailure(Exception):
    """An upstream (a retailer, direct or behind a relay) did not give a usable answer: a reason the route
    does not work now. Direct, it blocks direct for 5 minutes.

    Raised by the HTTP exchange (timeouts, connect errors, oversize or undecodable bodies), the transports
    (401/403/429/5xx and other statuses) and the operation's response check (HTML, failure envelopes,
    schema mismatches).
    """

    def __init__(self, reason: Reason) -> None:
        super().__init__(reason.value)
        self.reason = reason


class UpstreamRejected(Exception):
    """The upstream answered 400/404/422: a meaning for the caller, not a route failure. Never blocks."""

    def __init__(self, status: int) -> None:
        super().__init__(f"upstream answered {status}")
        self.status = status


class LookupCancelled(Exception):
    """The caller went away. Not a route failure; never blocks."""


GS25_SESSION_UNAVAILABLE = (
    "GS25 refused the convenience relay's GS25 session (expired or missing): GS25 stock is unavailable until "
    "the session on the relay is renewed."
)
DIRECT_ROUTE_NOT_CONFIGURED = (
    "The direct route needs a secret value that is not configured (CGV's lookups: CGV_SIGNING_KEY) and no relay "
    "is configured for it: it is unavailable until one of them is."
)
