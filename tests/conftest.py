"""Fixtures shared by every test directory."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

FAKE_AWS_ENVIRONMENT = {
    "AWS_DEFAULT_REGION": "ap-northeast-2",
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SECURITY_TOKEN": "testing",
    "AWS_SESSION_TOKEN": "testing",
}


@pytest.fixture(autouse=True, scope="session")
def fake_aws_environment() -> Iterator[None]:
    """Fake credentials and a fixed region, so no test can reach (or be billed by) a real AWS account."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in FAKE_AWS_ENVIRONMENT.items():
            patch.setenv(name, value)
        for name in ("AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_ENDPOINT_URL"):
            patch.delenv(name, raising=False)
        yield
