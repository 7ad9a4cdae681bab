"""Model Context Protocol over Streamable HTTP, stateless, one JSON answer per POST: both eras (2026-07-28
without a handshake, the handshake revisions up to 2025-11-25), every refusal with its HTTP status and
JSON-RPC code as docs/design.md, "MCP endpoint and lookup command" ("Protocol"), lists them. The revisions,
error codes, `_meta` keys and envelopes are the official SDK's own (`mcp_types`); its server package is not
used (docs/design.md says which figures decided that).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    PROTOCOL_VERSION_META_KEY,
    SERVER_INFO_META_KEY,
    UNSUPPORTED_PROTOCOL_VERSION,
    JSONRPCNotification,
    JSONRPCRequest,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION, MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError
from pydantic_core import from_json, to_json

VERSION_HEADER = "mcp-protocol-version"
METHOD_HEADER = "mcp-method"
NAME_HEADER = "mcp-name"
NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
"""The body parameter each method mirrors in `Mcp-Name` (2026-07-28)."""
SERVED_VERSIONS = (*MODERN_PROTOCOL_VERSIONS, *HANDSHAKE_PROTOCOL_VERSIONS)
ERROR_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}
"""The HTTP status of a 2026-07-28 request's JSON-RPC error (the SDK's table; others: 200). A handshake-era
request that reached dispatch gets its error with 200, as the SDK's handshake transport answers."""
LIST_TTL_MS = 300_000
"""2026-07-28: how long a client may reuse `tools/list` and `server/discover` (the tools change with deploys)."""
JSON_TYPE = "application/json"

ToolCall = Callable[[str, Mapping[str, Any]], dict[str, Any]]
"""Runs one tool with its arguments: a `CallToolResult` as a wire dict."""


@dataclass(frozen=True)
class HttpRequest:
    method: str
    headers: Mapping[str, str]
    """Lowercase names, as API Gateway (payload 2.0) passes them."""
    body: str


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    body: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ServerDescription:
    name: str
    title: str
    version: str
    instructions: str
    tools: Sequence[Mapping[str, Any]]
    """Each tool as `tools/list` shows it."""

    @property
    def info(self) -> dict[str, str]:
        return {"name": self.name, "title": self.title, "version": self.version}


class HostAllowList:
    """The names the endpoint answers to, in `Host` and in a browser's `Origin`: `name` exactly, or `name:*`
    with any port (or none). Against DNS rebinding: a page whose own name was rebound to this server's address
    still sends its own name in both, and only the server's names are served."""

    def __init__(self, entries: Iterable[str]) -> None:
        names = [entry.strip().lower() for entry in entries if entry.strip()]
        self._exact = frozenset(name for name in names if not name.endswith(":*"))
        self._any_port = frozenset(name.removesuffix(":*") for name in names if name.endswith(":*"))

    def allows(self, authority: str) -> bool:
        """`authority` is `host[:port]`, as `Host` carries it."""
        authority = authority.strip().lower()
        if authority in self._exact:
            return True
        name, port = _split_port(authority)
        return name in self._any_port and (port is None or (port.isascii() and port.isdigit()))

    def allows_origin(self, origin: str) -> bool:
        """`origin` is `scheme://host[:port]`; `null` (an opaque origin) and anything else are refused."""
        scheme, separator, authority = origin.strip().partition("://")
        return scheme.lower() in ("http", "https") and bool(separator) and self.allows(authority)


def _split_port(authority: str) -> tuple[str, str | None]:
    """`[::1]:8080` -> (`[::1]`, `8080`), `localhost` -> (`localhost`, None)."""
    if authority.startswith("["):
        name, _, rest = authority.partition("]")
        name += "]"
        if not rest:
            return name, None
        return (name, rest[1:]) if rest.startswith(":") else ("", None)
    name, separator, port = authority.partition(":")
    return name, port if separator else None


class RequestFailed(Exception):
    """An unexpected failure (`cause`) while answering a request whose id was read: its internal error carries
    the id."""

    def __init__(self, request_id: Any, cause: Exception) -> None:
        super().__init__("the request failed unexpectedly")
        self.request_id = request_id
        self.cause = cause


class RpcError(Exception):
    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


CAPABILITIES: dict[str, Any] = {"tools": {"listChanged": False}}
HANDSHAKE_METHODS = frozenset({"initialize", "ping", "tools/list", "tools/call"})
MODERN_METHODS = frozenset({"server/discover", "tools/list", "tools/call"})
"""What each era serves (2026-07-28 has no `initialize` or `ping`; `server/discover` is new in it)."""
PARAMS: dict[str, dict[str, tuple[type, bool]]] = {
    "initialize": {"protocolVersion": (str, True), "capabilities": (dict, True), "clientInfo": (dict, True)},
    "tools/call": {"name": (str, True), "arguments": (dict, False)},
    "tools/list": {"cursor": (str, False)},
}
"""The parameters the served methods read: (type, required). Every request may carry a `_meta` object."""


class McpServer:
    """Answers one HTTP request to the MCP endpoint; tools run through the `ToolCall` of that request.

    Results are built as the protocol's shapes; the tests hold them to the SDK's own schema of each revision
    (`mcp_types.methods`, which is not loaded here: its per-revision models cost about as much to import as
    boto3 itself, bench/README.md)."""

    def __init__(self, description: ServerDescription, *, allowed_hosts: Iterable[str]) -> None:
        self.description = description
        self._hosts = HostAllowList(allowed_hosts)
        self._tool_names = frozenset(str(tool["name"]) for tool in description.tools)
        tools: dict[str, Any] = {"tools": list(description.tools)}
        cacheable: dict[str, Any] = {"resultType": "complete", "ttlMs": LIST_TTL_MS, "cacheScope": "public"}
        discover: dict[str, Any] = {
            "supportedVersions": list(MODERN_PROTOCOL_VERSIONS),
            "capabilities": CAPABILITIES,
            "instructions": description.instructions,
        }
        self._lists = {False: tools, True: {**tools, **cacheable}}
        self._discover = {**discover, **cacheable}

    def answer(self, request: HttpRequest, call_tool: ToolCall) -> HttpAnswer:
        """The answer to one request. An unexpected failure after its id was read is raised as
        `RequestFailed` (the caller reports it and answers `internal_error(that id)`)."""
        refused = self._refused_names(request.headers)
        if refused is not None:
            return refused
        if request.method != "POST":
            return HttpAnswer(405, headers={"Allow": "POST"})
        refused = _refused_transport(request.headers)
        if refused is not None:
            return refused
        try:
            message = from_json(request.body)
        except ValueError:  # not JSON, or nested past the parser's limit
            return _error(None, RpcError(PARSE_ERROR, "Parse error"), 400)
        if not isinstance(message, dict):  # a batch (not in these revisions) or a bare value
            return _error(None, RpcError(INVALID_REQUEST, "The body must be one JSON-RPC request"), 400)
        version = request.headers.get(VERSION_HEADER)
        if version is not None and version not in SERVED_VERSIONS:
            unsupported = RpcError(
                UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version",
                {"supported": list(SERVED_VERSIONS), "requested": version},
            )
            return _error(_request_id(message), unsupported, 400)
        if "id" not in message:
            return _notification(message)
        return self._request(message, request.headers, call_tool)

    def _request(
        self, message: dict[str, Any], headers: Mapping[str, str], call_tool: ToolCall
    ) -> HttpAnswer:
        try:
            request = JSONRPCRequest.model_validate(message)
        except ValidationError:
            return _error(_request_id(message), RpcError(INVALID_REQUEST, "Not a JSON-RPC 2.0 request"), 400)
        params = request.params or {}
        modern = _is_modern(headers, params)
        try:
            if modern:
                _check_envelope(request.method, params, headers)
            result = self._dispatch(request.method, params, modern, call_tool)
        except RpcError as error:
            return _error(request.id, error, ERROR_STATUS.get(error.code, 200) if modern else 200)
        except Exception as error:
            raise RequestFailed(request.id, error) from error
        if modern:
            result = {**result, "_meta": {SERVER_INFO_META_KEY: self.description.info}}
        return _json(200, {"jsonrpc": "2.0", "id": request.id, "result": result})

    def _dispatch(
        self, method: str, params: Mapping[str, Any], modern: bool, call_tool: ToolCall
    ) -> dict[str, Any]:
        if method not in (MODERN_METHODS if modern else HANDSHAKE_METHODS):
            raise RpcError(METHOD_NOT_FOUND, "Method not found", method)
        problem = _invalid_params(method, params)
        if problem is not None:
            raise RpcError(INVALID_PARAMS, f"Invalid request parameters: {problem}")
        if method == "initialize":
            return self._initialize(params)
        if method == "tools/call":
            return self._call_tool(params, modern, call_tool)
        if method == "tools/list":
            return self._lists[modern]
        return self._discover if method == "server/discover" else {}  # ping

    def _initialize(self, params: Mapping[str, Any]) -> dict[str, Any]:
        requested = params["protocolVersion"]
        return {
            "protocolVersion": requested
            if requested in HANDSHAKE_PROTOCOL_VERSIONS
            else LATEST_HANDSHAKE_VERSION,
            "capabilities": CAPABILITIES,
            "serverInfo": self.description.info,
            "instructions": self.description.instructions,
        }

    def _call_tool(self, params: Mapping[str, Any], modern: bool, call_tool: ToolCall) -> dict[str, Any]:
        name = params["name"]
        if name not in self._tool_names:
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        result = call_tool(name, params.get("arguments") or {})
        return {**result, "resultType": "complete"} if modern else result

    def _refused_names(self, headers: Mapping[str, str]) -> HttpAnswer | None:
        """403 for a `Host` or an `Origin` that is not one of the server's names (against DNS rebinding),
        whatever the method. A client that is not a browser sends no `Origin`, and needs none."""
        if not self._hosts.allows(headers.get("host", "")):
            return _error(None, RpcError(INVALID_REQUEST, "Host not allowed"), 403)
        origin = headers.get("origin")
        if origin is not None and not self._hosts.allows_origin(origin):
            return _error(None, RpcError(INVALID_REQUEST, "Origin not allowed"), 403)
        return None


def _invalid_params(method: str, params: Mapping[str, Any]) -> str | None:
    """What is wrong with the parameters a served method reads, if anything."""
    for name, (kind, required) in {**PARAMS.get(method, {}), "_meta": (dict, False)}.items():
        value = params.get(name)
        if value is None:
            if required:
                return f"{name} is required"
        elif not isinstance(value, kind):
            return f"{name} must be {'a string' if kind is str else 'an object'}"
    return None


def _refused_transport(headers: Mapping[str, str]) -> HttpAnswer | None:
    """What Streamable HTTP refuses before reading the body: a body that is not JSON (415), a client that does
    not take JSON answers (406)."""
    content_type = headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type != JSON_TYPE:
        return _error(None, RpcError(INVALID_REQUEST, f"Content-Type must be {JSON_TYPE}"), 415)
    accepted = {kind.split(";")[0].strip().lower() for kind in headers.get("accept", "*/*").split(",")}
    if not accepted & {JSON_TYPE, "application/*", "*/*"}:
        return _error(None, RpcError(INVALID_REQUEST, f"Accept must include {JSON_TYPE}"), 406)
    return None


def _check_envelope(method: str, params: Mapping[str, Any], headers: Mapping[str, str]) -> None:
    """2026-07-28: the request's `_meta` carries its version and the client's capabilities, and the routing
    headers say the same as the body."""
    meta = params.get("_meta")
    if (
        not isinstance(meta, Mapping)
        or not {PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY} <= meta.keys()
    ):
        raise RpcError(
            INVALID_PARAMS,
            f"params._meta must carry {PROTOCOL_VERSION_META_KEY!r} and {CLIENT_CAPABILITIES_META_KEY!r}",
        )
    if headers.get(VERSION_HEADER) != meta[PROTOCOL_VERSION_META_KEY]:
        raise RpcError(HEADER_MISMATCH, "MCP-Protocol-Version header does not match the request's _meta")
    if headers.get(METHOD_HEADER) != method:
        raise RpcError(HEADER_MISMATCH, "Mcp-Method header does not match the request's method")
    named = NAME_BEARING.get(method)
    if named is not None and params.get(named) is not None and headers.get(NAME_HEADER) != params[named]:
        raise RpcError(HEADER_MISMATCH, f"Mcp-Name header does not match the request's {named!r}")


def _is_modern(headers: Mapping[str, str], params: Mapping[str, Any]) -> bool:
    """2026-07-28 when the header says so, or when the body's `_meta` names a version that is not a handshake
    revision: such a body is held to 2026-07-28's header checks whatever the header says. A header and
    `_meta` that both name a handshake revision make a handshake-era request (never served `server/discover`)."""
    if headers.get(VERSION_HEADER) in MODERN_PROTOCOL_VERSIONS:
        return True
    meta = params.get("_meta")
    if not isinstance(meta, Mapping) or PROTOCOL_VERSION_META_KEY not in meta:
        return False
    return meta[PROTOCOL_VERSION_META_KEY] not in HANDSHAKE_PROTOCOL_VERSIONS


def _notification(message: dict[str, Any]) -> HttpAnswer:
    try:
        JSONRPCNotification.model_validate(message)
    except ValidationError:
        return _error(None, RpcError(INVALID_REQUEST, "Not a JSON-RPC 2.0 notification"), 400)
    return HttpAnswer(202)


def _request_id(message: Mapping[str, Any]) -> Any:
    request_id = message.get("id")
    return request_id if isinstance(request_id, str | int) and not isinstance(request_id, bool) else None


def internal_error(request_id: Any = None) -> HttpAnswer:
    """An unexpected failure (already reported): JSON-RPC's internal error, with HTTP 500."""
    return _error(request_id, RpcError(INTERNAL_ERROR, "Internal error"), 500)


def _error(request_id: Any, error: RpcError, status: int) -> HttpAnswer:
    body: dict[str, Any] = {"code": error.code, "message": error.message}
    if error.data is not None:
        body["data"] = error.data
    return _json(status, {"jsonrpc": "2.0", "id": request_id, "error": body})


def _json(status: int, payload: object) -> HttpAnswer:
    return HttpAnswer(status, to_json(payload).decode(), {"Content-Type": JSON_TYPE})
