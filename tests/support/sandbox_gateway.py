"""A sandbox gateway served on a free port of 127.0.0.1 for a test, in front of functions the test gives."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from sandbox.clock import SandboxClock
from sandbox.edge import EdgeCache
from sandbox.gateway import ControlResponse, Gateway

Invoke = Callable[[dict[str, Any]], Any]


@contextlib.contextmanager
def gateway_over(
    api: Invoke, ops: Invoke, mcp: Invoke, *, clock: SandboxClock, edge: EdgeCache | None = None
) -> Iterator[httpx.Client]:
    """A sandbox gateway in front of these functions (and `edge`, when given), and a client to it."""
    gateway = Gateway(
        0,
        clock=clock,
        api=api,
        ops=ops,
        mcp=mcp,
        controls=lambda method, path, body: ControlResponse(200, {}),
        edge=edge,
    )
    serving = threading.Thread(target=gateway.serve_forever, daemon=True)
    serving.start()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{gateway.port}", timeout=5) as http:
            yield http
    finally:
        gateway.shutdown()
        gateway.server_close()
        serving.join()
