"""How the relay's server treats its callers' connections: what uvicorn covers, and the two small pieces it
does not (docs/relay.md#connections).

uvicorn covers the idle keep-alive connection that sends nothing (`timeout_keep_alive`, 5 s), the size of a
request head (h11: 16 KiB) and graceful shutdown. It does not cover:

- A connection that never completes a request head. uvicorn arms no timer before a first answer, and any byte
  cancels its keep-alive timer, so a connection that sends nothing, half a head, or a byte every few seconds
  stays open for ever (one was still open after 65 s). `HeadDeadlineProtocol` is uvicorn's h11 protocol plus
  one timer: a connection with no request in progress (new, between requests, or after an answer whose request
  is still arriving) is closed unless the next request head is complete within `header_timeout_s` (≤ 10 s).
- How many connections are open. `limit_concurrency` answers 503 only on a connection it has already accepted
  (its descriptor stays taken), and asyncio's accept loop, once descriptors run out, logs a traceback for each
  failed accept(), up to `backlog` times per turn of the loop: with a descriptor limit of 256, 260 idle
  sockets cost 11 MB of stderr and 2.6 s of CPU in 5 s, and an authenticated health check got no answer.
  `ConnectionGate` accepts in a loop of its own: at most `max_connections` open in the process (below the
  descriptor limit, so accept() does not run out). At the cap a new connection takes the place of the one
  idle the longest (no request in progress; it is closed), so a flood of idle sockets cannot keep an
  operator's health check out; only when every open connection has a request in progress is the new one
  closed at once. One `connections-closed` / `connections-refused` line per interval, however many.
"""

from __future__ import annotations

import asyncio
import errno
import socket
from collections import Counter
from collections.abc import Callable
from typing import Any, Protocol

from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from relay.logs import RelayLog

_OUT_OF_DESCRIPTORS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
_ONE_CALLERS_FAILURE = frozenset({errno.ECONNABORTED, errno.ECONNRESET, errno.EPROTO, errno.EINTR})
ACCEPT_PAUSE_S = 0.5
"""After accept() fails for want of resources, the wait before the next try (the caller waits in the
listen queue meanwhile)."""


class Idle(Protocol):
    """A connection the budget may close to make room: one with no request in progress."""

    def make_room(self) -> None:
        """Leaves the budget at once and closes the connection."""


_COUNTED_AS = {"connections-refused": "refused", "connections-closed": "closed"}
"""Each overload event with the field that says how many."""


class ConnectionBudget:
    """The connections open in the process, across its listeners (all on one event loop), those of them idle
    (the longest idle first), and the log of the overload: one line at its first event, then at most one per
    interval (per event and outcome) with how many since."""

    def __init__(self, limit: int, *, log: RelayLog, log_interval_s: float) -> None:
        self.limit = limit
        self.open = 0
        self._idle: dict[Idle, None] = {}  # in the order they became idle
        self._log = log
        self._interval_s = log_interval_s
        self._overload: Counter[tuple[str, str]] = Counter()
        self._last_line: float | None = None
        self._flush_timer: asyncio.TimerHandle | None = None

    @property
    def full(self) -> bool:
        return self.open >= self.limit

    def idle(self, connection: Idle) -> None:
        """`connection` has no request in progress (kept in place if it already had none)."""
        self._idle.setdefault(connection, None)

    def busy(self, connection: Idle) -> None:
        """`connection` has a request in progress, or has left the budget."""
        self._idle.pop(connection, None)

    def room_for_one(self) -> bool:
        """Whether a new connection fits: at the cap, the connection idle the longest makes room for it."""
        if not self.full:
            return True
        if not self._idle:
            return False
        next(iter(self._idle)).make_room()
        self._count("connections-closed", "idle-longest")
        return True

    def refused(self, reason: str) -> None:
        self._count("connections-refused", reason)

    def _count(self, event: str, outcome: str) -> None:
        self._overload[event, outcome] += 1
        loop = asyncio.get_running_loop()
        if self._last_line is None or loop.time() - self._last_line >= self._interval_s:
            self._flush()
        elif self._flush_timer is None:
            self._flush_timer = loop.call_at(self._last_line + self._interval_s, self._flush)

    def _flush(self) -> None:
        if self._flush_timer is not None:
            self._flush_timer.cancel()
            self._flush_timer = None
        self._last_line = asyncio.get_running_loop().time()
        for (event, outcome), count in self._overload.items():
            self._log.event(event, outcome=outcome, limit=self.limit, **{_COUNTED_AS[event]: count})
        self._overload.clear()


class HeadDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol, counted in a `ConnectionBudget`, closing a connection whose next request head is
    overdue (see the module's docstring)."""

    def __init__(
        self,
        *,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        header_timeout_s: float,
        budget: ConnectionBudget,
    ) -> None:
        super().__init__(config, server_state, app_state)
        self._header_timeout_s = header_timeout_s
        self._budget = budget
        self._counted = False
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._budget.open += 1
        self._counted = True
        super().connection_made(transport)
        self._watch_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._leave_budget()
        self._stop_head_timer()
        super().connection_lost(exc)

    def make_room(self) -> None:
        self._leave_budget()  # now: the new connection is counted before this one's socket is closed
        self.transport.abort()

    def _leave_budget(self) -> None:
        if self._counted:
            self._counted = False
            self._budget.open -= 1
            self._budget.busy(self)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch_head()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch_head()

    def _idle(self) -> bool:
        """No request in progress: the connection waits for (the rest of) a request head."""
        return self.cycle is None or self.cycle.response_complete

    def _watch_head(self) -> None:
        if not self._idle():
            self._stop_head_timer()
            self._budget.busy(self)
        elif self._head_timer is None and not self.transport.is_closing():  # bytes never restart it
            self._head_timer = self.loop.call_later(self._header_timeout_s, self._head_overdue)
            self._budget.idle(self)

    def _head_overdue(self) -> None:
        self._head_timer = None
        if self._idle():
            self.transport.close()

    def _stop_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None


class ConnectionGate:
    """Accepts the connections of one listening socket into `protocol_factory`'s protocols, within `budget`
    (see the module's docstring). `close` stops accepting; the socket is the caller's to close."""

    def __init__(
        self,
        sock: socket.socket,
        protocol_factory: Callable[[], asyncio.Protocol],
        budget: ConnectionBudget,
    ) -> None:
        sock.setblocking(False)
        self._socket = sock
        self._protocol_factory = protocol_factory
        self._budget = budget
        self._task: asyncio.Task[None] | None = None

    def start(self) -> ConnectionGate:
        self._task = asyncio.get_running_loop().create_task(self._accept_all())
        return self

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def wait_closed(self) -> None:
        if self._task is not None:
            await asyncio.wait({self._task})

    async def _accept_all(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                connection, _ = await loop.sock_accept(self._socket)
            except OSError as error:
                if error.errno not in _ONE_CALLERS_FAILURE:  # never a loop that fails as fast as it can
                    self._budget.refused("descriptors" if error.errno in _OUT_OF_DESCRIPTORS else "accept")
                    await asyncio.sleep(ACCEPT_PAUSE_S)
                continue
            if not self._budget.room_for_one():  # every open connection has a request in progress
                connection.close()
                self._budget.refused("connection-limit")
                continue
            try:
                await loop.connect_accepted_socket(self._protocol_factory, connection)
            except OSError:
                connection.close()
