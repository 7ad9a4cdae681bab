"""The value types of the relays' input rules (each operation's `relay_input` is a `RelayInput` of them), with
the relays' JavaScript semantics: `5.0` is the integer 5, a boolean is not a number, `NaN`/`Infinity` are not
JSON, lengths count UTF-16 code units, `\\d` is `[0-9]`; an optional key is absent, never null; any other
key is refused."""

from collections.abc import Callable
from typing import Annotated, Any, Final

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    StringConstraints,
    model_validator,
)
from typing_extensions import TypedDict

from functions.catalog.common import NoParams, text_rule


def _js_integer(value: object) -> object:
    """JSON `5.0` is the integer 5 in JavaScript."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _within(limit: float) -> Any:
    def check(value: str) -> str:
        if abs(float(value)) > limit:
            raise ValueError(f"must be within ±{limit:g}")
        return value

    return AfterValidator(check)


def _false(value: bool) -> bool:
    if value:
        raise ValueError("must be false")
    return value


JsNumber = Annotated[float, Field(allow_inf_nan=False)]
"""Any finite JSON number (strict: never a boolean or a string)."""
Text = Annotated[StrictStr, text_rule(0, 200)]
Text1 = Annotated[StrictStr, text_rule(1, 200)]
Code = Annotated[StrictStr, StringConstraints(pattern=r"^[A-Za-z0-9_-]*$", max_length=64)]
Code1 = Annotated[StrictStr, StringConstraints(pattern=r"^[A-Za-z0-9_-]+$", max_length=64)]
Count = Annotated[int, BeforeValidator(_js_integer), Field(ge=0, le=9999)]
Count1 = Annotated[int, BeforeValidator(_js_integer), Field(ge=1, le=9999)]
_DECIMAL = StringConstraints(pattern=r"^-?[0-9]+(\.[0-9]+)?$")
Latitude = Annotated[StrictStr, _DECIMAL, _within(90)]
Longitude = Annotated[StrictStr, _DECIMAL, _within(180)]
PageText = Annotated[StrictStr, StringConstraints(pattern=r"^[0-9]{1,4}$")]
ApiKey = Annotated[StrictStr, text_rule(1, 512)]
"""A retailer API key the relay passes on (gs25-stock's `apiKey`)."""
Empty = Annotated[list[Any], Field(max_length=0)]
FalseOnly = Annotated[StrictBool, AfterValidator(_false)]


class RelayInput(BaseModel):
    """One operation's body: exactly these keys, strict types; an optional key is absent, never null."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict) and any(value is None for value in data.values()):
            raise ValueError("null is not a value the relay accepts")
        return data


class NoFields(RelayInput):
    """`{}` exactly."""


class _WithoutParams(TypedDict):
    params: type[NoParams]
    probe_params: Callable[[int], NoParams]
    relay_input: type[NoFields]


WITHOUT_PARAMS: Final[_WithoutParams] = {
    "params": NoParams,
    "probe_params": lambda _now: NoParams(),
    "relay_input": NoFields,
}
"""A spec's fields for an operation that takes no parameters, upstream or at the relay (`{}`):
`spec(key, path, **WITHOUT_PARAMS, ...)`."""
