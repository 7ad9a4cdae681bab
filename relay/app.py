"""The relay server as an ASGI app: any subset of the relay groups, each at its protocol paths
(docs/relay.md has the rules, in the order they apply).

One `GroupRelay` per group holds its token, limits, quota ledger, response cache and running jobs. A job is
one upstream call; identical requests in flight join it (where the group caches), and each waiter gets its
own answer. Upstream calls run on worker threads, a fixed number at a time per group; a call abandoned by its
callers keeps its slot until it has really ended, so the bound holds.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import re
import time
import uuid
from collections.abc import Awaitable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from functions.catalog import spec_for
from functions.core import Clock, RelayGroup, RouteKey, group_of
from relay.cache import ResponseCache, cache_key
from relay.consumers import Consumers, Reservation, consumer_of
from relay.inputs import MAX_RELAY_BODY_BYTES, RelayInputRejected, read_relay_input
from relay.logs import RelayLog
from relay.quota import LedgerUnavailable, QuotaLedger, QuotaLimits
from relay.upstream import InputUnusable, UpstreamCaller, UpstreamFailed, compact_json, relay_params

CLIENT_CLOSED = 499
HEALTH: Final = "health"
_REQUEST_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")

UNAUTHORIZED = {"error": "Unauthorized"}
NOT_FOUND = {"error": "Not found"}
METHOD_NOT_ALLOWED = {"error": "Method not allowed"}
BUSY = {"error": "Relay busy"}
HANDLER_FAILURE = {"error": "Relay failure"}
# Olive Young names each failure; the shared relay core (convenience, Dtryx) answers one text for all.
CORE_FAILURE = {"error": "Relay request failed"}
OY_UPSTREAM_FAILURE = {"error": "Upstream unavailable"}
OY_EXPIRED = {"error": "Request expired"}
OY_QUOTA_UNAVAILABLE = {"error": "Relay quota unavailable"}
OY_QUOTA_EXCEEDED = "Relay quota exceeded"
OY_INVALID_PAYLOAD = {"error": "Invalid payload"}
OY_BODY_TIMEOUT = {"error": "Request timeout"}
BODY_DEADLINE_MS = 15_000


@dataclass(frozen=True, slots=True)
class GroupPolicy:
    """A group's limits. Times are ms; `deadline_ms` covers a request from admission to its answer,
    `body_deadline_ms` its body's upload (from admission too)."""

    upstream_slots: int
    max_outstanding: int
    quota: QuotaLimits
    cache_ttl_ms: Mapping[RouteKey, int] = field(default_factory=dict)
    """Empty: no cache and no coalescing."""
    deadline_ms: int | None = None
    queue_expiry_ms: int | None = None
    """Olive Young: a waiter whose job starts this long after it arrived gets 503 `Request expired`."""
    upstream_timeout_ms: int = 15_000
    body_deadline_ms: int = BODY_DEADLINE_MS


_MINUTE, _FIVE_MINUTES, _TEN_MINUTES = 60_000, 300_000, 600_000
DTRYX_PROCESS_QUOTA = QuotaLimits(per_minute=300, per_day=300_000)
"""What the Dtryx relay's process spends at most, Dtryx and CGV together. Each group has half of it in a
ledger of its own (relay/cgv.py), so one group's callers can never use up the other's."""
_HALF_OF_DTRYX_PROCESS = QuotaLimits(DTRYX_PROCESS_QUOTA.per_minute // 2, DTRYX_PROCESS_QUOTA.per_day // 2)
_DTRYX = GroupPolicy(
    upstream_slots=4,
    max_outstanding=32,
    quota=_HALF_OF_DTRYX_PROCESS,
    deadline_ms=15_000,
)
POLICIES: Mapping[RelayGroup, GroupPolicy] = {
    RelayGroup.OLIVEYOUNG: GroupPolicy(
        upstream_slots=1,
        max_outstanding=8,
        quota=QuotaLimits(per_minute=300, per_day=300_000),
        cache_ttl_ms={
            RouteKey.OY_FIND_STORE: _FIVE_MINUTES,
            RouteKey.OY_PRODUCT_SEARCH: _FIVE_MINUTES,
            RouteKey.OY_GOODS_INFO: _TEN_MINUTES,
            RouteKey.OY_STOCK_STORES: _MINUTE,
        },
        queue_expiry_ms=40_000,
    ),
    RelayGroup.CONVENIENCE: GroupPolicy(
        upstream_slots=4,
        max_outstanding=32,
        quota=QuotaLimits(per_minute=690, per_day=10_000_000),
        cache_ttl_ms={
            key: 30_000
            if key in {RouteKey.CU_STORE, RouteKey.SEVEN_STOCK, RouteKey.GS25_STOCK}
            else _FIVE_MINUTES
            for key in RouteKey
            if group_of(key) is RelayGroup.CONVENIENCE
        },
        deadline_ms=15_000,
    ),
    RelayGroup.DTRYX: _DTRYX,
    # Served beside Dtryx (relay/cgv.py) with Dtryx's limits and the other half of the process's quota.
    RelayGroup.CGV: replace(
        _DTRYX,
        cache_ttl_ms={
            RouteKey.CGV_THEATERS: _FIVE_MINUTES,
            RouteKey.CGV_MOVIES: _FIVE_MINUTES,
            RouteKey.CGV_TIMETABLE: 30_000,
            RouteKey.CGV_TIMETABLE_MOVIE: 30_000,
        },
    ),
}
HEALTH_PATHS: Mapping[RelayGroup, str] = {
    RelayGroup.OLIVEYOUNG: "/health",
    RelayGroup.CONVENIENCE: "/v1/convenience/health",
    RelayGroup.DTRYX: "/v1/dtryx/health",
    RelayGroup.CGV: "/v1/cgv/health",
}


@functools.cache
def operations_of(group: RelayGroup) -> Mapping[str, RouteKey]:
    """The group's operations by their relay name (from the specs)."""
    return {spec_for(key).relay_operation: key for key in RouteKey if group_of(key) is group}


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    logged_status: int | None = None
    """What the log records when it differs (7-Eleven's soft failure is a 200 that records 502)."""

    @classmethod
    def json(cls, status: int, body: object, headers: Mapping[str, str] | None = None) -> Reply:
        return cls(status, compact_json(body), dict(headers or {}))


@dataclass(slots=True)
class _Waiter:
    arrived_at: int
    answer: asyncio.Future[Reply]
    leader: bool
    """The request that started the job (`x-relay-cache: miss`); the others joined it (`coalesced`)."""


@dataclass(slots=True)
class _Job:
    """One upstream call and the requests waiting for it."""

    key: RouteKey
    body: Mapping[str, Any]
    params: Any
    cache_key: str
    deadline: float | None
    """Event-loop time; the first request's deadline (joiners keep it)."""
    reservation: Reservation | None = None
    waiters: list[_Waiter] = field(default_factory=list)
    task: asyncio.Task[None] | None = None


class GroupRelay:
    """One relay group's protocol. Used from one event loop; `close` stops its worker threads."""

    def __init__(
        self,
        group: RelayGroup,
        token: str,
        *,
        ledger: QuotaLedger,
        upstream: UpstreamCaller,
        clock: Clock,
        log: RelayLog,
        policy: GroupPolicy | None = None,
    ) -> None:
        self.group = group
        self.policy = policy or POLICIES[group]
        self.ledger = ledger
        self._expected = f"Bearer {token}".encode()
        self._upstream = upstream
        self._clock = clock
        self._log = log
        self._operations = operations_of(group)
        self.cache = ResponseCache(clock=clock) if self.policy.cache_ttl_ms else None
        self._consumers = Consumers(clock) if group is RelayGroup.OLIVEYOUNG else None
        self._jobs: dict[str, _Job] = {}
        self._slots: asyncio.Semaphore | None = None  # made on first use, in the serving loop
        self._threads = ThreadPoolExecutor(self.policy.upstream_slots, thread_name_prefix=f"relay-{group}")
        self.outstanding = self.active = self.queued = self.calls = 0
        self.closed = False

    # --- the protocol, in its order ---------------------------------------------------------------

    async def handle(self, request: Request) -> Reply:
        if not _same(request.headers.get("authorization", "").encode("latin-1"), self._expected):
            return Reply.json(401, UNAUTHORIZED)
        route = self._route(request)
        if isinstance(route, Reply):
            return route
        if not isinstance(route, RouteKey):  # the health path
            return Reply.json(200, self.health())
        if self.outstanding >= self.policy.max_outstanding:
            return Reply.json(503, BUSY)
        consumer = None
        if self._consumers is not None:
            consumer = consumer_of(request.headers.get("x-relay-consumer"))
            if not self._consumers.admit(consumer):
                return self._quota_exceeded("consumer-busy", 1)
        self.outstanding += 1
        admitted = asyncio.get_running_loop().time()
        try:
            if self.policy.deadline_ms is None:
                return await self._lookup(request, route, consumer, admitted, None)
            deadline = admitted + self.policy.deadline_ms / 1000
            try:
                async with asyncio.timeout_at(deadline):
                    return await self._lookup(request, route, consumer, admitted, deadline)
            except TimeoutError:
                return Reply.json(504, CORE_FAILURE)
        finally:
            self.outstanding -= 1
            if consumer is not None and self._consumers is not None:
                self._consumers.leave(consumer)

    def _route(self, request: Request) -> RouteKey | Literal["health"] | Reply:
        path, method, query = request.url.path, request.method, request.url.query
        if self.group is RelayGroup.OLIVEYOUNG:  # everything else it does not serve is 404, never 405
            if path == HEALTH_PATHS[self.group] and method == "GET" and not query:
                return HEALTH
            key = self._operations.get(path.removeprefix("/v1/oliveyoung/"))
            if not path.startswith("/v1/oliveyoung/") or key is None or method != "POST" or query:
                return Reply.json(404, NOT_FOUND)
            return key
        prefix = f"/v1/{self.group}/"
        if not path.startswith(prefix) or query:
            return Reply.json(404, NOT_FOUND)
        operation = path.removeprefix(prefix)
        if operation == HEALTH and method == "GET":
            return HEALTH
        key = self._operations.get(operation)
        if key is None:
            return Reply.json(404, NOT_FOUND)
        if method != "POST":
            return Reply.json(405, METHOD_NOT_ALLOWED)
        return key

    async def _lookup(
        self, request: Request, key: RouteKey, consumer: str | None, admitted: float, deadline: float | None
    ) -> Reply:
        try:  # a slow upload holds an outstanding slot: every group reads the body within the same time
            async with asyncio.timeout_at(admitted + self.policy.body_deadline_ms / 1000):
                raw = await _read_capped(request, MAX_RELAY_BODY_BYTES + 1)
        except ClientDisconnect:
            return Reply.json(CLIENT_CLOSED, self._failure_body())
        except TimeoutError:
            if self._is_oliveyoung:
                return Reply.json(408, OY_BODY_TIMEOUT, {"connection": "close"})
            return Reply.json(504, CORE_FAILURE)
        try:
            body = read_relay_input(key, raw)
            params = relay_params(key, body)
        except RelayInputRejected as rejected:
            return Reply.json(rejected.status, rejected.body)
        except InputUnusable:
            return Reply.json(400, OY_INVALID_PAYLOAD if self._is_oliveyoung else CORE_FAILURE)
        ttl = self.policy.cache_ttl_ms.get(key)
        job_key = cache_key(spec_for(key).relay_operation, body)
        if ttl is not None and self.cache is not None:
            cached = self.cache.get(job_key)
            if cached is not None:
                return Reply(200, cached, {"x-relay-cache": "hit"})
        job = self._jobs.get(job_key) if ttl is not None else None
        if job is None:
            reservation = None
            if consumer is not None and self._consumers is not None:
                reserved = self._consumers.reserve(consumer)
                if isinstance(reserved, int):
                    return self._quota_exceeded("consumer", reserved)
                reservation = reserved
            job = _Job(key, body, params, job_key, deadline, reservation)
            if ttl is not None:
                self._jobs[job_key] = job
            job.task = asyncio.create_task(self._run(job))
        waiter = _Waiter(self._clock(), asyncio.get_running_loop().create_future(), leader=not job.waiters)
        job.waiters.append(waiter)
        return await _unless_disconnected(request.receive, self._wait(job, waiter), self._failure_body())

    async def _wait(self, job: _Job, waiter: _Waiter) -> Reply:
        try:
            return await asyncio.shield(waiter.answer)
        except asyncio.CancelledError:  # the caller went away or its deadline passed: leave the job
            if waiter in job.waiters:
                job.waiters.remove(waiter)
            if not job.waiters and job.task is not None:
                job.task.cancel()  # the last one out ends it (a call already sent still finishes)
            raise

    async def _run(self, job: _Job) -> None:
        reply: Reply | None
        try:
            if job.deadline is None:
                reply = await self._execute(job)
            else:
                try:
                    async with asyncio.timeout_at(job.deadline):
                        reply = await self._execute(job)
                except TimeoutError:
                    reply = Reply.json(504, CORE_FAILURE)
        except asyncio.CancelledError:
            reply = None
            self._release(job)
        except Exception as error:  # a bug: every waiter still gets an answer
            self._log.event("job-failed", group=self.group.value, errorType=type(error).__name__)
            reply = Reply.json(500, HANDLER_FAILURE) if self._is_oliveyoung else Reply.json(502, CORE_FAILURE)
        finally:
            if self._jobs.get(job.cache_key) is job:
                del self._jobs[job.cache_key]
        cached = job.key in self.policy.cache_ttl_ms
        for waiter in job.waiters:
            if reply is not None and not waiter.answer.done():
                waiter.answer.set_result(_as_seen_by(reply, leader=waiter.leader) if cached else reply)

    async def _execute(self, job: _Job) -> Reply | None:
        """Waits for a slot (FIFO), then takes a quota unit and calls the retailer. None: nobody waits now."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.policy.upstream_slots)
        self.queued += 1
        try:
            await self._slots.acquire()
        finally:
            self.queued -= 1
        handed_to_thread = False
        try:
            self._expire_waiters(job)
            if not job.waiters:
                self._release(job)
                return None
            refused = self._upstream.certain_refusal(job.key, job.body)
            if refused is not None:  # nothing that will certainly fail spends a quota unit
                self._release(job)
                return self._upstream_failure(UpstreamFailed(refused))
            denied = self._take_quota(job)
            if denied is not None:
                return denied
            loop = asyncio.get_running_loop()
            timeout_ms = self.policy.upstream_timeout_ms
            if job.deadline is not None:
                timeout_ms = min(timeout_ms, max(int((job.deadline - loop.time()) * 1000), 1))
            call = loop.run_in_executor(
                self._threads,
                lambda: self._upstream.call(job.key, job.body, job.params, timeout_ms=timeout_ms),
            )
            self.active += 1
            self.calls += 1
            call.add_done_callback(self._call_ended)
            handed_to_thread = True
            try:
                answer = await asyncio.shield(call)
            except UpstreamFailed as failed:
                return self._upstream_failure(failed)
            ttl = self.policy.cache_ttl_ms.get(job.key)
            if ttl is not None and self.cache is not None:
                self.cache.put(job.cache_key, answer, ttl)
            return Reply(200, answer)
        finally:
            if not handed_to_thread:
                self._slots.release()

    def _call_ended(self, call: asyncio.Future[bytes]) -> None:
        if not call.cancelled():
            call.exception()  # retrieved here: its waiters may all be gone
        self.active -= 1
        assert self._slots is not None
        self._slots.release()

    def _expire_waiters(self, job: _Job) -> None:
        """Olive Young: each waiter whose own wait reached the queue expiry gets 503 `Request expired`."""
        if self.policy.queue_expiry_ms is None:
            return
        started = self._clock()
        for waiter in list(job.waiters):
            if started - waiter.arrived_at >= self.policy.queue_expiry_ms:
                job.waiters.remove(waiter)
                waiter.answer.set_result(Reply.json(503, OY_EXPIRED))

    def _take_quota(self, job: _Job) -> Reply | None:
        try:
            denied = self.ledger.take()
        except LedgerUnavailable:
            return Reply.json(503, OY_QUOTA_UNAVAILABLE if self._is_oliveyoung else CORE_FAILURE)
        if denied is None:
            return None
        self._release(job)
        return self._quota_exceeded(denied.reason, denied.retry_after_s)

    def _release(self, job: _Job) -> None:
        if job.reservation is not None and self._consumers is not None:
            self._consumers.release(job.reservation)
            job.reservation = None

    def _quota_exceeded(self, reason: str, retry_after_s: int) -> Reply:
        headers = {"x-relay-quota-reason": reason, "retry-after": str(min(max(retry_after_s, 1), 86_400))}
        if self._is_oliveyoung:
            return Reply.json(429, {"error": OY_QUOTA_EXCEEDED, "reason": reason}, headers)
        return Reply.json(429, CORE_FAILURE, headers)

    def _upstream_failure(self, failed: UpstreamFailed) -> Reply:
        if self._is_oliveyoung:
            return Reply.json(502, OY_UPSTREAM_FAILURE)
        if failed.envelope is not None:
            return Reply(200, compact_json(failed.envelope), logged_status=502)
        return Reply.json(failed.status, CORE_FAILURE)

    def _failure_body(self) -> Mapping[str, str]:
        return OY_EXPIRED if self._is_oliveyoung else CORE_FAILURE

    @property
    def _is_oliveyoung(self) -> bool:
        return self.group is RelayGroup.OLIVEYOUNG

    # --- health --------------------------------------------------------------------------------

    def health(self) -> dict[str, object]:
        """The body the Lambda's probe reads: Olive Young `state == "ready"`, the others `status == "ok"`."""
        quota = self.ledger.status()
        if self._is_oliveyoung:
            assert self.cache is not None
            return {
                "state": "closed" if self.closed else "ready",
                "transport": "http",
                "browserRequired": False,
                "pages": 0,
                "active": self.active > 0,
                "calls": self.calls,
                "totalCalls": self.calls,
                "rotations": 0,
                "rssBytes": 0,
                "reason": "shutdown" if self.closed else "http",
                "logging": self._log.stats(),
                "outstanding": self.outstanding,
                "cache": self.cache.stats(),
                "quota": quota,
            }
        return {
            "status": "ok",
            "active": self.active,
            "outstanding": self.outstanding,
            "queued": self.queued,
            "quota": quota,
            "logging": self._log.stats(),
        }

    def close(self) -> None:
        self.closed = True
        self._threads.shutdown(wait=False, cancel_futures=True)
        self.ledger.close()


def _as_seen_by(reply: Reply, *, leader: bool) -> Reply:
    if reply.status != 200 or reply.logged_status is not None:
        return reply
    return Reply(200, reply.body, {**reply.headers, "x-relay-cache": "miss" if leader else "coalesced"})


def _same(presented: bytes, expected: bytes) -> bool:
    return hmac.compare_digest(presented, expected)


async def _read_capped(request: Request, limit: int) -> bytes:
    """At most `limit` bytes of the body: a body that reaches `limit` is refused whatever follows, so the
    rest is never read (nor is anything read when the declared length already says so)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) >= limit:
        return b" " * limit
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) >= limit:
            break
    return bytes(body[:limit])


async def _unless_disconnected(receive: Receive, work: Awaitable[Reply], gone: Mapping[str, str]) -> Reply:
    """`work`'s reply, or 499 when the caller disconnects first (`work` is then cancelled)."""
    working = asyncio.ensure_future(work)
    watching = asyncio.ensure_future(_disconnected(receive))
    try:
        await asyncio.wait({working, watching}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (working, watching):
            if not task.done():
                task.cancel()
        await asyncio.gather(working, watching, return_exceptions=True)
    if working.cancelled():
        return Reply.json(CLIENT_CLOSED, gone)
    return working.result()


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


class RelayApp:
    """The ASGI app for the groups served on one port. Paths pick the group (`/health` and
    `/v1/oliveyoung/…` Olive Young, `/v1/convenience/…`, `/v1/dtryx/…`, `/v1/cgv/…`); any other path (a
    CGV path too, where CGV is not served) goes to the
    first of Dtryx, Olive Young, convenience served here, which answers 401 or 404. A convenience path on a
    port without the convenience relay is 404 without any token check, as on the original relays."""

    def __init__(self, relays: Sequence[GroupRelay], *, log: RelayLog) -> None:
        self.relays = {relay.group: relay for relay in relays}
        self.log = log
        self._fallback = next(
            self.relays[group]
            for group in (RelayGroup.DTRYX, RelayGroup.OLIVEYOUNG, RelayGroup.CONVENIENCE)
            if group in self.relays
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        started = time.monotonic()
        request = Request(scope, receive)
        presented_id = request.headers.get("x-request-id", "")
        request_id = presented_id if _REQUEST_ID.fullmatch(presented_id) else str(uuid.uuid4())
        relay, operation = self._relay_for(request.url.path)
        try:
            reply = Reply.json(404, NOT_FOUND) if relay is None else await relay.handle(request)
        except Exception as error:
            self.log.event("handler-failed", errorType=type(error).__name__, requestId=request_id)
            reply = Reply.json(500, HANDLER_FAILURE)
        headers = {**reply.headers, "cache-control": "no-store", "x-request-id": request_id}
        if relay is not None and relay.group is not RelayGroup.OLIVEYOUNG:
            headers["connection"] = "close"
        response = Response(reply.body, reply.status, headers, media_type="application/json")
        with suppress(OSError):  # a caller that left cannot be answered
            await response(scope, receive, send)
        self.log.event(
            "request",
            group=None if relay is None else relay.group.value,
            requestId=request_id,
            operation=operation,
            status=reply.logged_status or reply.status,
            durationMs=round((time.monotonic() - started) * 1000, 1),
            cache=reply.headers.get("x-relay-cache"),
            quotaReason=reply.headers.get("x-relay-quota-reason"),
        )

    def _relay_for(self, path: str) -> tuple[GroupRelay | None, str]:
        """The relay that answers `path`, and the operation's name for the log (`unknown` if it is none)."""
        for group in RelayGroup:
            if path == HEALTH_PATHS[group] or path.startswith(f"/v1/{group}/"):
                name = path.rsplit("/", 1)[-1]
                operation = name if name == HEALTH or name in operations_of(group) else "unknown"
                if group is RelayGroup.CONVENIENCE and group not in self.relays:
                    return None, operation
                return self.relays.get(group, self._fallback), operation
        return self._fallback, "unknown"

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self.log.event("process-ready", outcome="-".join(self.relays))
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.close()
                self.log.event("process-stopping")
                await send({"type": "lifespan.shutdown.complete"})
                return

    def close(self) -> None:
        for relay in self.relays.values():
            relay.close()
