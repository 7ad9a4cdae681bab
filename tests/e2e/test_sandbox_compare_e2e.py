"""The comparison end to end: `route-health sandbox` over real HTTP, faults injected at `/_sandbox/faults`
(settled sandbox: conftest `fresh`). Each retailer's search takes its own routes inside the one compare: a
direct 403 falls back to that retailer's relay; a retailer hanging on both paths is listed as timed out while
the others answer; all failing is the error they share; bad input calls nothing. Also the CLI operation."""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING, Any

import pytest

from sandbox.process import route_health_command

if TYPE_CHECKING:
    from tests.e2e.conftest import Sandbox

pytestmark = pytest.mark.e2e

COMPARE = "/api/compare/products"
MEMBER_KEYS = ("cu-prime", "cu-stock", "gs25-products", "seven-goods", "oy-product-search")


def retailers_in(body: dict[str, Any]) -> set[str]:
    return {row["retailer"] for row in body["data"]["results"]}


def test_every_retailer_answers_direct_ranked_by_price(fresh: Sandbox) -> None:
    response, calls = fresh.lookup(COMPARE, {"keyword": "콜라", "limit": 3})

    assert response.status_code == 200, response.text
    body = response.json()
    assert calls == {f"direct:{key}": 1 for key in MEMBER_KEYS}
    assert retailers_in(body) == {"cu", "gs25", "seveneleven", "oliveyoung"}
    prices = [row["price"] for row in body["data"]["results"] if row["price"] is not None]
    assert prices == sorted(prices)
    assert body["data"]["bestPrice"]["price"] == prices[0]


def test_one_retailers_direct_403_falls_back_to_its_relay_inside_the_compare(fresh: Sandbox) -> None:
    fresh.fault("direct:seven-goods", "http-403")

    response, calls = fresh.lookup(COMPARE, {"keyword": "콜라"})

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["data"]["errors"] == []
    assert "seveneleven" in retailers_in(body)
    assert calls == {**{f"direct:{key}": 1 for key in MEMBER_KEYS}, "relay:seven-goods": 1}


def test_a_retailer_hanging_on_both_paths_is_listed_while_the_others_answer(fresh: Sandbox) -> None:
    # Olive Young's search is the only member behind its relay group: the others' relays stay fine.
    fresh.fault("direct:oy-product-search", "timeout")
    fresh.fault("relay:oliveyoung", "timeout")

    response, calls = fresh.lookup(COMPARE, {"keyword": "콜라"})

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["data"]["errors"] == [
        {
            "retailer": "oliveyoung",
            "code": "UPSTREAM_TIMEOUT",
            "message": "The upstream service did not answer in time.",
        }
    ]
    assert retailers_in(body) == {"cu", "gs25", "seveneleven"}
    assert calls.get("direct:oy-product-search") == 1
    assert response.headers["Cache-Control"] == "no-store"  # missing a retailer: no cache keeps it


def test_all_four_failing_is_the_error_they_share(fresh: Sandbox) -> None:
    for key in MEMBER_KEYS:
        fresh.fault(f"direct:{key}", "http-403")
    for group in ("convenience", "oliveyoung"):
        fresh.fault(f"relay:{group}", "http-500")

    response, _ = fresh.lookup(COMPARE, {"keyword": "콜라"})
    alone, _ = fresh.lookup("/api/gs25/products", {"keyword": "콜라"})

    assert response.status_code == alone.status_code >= 500, response.text
    assert response.json() == alone.json()  # the error each retailer's own search answers
    assert response.json()["success"] is False
    assert response.headers["Cache-Control"] == "no-store"


@pytest.mark.parametrize(
    "params",
    [
        {"keyword": "콜라", "retailers": "cu,emart"},
        {"keyword": "콜라", "retailers": "cu gs25"},
        {"keyword": "\u0000콜라"},
        {"keyword": " "},
        {"retailers": "cu"},
    ],
)
def test_bad_retailers_and_keyword_are_400_without_upstream_calls(
    fresh: Sandbox, params: dict[str, str]
) -> None:
    fresh.assert_refused_before_any_call(COMPARE, params)


def test_the_lookup_command_compares(fresh: Sandbox) -> None:
    data = fresh.http.get(COMPARE, params={"keyword": "콜라", "retailers": "gs25,cu", "limit": 2}).json()[
        "data"
    ]
    command = [route_health_command(), "lookup", "compareProducts", "--url", fresh.url]
    arguments = ["--keyword", "콜라", "--retailers", "gs25,cu", "--limit", "2"]

    as_json = subprocess.run([*command, *arguments, "--json"], capture_output=True, text=True, timeout=120)  # noqa: S603
    table = subprocess.run([*command, *arguments], capture_output=True, text=True, timeout=120)  # noqa: S603

    assert as_json.returncode == 0, as_json.stderr
    assert json.loads(as_json.stdout) == data
    assert (table.returncode, table.stderr) == (0, "")
    assert f"results ({len(data['results'])})" in table.stdout.splitlines()
