"""`route-health relay`: configuration from the environment, `--help`, startup failures."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path

import pytest

from functions.core import RelayGroup
from relay.config import (
    DESCRIPTOR_RESERVE,
    HEADER_TIMEOUT_S,
    MAX_CONNECTIONS,
    ConfigError,
    connection_cap,
    host_warning,
    load_config,
)
from sandbox.cli import main
from sandbox.process import route_health_command

OY_TOKEN = "oy-token-" + "0" * 23  # 32 characters, the shortest accepted


def env(tmp_path: Path, **values: str) -> dict[str, str]:
    return {
        "OY_RELAY_TOKEN": OY_TOKEN,
        "OY_RELAY_STATE_DIR": str(tmp_path / "oy"),
        "DTRYX_RELAY_TOKEN": "dtryx-token-" + "1" * 30,
        "DTRYX_RELAY_STATE_DIR": str(tmp_path / "dtryx"),
        "CONVENIENCE_RELAY_TOKEN": "cvs-token-" + "2" * 30,
        "CONVENIENCE_RELAY_STATE_DIR": str(tmp_path / "cvs"),
        **values,
    }


def test_every_group_with_a_token_is_served_on_its_port(tmp_path: Path) -> None:
    config = load_config(env(tmp_path, GS25_API_KEY=" key ", GS25_AUTH_SESSION_FILE="~/s.json"))
    assert [(c.group, c.port) for c in config.groups] == [
        (RelayGroup.OLIVEYOUNG, 4319),
        (RelayGroup.CONVENIENCE, 4320),  # beside Dtryx, as on the original relays
        (RelayGroup.DTRYX, 4320),
    ]
    assert config.host == "127.0.0.1"
    assert config.gs25_api_key == "key"
    assert config.gs25_session_file == Path("~/s.json").expanduser()
    for group_config in config.groups:
        assert stat.S_IMODE(group_config.state_dir.stat().st_mode) == 0o700
    assert OY_TOKEN not in repr(config)
    assert "key" not in repr(config).replace("gs25_api_key", "")
    assert config.connections.header_timeout_s == HEADER_TIMEOUT_S == 10
    assert config.connections.max_connections is not None


def test_named_groups_and_ports(tmp_path: Path) -> None:
    values = env(tmp_path, DTRYX_RELAY_PORT="5000", OY_RELAY_PORT="5001", CONVENIENCE_RELAY_PORT="5002")
    config = load_config(values, [RelayGroup.DTRYX, RelayGroup.CONVENIENCE])
    assert [(c.group, c.port) for c in config.groups] == [
        (RelayGroup.DTRYX, 5000),
        (RelayGroup.CONVENIENCE, 5002),
    ]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {
                "OY_RELAY_TOKEN": "",
                "DTRYX_RELAY_TOKEN": "",
                "CONVENIENCE_RELAY_TOKEN": "",
                "CONVENIENCE_RELAY_STATE_DIR": "",
            },
            "no relay group",
        ),
        ({"CONVENIENCE_RELAY_STATE_DIR": ""}, "set both or neither"),
        ({"OY_RELAY_STATE_DIR": ""}, "OY_RELAY_STATE_DIR is required"),
        ({"OY_RELAY_TOKEN": "has space"}, "visible ASCII"),
        ({"OY_RELAY_TOKEN": OY_TOKEN[:31]}, "OY_RELAY_TOKEN must be at least 32 characters"),
        ({"GS25_API_KEY": "키-" + "k" * 20}, "GS25_API_KEY must be visible ASCII"),
        ({"RELAY_HEADER_TIMEOUT_S": "10.5"}, "RELAY_HEADER_TIMEOUT_S"),
        ({"RELAY_HEADER_TIMEOUT_S": "0"}, "RELAY_HEADER_TIMEOUT_S"),
        ({"RELAY_HEADER_TIMEOUT_S": "nan"}, "RELAY_HEADER_TIMEOUT_S"),
        ({"RELAY_HEADER_TIMEOUT_S": "soon"}, "RELAY_HEADER_TIMEOUT_S"),
        ({"DTRYX_RELAY_PORT": "80"}, "1024 to 65535"),
        ({"DTRYX_RELAY_PORT": "x"}, "1024 to 65535"),
        ({"OY_RELAY_TRANSPORT": "browser"}, "no browser transport"),
        ({"CONVENIENCE_RELAY_STATE_DIR": "SAME"}, "its own state directory"),
    ],
)
def test_configuration_errors_name_the_variable(
    tmp_path: Path, changes: dict[str, str], message: str
) -> None:
    values = env(tmp_path, **changes)
    if values["CONVENIENCE_RELAY_STATE_DIR"] == "SAME":
        values["CONVENIENCE_RELAY_STATE_DIR"] = values["DTRYX_RELAY_STATE_DIR"] + "/."
    with pytest.raises(ConfigError, match=message) as raised:
        load_config(values)
    assert OY_TOKEN[:31] not in str(raised.value)


def test_the_header_timeout_can_be_shortened(tmp_path: Path) -> None:
    config = load_config(env(tmp_path, RELAY_HEADER_TIMEOUT_S="0.5"))
    assert config.connections.header_timeout_s == 0.5


@pytest.mark.parametrize("mode", [0o770, 0o702, 0o777, 0o720])
def test_a_state_directory_others_may_write_is_refused(tmp_path: Path, mode: int) -> None:
    state = tmp_path / "oy"
    state.mkdir()
    state.chmod(mode)
    with pytest.raises(ConfigError, match=rf"OY_RELAY_STATE_DIR {state} is writable by others .*chmod 700"):
        load_config(env(tmp_path), [RelayGroup.OLIVEYOUNG])
    state.chmod(0o750)  # readable by the group is the operator's choice
    assert load_config(env(tmp_path), [RelayGroup.OLIVEYOUNG]).groups[0].state_dir == state


def test_connections_are_capped_below_the_descriptor_limit() -> None:
    assert connection_cap(256) == 256 - DESCRIPTOR_RESERVE  # a launchd job's default
    assert connection_cap(1_048_576) == MAX_CONNECTIONS
    with pytest.raises(ConfigError, match=r"open-file limit \(79\) .* at least 80"):
        connection_cap(79)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_no_warning_for_a_loopback_host(host: str) -> None:
    assert host_warning(host) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::", "relay.local"])  # noqa: S104 - never bound
def test_a_host_beyond_loopback_gets_a_warning_that_names_the_tunnel_and_access(host: str) -> None:
    warning = host_warning(host)
    assert warning is not None
    assert host in warning
    assert "Cloudflare Tunnel" in warning
    assert "Access" in warning


def test_a_named_group_needs_its_token(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="DTRYX_RELAY_TOKEN is required"):
        load_config(env(tmp_path, DTRYX_RELAY_TOKEN=""), [RelayGroup.DTRYX])


def test_help_explains_the_setup(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["relay", "--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    for name in (
        "OY_RELAY_TOKEN",
        "OY_RELAY_STATE_DIR",
        "OY_RELAY_PORT",
        "DTRYX_RELAY_TOKEN",
        "CONVENIENCE_RELAY_TOKEN",
        "GS25_API_KEY",
        "GS25_AUTH_SESSION_FILE",
        "Cloudflare Tunnel",
        "127.0.0.1",
    ):
        assert name in text


def test_a_startup_failure_exits_1_with_the_reason(tmp_path: Path) -> None:
    ledger_dir = tmp_path / "dtryx"
    ledger_dir.mkdir()
    (ledger_dir / "quota.json").write_text("{")
    finished = subprocess.run(  # noqa: S603 - our own console script
        [route_health_command(), "relay", "dtryx"],
        env={
            "PATH": "/usr/bin:/bin",
            "DTRYX_RELAY_TOKEN": "secret-token-" + "s" * 30,
            "DTRYX_RELAY_STATE_DIR": str(ledger_dir),
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert finished.returncode == 1
    (line,) = [json.loads(text) for text in finished.stderr.splitlines()]  # one JSON line, nothing else
    assert line["event"] == "process-startup-failed"
    assert "quota.json is not JSON" in line["message"]
    assert "secret-token" not in finished.stderr + finished.stdout
