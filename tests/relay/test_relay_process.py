"""The relay process: one per state directory, start-up warnings and refusals, and nothing but JSON lines on
stderr whatever callers send."""

from __future__ import annotations

import os
from pathlib import Path

from functions.core import RelayGroup
from relay.quota import LOCK_FILE
from tests.relay.relay_process import bearer, running_relay, spawn

DTRYX = RelayGroup.DTRYX


def test_a_second_process_on_the_same_state_directory_refuses_to_start(tmp_path: Path) -> None:
    state = tmp_path / "shared"
    state.mkdir(mode=0o700)
    stray = state / f"quota.json.{os.urandom(16).hex()}.tmp"  # what a killed relay leaves behind
    stray.write_text('{"day":1')
    with running_relay(tmp_path, state_dirs={DTRYX: state}) as first:
        assert not stray.exists()
        assert (state / LOCK_FILE).read_text().strip() == str(first.process.pid)
        second = spawn(tmp_path, (DTRYX,), state_dirs={DTRYX: state})
        assert second.process.wait(60) == 1
        (refusal,) = second.log_lines()[-1:]
        assert refusal["event"] == "process-startup-failed"
        assert f"pid {first.process.pid}" in refusal["message"]
        assert f"state directory {state}" in refusal["message"]
        assert first.health(DTRYX) == 200
    with running_relay(tmp_path, state_dirs={DTRYX: state}) as after_the_first:  # the lock went with it
        assert after_the_first.health(DTRYX) == 200


def test_a_host_beyond_loopback_is_warned_about(tmp_path: Path) -> None:
    relay = spawn(tmp_path, (DTRYX,), arguments=("--host", "192.0.2.1"))  # TEST-NET: never this machine's
    assert relay.process.wait(60) == 1
    warning, failure = relay.log_lines()
    assert (warning["event"], warning["outcome"]) == ("process-warning", "non-loopback-host")
    assert "Cloudflare Tunnel" in warning["message"]
    assert "Access" in warning["message"]
    assert failure["event"] == "process-startup-failed"
    assert f"cannot listen on 192.0.2.1 port {relay.ports[DTRYX]}" in failure["message"]


def test_every_stderr_line_is_one_json_object_whatever_callers_send(tmp_path: Path) -> None:
    with running_relay(tmp_path) as relay:
        host = "Host: relay\r\n"
        assert relay.request(DTRYX, "NOT HTTP AT ALL\r\n\r\n") == 400
        upgrade = (
            f"GET /v1/dtryx/health HTTP/1.1\r\n{host}{bearer(DTRYX)}Connection: Upgrade\r\nUpgrade: x\r\n\r\n"
        )
        assert relay.request(DTRYX, upgrade) == 200
        websocket = upgrade.replace("Upgrade: x", "Upgrade: websocket\r\nSec-WebSocket-Version: 13")
        assert relay.request(DTRYX, websocket) == 200
        assert relay.request(DTRYX, "GET /v1/dtryx/health HTTP/1.1\r\nNo colon here\r\n\r\n") == 400
    assert relay.stop() == 0
    lines = relay.log_lines()  # fails on any line that is not JSON
    library = [
        (line["level"], line["logger"], line["template"]) for line in lines if line["event"] == "library-log"
    ]
    assert ("warning", "uvicorn-error", "invalid-http-request-received") in library
    assert ("warning", "uvicorn-error", "unsupported-upgrade-request") in library
    assert all(set(line) >= {"time", "service", "event"} for line in lines)
    assert [line["event"] for line in lines][-2:] == ["process-stopping", "process-stopped"]
