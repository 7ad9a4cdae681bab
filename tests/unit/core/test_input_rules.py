"""The text rules read alike in Python's `re` (the core), pydantic's Rust engine (the query models) and JSON
Schema's ECMA-262 (the document, as jsonschema-rs reads it); the character lists are the runtime's Unicode
database's; integral numbers are integers."""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated

import jsonschema_rs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import StringConstraints, TypeAdapter, ValidationError

from functions.core.input_rules import (
    CONTROL,
    FORMAT_AND_SEPARATORS,
    UNICODE_VERSION,
    WHITESPACE,
    CharRanges,
    visible_text,
    whole_number,
    whole_number_text,
)


def _members(ranges: CharRanges) -> set[str]:
    return {chr(code) for first, last in ranges for code in range(first, last + 1)}


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def test_the_character_lists_are_the_runtimes_unicode_database() -> None:
    every_character = [chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF]
    assert _members(CONTROL) == {char for char in every_character if unicodedata.category(char) == "Cc"}
    assert _members(WHITESPACE) == {char for char in every_character if char.isspace()}
    categories = {"Cf", "Zl", "Zp"}
    runtimes = {char for char in every_character if unicodedata.category(char) in categories}
    if unicodedata.unidata_version == UNICODE_VERSION:
        assert _members(FORMAT_AND_SEPARATORS) == runtimes
    else:  # an older Python's database (3.11: Unicode 14.0) knows some of these characters as unassigned
        older = _version(unicodedata.unidata_version) < _version(UNICODE_VERSION)
        assert older, "a newer Unicode: update FORMAT_AND_SEPARATORS"
        assert _members(FORMAT_AND_SEPARATORS) >= runtimes


RULES = {
    "control": CONTROL,
    "control, format and separators": (*CONTROL, *FORMAT_AND_SEPARATORS),
}
SAMPLES = st.one_of(
    st.text(max_size=12),
    st.text(
        alphabet=st.sampled_from(sorted(_members((*WHITESPACE, (0x61, 0x62), (0x200B, 0x200B))))), max_size=6
    ),
)


@pytest.mark.parametrize("refused", RULES.values(), ids=list(RULES))
@given(text=SAMPLES)
def test_visible_text_is_one_rule_in_python_pydantic_and_json_schema(refused: CharRanges, text: str) -> None:
    pattern = visible_text(refused)
    expected = not set(text) & _members(refused) and bool(text.strip())

    assert bool(re.fullmatch(pattern, text)) == expected
    try:
        TypeAdapter(Annotated[str, StringConstraints(pattern=pattern)]).validate_python(text)
        taken = True
    except ValidationError:
        taken = False
    assert taken == expected
    assert (
        jsonschema_rs.Draft202012Validator({"type": "string", "pattern": pattern}).is_valid(text) == expected
    )


def test_a_number_json_schema_calls_an_integer_is_one() -> None:
    assert [whole_number(value) for value in (2793.0, 2793, 2793.5, True, "2793", -0.0)] == [
        2793,
        2793,
        2793.5,
        True,
        "2793",
        0,
    ]
    assert [
        whole_number_text(value) for value in ("3.0", "3e0", "30E-1", "-2.0", "3.5", "1e400", "3", " 3.0")
    ] == [
        3,
        3,
        3,
        -2,
        "3.5",
        "1e400",
        "3",
        " 3.0",
    ]
