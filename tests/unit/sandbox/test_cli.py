"""The `route-health sandbox` command's own behaviour: the operator secret, a taken port, the banner."""

from __future__ import annotations

import errno
import io
import os
import signal
import socket
import stat
import sys
from pathlib import Path

import pytest

from ops_cli import cli as ops_cli_module
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
    assert "route-health lookup cuProducts --keyword cola --url http://127.0.0.1:8080" in text
    assert "http://127.0.0.1:8080/mcp" in text


def test_the_banner_names_the_command_as_a_new_shell_runs_it(in_tmp: Path) -> None:
    _, shell = cli.operator_secret()
    command = cli.runnable(str(in_tmp / ".venv" / "bin" / "route-health"), in_tmp)
    assert command == ".venv/bin/route-health"
    text = cli.banner("http://127.0.0.1:8080", upstream="sim", secret_shell=shell, command=command)
    assert "  .venv/bin/route-health ops routes --url http://127.0.0.1:8080 --secret-file" in text
    assert cli.runnable("/opt/tools/bin/route-health", in_tmp) == "/opt/tools/bin/route-health"
    assert cli.runnable("-m", in_tmp) == "route-health"


class ClosedPipe(io.StringIO):
    """stdout once the reader has gone (`route-health ops routes | head -1` after head exits)."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd

    def write(self, text: str) -> int:
        raise BrokenPipeError(errno.EPIPE, "Broken pipe")

    def fileno(self) -> int:
        return self.fd


def test_output_into_a_closed_pipe_ends_quietly_as_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    def printing(args: object) -> int:
        print("ROUTE  PATH NOW")
        return 0

    read_end, write_end = os.pipe()
    monkeypatch.setattr(ops_cli_module, "run", printing)
    monkeypatch.setattr(sys, "stdout", ClosedPipe(write_end))
    try:
        assert cli.main(["ops", "routes"]) == 1  # no BrokenPipeError, so no traceback
        os.write(write_end, b"later output goes nowhere")  # stdout's descriptor now points at the null device
        os.close(write_end)
        assert os.read(read_end, 100) == b""
    finally:
        os.close(read_end)


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
