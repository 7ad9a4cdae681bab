"""The `route-health sandbox` command's own behaviour: the operator secret, a taken port, the banner."""

from __future__ import annotations

import signal
import socket
import stat
from pathlib import Path

import pytest

from sandbox import cli


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("HEALTH_CHECK_SECRET", raising=False)
    return tmp_path


def test_operator_secret_from_the_environment_writes_nothing(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HEALTH_CHECK_SECRET", "from-env")
    assert cli.operator_secret() == ("from-env", "$HEALTH_CHECK_SECRET")
    assert not (in_tmp / ".sandbox").exists()


def test_operator_secret_is_generated_once_into_a_private_file(in_tmp: Path) -> None:
    secret, shell = cli.operator_secret()
    path = in_tmp / ".sandbox" / "health-check-secret"
    assert path.read_text().strip() == secret
    assert len(secret) >= 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert shell == "$(cat .sandbox/health-check-secret)"
    assert cli.operator_secret()[0] == secret  # reused on the next start


def test_banner_never_contains_the_secret(in_tmp: Path) -> None:
    secret, shell = cli.operator_secret()
    text = cli.banner("http://127.0.0.1:8080", upstream="sim", secret_shell=shell)
    assert secret not in text
    assert (
        "route-health ops routes --url http://127.0.0.1:8080 --secret-file .sandbox/health-check-secret"
        in text
    )
    assert "/_sandbox/faults" in text


def test_a_taken_port_is_a_clear_one_line_error(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("HEALTH_CHECK_SECRET", "from-env")
    monkeypatch.setattr(signal, "signal", lambda *_: None)  # leave pytest's handlers alone
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert cli.main(["sandbox", "--port", str(port)]) == cli.EXIT_PORT_TAKEN
    err = capsys.readouterr().err.strip()
    assert (
        err == f"route-health sandbox: port {port} on 127.0.0.1 is already in use; pick another with --port"
    )


def test_bad_arguments_exit_with_usage(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["sandbox", "--upstream", "fake"])
    assert exited.value.code == 2
    assert "--upstream" in capsys.readouterr().err
