"""The shape of one operation: the single description that lookups, probes, relays and the sandbox all use."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import urlencode, urlsplit

from pydantic import BaseModel, ValidationError

from functions.core import Reason, RouteFailure, RouteKey

ParamsT = TypeVar("ParamsT", bound=BaseModel)
BodyT = TypeVar("BodyT", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """A fully built upstream request. Headers here are only the retailer's public headers; never a secret."""

    method: Literal["GET", "POST"]
    url: str
    headers: Mapping[str, str]
    json_body: object | None = None


SigningKeys = Callable[[str], str | None]
"""A secret value by its name (`CGV_SIGNING_KEY`), None when the operator has not configured it."""


def no_keys(_name: str) -> str | None:
    return None


@dataclass(frozen=True, slots=True)
class RequestSigning:
    """How an operation's requests are signed with a key the operator supplies as a secret value: `secret` is
    that value's name, and `headers(key, path, now_ms)` the signed headers for a request to `path` (the URL's
    path, without the query) sent at `now_ms`. The key itself is never sent."""

    secret: str
    headers: Callable[[str, str, int], Mapping[str, str]]


def same_body(params: BaseModel) -> dict[str, Any]:
    """The params as a JSON body, unset optional (None) fields left out: what most upstreams and relays get."""
    return params.model_dump(exclude_none=True)


def no_query(_params: BaseModel) -> Sequence[tuple[str, str]]:
    return ()


def url_with_query(base: str, pairs: Sequence[tuple[str, str]]) -> str:
    """Append query parameters in exactly the given order (some upstreams care)."""
    return f"{base}?{urlencode(list(pairs))}" if pairs else base


@dataclass(frozen=True, slots=True)
class OperationSpec(Generic[ParamsT, BodyT]):
    """Everything about one route key's operation: `spec(key, path, params=..., ...)`. The defaults fit most
    operations (a POST of the params as JSON, the relay operation named like the route key, the relay body the
    same JSON), and each retailer's module fixes what its operations share (`base_url`, `headers`) once, so a
    spec states only what differs."""

    key: RouteKey
    path: str
    """The operation's path under `base_url`, without the query string."""
    _: KW_ONLY
    base_url: str
    """The retailer's API: scheme, host and any path prefix its operations share."""
    headers: Mapping[str, str]
    """The retailer's public headers (never a secret)."""
    params: type[ParamsT]
    """Strict pydantic model of the upstream request parameters (extra fields forbidden)."""
    probe_params: Callable[[int], ParamsT]
    """The fixed representative parameters for the probe; takes `now` (epoch ms) for date-based probes."""
    response: type[BodyT]
    """The validated response: every soft failure (failure envelope, missing field) fails its validation."""
    normalizer: Callable[[BodyT], Mapping[str, Any]]
    """The validated response -> the API's `data`; its return type is the answer model (a TypedDict)."""
    relay_input: type[BaseModel]
    """The relay's input rule for this operation: the relay refuses any body that fails it."""
    method: Literal["GET", "POST"] = "POST"
    query: Callable[[ParamsT], Sequence[tuple[str, str]]] = no_query
    """The query string's pairs, in the upstream's order."""
    json_body: Callable[[ParamsT], object] = same_body
    """A POST's JSON body."""
    relay_operation: str = ""
    """Path segment of the relay call, `POST {relay base}/v1/{group}/{relay_operation}`; by default the key."""
    relay_body: Callable[[ParamsT], Mapping[str, Any]] = same_body
    """The JSON body the relay expects for this operation."""
    relay_api_key_field: str | None = None
    """The relay body field for the retailer API key the relay passes on (gs25-stock: `apiKey`); the relay
    transport fills it from the relay's credentials when it has one. Nothing else ever sees the key."""
    signing: RequestSigning | None = None
    """Requests carry headers signed with a secret key (CGV): `request_to_send` adds them."""

    def __post_init__(self) -> None:
        if not self.relay_operation:
            object.__setattr__(self, "relay_operation", self.key.value)

    @property
    def url(self) -> str:
        """The upstream URL without its query string."""
        return self.base_url + self.path

    def build_request(self, params: ParamsT) -> HttpRequest:
        """The direct request: method, URL with its query string, headers, JSON body."""
        body = self.json_body(params) if self.method == "POST" else None
        return HttpRequest(self.method, url_with_query(self.url, self.query(params)), self.headers, body)

    def request_to_send(self, params: ParamsT, *, keys: SigningKeys, now: int) -> HttpRequest:
        """`build_request`, signed at `now` (epoch ms) when the operation is signed. Without its key the
        operation cannot be sent: `RouteFailure(CONFIGURATION)` (the route reports `configuration`)."""
        request = self.build_request(params)
        if self.signing is None:
            return request
        key = keys(self.signing.secret)
        if not key:
            raise RouteFailure(Reason.CONFIGURATION)
        signed = self.signing.headers(key, urlsplit(request.url).path, now)
        return HttpRequest(request.method, request.url, {**request.headers, **signed}, request.json_body)

    def validate(self, body: object) -> BodyT:
        """Decoded JSON -> the response model. Not an object: INVALID_RESPONSE; schema or soft failure: SHAPE."""
        if not isinstance(body, dict):
            raise RouteFailure(Reason.INVALID_RESPONSE)
        try:
            return self.response.model_validate(body)
        except ValidationError:
            # `from None`: the pydantic error quotes upstream body values; keep them out of tracebacks/logs.
            raise RouteFailure(Reason.SHAPE) from None

    def normalize(self, body: BaseModel) -> Mapping[str, Any]:
        """The API's `data` from what `validate` returned: clear names, numbers as numbers, stock as
        `{"quantity", "status"}`. Only validated bodies get here, so a failed answer never becomes an empty
        list or "stock 0"."""
        if not isinstance(body, self.response):
            raise TypeError(
                f"{self.key} expects a validated {self.response.__name__}, got {type(body).__name__}"
            )
        return self.normalizer(body)
