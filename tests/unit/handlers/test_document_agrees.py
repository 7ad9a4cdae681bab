"""The OpenAPI document says exactly what the lookup API takes: for every parameter of every endpoint, a value
passes the parameter's documented schema (JSON Schema 2020-12, formats asserted, ECMA-262 patterns) exactly
when the endpoint's query model takes it, the other parameters being valid. A rule across parameters is the
one exception, by name (the operation's description states it).

Query strings carry text: a number parameter's value is a JSON number written out (`3`, `3.0`, `3e0`,
`-0.5`), the only text whose number JSON Schema defines.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from functions.catalog import LOOKUPS
from functions.catalog.contract import LookupQuery
from tests.support.catalog_fixtures import ENDPOINTS
from tests.support.examples import examples
from tests.support.openapi import served_document, template_of

TEXT_SAMPLES = (
    "",
    " ",
    "a",
    " a ",
    "\ta",
    "a\n",
    "a\x85b",
    "\u3000콜라\u3000",
    "\u2028",
    "x" * 100,
    "x" * 101,
    " " + "x" * 100,
    "😀" * 100,
    "A000000165760",
    "8801056018979",
    "indieart",
    "000067",
    "2024-02-29",
    "2023-02-29",
    "0000-01-01",
    "0001-01-01",
    "20240101",
    " 2024-01-01",
)
NUMBER_SAMPLES = (
    "3",
    "3.0",
    "3e0",
    "3.5",
    "-0",
    "0",
    "1E2",
    "100.0",
    "1e400",
    "-1e400",
    "9999",
    "1e4",
    "90.0",
)


def _numeral(number: float) -> str:
    return json.dumps(number)


def _values_for(schema: dict[str, Any]) -> st.SearchStrategy[str]:
    if schema["type"] in ("integer", "number"):
        return st.one_of(
            st.integers(-1_000, 11_000).map(str),
            st.integers(-1_000, 11_000).map(lambda n: f"{n}.0"),
            st.integers(-100, 1_100).map(lambda n: f"{n}e0"),
            st.floats(allow_nan=False, allow_infinity=False).map(_numeral),
            st.floats(-200, 200).map(_numeral),
        )
    strategies = [
        st.text(max_size=8),
        st.text(min_size=95, max_size=105),
        st.dates().map(lambda day: day.isoformat()),
    ]
    if "pattern" in schema:  # what the document calls valid, as Python reads the pattern in full
        strategies.append(st.from_regex(schema["pattern"], fullmatch=True))
    return st.one_of(strategies)


def _documented_parameters() -> list[tuple[type[LookupQuery], dict[str, Any]]]:
    by_path = {endpoint.path: endpoint for endpoint in LOOKUPS}
    return [
        (by_path[path], parameter)
        for path, item in served_document()["paths"].items()
        if path in by_path
        for parameter in item["get"].get("parameters", [])
    ]


def _valid_values(endpoint: type[LookupQuery]) -> dict[str, Any]:
    """The tests' valid query for the endpoint (its path parameter included)."""
    known = next(known for known in ENDPOINTS if template_of(known.path) == endpoint.path)
    values: dict[str, Any] = dict(known.query)
    if "{goodsNo}" in endpoint.path:
        values["goodsNo"] = known.path.rsplit("/", 1)[-1]
    return values


def _documented_as_valid(schema: dict[str, Any], value: str) -> bool:
    instance = json.loads(value) if schema["type"] in ("integer", "number") else value
    return bool(jsonschema_rs.Draft202012Validator(schema, validate_formats=True).is_valid(instance))


def _taken_by_the_server(endpoint: type[LookupQuery], name: str, value: str) -> bool:
    excepted = {rule.name for rule in endpoint.cross_rules}
    try:
        endpoint.model_validate({**_valid_values(endpoint), name: value})
    except ValidationError as error:
        return not any(item["loc"][:1] == (name,) and item["type"] not in excepted for item in error.errors())
    return True


PARAMETERS = _documented_parameters()
PARAMETER_IDS = [f"{endpoint.path}:{parameter['name']}" for endpoint, parameter in PARAMETERS]


def _agrees(endpoint: type[LookupQuery], parameter: dict[str, Any], value: str) -> bool:
    name, schema = parameter["name"], parameter["schema"]
    return _documented_as_valid(schema, value) == _taken_by_the_server(endpoint, name, value)


@pytest.mark.parametrize(("endpoint", "parameter"), PARAMETERS, ids=PARAMETER_IDS)
def test_the_samples_are_documented_as_valid_exactly_when_the_server_takes_them(
    endpoint: type[LookupQuery], parameter: dict[str, Any]
) -> None:
    numeric = parameter["schema"]["type"] in ("integer", "number")
    valid = str(_valid_values(endpoint).get(parameter["name"], parameter["schema"].get("default", "")))
    samples = [*(NUMBER_SAMPLES if numeric else TEXT_SAMPLES), *([valid] if valid else [])]
    assert [value for value in samples if not _agrees(endpoint, parameter, value)] == []


@pytest.mark.parametrize(("endpoint", "parameter"), PARAMETERS, ids=PARAMETER_IDS)
@settings(max_examples=examples(100))
@given(data=st.data())
def test_a_value_is_documented_as_valid_exactly_when_the_server_takes_it(
    endpoint: type[LookupQuery], parameter: dict[str, Any], data: st.DataObject
) -> None:
    value = data.draw(_values_for(parameter["schema"]), label=parameter["name"])
    assert _agrees(endpoint, parameter, value), value
