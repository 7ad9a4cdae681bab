"""Rules on what callers send, in the forms the OpenAPI document states them (docs/design.md, "HTTP API").

A text rule is a regular expression that Python's `re`, pydantic's (Rust) regex engine and JSON Schema's
ECMA-262 read alike: the validators check the pattern itself, and the document shows the same pattern, so the
two cannot disagree. It has no look-around (Rust's engine has none) and no surrogates (not characters to
Rust); a character beyond the BMP is written as itself, the only spelling all three share.

A rule across parameters (`CrossRule`) is one a parameter's schema can't carry: the operation's description
states it, a 400 that breaks it says it, and docs/design.md lists every one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from functions.core.errors import ErrorCode

CharRanges = Sequence[tuple[int, int]]
"""Code point ranges, both ends included."""

CONTROL: CharRanges = ((0x00, 0x1F), (0x7F, 0x9F))
"""Control characters (Unicode category Cc)."""

WHITESPACE: CharRanges = (
    (0x09, 0x0D), (0x1C, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680),
    (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000),
)  # fmt: skip
"""What `str.strip()` removes (`str.isspace()`)."""

FORMAT_AND_SEPARATORS: CharRanges = (
    (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F),
    (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x2028, 0x202E),
    (0x2060, 0x2064), (0x2066, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD),
    (0x110CD, 0x110CD), (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
)  # fmt: skip
"""Format characters (Cf: bidi overrides, zero-width...) and the line and paragraph separators (Zl, Zp), as
Unicode 15.0 (`UNICODE_VERSION`, the Lambda runtime's python3.12) has them; tests/unit/core/test_input_rules.py
holds the list to the running Python's database."""
UNICODE_VERSION = "15.0.0"

SURROGATES = (0xD800, 0xDFFF)
"""Lone surrogates (Cs): only for Python's `re`; no other engine takes them in a pattern."""


def _escaped(code_point: int) -> str:
    return f"\\u{code_point:04x}" if code_point <= 0xFFFF else chr(code_point)


def _merged(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for first, last in sorted(ranges):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(last, merged[-1][1]))
        else:
            merged.append((first, last))
    return merged


def _class_body(ranges: Iterable[tuple[int, int]]) -> str:
    return "".join(
        _escaped(first) if first == last else f"{_escaped(first)}-{_escaped(last)}"
        for first, last in _merged(ranges)
    )


def visible_text(refused: CharRanges) -> str:
    """The pattern of text with none of `refused` and at least one character that is neither refused nor
    whitespace (so it is not blank once stripped). Lengths are the schema's `minLength`/`maxLength`."""
    anything_allowed = f"[^{_class_body(refused)}]*"
    visible = f"[^{_class_body([*refused, *WHITESPACE])}]"
    return f"^{anything_allowed}{visible}{anything_allowed}$"


DASHED_DATE = r"^(?:[0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)-[0-9]{2}-[0-9]{2}$"
"""A date as `YYYY-MM-DD` from year 0001 (Python's first; RFC 3339 also has a year 0000); that it is a real
date is the schema's `format: date`."""

_CHOICE = r"[a-z0-9]+"
_CHOICE_LIST = re.compile(rf"\^\(\?:({_CHOICE}(?:\|{_CHOICE})*)\)\(\?:,\(\?:\1\)\)\*\$")


def choice_list(choices: Iterable[str]) -> str:
    """The pattern of a comma-separated list of `choices` (lowercase names), no spaces: `cu,gs25`."""
    listed = list(choices)
    if not listed or not all(re.fullmatch(_CHOICE, name) for name in listed):
        raise ValueError("choices are plain lowercase names")
    names = "|".join(listed)
    return f"^(?:{names})(?:,(?:{names}))*$"


def choices_of(pattern: str) -> list[str] | None:
    """The choices of a `choice_list` pattern (for a person: the pattern is long); None for any other."""
    found = _CHOICE_LIST.fullmatch(pattern)
    return found.group(1).split("|") if found else None


_INTEGRAL_NUMERAL = re.compile(r"-?[0-9]+(\.[0-9]+)?[eE][+-]?[0-9]+|-?[0-9]+\.[0-9]+")


def whole_number(value: object) -> object:
    """A number JSON Schema calls an integer, as an int: `2793.0` is 2793. Anything else is returned as it is,
    for the integer validation after this to judge (2793.5, a bool or a string stay refused)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def whole_number_text(value: object) -> object:
    """The same for a number written in a query string: `3.0` and `3e0` are the integer 3 (pydantic reads
    plain digits and `3.0` itself, not an exponent)."""
    if isinstance(value, str) and _INTEGRAL_NUMERAL.fullmatch(value) and float(value).is_integer():
        return int(float(value))
    return value


@dataclass(frozen=True)
class CrossRule:
    """A rule across an operation's parameters. `name` is the pydantic error type a break of it raises (and
    how tests name it); `text` is what the description, the 400 and docs/design.md say."""

    name: str
    text: str

    @property
    def note(self) -> str:
        """How an operation's description states it."""
        return f"Rule across parameters (else 400 `INVALID_INPUT`): {self.text}."


def broken_rules_message(rules: Iterable[CrossRule], errors: Iterable[Mapping[str, Any]]) -> str:
    """INVALID_INPUT's message, naming each rule across parameters that pydantic's `errors` show broken."""
    types = {error.get("type") for error in errors}
    broken = [rule.text for rule in rules if rule.name in types]
    message = ErrorCode.INVALID_INPUT.message
    return f"{message.removesuffix('.')}: {'; '.join(broken)}." if broken else message
