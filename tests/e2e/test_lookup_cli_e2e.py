"""`route-health lookup` end to end: the installed console script against `route-health sandbox` over real HTTP
(settled sandbox: conftest `fresh`): every operation listed, the answer as a table and as JSON equal to the REST
answer's `data`, help from the document, and a refused lookup as one line with the API's code and exit 1."""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING

import pytest

from functions.lookup_document import lookup_document, lookup_operations
from sandbox.process import route_health_command

if TYPE_CHECKING:
    from tests.e2e.conftest import Sandbox

pytestmark = pytest.mark.e2e

OPERATIONS = lookup_operations(lookup_document())


def lookup(*args: str) -> subprocess.CompletedProcess[str]:
    command = [route_health_command(), "lookup", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)  # noqa: S603


def test_the_list_names_every_operation_as_the_tools_are() -> None:
    done = lookup("--list")
    assert done.returncode == 0, done.stderr
    listed = [line.split()[0] for line in done.stdout.splitlines()[1:]]
    assert listed == [operation.name for operation in OPERATIONS]


def test_an_answer_as_a_table_and_as_json(fresh: Sandbox) -> None:
    query = {"keyword": "레쓰비", "limit": "3"}
    data = fresh.http.get("/api/cu/products", params=query).json()["data"]

    table = lookup("cuProducts", "--keyword", "레쓰비", "--limit", "3", "--url", fresh.url)
    as_json = lookup("cuProducts", "--url", fresh.url, "--keyword", "레쓰비", "--limit", "3", "--json")

    assert (table.returncode, table.stderr) == (0, "")
    lines = table.stdout.splitlines()
    assert lines[:3] == [f"totalCount: {data['totalCount']}", "", "products (3)"]
    assert lines[3].split() == list(data["products"][0])
    for line, product in zip(lines[4:], data["products"], strict=True):
        assert line.startswith(product["itemCode"])
        assert product["itemName"] in line
    assert as_json.returncode == 0
    assert json.loads(as_json.stdout) == data


def test_a_path_parameter_and_a_nested_answer(fresh: Sandbox) -> None:
    data = fresh.http.get(
        "/api/seveneleven/stock", params={"itemCd": "8801056018979", "storeCd": "64676"}
    ).json()

    done = lookup("sevenelevenStock", "--itemCd", "8801056018979", "--storeCd", "64676", "--url", fresh.url)
    goods = lookup("oliveyoungGoodsInfo", "--goodsNo", "A000000165760", "--url", fresh.url, "--json")

    assert done.returncode == 0, done.stderr
    assert f"stock.status: {data['data']['stock']['status']}" in done.stdout.splitlines()
    expected = fresh.http.get("/api/oliveyoung/products/A000000165760").json()["data"]
    assert json.loads(goods.stdout) == expected


def test_a_refused_lookup_is_one_line_with_the_apis_code_and_exit_1(fresh: Sandbox) -> None:
    done = lookup("gs25Stock", "--lat", "37.5", "--lon", "127.0", "--url", fresh.url)

    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        "route-health lookup: INVALID_INPUT: The request parameters are invalid: give `itemCode` or `keyword` "
        "(or both). (parameters: give `itemCode` or `keyword` (or both)) [HTTP 400]\n"
    )


def test_help_comes_from_the_document_and_a_missing_required_option_is_a_usage_error() -> None:
    helped = lookup("dtryxTimetable", "--help")
    missing = lookup("dtryxTimetable", "--brandCode", "indieart")

    assert helped.returncode == 0
    assert "Showtimes and seats for one date" in helped.stdout
    assert "--playDate DATE" in helped.stdout
    assert "Six-digit cinema code" in helped.stdout
    assert missing.returncode == 2
    assert "--cinemaCode" in missing.stderr
