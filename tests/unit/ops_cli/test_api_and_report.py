"""`route-health ops` on httpx.MockTransport: every API answer becomes output or a clear failure; the table."""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
from collections.abc import Callable
from datetime import UTC
from email.utils import formatdate
from pathlib import Path
from typing import Any

import httpx
import pytest

from functions.core import Reason, RelayCheck, RelayGroup, RouteKey, RouteVerdict, Snapshot, group_of
from functions.core.model import COOLDOWN_MS, MINUTE_MS, SECOND_MS, OverrideMode, RouteOverride
from functions.handlers.wire import RouteHealth
from ops_cli import cli
from ops_cli.api import Answer, ApiError, OpsApi, SlotTaken
from ops_cli.connection import CliError, Connection
from ops_cli.report import duration, routes_report, when
from ops_cli.snapshot import snapshot_from_wire

SECRET = "operator-secret-Vb93"
CONNECTION = Connection("https://api.example.com", SECRET, "stack RouteHealth-prod")
NOW = 1_767_268_842_000  # 2026-01-01T12:00:42Z
DATE = formatdate(NOW / 1000, usegmt=True)

Handler = Callable[[httpx.Request], httpx.Response]
Runner = Callable[[list[str], Handler], tuple[int, str, str]]


def answering(status: int, body: object, headers: dict[str, str] | None = None) -> Handler:
    def handle(request: httpx.Request) -> httpx.Response:
        assert request.headers["authorization"] == f"Bearer {SECRET}"
        return httpx.Response(status, json=body, headers={"date": DATE, **(headers or {})})

    return handle


def as_wire(snapshot: Snapshot) -> dict[str, Any]:
    """The snapshot as the API answers it."""
    return RouteHealth.from_snapshot(snapshot).to_json()


def api(handler: Handler) -> OpsApi:
    return OpsApi(CONNECTION, transport=httpx.MockTransport(handler))


def snapshot() -> Snapshot:
    return Snapshot(
        routes={
            RouteKey.CU_STOCK: RouteVerdict(RouteKey.CU_STOCK, True, NOW - 3 * MINUTE_MS, Reason.OK),
            RouteKey.CU_STORE: RouteVerdict(
                RouteKey.CU_STORE,
                False,
                NOW - 20 * SECOND_MS,
                Reason.UNAVAILABLE,
                failed_at=NOW - 20 * SECOND_MS,
                blocked_until=NOW - 20 * SECOND_MS + COOLDOWN_MS,
            ),
            RouteKey.OY_FIND_STORE: RouteVerdict(RouteKey.OY_FIND_STORE, True, NOW - MINUTE_MS, Reason.OK),
        },
        relays={
            RelayGroup.CONVENIENCE: RelayCheck(RelayGroup.CONVENIENCE, True, NOW - 3 * MINUTE_MS, Reason.OK),
            RelayGroup.OLIVEYOUNG: RelayCheck(RelayGroup.OLIVEYOUNG, False, NOW - MINUTE_MS, Reason.TIMEOUT),
        },
        overrides={
            RouteKey.CU_STOCK: RouteOverride(
                RouteKey.CU_STOCK, OverrideMode.FORCE_RELAY, "CU 점검", NOW - MINUTE_MS, NOW + 90 * MINUTE_MS
            ),
            RouteKey.OY_FIND_STORE: RouteOverride(
                RouteKey.OY_FIND_STORE,
                OverrideMode.FORCE_RELAY,
                "relay test",
                NOW - MINUTE_MS,
                NOW + MINUTE_MS,
            ),
        },
    )


# --- the API client ------------------------------------------------------------------------------------


def test_routes_answers_the_data_and_the_servers_clock() -> None:
    data = as_wire(snapshot())
    with api(answering(200, {"success": True, "data": data})) as client:
        assert client.routes() == Answer(data, NOW)


def test_a_refused_secret_says_where_the_secret_came_from() -> None:
    body = {"success": False, "error": {"code": "UNAUTHORIZED_HEALTH_CHECK", "message": "A valid ..."}}
    with api(answering(401, body)) as client, pytest.raises(ApiError) as refused:
        client.routes()
    assert str(refused.value) == (
        "the API refused the operator secret from stack RouteHealth-prod (401 UNAUTHORIZED_HEALTH_CHECK)"
    )


def test_a_probe_in_a_taken_slot_answers_when_the_next_slot_starts() -> None:
    body = {
        "success": False,
        "error": {"code": "PROBE_SLOT_TAKEN", "message": "m", "retryAfter": 130},
        "data": {},
    }
    with api(answering(429, body, {"retry-after": "130"})) as client:
        assert client.probe() == SlotTaken(130, {}, NOW)


def test_field_errors_are_listed_under_the_message() -> None:
    fields = [{"location": "body", "field": "ttlSeconds", "message": "between 1 and 86400 seconds (24 h)"}]
    body = {
        "success": False,
        "error": {"code": "INVALID_INPUT", "message": "The request body is invalid.", "fields": fields},
    }
    with api(answering(400, body)) as client, pytest.raises(ApiError) as refused:
        client.set_override("cu-stock", OverrideMode.FORCE_RELAY, "r", 0)
    assert str(refused.value) == (
        "The request body is invalid. (400 INVALID_INPUT)\n  ttlSeconds: between 1 and 86400 seconds (24 h)"
    )


def test_clearing_nothing_is_not_a_failure_but_an_unknown_key_is() -> None:
    none = {"success": False, "error": {"code": "NO_OVERRIDE", "message": "m"}}
    with api(answering(404, none)) as client:
        assert client.clear_override("cu-stock") is None
    unknown = {"success": False, "error": {"code": "UNKNOWN_ROUTE_KEY", "message": "No such route key."}}
    with api(answering(404, unknown)) as client, pytest.raises(ApiError, match="404 UNKNOWN_ROUTE_KEY"):
        client.clear_override("cu-stockx")


def test_network_failures_and_foreign_answers_are_clear_failures() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    def hang(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    with (
        api(refuse) as client,
        pytest.raises(CliError, match=r"^cannot reach https://api\.example\.com: ConnectError"),
    ):
        client.routes()
    with (
        api(hang) as client,
        pytest.raises(CliError, match=r"^no answer from https://api\.example\.com in time"),
    ):
        client.routes()
    html = lambda request: httpx.Response(502, text="<html>Bad Gateway</html>")  # noqa: E731
    with api(html) as client, pytest.raises(CliError, match="HTTP 502 without the API's JSON envelope"):
        client.routes()


# --- the commands ----------------------------------------------------------------------------------------------


@pytest.fixture
def run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Runner:
    """run(argv, handler) -> (exit status, stdout, stderr): `route-health ops ...` against the handler."""
    secret_file = tmp_path / "secret"
    secret_file.write_text(SECRET)
    secret_file.chmod(0o600)

    def command(argv: list[str], handler: Handler) -> tuple[int, str, str]:
        parser = argparse.ArgumentParser(prog="route-health")
        cli.add_parser(parser.add_subparsers(dest="command"))
        where = ["--url", "https://api.example.com", "--secret-file", str(secret_file)]
        status = cli.run(
            parser.parse_args(["ops", *argv, *where]), transport=httpx.MockTransport(handler), tz=UTC
        )
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return command


def slot_taken(data: object) -> Handler:
    body = {"success": False, "error": {"code": "PROBE_SLOT_TAKEN", "message": "m", "retryAfter": 130}}
    return answering(429, {**body, "data": data}, {"retry-after": "130"})


def test_probe_in_a_taken_slot_shows_the_verdicts_and_exits_1_saying_when_the_next_slot_starts(
    run: Runner,
) -> None:
    status, out, err = run(["probe"], slot_taken(as_wire(snapshot())))
    assert status == 1
    assert out.startswith("Not probed: this 5-minute slot was already probed. The verdicts as they stand:\n")
    assert routes_report(snapshot(), now=NOW, tz=UTC) in out
    assert err == "route-health ops: already probed; next slot in 2m 10s\n"


def test_probe_in_a_taken_slot_as_json_prints_the_verdicts_and_exits_1(run: Runner) -> None:
    status, out, err = run(["probe", "--json"], slot_taken(as_wire(snapshot())))
    assert (status, json.loads(out)) == (1, json.loads(json.dumps(as_wire(snapshot()))))
    assert err == "route-health ops: already probed; next slot in 2m 10s\n"


def test_probe_in_a_taken_slot_without_verdicts_only_says_when_the_next_slot_starts(run: Runner) -> None:
    status, out, err = run(["probe"], slot_taken(None))
    assert (status, out) == (1, "")
    assert err == "route-health ops: already probed; next slot in 2m 10s\n"


def test_a_group_override_reports_each_key_and_skips_the_pinned_one_for_force_direct(run: Runner) -> None:
    sent: list[tuple[str, dict[str, Any]]] = []

    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        sent.append((request.url.path, body))
        data = {
            "key": "k",
            "mode": body["mode"],
            "reason": body["reason"],
            "createdAt": NOW,
            "expiresAt": NOW + 1_800_000,
        }
        return httpx.Response(200, json={"success": True, "data": data}, headers={"date": DATE})

    argv = ["override", "set", "convenience", "force-direct", "--ttl", "30m", "--reason", "relay moving"]
    status, out, _ = run(argv, handle)
    assert status == 0
    assert [path for path, _ in sent] == [
        f"/api/health/routes/{key.value}/override"
        for key in RouteKey
        if key.value.startswith(("cu-", "gs25-products", "seven-"))
    ]
    assert {json.dumps(body, sort_keys=True) for _, body in sent} == {
        json.dumps({"mode": "force-direct", "reason": "relay moving", "ttlSeconds": 1800}, sort_keys=True)
    }
    assert "gs25-stock         skipped: pinned to the relay, never direct\n" in out
    assert "cu-prime           force-direct until 12:30:42 (in 30 min)\n" in out


def test_a_refused_key_is_reported_and_the_exit_status_is_1(run: Runner) -> None:
    fields = [{"location": "body", "field": "mode", "message": "gs25-stock is pinned to the relay"}]
    body = {
        "success": False,
        "error": {"code": "INVALID_INPUT", "message": "The request body is invalid.", "fields": fields},
    }
    argv = ["override", "set", "gs25-stock", "force-direct", "--ttl", "1h", "--reason", "r"]
    status, out, _ = run(argv, answering(400, body))
    assert status == 1
    assert out.startswith(
        "gs25-stock         refused: The request body is invalid. (400 INVALID_INPUT)\n  mode: "
    )


def test_a_refused_secret_stops_a_group_at_the_first_key(run: Runner) -> None:
    calls: list[str] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        body = {"success": False, "error": {"code": "UNAUTHORIZED_HEALTH_CHECK", "message": "m"}}
        return httpx.Response(401, json=body)

    status, _, err = run(["override", "clear", "dtryx"], refuse)
    assert (status, len(calls)) == (1, 1)
    assert "refused the operator secret" in err


def test_routes_json_is_the_apis_data(run: Runner) -> None:
    data = as_wire(snapshot())
    status, out, _ = run(["routes", "--json"], answering(200, {"success": True, "data": data}))
    assert (status, json.loads(out)) == (0, data)


def test_an_error_from_a_hostile_server_prints_no_control_character(run: Runner) -> None:
    fields = [{"field": "mode\x1b[2J", "message": "line\nroute-health ops: faked"}, "not a field"]
    error = {"code": "X\x9b31m", "message": "m\x1b]52;c;ZWNobyBwd25lZA==\x07", "fields": fields}
    status, out, err = run(["routes"], answering(400, {"success": False, "error": error}))
    assert (status, out) == (1, "")
    assert err == (
        "route-health ops: m\\x1b]52;c;ZWNobyBwd25lZA==\\x07 (400 X\\x9b31m)\n"
        "  mode\\x1b[2J: line\\x0aroute-health ops: faked\n"
    )


def test_an_override_reason_holding_escapes_shows_them_escaped(run: Runner) -> None:
    hostile = dataclasses.replace(
        snapshot().overrides[RouteKey.CU_STOCK], reason="점검\x1b]0;pwned\x07\x9b2J\nfake row"
    )
    data = as_wire(dataclasses.replace(snapshot(), overrides={RouteKey.CU_STOCK: hostile}))
    status, out, _ = run(["routes"], answering(200, {"success": True, "data": data}))
    assert status == 0
    assert "점검\\x1b]0;pwned\\x07\\x9b2J\\x0afake row" in out
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", out)
    status, out, _ = run(["routes", "--json"], answering(200, {"success": True, "data": data}))
    assert "\\u001b]0;pwned\\u0007\\u009b2J\\nfake row" in out
    assert (status, json.loads(out)) == (0, data)


def test_an_answer_nested_100000_deep_is_a_clear_failure(run: Runner) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    status, out, err = run(["routes"], lambda request: httpx.Response(200, content=deep))
    assert (status, out) == (1, "")
    assert err.startswith(
        "route-health ops: unexpected answer from https://api.example.com: HTTP 200 without"
    )
    assert err.count("\n") == 1


# --- arguments --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90s", 90), ("30m", 1800), ("2h", 7200), ("1h30m", 5400), ("600", 600), ("24h", 86_400)],
)
def test_ttl_forms(text: str, seconds: int) -> None:
    assert cli.parse_ttl(text) == seconds


@pytest.mark.parametrize("text", ["", "0s", "25h", "24h1s", "1d", "1.5h", "soon", "-5m"])
def test_bad_ttls(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        cli.parse_ttl(text)


def test_targets() -> None:
    assert cli.parse_target("cu-stock") == (RouteKey.CU_STOCK,)
    for group in RelayGroup:  # a group means each of its keys, in the catalog's order
        assert cli.parse_target(group.value) == tuple(key for key in RouteKey if group_of(key) is group)
    assert RouteKey.DTRYX_TIMETABLE in cli.parse_target("dtryx")
    assert RouteKey.CGV_TIMETABLE_MOVIE in cli.parse_target("cgv")
    with pytest.raises(argparse.ArgumentTypeError, match="neither a relay group nor a route key"):
        cli.parse_target("daiso")


# --- the table ------------------------------------------------------------------------------------------------


def squeezed(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines()]


OVERRIDES_HEADER = "OVERRIDDEN MODE UNTIL SET REASON"


def test_the_routes_table() -> None:
    lines = squeezed(routes_report(snapshot(), now=NOW, tz=UTC))
    assert lines[0] == "ROUTE PATH NOW RULE REASON CHECKED FAILED BLOCKED UNTIL OVERRIDE"
    relays_at, overrides_at = lines.index("RELAY HEALTHY REASON CHECKED"), lines.index(OVERRIDES_HEADER)
    rows = {line.split()[0]: line for line in lines[1:relays_at] if line}
    assert list(rows) == [key.value for key in RouteKey]
    assert (
        rows["cu-stock"]
        == "cu-stock relay override-relay ok 11:57:42 (3 min ago) - - force-relay, 1h 30m left"
    )
    assert rows["cu-store"] == (
        "cu-store relay direct-false unavailable 12:00:22 (20 s ago) 12:00:22 (20 s ago) 12:05:22 (in 4 min) -"
    )
    # The relay is known down and the override excludes direct: 503 without calling anything.
    assert rows["oy-find-store"].startswith("oy-find-store 503 override-relay-unhealthy ok")
    assert rows["gs25-stock"] == "gs25-stock relay pinned no verdict - - - -"
    assert rows["dtryx-movies"] == "dtryx-movies relay no-verdict no verdict - - - -"
    assert rows["cgv-timetable-movie"] == "cgv-timetable-movie relay no-verdict no verdict - - - -"
    assert [line for line in lines[relays_at:overrides_at] if line] == [
        "RELAY HEALTHY REASON CHECKED",
        "oliveyoung NO timeout 11:59:42 (1 min ago)",
        "convenience yes ok 11:57:42 (3 min ago)",
        "dtryx - - never checked",
        "cgv - - never checked",
    ]
    assert lines[overrides_at : overrides_at + 3] == [
        OVERRIDES_HEADER,
        "oy-find-store force-relay 12:01:42 (in 1 min) 11:59:42 (1 min ago) relay test",
        "cu-stock force-relay 13:30:42 (in 1 h 30 min) 11:59:42 (1 min ago) CU 점검",
    ]
    assert lines[-1].startswith("As of 2026-01-01 12:00:42 UTC (server clock).")


def test_times_on_another_day_show_the_date() -> None:
    assert when(NOW - 13 * 3_600_000, now=NOW, tz=UTC) == "12-31 23:00 (13 h ago)"
    assert when(NOW + 3 * 86_400_000, now=NOW, tz=UTC) == "01-04 12:00 (in 3 d)"


def test_durations() -> None:
    assert [duration(ms) for ms in (0, 1, 45_000, 130_000, 3_600_000, 3_900_000, 86_400_000)] == [
        "0s", "1s", "45s", "2m 10s", "1h", "1h 5m", "24h",
    ]  # fmt: skip


def test_less_than_a_second_ahead_of_the_servers_whole_second_clock_is_now() -> None:
    assert when(NOW + 999, now=NOW, tz=UTC) == "12:00:42 (0 s ago)"
    assert when(NOW + 1_000, now=NOW, tz=UTC) == "12:00:43 (in 1 s)"


def test_the_snapshot_reads_back_what_the_api_writes() -> None:
    assert snapshot_from_wire(json.loads(json.dumps(as_wire(snapshot())))) == snapshot()


def test_a_newer_apis_extra_fields_keys_and_codes_are_left_out() -> None:
    wire = json.loads(json.dumps(as_wire(snapshot())))
    wire["routes"]["cu-stock"]["latencyMs"] = 12
    wire["routes"]["daiso-stock"] = {"key": "daiso-stock", "direct": True, "checkedAt": NOW}
    wire["relays"]["convenience"]["reason"] = "http-418"
    wire["relays"]["lotte"] = {"group": "lotte", "healthy": True, "checkedAt": NOW}
    read = snapshot_from_wire(wire)
    assert set(read.routes) == set(snapshot().routes)
    assert read.relays[RelayGroup.CONVENIENCE].reason is None
    assert set(read.relays) == set(snapshot().relays)


def test_an_override_of_a_key_without_a_verdict_reads_back_and_shows_in_the_table() -> None:
    unchecked = RouteOverride(
        RouteKey.DTRYX_MOVIES,
        OverrideMode.FORCE_DIRECT,
        "relay host moving",
        NOW - MINUTE_MS,
        NOW + MINUTE_MS,
    )
    with_unchecked = dataclasses.replace(
        snapshot(), overrides={**snapshot().overrides, RouteKey.DTRYX_MOVIES: unchecked}
    )
    read = snapshot_from_wire(json.loads(json.dumps(as_wire(with_unchecked))))
    assert read == with_unchecked
    rows = {line.split()[0]: line for line in squeezed(routes_report(read, now=NOW, tz=UTC))[1:21]}
    assert (
        rows["dtryx-movies"] == "dtryx-movies direct override-direct no verdict - - - force-direct, 1m left"
    )


def test_an_older_api_without_the_overrides_map_still_reads() -> None:
    wire = json.loads(json.dumps(as_wire(snapshot())))
    del wire["overrides"]
    assert snapshot_from_wire(wire) == snapshot()


@pytest.mark.parametrize(
    "data",
    [None, [], {"routes": {}}, {"routes": {"cu-stock": {"direct": "yes", "checkedAt": 1}}, "relays": {}}],
)
def test_a_snapshot_the_cli_cannot_read_is_a_clear_failure(data: object) -> None:
    with pytest.raises(CliError, match="cannot read"):
        snapshot_from_wire(data)
