"""API Gateway HTTP API (payload 2.0) events for handler tests, built as the sandbox gateway builds them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from sandbox.gateway import Route, http_api_event, match_route
from tests.support.clock import START


def api_event(
    method: str,
    path: str,
    *,
    headers: Mapping[str, str] | None = None,
    query: Mapping[str, str] | None = None,
    body: str | bytes | None = None,
    now_ms: int = START,
) -> dict[str, Any]:
    """The event API Gateway sends for `method path?query` from 127.0.0.1 (routed as deployed, where a route
    matches; otherwise as the `$default` route would be). A body that is not UTF-8 arrives base64-encoded."""
    route = match_route(method, path) or Route("$default", "api")
    return http_api_event(
        route=route,
        method=method,
        target=f"{path}?{urlencode(dict(query))}" if query else path,
        headers=(headers or {}).items(),
        body=body if isinstance(body, bytes) else (body or "").encode(),
        source_ip="127.0.0.1",
        now_ms=now_ms,
    )
