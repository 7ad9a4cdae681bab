"""Errors that cross the core's boundary. Each carries only fixed codes, never upstream text or secrets."""

from __future__ import annotations

from functions.core.model import Reason


class StoreError(Exception):
    """The verdict store could not be read or written (DynamoDB down, timeout, throttled...)."""


class RouteFailure(Exception):
    """A direct attempt failed in a way that says the route does not work now (blocks direct for 5 min).

    Raised by the direct transport for 401/403/429/5xx, other non-200 statuses, connect errors, timeouts,
    non-JSON/HTML bodies, oversize bodies and schema mismatches.
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


class ServiceError(Exception):
    """A lookup error the API answers with: `{"success": false, "error": {"code", "message"}}`."""

    def __init__(self, code: str, status: int, message: str, *, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.status = status
        self.message = message
        self.retry_after = retry_after


def upstream_not_found() -> ServiceError:
    return ServiceError("UPSTREAM_NOT_FOUND", 404, "The upstream service has no such item.")


def relay_quota_exceeded(retry_after: int | None) -> ServiceError:
    return ServiceError(
        "RELAY_QUOTA_EXCEEDED",
        429,
        "The relay's request quota is used up; try again later.",
        retry_after=retry_after,
    )


def upstream_bad_response() -> ServiceError:
    return ServiceError(
        "UPSTREAM_BAD_RESPONSE", 502, "The upstream service answered with an unusable response."
    )


def route_unavailable() -> ServiceError:
    return ServiceError(
        "UPSTREAM_ROUTE_UNAVAILABLE", 503, "Neither the direct route nor the relay is working right now."
    )


def gs25_session_unavailable() -> ServiceError:
    return ServiceError(
        "UPSTREAM_ROUTE_UNAVAILABLE",
        503,
        "GS25 refused the convenience relay's GS25 session (expired or missing): GS25 stock is unavailable "
        "until the session on the relay is renewed.",
    )


def upstream_timeout() -> ServiceError:
    return ServiceError("UPSTREAM_TIMEOUT", 504, "The upstream service did not answer in time.")


def daily_rate_limit_exceeded(retry_after: int) -> ServiceError:
    return ServiceError(
        "DAILY_RATE_LIMIT_EXCEEDED",
        429,
        "This client has used its lookups for today; the limit resets at midnight in Korea.",
        retry_after=retry_after,
    )
