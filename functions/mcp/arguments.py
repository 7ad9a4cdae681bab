"""A tool call's arguments held to the JSON types of its `inputSchema` before anything runs.

A query string carries text only, so a REST caller cannot send a wrong JSON type; a tool call can (`["a","b"]`,
an object, `true` for a string), and sent on as text it would be searched and counted against the daily
quota. Refused here, it is `INVALID_INPUT` in REST's words, with no lookup and no quota spent. Every other rule
of the schema (ranges, lengths, patterns, rules across parameters) is the lookup's own validation, as for REST.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from functions.core.errors import FieldError
from functions.lookup_document import LookupOperation


def _is_number(value: object) -> bool:
    # A boolean is not a number in JSON; JSON has no NaN or infinity, though the parser reads them.
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _is_integer(value: object) -> bool:
    # JSON Schema: 2793.0 is an integer too.
    return _is_number(value) and float(value).is_integer()  # type: ignore[arg-type]


TYPE_CHECKS: Mapping[str, Callable[[object], bool]] = {
    "string": lambda value: isinstance(value, str),
    "integer": _is_integer,
    "number": _is_number,
    "boolean": lambda value: isinstance(value, bool),
}
"""The JSON types a lookup parameter can have (an unknown one is left to the lookup's validation)."""


def _has_type(value: object, kind: str) -> bool:
    check = TYPE_CHECKS.get(kind)
    return check is None or check(value)


def wrong_types(operation: LookupOperation, arguments: Mapping[str, object]) -> list[FieldError]:
    """Each argument whose JSON type its parameter's schema does not allow, as an answer's `fields` entry
    (null and absent arguments are absent parameters; names the operation does not have are ignored)."""
    errors: list[FieldError] = []
    for parameter in operation.parameters:
        value = arguments.get(parameter.name)
        declared = parameter.schema.get("type")
        if value is None or declared is None:
            continue
        kinds = [declared] if isinstance(declared, str) else list(declared)
        if not any(_has_type(value, kind) for kind in kinds):
            expected = " or ".join(f"a valid {kind}" for kind in kinds)
            errors.append(
                {
                    "location": parameter.location,
                    "field": parameter.name,
                    "message": f"Input should be {expected}",
                }
            )
    return errors
