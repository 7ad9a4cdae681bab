"""What every lookup's contract shares (docs/design.md, "HTTP API"); each contract is written beside the spec
of its operation, at the end of its retailer's module.

An endpoint's query model is its contract: `@lookup(name, path)` gives its operation name and path; its
docstring's first line is its summary and the paragraph after it its description (with `cross_rules`, its
rules across parameters); `freshness` says how long its answers stay fresh (`Freshness`); its fields (with
every constraint) are its parameters; `answer_type()` is its
`data` (the return type of its operation's normalizer, or of its own `fetch`); the errors any lookup can answer
with are `functions.core.errors.ErrorCode`'s lookup codes (`LookupQuery.errors`: which ones, at which status;
each REST route declares them). REST routes, the OpenAPI document, MCP tools and the CLI are derived from `functions.catalog.LOOKUPS`; `fetch` is
what the endpoint does: the operations it becomes.

An endpoint that is one operation (`OperationQuery`) says which one and maps its fields onto the operation's
upstream parameter names; a composite endpoint writes its steps out. Every operation's params are built and
validated before the endpoint's first upstream call, so bad input never reaches a retailer or a relay, and
one `OperationRunner` (the services' `Lookup`: one time budget) serves all of an endpoint's calls.
"""

from __future__ import annotations

import inspect
import re
import typing
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Any, ClassVar, Protocol, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic_core import PydanticCustomError

from functions.catalog import common, spec_for
from functions.core import Clock, RouteKey, input_rules
from functions.core.errors import ApiError, ErrorCode, field_errors
from functions.core.input_rules import CONTROL, CrossRule


def explained(message: str) -> WrapValidator:
    """A value that fails its pattern is refused with `message` (pydantic's own would quote the pattern)."""

    def explain(value: object, handler: ValidatorFunctionWrapHandler) -> object:
        try:
            return handler(value)
        except ValidationError as error:
            if any(item["type"] == "string_pattern_mismatch" for item in error.errors()):
                raise PydanticCustomError("string_pattern_mismatch", message) from None
            raise

    return WrapValidator(explain)


# Every rule a parameter has is in its schema, which the OpenAPI document shows (a pattern, lengths, a range):
# the value is checked as the caller sent it, and what passes here also passes the operation's params, so a
# 400 always names a field the caller sent.
MAX_SEARCH_CHARS = 100
"""Any 100 characters fit the retailers' 200 UTF-16 code units (a character beyond the BMP counts twice
there), which no JSON Schema keyword can count."""
SearchText = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_SEARCH_CHARS, pattern=input_rules.visible_text(CONTROL)),
    explained("must hold a visible character and no control characters"),
    AfterValidator(str.strip),
]
"""Free text: 1..100 characters, no control characters, not blank; searched for without the whitespace
around it."""
Code = common.Code
"""Retailer codes (item codes, store codes, labels): short and plain, so they are safe in any URL."""
Latitude = Annotated[common.Latitude, Field(description="WGS84 latitude")]
Longitude = Annotated[common.Longitude, Field(description="WGS84 longitude")]
WholeNumber = BeforeValidator(input_rules.whole_number_text)
"""An integer parameter takes what JSON Schema calls one: `3`, and also `3.0` or `3e0` (never `3.5`). After
the range (pydantic would not show a range behind a validator in the schema)."""
Page = Annotated[int, Field(ge=1, le=1000, description="1-based page number"), WholeNumber]
PageSize = Annotated[int, Field(ge=1, le=100, description="Rows per page"), WholeNumber]

_DASHED_DATE = re.compile(input_rules.DASHED_DATE)


def _dashed_date_only(value: object) -> object:
    # pydantic's lax `date` also takes "20240131" or epoch numbers; the API promises YYYY-MM-DD only.
    if isinstance(value, str) and not _DASHED_DATE.fullmatch(value):
        raise ValueError("must be a date in YYYY-MM-DD form")
    return value


DashedDate = Annotated[
    date,
    BeforeValidator(_dashed_date_only),
    # pydantic's schema of a date is `format: date`, which JSON Schema only annotates; the pattern asserts.
    Field(description="YYYY-MM-DD", json_schema_extra={"pattern": input_rules.DASHED_DATE}),
]


class InvalidParams(ApiError):
    """The caller's input does not make valid params for the operation (a 400, before any upstream call);
    a field error names the operation's own (upstream) field."""

    def __init__(self, key: RouteKey, errors: Sequence[Mapping[str, Any]]) -> None:
        super().__init__(ErrorCode.INVALID_INPUT, fields=field_errors("query", errors))
        self.key = key
        self.errors = errors


def operation_params(key: RouteKey, values: Mapping[str, Any]) -> BaseModel:
    """The operation's own params model (upstream field names); raises InvalidParams."""
    try:
        params: BaseModel = spec_for(key).params.model_validate(dict(values))
    except ValidationError as error:
        raise InvalidParams(key, error.errors(include_url=False, include_input=False)) from None
    return params


T = TypeVar("T")
K = TypeVar("K", bound=str)


class OperationRunner(Protocol):
    """How an endpoint reaches its operations: `functions.services.lookup.Lookup` (one per request, one time
    budget for all of its calls). Named here so the catalog never imports the services that run it."""

    @property
    def clock(self) -> Clock: ...

    def __call__(self, key: RouteKey, params: BaseModel) -> Any:
        """The validated upstream body of `key` for already validated params."""
        ...

    def data(self, key: RouteKey, params: BaseModel) -> Mapping[str, Any]:
        """The normalized answer of `key` (the API's `data`)."""
        ...

    def each(
        self, calls: Mapping[K, Callable[[OperationRunner], T]], *, lookup_name: str
    ) -> dict[K, T | ApiError]:
        """Every call at once, each on a member runner of its own within this one's budget: by name, its
        result or its ApiError (UPSTREAM_TIMEOUT for one still running at the deadline)."""
        ...


def fetch_operation(lookup: OperationRunner, key: RouteKey, values: Mapping[str, Any]) -> Mapping[str, Any]:
    """One operation: its params from `values` (upstream names), the lookup, the normalized `data`."""
    return lookup.data(key, operation_params(key, values))


@dataclass(frozen=True)
class Freshness:
    """How long a lookup's 200 answer may be reused, in seconds (docs/design.md, "Caching"): by the edge
    cache, by the function's own cache (`max_age` only) and by any other HTTP cache, as its `Cache-Control`
    says. Stock, seats and timetables change by the minute: they are never served stale after an error."""

    max_age: int
    stale_while_revalidate: int
    stale_if_error: int = 0

    def cache_control(self, *, age_s: int = 0) -> str:
        """The answer's `Cache-Control`; an answer already `age_s` old is fresh only for what is left."""
        fresh = max(0, self.max_age - age_s)
        directives = [
            "public",
            f"max-age={fresh}",
            f"s-maxage={fresh}",
            f"stale-while-revalidate={self.stale_while_revalidate}",
        ]
        if self.stale_if_error:
            directives.append(f"stale-if-error={self.stale_if_error}")
        return ", ".join(directives)

    def note(self, subject: str = "Answers") -> str:
        """The freshness in words, for the document, the MCP tools and the CLI's help."""
        words = (
            f"{subject} are cached for {_duration(self.max_age)} (max-age {self.max_age} s) and may be served "
            f"up to {_duration(self.stale_while_revalidate)} later while they are refreshed"
        )
        if self.stale_if_error:
            words += f", or up to {_duration(self.stale_if_error)} later while the upstream fails"
        return words + "."


def _duration(seconds: int) -> str:
    for unit, size in (("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} seconds"


class LookupQuery(BaseModel):
    """One endpoint's query. An endpoint's query model documents the API: its docstring is the operation's
    summary and description (`lookup`), so notes on one are comments."""

    # Deferred like the catalog's other models: the probe function loads the catalog at INIT too, and
    # a lookup's validator is built on its first request.
    model_config = ConfigDict(frozen=True, extra="ignore", allow_inf_nan=False, defer_build=True)

    name: ClassVar[str]
    """The operation's name: the REST handler's, the MCP tool's and the CLI's (`cu_products`; camelCase as
    the OpenAPI operationId)."""
    path: ClassVar[str]
    """`/api/cu/products`; a parameter in braces is a path parameter (`/api/oliveyoung/products/{goodsNo}`)."""
    summary: ClassVar[str]
    """The first line of its docstring."""
    description: ClassVar[str]
    """The paragraph after its summary in its docstring, as one line: what it finds, where, and what its parameters mean, in English and Korean: assistants (MCP) and people
    (the CLI's help, the document) read it."""
    cross_rules: ClassVar[tuple[CrossRule, ...]] = ()
    """Its rules across parameters: a break of one raises a pydantic error whose type is the rule's name."""
    freshness: ClassVar[Freshness]
    """How long its answers stay fresh; `answer_freshness` may shorten it for some queries."""

    def answer_freshness(self) -> Freshness:
        """This query's answer's freshness (an endpoint whose answer holds stock only with some parameter
        says so here and in `freshness_notes`)."""
        return self.freshness

    freshness_notes: ClassVar[tuple[str, ...]] = ()
    """What `answer_freshness` changes, in words, for the document."""

    def answer_reusable(self, data: Mapping[str, Any]) -> bool:
        """Whether this answer may be stored and served again: not one that lacks part of what was asked (a
        comparison with a retailer in `errors`), which is answered `no-store` (`freshness_notes` says so)."""
        return True

    @classmethod
    def errors(cls) -> list[tuple[ErrorCode, int]]:
        """Every error it can answer with, at its status: `ErrorCode`'s lookup codes (UPSTREAM_REJECTED also
        with the upstream's 422), INVALID_INPUT only when it takes parameters, and neither NOT_FOUND (a path no
        lookup has) nor DAILY_RATE_LIMIT_EXCEEDED (the edge's, on the paths the settings limit)."""
        left_out = {ErrorCode.NOT_FOUND, ErrorCode.DAILY_RATE_LIMIT_EXCEEDED}
        if not cls.model_fields:
            left_out.add(ErrorCode.INVALID_INPUT)
        codes = [(code, code.status) for code in ErrorCode if code.lookup and code not in left_out]
        return [*codes, (ErrorCode.UPSTREAM_REJECTED, 422)]

    members: ClassVar[tuple[type[LookupQuery], ...]] = ()
    """The lookups this one runs as its own steps (the comparison runs the retailers' product searches); their
    route keys are its route keys."""

    @abstractmethod
    def fetch(self, lookup: OperationRunner) -> Mapping[str, Any]:
        """The endpoint's `data`; raises InvalidParams (400), ApiError or LookupCancelled."""

    def prepare(self) -> Callable[[OperationRunner], Mapping[str, Any]]:
        """Every step's params built and validated now (raises InvalidParams), and the calls that use them:
        `fetch` without its validation. A lookup that runs others (`members`) prepares each of them before any
        of them calls; a lookup that is a member overrides this (the default validates in `fetch`, before that
        lookup's own first call only)."""
        return self.fetch


RETAILERS = {
    "oliveyoung": "Olive Young",
    "cu": "CU",
    "gs25": "GS25",
    "seveneleven": "7-Eleven",
    "dtryx": "Dtryx cinemas",
    "cgv": "CGV",
    "compare": "Comparison across retailers",
}
"""The retailer segment of a lookup's path (`/api/<retailer>/...`) and its name (the OpenAPI tag), in the
document's order; `compare` is the comparison's, which spans retailers (`functions/catalog/compare.py`)."""
DECLARED: list[type[LookupQuery]] = []
"""Every `@lookup` in the order the retailer modules were imported (`functions.catalog.LOOKUPS` orders them)."""

Q = TypeVar("Q", bound=type[LookupQuery])


def lookup(name: str, path: str) -> Callable[[Q], Q]:
    """Declares a query model a lookup endpoint (see the module docstring): its summary and description come
    from its docstring, its `freshness` from its body."""

    def declare(query: Q) -> Q:
        summary, _, description = inspect.cleandoc(query.__doc__ or "").partition("\n")
        if not summary or not description.strip() or not hasattr(query, "freshness"):
            raise TypeError(f"{query.__name__} needs a docstring (summary, description) and a freshness")
        query.name, query.path = name, path
        query.summary, query.description = summary, " ".join(description.split())
        DECLARED.append(query)
        return query

    return declare


def _segment(query: type[LookupQuery]) -> str:
    return query.path.split("/")[2]


def in_document_order(queries: Sequence[type[LookupQuery]]) -> tuple[type[LookupQuery], ...]:
    """By retailer as `RETAILERS` lists them, each retailer's in the order its module declares them."""
    order = list(RETAILERS)
    return tuple(sorted(queries, key=lambda query: order.index(_segment(query))))


def description_of(query: type[LookupQuery]) -> str:
    """Its description, the rules across its parameters (which their own schemas cannot state) and how long
    its answers stay fresh."""
    notes = (rule.note for rule in query.cross_rules)
    return " ".join([query.description, *notes, query.freshness.note(), *query.freshness_notes])


def retailer_of(query: type[LookupQuery]) -> str:
    """The name of the retailer whose lookup this is (its OpenAPI tag)."""
    return RETAILERS[_segment(query)]


def answer_type(query: type[LookupQuery]) -> Any:
    """The endpoint's `data` type: its own `fetch`'s return type, else its operation's normalizer's."""
    owner = next(klass for klass in query.__mro__ if "fetch" in vars(klass))
    if owner is OperationQuery:
        key: RouteKey = query.key  # type: ignore[attr-defined]
        return typing.get_type_hints(spec_for(key).normalizer)["return"]
    return typing.get_type_hints(query.fetch)["return"]


class OperationQuery(LookupQuery):
    """An endpoint that is one operation, `key`. Each field is one of the operation's params: under its own
    name, or under its `serialization_alias` where the upstream names it otherwise."""

    key: ClassVar[RouteKey]

    def values(self) -> dict[str, Any]:
        """The operation's params by upstream name; what the caller left out (None) takes the params model's
        default."""
        return self.model_dump(by_alias=True, exclude_none=True)

    def fetch(self, lookup: OperationRunner) -> Mapping[str, Any]:
        return fetch_operation(lookup, self.key, self.values())

    def prepare(self) -> Callable[[OperationRunner], Mapping[str, Any]]:
        key, params = self.key, operation_params(self.key, self.values())
        return lambda lookup: lookup.data(key, params)
