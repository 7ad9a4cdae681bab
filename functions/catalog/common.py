"""Building blocks shared by the per-service specs: strict params, lenient-but-typed upstream models,
value types for the retailers' loose JSON and the stock status rule."""

import math
import re
from abc import abstractmethod
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
    with_config,
)
from typing_extensions import TypedDict

StockStatus = Literal["in_stock", "out_of_stock", "not_sold", "unknown"]


class StrictParams(BaseModel):
    """Request parameters: exact upstream field names, no coercion, nothing extra.

    Every catalog model defers building its validator to its first use (`defer_build`): a function's cold
    start then pays only for the models its requests use (bench/README.md, cold import).
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


class NoParams(StrictParams):
    """An operation without parameters (the relay takes `{}`)."""


class UpstreamModel(BaseModel):
    """A response object: declared fields are typed strictly, anything else the upstream adds is kept."""

    model_config = ConfigDict(extra="allow", strict=True, defer_build=True)


# --- value types -----------------------------------------------------------------------------------
_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_NUMERIC_TEXT = re.compile(r"-?[0-9]+(\.[0-9]+)?")
_QUANTITY_TEXT = re.compile(r"-1|[0-9]{1,9}")


def utf16_units(value: str) -> int:
    """A string's length as JavaScript counts it: characters beyond the BMP are two UTF-16 code units."""
    return sum(2 if ord(char) > 0xFFFF else 1 for char in value)


def text_rule(min_units: int, max_units: int) -> AfterValidator:
    """Free text as the retailers' JavaScript clients and the relays check it: `min_units..max_units`
    UTF-16 code units, no control characters."""

    def check(value: str) -> str:
        if not min_units <= utf16_units(value) <= max_units:
            raise ValueError(f"must be {min_units} to {max_units} UTF-16 code units long")
        if _CONTROL_CHARS.search(value):
            raise ValueError("must not contain control characters")
        return value

    return AfterValidator(check)


def _to_number(value: object) -> int | float:
    """A number or a numeric string (retailers send prices both ways). Never a bool, NaN or infinity."""
    if isinstance(value, bool):
        raise ValueError("expected a number")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("expected a finite number")
        return value
    if isinstance(value, str) and _NUMERIC_TEXT.fullmatch(value.strip()):
        text = value.strip()
        return float(text) if "." in text else int(text)
    raise ValueError("expected a number or a numeric string")


def decimal_text(value: float) -> str:
    """A coordinate as the apps send it: plain decimal text to 7 places (about 1 cm), never an exponent."""
    return f"{value:.7f}".rstrip("0").rstrip(".")


def _non_negative(value: int | float) -> int | float:
    if not math.isfinite(value) or value < 0:
        raise ValueError("expected a finite number >= 0")
    return value


def _to_number_or_blank(value: object) -> int | float | None:
    if value is None or value == "":
        return None
    return _to_number(value)


def _to_quantity(value: object) -> int | None:
    """Stock / seat counts: int >= -1, "-1" or up to 9 digits, or null. -1 and null mean unknown."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ValueError("expected a quantity")
    if isinstance(value, int):
        if value < -1:
            raise ValueError("quantity below -1")
        return value
    if isinstance(value, str) and _QUANTITY_TEXT.fullmatch(value):
        return int(value)
    raise ValueError("expected a quantity")


def _to_count(value: object) -> int:
    """A total count: int >= 0 or a digits string."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.isdigit() and value.isascii():
        return int(value)
    raise ValueError("expected a count")


def _to_required_quantity(value: object) -> int:
    quantity = _to_quantity(value)
    if quantity is None:
        raise ValueError("quantity is required")
    return quantity


NonEmptyStr = Annotated[str, StringConstraints(pattern=r"\S")]
"""A string with at least one non-blank character."""
SearchText = Annotated[str, StringConstraints(min_length=1, max_length=200), text_rule(1, 200)]
"""A user search word: 1-200 characters (UTF-16 code units, as the upstreams count), no control characters."""
OptionalText = Annotated[str, StringConstraints(max_length=200), text_rule(0, 200)]
Code = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,40}$")]
OptionalCode = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{0,40}$")]
Latitude = Annotated[float, Field(ge=-90, le=90, allow_inf_nan=False)]
Longitude = Annotated[float, Field(ge=-180, le=180, allow_inf_nan=False)]
FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
NonNegativeFloat = Annotated[float, Field(ge=0, allow_inf_nan=False)]
NonNegativeNumber = Annotated[int | float, AfterValidator(_non_negative)]
"""A JSON number >= 0 kept as the upstream sent it (prices stay integers)."""
Numeric = Annotated[int | float, BeforeValidator(_to_number)]
NumericOrBlank = Annotated[int | float | None, BeforeValidator(_to_number_or_blank)]
Quantity = Annotated[int | None, BeforeValidator(_to_quantity)]
RequiredQuantity = Annotated[int, BeforeValidator(_to_required_quantity)]
Count = Annotated[int, BeforeValidator(_to_count)]
YN = Literal["Y", "N"]


# --- requests --------------------------------------------------------------------------------------
def defaults_from(**sources: str) -> Callable[[Any], Any]:
    """A `mode="before"` model validator: each named field, when not given, takes another field's value
    (e.g. a map centre defaults to the searcher's position)."""

    def fill(data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            for target, source in sources.items():
                if source in data:
                    data.setdefault(target, data[source])
        return data

    return fill


def frozen_headers(headers: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(headers))


# --- responses -------------------------------------------------------------------------------------
class AppEnvelope(UpstreamModel):
    """An app API's body (CU, 7-Eleven): no `error` key, `success` exactly true when present, and whatever
    `failure` finds wrong with the rest (a retailer's own status code)."""

    @model_validator(mode="before")
    @classmethod
    def _envelope(cls, data: Any) -> Any:
        if isinstance(data, dict):
            if "error" in data:
                raise ValueError("upstream reported an error")
            if "success" in data and data["success"] is not True:
                raise ValueError("upstream reported success != true")
            if problem := cls.failure(data):
                raise ValueError(problem)
        return data

    @staticmethod
    @abstractmethod
    def failure(data: dict[str, Any]) -> str | None:
        """What the retailer's own status code says is wrong; None when nothing."""


RowT = TypeVar("RowT", bound=UpstreamModel)


class SearchDocuments(UpstreamModel, Generic[RowT]):
    Document: list[RowT]
    totalCount: Count | None = None


class SearchCollection(UpstreamModel, Generic[RowT]):
    Documentset: SearchDocuments[RowT]


class SearchEngineResult(UpstreamModel, Generic[RowT]):
    """The search engine's answer that GS25's and 7-Eleven's searches share:
    `Collection[].Documentset.Document[]`, each collection with its own `totalCount`."""

    Collection: list[SearchCollection[RowT]]

    def documents(self) -> list[RowT]:
        return [doc for collection in self.Collection for doc in collection.Documentset.Document]

    def total_count(self) -> int | None:
        """The collections' counts added up; None when none has one."""
        counts = [c.Documentset.totalCount for c in self.Collection if c.Documentset.totalCount is not None]
        return sum(counts) if counts else None


# --- answers: the `data` of the lookup API, built by the normalizers ---------------------------------
answer = with_config(ConfigDict(extra="forbid"))
"""An answer type: a TypedDict (no cost at run time) whose JSON Schema allows no other key. Every key is always
present (null when unknown) unless it is NotRequired."""
Number = float
"""A JSON number (integers stay integers on the wire)."""
Tally = Annotated[int, Field(ge=0)]
"""A count in an answer: 0 or more."""


@answer
class Stock(TypedDict):
    """A stock figure. -1 and null upstream are `unknown`, never 0 and never `out_of_stock`."""

    quantity: Tally | None
    status: StockStatus


# --- normalization helpers ------------------------------------------------------------------------
def known(count: int | None) -> int | None:
    """A stock or seat count; -1 and null upstream are unknown (None), never 0."""
    return count if count is not None and count >= 0 else None


def stock(quantity: int | None, *, sold_here: bool = True) -> Stock:
    """The API's stock shape. -1 and null are unknown (never 0, never out of stock)."""
    count = known(quantity)
    status: StockStatus
    if not sold_here:
        status = "not_sold"
    elif count is None:
        status = "unknown"
    elif count > 0:
        status = "in_stock"
    else:
        status = "out_of_stock"
    return {"quantity": count, "status": status}


def yn(value: str | None) -> bool | None:
    return None if value is None else value == "Y"


def optional_float(value: object) -> float | None:
    """A coordinate as a float; None when absent or not numeric (best effort for a field the schema leaves
    untyped)."""
    try:
        return float(_to_number(value))
    except ValueError:
        return None


def optional_text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None
