"""Fixtures shared by every test directory."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from infra.environment import POWERTOOLS_ENVIRONMENT

# Fixtures any test may ask for: moto once per module, emptied before each test; the functions' telemetry.
pytest_plugins = ("tests.support.aws", "tests.support.telemetry")

# What the stack sets on every function, before any test module imports a handler (Powertools reads these
# when its Logger is created).
os.environ.update(POWERTOOLS_ENVIRONMENT)

# Property tests: no per-example deadline. The default 200 ms turns a busy 2-core runner into a
# DeadlineExceeded flake; a test that really got slow still shows in the suite's run time.
# Locally: random generation and the example database in .hypothesis/ (failures found once are replayed).
# CI (`CI` set, as CI services do): derandomized, so a run's result depends only on the code, and no database
# (a fresh runner could not keep one anyway); `CI=1 pytest ...` reproduces a CI failure locally.
# Both start from Hypothesis's `default` profile, not from the `ci` one Hypothesis itself loads when it sees
# any CI-like variable. Explicit @settings(...) in a test build on the loaded profile.
# `make test-fast` (the loop run all day) loads route-health-fast: a quarter of the examples, and of the counts
# tests set with `tests.support.examples.examples(n)`. `make test` and CI run every example.
settings.register_profile("route-health", settings.get_profile("default"), deadline=None)
settings.register_profile(
    "route-health-ci",
    settings.get_profile("default"),
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("route-health-fast", settings.get_profile("route-health"), max_examples=25)


def pytest_configure(config: pytest.Config) -> None:
    """Loads the profile before any test module is imported: `--hypothesis-profile=<name>`, else the one
    `HYPOTHESIS_PROFILE` names, else route-health-ci under CI and route-health elsewhere."""
    if config.getoption("hypothesis_profile", default=None) is None:
        in_ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
        default = "route-health-ci" if in_ci else "route-health"
        settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE") or default)


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


# Under xdist (`make test`), tests that share an expensive session fixture run on one worker, so it is built
# once per run rather than once per worker (`--dist loadgroup` honours these groups). tests/integration's
# servers are not grouped: they start in about a second, so each worker runs its own and the tests spread.
SHARED_SESSION_FIXTURES = ("synthesized", "sandbox", "quota_sandbox")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        shared = [name for name in SHARED_SESSION_FIXTURES if name in getattr(item, "fixturenames", ())]
        if shared:
            item.add_marker(pytest.mark.xdist_group(shared[0]))
