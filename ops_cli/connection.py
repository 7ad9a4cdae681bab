"""Where the operator API is and the secret that opens it, never taken from a command-line value.

Either from a deployed stack, with the caller's AWS credentials: the CloudFormation outputs `ApiUrl` and
`SecretArn`, and the secret's JSON key `HEALTH_CHECK_SECRET`; or from a URL plus a secret file that only its
owner may read (mode 600), such as the sandbox's `.sandbox/health-check-secret`.
"""

from __future__ import annotations

import ipaddress
import json
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, PartialCredentialsError

API_URL_OUTPUT = "ApiUrl"
SECRET_ARN_OUTPUT = "SecretArn"  # noqa: S105 - an output's name, not a value
SECRET_KEY = "HEALTH_CHECK_SECRET"  # noqa: S105 - the JSON key's name, not a value
DEFAULT_STACK = "RouteHealth-prod"
AWS_CONFIG = Config(connect_timeout=5, read_timeout=15, retries={"mode": "standard", "max_attempts": 3})
CREDENTIALS_REFUSED = frozenset(
    {"ExpiredToken", "ExpiredTokenException", "InvalidClientTokenId", "UnrecognizedClientException"}
)


class CliError(Exception):
    """A failure the operator can act on; its message is printed as is (it never holds a secret)."""


@dataclass(frozen=True)
class Connection:
    url: str
    """The API's base URL without a trailing slash."""
    secret: str = field(repr=False)
    source: str
    """Where both came from, for messages: the stack name or the secret file."""


def from_secret_file(url: str, secret_file: Path) -> Connection:
    """The URL as given and the secret in `secret_file`, which must not be readable by group or others."""
    try:
        status = secret_file.stat()
    except FileNotFoundError:
        raise CliError(f"secret file not found: {secret_file}") from None
    except OSError as error:
        raise CliError(f"cannot read the secret file {secret_file}: {error.strerror}") from None
    if not stat.S_ISREG(status.st_mode):
        raise CliError(f"the secret file {secret_file} is not a regular file")
    mode = stat.S_IMODE(status.st_mode)
    if mode & 0o077:
        raise CliError(
            f"the secret file {secret_file} is open to group or others (mode {mode:04o}); "
            f"make it private with: chmod 600 {secret_file}"
        )
    try:
        secret = secret_file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise CliError(f"cannot read the secret file {secret_file}: {type(error).__name__}") from None
    if not secret:
        raise CliError(f"the secret file {secret_file} is empty")
    return Connection(_checked_url(url), secret, str(secret_file))


def from_stack(
    stack: str, region: str | None, *, session: Callable[..., Any] = boto3.session.Session
) -> Connection:
    """The stack's `ApiUrl` output and the `HEALTH_CHECK_SECRET` of its `SecretArn` secret."""
    aws = session(region_name=region)
    outputs = _stack_outputs(aws, stack, instead="use --url with --secret-file")
    missing = [name for name in (API_URL_OUTPUT, SECRET_ARN_OUTPUT) if not outputs.get(name)]
    if missing:
        raise CliError(f"stack {stack} has no {' or '.join(missing)} output: is it a Route Health stack?")
    value = _aws_call(
        f"read the stack's secret {outputs[SECRET_ARN_OUTPUT]}",
        lambda: aws.client("secretsmanager", config=AWS_CONFIG).get_secret_value(
            SecretId=outputs[SECRET_ARN_OUTPUT]
        ),
        not_found=f"the secret named by stack {stack} ({outputs[SECRET_ARN_OUTPUT]}) does not exist",
    )
    return Connection(_checked_url(outputs[API_URL_OUTPUT]), _operator_secret(value, stack), f"stack {stack}")


def stack_api_url(
    stack: str, region: str | None, *, session: Callable[..., Any] = boto3.session.Session
) -> str:
    """The stack's `ApiUrl` output (the lookups need no secret)."""
    outputs = _stack_outputs(session(region_name=region), stack, instead="use --url")
    if not outputs.get(API_URL_OUTPUT):
        raise CliError(f"stack {stack} has no {API_URL_OUTPUT} output: is it a Route Health stack?")
    return outputs[API_URL_OUTPUT].rstrip("/")


def _stack_outputs(aws: Any, stack: str, *, instead: str) -> dict[str, str]:
    where = aws.region_name
    if not where:
        raise CliError(f"no AWS region: pass --region or set AWS_REGION (or {instead})")
    described = _aws_call(
        f"read the stack {stack} in {where}",
        lambda: aws.client("cloudformation", config=AWS_CONFIG).describe_stacks(StackName=stack),
        not_found=f"stack {stack} not found in {where} (another --stack or --region?)",
    )
    return {o["OutputKey"]: o["OutputValue"] for o in described["Stacks"][0].get("Outputs", [])}


def _operator_secret(value: Mapping[str, Any], stack: str) -> str:
    try:
        secret = json.loads(value.get("SecretString") or "").get(SECRET_KEY)
    except (ValueError, AttributeError):
        secret = None
    if not isinstance(secret, str) or not secret.strip():
        raise CliError(f"the secret of stack {stack} holds no {SECRET_KEY} (a JSON object is expected)")
    return secret.strip()


def _aws_call(action: str, call: Callable[[], Any], *, not_found: str) -> Any:
    """One AWS call with every failure turned into a CliError that says what to do."""
    try:
        return call()
    except (NoCredentialsError, PartialCredentialsError):
        raise CliError(
            "no AWS credentials found: configure them (aws configure, AWS_PROFILE, aws sso login) "
            "or use --url with --secret-file"
        ) from None
    except ClientError as error:
        code = error.response.get("Error", {}).get("Code", "Unknown")
        message = error.response.get("Error", {}).get("Message", "")
        if code in CREDENTIALS_REFUSED:
            raise CliError(f"AWS refused your credentials ({code}): refresh them and try again") from None
        if code == "ResourceNotFoundException" or (code == "ValidationError" and "does not exist" in message):
            raise CliError(not_found) from None
        if code in ("AccessDenied", "AccessDeniedException"):
            raise CliError(f"not allowed to {action} with your AWS credentials ({code})") from None
        raise CliError(f"could not {action}: {code}") from None
    except BotoCoreError as error:
        raise CliError(f"could not {action}: {error}") from None


def _checked_url(url: str) -> str:
    """An http(s) base URL; plain http only to this machine, so the secret never crosses a network in clear."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise CliError(f"not an http(s) URL: {url!r}")
    if parts.scheme == "http" and not _is_loopback(parts.hostname):
        raise CliError(f"refusing to send the operator secret over plain http to {parts.hostname}: use https")
    return url.strip().rstrip("/")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
