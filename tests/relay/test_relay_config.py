"""`route-health relay`: configuration from the environment, `--help`, startup failures."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest

from functions.core import RelayGroup
from relay.config import ConfigError, load_config
from sandbox.cli import main
from sandbox.process import route_health_command


def env(tmp_path: Path, **values: str) -> dict[str, str]:
    return {
        "OY_RELAY_TOKEN": "oy-token",
        "OY_RELAY_STATE_DIR": str(tmp_path / "oy"),
        "DTRYX_RELAY_TOKEN": "dtryx-token",
        "DTRYX_RELAY_STATE_DIR": str(tmp_path / "dtryx"),
        "CONVENIENCE_RELAY_TOKEN": "cvs-token",
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
    assert "oy-token" not in repr(config)
    assert "key" not in repr(config).replace("gs25_api_key", "")


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
    assert "oy-token" not in str(raised.value)


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
            "DTRYX_RELAY_TOKEN": "secret-token",
            "DTRYX_RELAY_STATE_DIR": str(ledger_dir),
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert finished.returncode == 1
    assert "quota.json is not JSON" in finished.stderr
    assert "process-startup-failed" in finished.stderr
    assert "secret-token" not in finished.stderr + finished.stdout
