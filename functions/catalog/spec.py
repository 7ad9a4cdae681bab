"""The shape of one operation spec: the single description that lookups, probes and relays all use."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from functions.core import Reason, RouteKey

ParamsT = TypeVar("ParamsT", bound=BaseModel)
BodyT = TypeVar("BodyT", bound=BaseModel)


class ResponseRejected(Exception):
    """A 200 answer that is not a usable response: HTML, a failure envelope, or a schema mismatch.

    `reason` is `Reason.INVALID_RESPONSE` (not JSON / HTML) or `Reason.SHAPE` (schema or soft failure).
    """

    def __init__(self, reason: Reason) -> None:
        super().__init__(reason.value)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """A fully built upstream request. Headers here are only the retailer's public headers; never a secret."""

    method: Literal["GET", "POST"]
    url: str
    headers: Mapping[str, str]
    json_body: object | None = None


@dataclass(frozen=True, slots=True)
class OperationSpec(Generic[ParamsT, BodyT]):
    """Everything about one route key's upstream call (DESIGN §1: one spec per operation)."""

    key: RouteKey
    params: type[ParamsT]
    """Strict pydantic model of the upstream request parameters (extra fields forbidden)."""
    build_request: Callable[[ParamsT], HttpRequest]
    """The direct request: method, URL (with query string), headers, JSON body."""
    relay_operation: str
    """Path segment of the relay call: `POST {relay base}/v1/{group}/{relay_operation}`."""
    relay_body: Callable[[ParamsT], Mapping[str, Any]]
    """The JSON body the relay expects for this operation."""
    probe_params: Callable[[int], ParamsT]
    """The fixed representative parameters for the probe; takes `now` (epoch ms) for date-based probes."""
    validate: Callable[[object], BodyT]
    """Decoded JSON -> validated response model; raises `ResponseRejected` on any soft failure."""
    relay_api_key_field: str | None = None
    """The relay body field for the retailer API key the relay passes on (gs25-stock: `apiKey`); the relay
    transport fills it from the relay's credentials when it has one. Nothing else ever sees the key."""
