"""One bounded HTTP exchange shared by the direct and relay transports.

"Bounded" means one deadline for the whole exchange (connect, headers and body together) and a body cap.
httpx only has per-operation timeouts (each read may take the full timeout again), so the exchange runs on a
short-lived worker thread and the caller waits for it at most until the deadline. The worker also checks the
deadline between body chunks, so a slow-drip body ends soon after the caller has given up on it.

An abandoned worker still holds its request open until httpx's own per-step timeout ends it. A caller that
must bound the requests really open (the probe, DESIGN §4) passes a shared `limit`: each exchange takes a
slot before its deadline starts and its worker gives the slot back only when its request has ended.
"""

from __future__ import annotations

import contextvars
import json
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass

import httpx

from functions.core import MAX_BODY_BYTES, Reason


class ExchangeFailed(Exception):
    """The exchange produced no usable answer. `reason` is one of the fixed transport reasons."""

    def __init__(self, reason: Reason) -> None:
        super().__init__(reason.value)
        self.reason = reason


OK_ONLY = frozenset({200})


@dataclass(frozen=True, slots=True)
class Answer:
    """Status and headers of a response, and its body when its status was one to read (otherwise empty)."""

    status: int
    headers: httpx.Headers
    body: bytes


def exchange(
    client: httpx.Client,
    request: httpx.Request,
    *,
    timeout_ms: int,
    max_bytes: int = MAX_BODY_BYTES,
    limit: threading.Semaphore | None = None,
    body_statuses: frozenset[int] = OK_ONLY,
) -> Answer:
    """Sends `request` and reads a `body_statuses` (200) body within `timeout_ms` in total, never more than
    `max_bytes`.

    With `limit`, waits for a slot first (the wait is not part of `timeout_ms`); the slot is held until the
    request has really ended, even when that is after this call has given up on it.

    Raises `ExchangeFailed` with TIMEOUT, NETWORK_ERROR, RESPONSE_TOO_LARGE or INVALID_RESPONSE (bad encoding).
    Bodies of other answers are not read: they are often large HTML pages, and few callers need them.
    """
    timeout_s = max(timeout_ms, 1) / 1000
    if limit is not None:
        limit.acquire()
    deadline = time.monotonic() + timeout_s
    abandoned = threading.Event()
    request.extensions["timeout"] = httpx.Timeout(timeout_s).as_dict()

    def run() -> Answer:
        try:
            response = client.send(request, stream=True, follow_redirects=False)
            try:
                status = response.status_code
                if status not in body_statuses:
                    return Answer(status, response.headers, b"")
                return Answer(
                    status, response.headers, _read_capped(response, deadline, abandoned, max_bytes)
                )
            finally:
                response.close()
        finally:
            if limit is not None:  # the request has ended (answered, failed or closed)
                limit.release()

    future: Future[Answer] = Future()
    context = contextvars.copy_context()  # keeps log correlation ids on the worker thread

    def work() -> None:
        try:
            future.set_result(context.run(run))
        except BaseException as exc:  # handed to the waiting caller, never lost
            future.set_exception(exc)

    try:
        threading.Thread(target=work, name="bounded-exchange", daemon=True).start()
    except BaseException:
        if limit is not None:
            limit.release()
        raise
    try:
        return future.result(timeout=max(deadline - time.monotonic(), 0))
    except TimeoutError:  # the deadline passed while the worker was still busy
        abandoned.set()
        raise ExchangeFailed(Reason.TIMEOUT) from None
    except httpx.TimeoutException:
        raise ExchangeFailed(Reason.TIMEOUT) from None
    except httpx.DecodingError:
        raise ExchangeFailed(Reason.INVALID_RESPONSE) from None
    except httpx.HTTPError:
        raise ExchangeFailed(Reason.NETWORK_ERROR) from None


def _read_capped(
    response: httpx.Response, deadline: float, abandoned: threading.Event, max_bytes: int
) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise ExchangeFailed(Reason.RESPONSE_TOO_LARGE)
    body = bytearray()
    for chunk in response.iter_bytes():
        if abandoned.is_set() or time.monotonic() > deadline:
            raise ExchangeFailed(Reason.TIMEOUT)
        body += chunk
        if len(body) > max_bytes:
            raise ExchangeFailed(Reason.RESPONSE_TOO_LARGE)
    return bytes(body)


def decode_json(body: bytes) -> object:
    """The decoded JSON body; an HTML page or anything that is not JSON raises INVALID_RESPONSE."""
    head = body[:64].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith((b"<!doctype html", b"<html")):
        raise ExchangeFailed(Reason.INVALID_RESPONSE)
    try:
        return json.loads(body)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError
        raise ExchangeFailed(Reason.INVALID_RESPONSE) from None
