"""Where `route-health ops` finds the API and the operator secret: a private secret file, or the stack (moto)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from ops_cli.connection import CliError, Connection, from_secret_file, from_stack, stack_api_url
from sandbox.cli import main

STACK = "RouteHealth-prod"
REGION = "ap-northeast-2"
SECRET = "operator-secret-Vb93"


def private_file(path: Path, text: str, mode: int = 0o600) -> Path:
    path.write_text(text)
    path.chmod(mode)
    return path


def test_a_private_secret_file_and_a_url(tmp_path: Path) -> None:
    secret_file = private_file(tmp_path / "secret", f"{SECRET}\n")
    connection = from_secret_file("http://127.0.0.1:8080/", secret_file)
    assert connection == Connection("http://127.0.0.1:8080", SECRET, str(secret_file))
    assert SECRET not in repr(connection)


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644, 0o660, 0o620])
def test_a_secret_file_open_to_group_or_others_is_refused(tmp_path: Path, mode: int) -> None:
    secret_file = private_file(tmp_path / "secret", SECRET, mode)
    with pytest.raises(CliError, match=rf"open to group or others \(mode {mode:04o}\); .*chmod 600"):
        from_secret_file("http://127.0.0.1:8080", secret_file)


def test_a_missing_empty_or_odd_secret_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CliError, match="secret file not found"):
        from_secret_file("http://127.0.0.1:8080", tmp_path / "nope")
    with pytest.raises(CliError, match="is empty"):
        from_secret_file("http://127.0.0.1:8080", private_file(tmp_path / "empty", " \n"))
    (tmp_path / "dir").mkdir(mode=0o700)
    with pytest.raises(CliError, match="not a regular file"):
        from_secret_file("http://127.0.0.1:8080", tmp_path / "dir")


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://api.example.com", "plain http to api.example.com"),
        ("http://10.0.0.8:8080", "plain http to 10.0.0.8"),
        ("ftp://127.0.0.1", "not an http"),
        ("127.0.0.1:8080", "not an http"),
    ],
)
def test_the_secret_goes_over_https_or_to_this_machine_only(tmp_path: Path, url: str, problem: str) -> None:
    with pytest.raises(CliError, match=problem):
        from_secret_file(url, private_file(tmp_path / "secret", SECRET))


@pytest.mark.parametrize(
    "url", ["https://abc.execute-api.ap-northeast-2.amazonaws.com/", "http://localhost:1", "http://[::1]:2"]
)
def test_https_anywhere_and_http_on_loopback_are_fine(tmp_path: Path, url: str) -> None:
    assert from_secret_file(url, private_file(tmp_path / "secret", SECRET)).url == url.rstrip("/")


# --- the stack, on moto -----------------------------------------------------------------------------------


@pytest.fixture
def aws() -> Iterator[None]:
    with mock_aws():
        yield


def deploy(outputs: dict[str, object], *, stack: str = STACK) -> None:
    """A stand-in stack: one harmless resource (moto needs one) and the given outputs."""
    template = {
        "Resources": {
            "Marker": {
                "Type": "AWS::SSM::Parameter",
                "Properties": {"Name": f"{stack}-marker", "Type": "String", "Value": "x"},
            }
        },
        "Outputs": {name: {"Value": value} for name, value in outputs.items()},
    }
    boto3.client("cloudformation", region_name=REGION).create_stack(
        StackName=stack, TemplateBody=json.dumps(template)
    )


def secret_arn(value: str) -> str:
    arn: str = boto3.client("secretsmanager", region_name=REGION).create_secret(
        Name="route-health", SecretString=value
    )["ARN"]
    return arn


def test_the_stack_outputs_and_its_secret(aws: None) -> None:
    arn = secret_arn(json.dumps({"HEALTH_CHECK_SECRET": SECRET, "OY_RELAY_TOKEN": "t"}))
    deploy(
        {
            "ApiUrl": "https://abc.execute-api.ap-northeast-2.amazonaws.com/",
            "SecretArn": arn,
            "TableName": "t",
        }
    )
    assert from_stack(STACK, REGION) == Connection(
        "https://abc.execute-api.ap-northeast-2.amazonaws.com", SECRET, f"stack {STACK}"
    )


def test_a_stack_that_does_not_exist(aws: None) -> None:
    with pytest.raises(CliError, match=rf"^stack RouteHealth-nope not found in {REGION} "):
        from_stack("RouteHealth-nope", REGION)


def test_a_stack_without_the_outputs(aws: None) -> None:
    deploy({"Something": "else"})
    with pytest.raises(CliError, match="has no ApiUrl or SecretArn output: is it a Route Health stack"):
        from_stack(STACK, REGION)


@pytest.mark.parametrize(
    "value",
    [
        "not json",
        json.dumps(["x"]),
        json.dumps({"OY_RELAY_TOKEN": "t"}),
        json.dumps({"HEALTH_CHECK_SECRET": " "}),
    ],
)
def test_a_secret_without_the_operator_secret(aws: None, value: str) -> None:
    deploy({"ApiUrl": "https://api.example.com/", "SecretArn": secret_arn(value)})
    with pytest.raises(CliError, match="holds no HEALTH_CHECK_SECRET"):
        from_stack(STACK, REGION)


def test_a_secret_that_was_deleted(aws: None) -> None:
    deploy(
        {
            "ApiUrl": "https://api.example.com/",
            "SecretArn": "arn:aws:secretsmanager:ap-northeast-2:123456789012:secret:gone-AbCdEf",
        }
    )
    with pytest.raises(CliError, match="does not exist"):
        from_stack(STACK, REGION)


def test_without_aws_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in (
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_SECURITY_TOKEN",
        "AWS_PROFILE",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")  # no instance metadata lookup: offline
    for name in (
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(CliError, match=r"^no AWS credentials found: .* or use --url with --secret-file$"):
        from_stack(STACK, REGION)


def test_without_a_region(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    with pytest.raises(CliError, match="no AWS region: pass --region"):
        from_stack(STACK, None)


# --- through the command -------------------------------------------------------------------------------------


def test_the_command_exits_1_with_the_message_when_the_stack_is_missing(
    aws: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ops", "routes", "--stack", "RouteHealth-nope", "--region", REGION]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"route-health ops: stack RouteHealth-nope not found in {REGION}")


@pytest.mark.parametrize(
    "argv",
    [
        ["ops", "routes", "--url", "http://127.0.0.1:1"],
        ["ops", "routes", "--secret-file", "x"],
        ["ops", "--stack", "S", "routes", "--url", "http://127.0.0.1:1", "--secret-file", "x"],
    ],
)
def test_connection_options_that_do_not_go_together_are_usage_errors(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert "route-health ops: " in capsys.readouterr().err


def test_there_is_no_option_that_takes_the_secret_itself(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["ops", "routes", "--secret", SECRET])
    assert exited.value.code == 2
    assert "unrecognized arguments" in capsys.readouterr().err


def test_the_lookups_need_only_the_stacks_api_url(aws: None) -> None:
    deploy({"ApiUrl": "https://abc.execute-api.ap-northeast-2.amazonaws.com/"})
    assert stack_api_url(STACK, REGION) == "https://abc.execute-api.ap-northeast-2.amazonaws.com"
    with pytest.raises(CliError, match="stack RouteHealth-nope not found"):
        stack_api_url("RouteHealth-nope", REGION)
