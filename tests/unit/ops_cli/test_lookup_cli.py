"""`route-health lookup`'s own parts: answers as tables that line up with Korean text, options and help from the
document's parameters, where the command sends its request, and one-line errors (tests/e2e has the whole
command against the sandbox)."""

from __future__ import annotations

import argparse
import json
import re
import socket

import httpx
import pytest

from functions.core import input_rules
from functions.lookup_document import Parameter, lookup_document, lookup_operations
from ops_cli import lookup
from ops_cli.connection import CliError
from ops_cli.untrusted import MAX_ANSWER_BYTES
from tests.support.hostile_upstream import (
    Behaviour,
    HostileServer,
    body_drip,
    chunked,
    deep_json,
    gzip_bomb,
    ok_json,
    respond,
)

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


# --- hostile answers: a --url server (or a retailer's text) never controls the terminal -------------------

ESCAPES = {
    "title": "\x1b]0;pwned\x07",  # OSC: sets the window title
    "clear": "\x1b[2J",  # CSI: clears the screen
    "c1-csi": "\x9b31m",  # the one-character CSI (C1)
    "clipboard": "\x1b]52;c;ZWNobyBwd25lZA==\x07",  # OSC 52: writes the clipboard
    "fake-line": "\r\nstores (0)",
}
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")
"""Every control character but the newline."""


def run_lookup(server: HostileServer, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = lookup.main(
        ["cuProducts", "--keyword", "x", "--url", server.base_url, *argv],
        operations=tuple(OPERATIONS.values()),
    )
    out, err = capsys.readouterr()
    return status, out, err


def serving(body: bytes, head: bytes = b"HTTP/1.1 200 OK\r\nContent-Type: application/json") -> HostileServer:
    return HostileServer(lambda path: respond(head + b"\r\nContent-Length: %d" % len(body), body))


def products(*names: str) -> bytes:
    rows = [{"name": name, "price": 1800} for name in names]
    return json.dumps({"success": True, "data": {"totalCount": len(rows), "items": rows}}).encode()


def test_a_table_shows_every_control_character_of_an_answer_as_an_escape(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with serving(products(*(f"{name}{text}" for name, text in ESCAPES.items()))) as server:
        status, out, err = run_lookup(server, capsys)

    assert (status, err) == (0, "")
    assert not CONTROL.search(out)
    lines = out.splitlines()
    assert len(lines) == 2 + 1 + 1 + len(ESCAPES)  # totalCount, blank, "items (n)", header, one per row
    assert [line.rsplit("  ", 1)[0].rstrip() for line in lines[4:]] == [
        "title\\x1b]0;pwned\\x07",
        "clear\\x1b[2J",
        "c1-csi\\x9b31m",
        "clipboard\\x1b]52;c;ZWNobyBwd25lZA==\\x07",  # 40 columns: one more would be cut
        "fake-line\\x0d\\x0astores (0)",
    ]
    assert all(line.endswith("  1800") for line in lines[4:])


def test_json_escapes_c1_controls_and_still_reads_as_the_same_data(
    capsys: pytest.CaptureFixture[str],
) -> None:
    body = products(*ESCAPES.values())
    with serving(body) as server:
        status, out, _ = run_lookup(server, capsys, "--json")

    assert status == 0
    assert not CONTROL.search(out)
    assert "\\u009b31m" in out
    assert "\\u001b]52" in out
    assert json.loads(out) == json.loads(body)["data"]


def test_an_error_line_from_a_hostile_server_is_one_line_without_control_characters(
    capsys: pytest.CaptureFixture[str],
) -> None:
    error = {
        "code": "X" + ESCAPES["clipboard"],
        "message": "bad" + ESCAPES["fake-line"],
        "fields": [{"field": ESCAPES["title"], "message": ESCAPES["c1-csi"]}, "not a field"],
    }
    body = json.dumps({"success": False, "error": error}).encode()
    head = b"HTTP/1.1 400 Bad Request\r\nRetry-After: 1\x9b2J\r\nContent-Type: application/json"
    with serving(body, head) as server:
        status, out, err = run_lookup(server, capsys)

    assert (status, out) == (1, "")
    assert err == (
        "route-health lookup: X\\x1b]52;c;ZWNobyBwd25lZA==\\x07: bad\\x0d\\x0astores (0) "
        "(\\x1b]0;pwned\\x07: \\x9b31m) [HTTP 400; retry in 1\\x9b2J s]\n"
    )


@pytest.mark.parametrize(
    ("behaviour", "message"),
    [
        (ok_json(deep_json(100_000)), "HTTP 200 from {url} without the API's JSON answer"),
        (ok_json(b'{"success": true, "data": ' * 100 + b"1" + b"}" * 100), "HTTP 200 from {url} without"),
        (
            respond(b"HTTP/1.1 200 OK\r\nContent-Length: %d" % (MAX_ANSWER_BYTES + 1)),
            "the answer from {url} is larger than 10 MiB",
        ),
        (
            chunked(*[b" " * 1_048_576] * 11),  # no length given: counted as it arrives
            "the answer from {url} is larger than 10 MiB",
        ),
        (gzip_bomb(1024), "the answer from {url} is compressed (gzip), which was not asked for"),
    ],
    ids=["100000-deep", "over-64-deep", "declared-too-large", "too-large", "gzip-bomb"],
)
def test_a_hostile_or_huge_answer_is_a_one_line_error(
    behaviour: Behaviour, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with HostileServer(lambda path: behaviour) as server:
        url = server.base_url
        status, out, err = run_lookup(server, capsys)

    assert (status, out) == (1, "")
    assert err.startswith(f"route-health lookup: {message.format(url=url)}")
    assert err.count("\n") == 1


def test_an_answer_still_arriving_after_its_time_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lookup, "ANSWER_WITHIN_S", 0.2)
    with HostileServer(lambda path: body_drip(0.05)) as server:
        url = server.base_url
        with pytest.raises(CliError) as raised:
            lookup.call(url, OPERATIONS["cuProducts"], {"keyword": "x"})
    assert str(raised.value) == f"no complete answer from {url} in 0.2 s"


def test_an_answer_asked_for_uncompressed() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"success": True, "data": {}})

    lookup.call(
        "http://api.test", OPERATIONS["cuProducts"], {"keyword": "x"}, transport=httpx.MockTransport(answer)
    )
    assert seen[0].headers["accept-encoding"] == "identity"


def test_patterned_options_explain_long_patterns_in_words() -> None:
    parameters = [
        p for operation in OPERATIONS.values() for p in operation.parameters if "pattern" in p.schema
    ]
    assert parameters, "the document has patterned parameters"
    for parameter in parameters:
        pattern = parameter.schema["pattern"]
        hint = lookup.pattern_hint(pattern)
        assert len(hint) <= 60, (parameter.name, hint)
        choices = input_rules.choices_of(pattern)
        assert pattern in hint or pattern in lookup.PATTERN_HINTS or choices, f"{parameter.name}: no hint"
        if choices:  # a list of names: the names themselves
            assert all(name in hint for name in choices)
    play_date = next(p for p in OPERATIONS["cgvTimetable"].parameters if p.name == "playDate")
    assert (
        lookup.parameter_help(play_date)
        == "YYYYMMDD (default: today in Korea) (string; YYYYMMDD, a real date)"
    )
    cinema = next(p for p in OPERATIONS["dtryxMovies"].parameters if p.name == "cinemaCode")
    assert lookup.parameter_help(cinema).endswith("(string; matching ^[0-9]{6}$)")
