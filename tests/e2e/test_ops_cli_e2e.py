"""`route-health ops` end to end against `route-health sandbox` over real HTTP (settled sandbox: conftest `fresh`)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from functions.core.model import RouteKey
from functions.core.overrides import PINNED_NEVER_DIRECT
from sandbox.cli import main
from sandbox.process import route_health_command

if TYPE_CHECKING:
    from tests.e2e.conftest import Sandbox

pytestmark = pytest.mark.e2e

Ops = Callable[..., tuple[int, str, str]]


@pytest.fixture
def ops(fresh: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Ops:
    """ops(*args, secret=...) -> (exit status, stdout, stderr) of `route-health ops ARGS --url … --secret-file …`."""

    def run(*args: str, secret: str = fresh.secret, url: str = fresh.url) -> tuple[int, str, str]:
        secret_file = tmp_path / "health-check-secret"
        secret_file.write_text(secret + "\n")
        secret_file.chmod(0o600)
        status = main(["ops", *args, "--url", url, "--secret-file", str(secret_file)])
        captured = capsys.readouterr()
        assert fresh.secret not in captured.out + captured.err
        return status, captured.out, captured.err

    return run


def test_routes_shows_every_route_and_relay(ops: Ops) -> None:
    status, out, err = ops("routes")
    assert (status, err) == (0, "")
    routes, relays, *_ = out.split("\n\n")
    rows = {line.split()[0]: line.split() for line in (routes + "\n" + relays).splitlines()}
    for key in RouteKey:
        path, rule = ("relay", "pinned") if key is RouteKey.GS25_STOCK else ("direct", "direct-ok")
        assert rows[key.value][1:3] == [path, rule], rows[key.value]
    for group in ("oliveyoung", "convenience", "dtryx"):
        assert rows[group][1:3] == ["yes", "ok"]
    assert "ago)" in rows["cu-stock"]  # "(12 s ago)", by the sandbox's clock
    assert "OVERRIDDEN" not in out


def test_a_group_override_is_set_shown_obeyed_and_cleared_per_key(fresh: Sandbox, ops: Ops) -> None:
    status, out, _ = ops("override", "set", "dtryx", "force-relay", "--ttl", "10m", "--reason", "dtryx 점검")
    assert status == 0
    assert [line.split()[:3] for line in out.splitlines()] == [
        [key, "force-relay", "until"] for key in ("dtryx-movies", "dtryx-play-dates", "dtryx-timetable")
    ]
    assert fresh.health()["routes"]["dtryx-timetable"]["override"]["reason"] == "dtryx 점검"

    _, out, _ = ops("routes")
    rows = {line.split()[0]: line for line in out.split("\n\n")[0].splitlines()}
    assert rows["dtryx-movies"].split()[1:3] == ["relay", "override-relay"]
    # the sandbox clock runs on between the two commands: "10m left" or, a second later, "9m 59s left"
    assert re.search(r"force-relay, (10m|9m 5\ds) left$", rows["dtryx-movies"]), rows["dtryx-movies"]

    status, out, _ = ops("override", "clear", "dtryx")
    assert status == 0
    assert [line.split()[:2] for line in out.splitlines()] == [
        [key, "cleared"] for key in ("dtryx-movies", "dtryx-play-dates", "dtryx-timetable")
    ]
    assert ops("override", "clear", "dtryx-movies")[1] == "dtryx-movies       no override\n"
    health = fresh.health()
    assert health["overrides"] == {}
    assert not any("override" in route for route in health["routes"].values())


def test_force_direct_on_the_pinned_key_is_refused_with_the_apis_reason(ops: Ops) -> None:
    status, out, _ = ops("override", "set", "gs25-stock", "force-direct", "--ttl", "5m", "--reason", "no")
    assert status == 1
    assert "refused" in out
    assert f"mode: {PINNED_NEVER_DIRECT.text}" in out


def test_probe_in_a_probed_slot_shows_the_verdicts_and_says_when_the_next_slot_starts(ops: Ops) -> None:
    status, out, err = ops("probe")  # the settled sandbox has probed this slot already
    assert status == 1
    assert out.startswith("Not probed: this 5-minute slot was already probed.")
    assert ["cu-stock", "direct", "direct-ok", "ok"] in [line.split()[:4] for line in out.splitlines()]
    assert err.startswith("route-health ops: already probed; next slot in ")


def test_a_wrong_secret_and_an_unreachable_api_fail_clearly(ops: Ops) -> None:
    status, _, err = ops("routes", secret="not-the-secret")
    assert status == 1
    assert "refused the operator secret" in err
    assert "(401 UNAUTHORIZED_HEALTH_CHECK)" in err
    status, _, err = ops("routes", url="http://127.0.0.1:9")
    assert status == 1
    assert err.startswith("route-health ops: cannot reach http://127.0.0.1:9: ConnectError")


def test_the_console_script(fresh: Sandbox, tmp_path: Path) -> None:
    secret_file = tmp_path / "secret"
    secret_file.write_text(fresh.secret)
    secret_file.chmod(0o600)
    command = [
        route_health_command(),
        "ops",
        "routes",
        "--json",
        "--url",
        fresh.url,
        "--secret-file",
        str(secret_file),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)  # noqa: S603
    assert done.returncode == 0, done.stderr
    assert set(json.loads(done.stdout)["routes"]) == {key.value for key in RouteKey}

    secret_file.chmod(0o644)
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)  # noqa: S603
    assert done.returncode == 1
    assert "chmod 600" in done.stderr
