"""The edge's viewer-request function (infra/edge_query.js), run by node on CloudFront Functions' event shape:
the query string sorted by name, so no order splits a cache entry, and nothing else changed."""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest

from infra.edge import QUERY_FUNCTION_CODE

pytestmark = [
    pytest.mark.infra,
    pytest.mark.skipif(shutil.which("node") is None, reason="node runs the CDK; it runs this function too"),
]

# CloudFront Functions run the file's `handler`; node evaluates the same text, then calls it on each event.
RUNNER = """
const code = require("fs").readFileSync(process.argv[1], "utf8");
const handler = new Function(code + "\\nreturn handler;")();
const events = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(events.map((event) => handler(event))));
"""


def run(*querystrings: dict[str, Any]) -> list[dict[str, Any]]:
    """The requests the function returns for viewer requests with these query objects."""
    events = [
        {
            "version": "1.0",
            "context": {"eventType": "viewer-request"},
            "viewer": {"ip": "203.0.113.7"},
            "request": {
                "method": "GET",
                "uri": "/api/cu/products",
                "querystring": querystring,
                "headers": {"host": {"value": "d111111abcdef8.cloudfront.net"}},
                "cookies": {},
            },
        }
        for querystring in querystrings
    ]
    completed = subprocess.run(  # noqa: S603 - node, this repository's file, no shell
        ["node", "-e", RUNNER, str(QUERY_FUNCTION_CODE)],  # noqa: S607
        input=json.dumps(events),
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    requests: list[dict[str, Any]] = json.loads(completed.stdout)
    return requests


def query(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """CloudFront's query object for these pairs in this order: one entry per name, `multiValue` for repeats."""
    found: dict[str, Any] = {}
    for name, value in pairs:
        if name in found:
            entry = found[name]
            entry.setdefault("multiValue", [{"value": entry["value"]}]).append({"value": value})
        else:
            found[name] = {"value": value}
    return found


def test_every_order_of_the_same_parameters_is_one_query_string() -> None:
    orders = [
        [("keyword", "cola"), ("page", "2"), ("size", "20")],
        [("size", "20"), ("keyword", "cola"), ("page", "2")],
        [("page", "2"), ("size", "20"), ("keyword", "cola")],
    ]
    results = run(*(query(order) for order in orders))

    assert {request["querystring"] for request in results} == {"keyword=cola&page=2&size=20"}


def test_a_repeated_name_keeps_its_values_in_their_order() -> None:
    first, second = run(
        query([("storeId", "b"), ("itemId", "9"), ("storeId", "a")]),
        query([("itemId", "9"), ("storeId", "b"), ("storeId", "a")]),
    )

    assert first["querystring"] == second["querystring"] == "itemId=9&storeId=b&storeId=a"


def test_encoded_names_and_values_pass_as_the_viewer_encoded_them() -> None:
    # CloudFront hands the function the query as sent; decoding and re-encoding could merge or split entries.
    (request,) = run(
        query([("keyword", "%EC%BD%9C%EB%9D%BC"), ("q", "a%26b%3Dc"), ("a%20b", "x+y"), ("e", "")])
    )

    assert request["querystring"] == "a%20b=x+y&e=&keyword=%EC%BD%9C%EB%9D%BC&q=a%26b%3Dc"


def test_names_sort_by_code_unit_so_case_never_merges_two_parameters() -> None:
    (request,) = run(query([("b", "1"), ("B", "2"), ("a", "3")]))

    assert request["querystring"] == "B=2&a=3&b=1"


def test_an_empty_query_and_the_rest_of_the_request_are_left_alone() -> None:
    empty, some = run({}, query([("b", "1"), ("a", "2")]))

    assert empty["querystring"] == {}
    assert empty["uri"] == some["uri"] == "/api/cu/products"
    assert empty["method"] == some["method"] == "GET"
    assert some["headers"] == {"host": {"value": "d111111abcdef8.cloudfront.net"}}
