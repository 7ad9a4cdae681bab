"""`route-health lookup`'s own parts: answers as tables that line up with Korean text, options and help from the
document's parameters, where the command sends its request, and one-line errors (tests/e2e has the whole
command against the sandbox)."""

from __future__ import annotations

import argparse
import socket

import httpx
import pytest

from functions.lookup_document import Parameter, lookup_document, lookup_operations
from ops_cli import lookup
from ops_cli.connection import CliError

OPERATIONS = {operation.name: operation for operation in lookup_operations(lookup_document())}


def test_a_table_lines_up_korean_text_and_cuts_long_cells() -> None:
    rows: list[dict[str, object]] = [
        {"name": "레쓰비 마일드", "price": 1800, "open": True},
        {"name": "cola", "price": None, "x": "가" * 30},
    ]
    header, first, second = lookup.table(rows).splitlines()

    column = lookup._width(header[: header.index("price")])  # Korean characters take two columns
    assert lookup._width(first[: first.index("1800")]) == column
    assert lookup._width(second[: second.index("-")]) == column
    assert first.split()[-2:] == ["yes", "-"]  # a cell a row lacks is "-"
    assert second.endswith("…")
    assert lookup._width(second.split()[-1]) <= lookup.MAX_CELL


def test_data_shows_single_values_then_a_table_per_list() -> None:
    data = {"totalCount": 2, "stock": {"quantity": 3, "status": "in_stock"}, "stores": [{"storeCode": "1"}]}
    assert lookup.data_report(data).splitlines() == [
        "totalCount: 2",
        "stock.quantity: 3",
        "stock.status: in_stock",
        "",
        "stores (1)",
        "storeCode",
        "1",
    ]


def test_an_options_help_states_the_documents_constraints() -> None:
    lat = next(p for p in OPERATIONS["gs25Stock"].parameters if p.name == "lat")
    assert lookup.parameter_help(lat) == "WGS84 latitude (number; -90..90)"
    percent = Parameter("p", "query", False, {"type": "string", "pattern": "^[0-9]{1,3}%$"}, "")
    assert "%%" in lookup.parameter_help(percent)  # argparse formats help text with %


def test_where_the_request_goes() -> None:
    assert lookup.base_url(argparse.Namespace()) == lookup.SANDBOX_URL
    assert lookup.base_url(argparse.Namespace(url="https://api.example/")) == "https://api.example"
    with pytest.raises(CliError, match="exclude each other"):
        lookup.base_url(argparse.Namespace(url="https://api.example", stack="RouteHealth-prod"))


def test_a_port_nothing_listens_on_is_one_clear_line() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        unused_port = probe.getsockname()[1]
    with pytest.raises(CliError, match=r"^cannot reach http://127\.0\.0\.1:\d+: ConnectError$"):
        lookup.call(f"http://127.0.0.1:{unused_port}", OPERATIONS["cuProducts"], {"keyword": "x"})


@pytest.mark.parametrize(
    ("status", "body", "message"),
    [
        (429, b'{"message":"Too Many Requests"}', "HTTP 429: Too Many Requests"),
        (502, b"<html>bad gateway</html>", "HTTP 502 from http://api.test without the API's JSON answer"),
        (
            400,
            b'{"success":false,"error":{"code":"INVALID_INPUT","message":"bad","fields":[{"field":null,"message":"give itemCode or keyword"}]}}',
            "INVALID_INPUT: bad (parameters: give itemCode or keyword) [HTTP 400]",
        ),
    ],
)
def test_answers_without_data_are_one_line_errors(status: int, body: bytes, message: str) -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(status, content=body))
    with pytest.raises(CliError) as raised:
        lookup.call("http://api.test", OPERATIONS["gs25Stock"], {"lat": 1, "lon": 2}, transport=transport)
    assert str(raised.value) == message
