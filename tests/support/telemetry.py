"""What the functions wrote, captured per test: Powertools log lines (JSON) and EMF metric lines (stdout).

A pytest plugin (tests/conftest.py loads it): the `telemetry` fixture.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from functions.handlers import telemetry as telemetry_module


class TelemetryOutput:
    """Everything the functions wrote since the test started."""

    def __init__(self, capsys: pytest.CaptureFixture[str], log_stream: io.StringIO) -> None:
        self._capsys = capsys
        self._log_stream = log_stream
        self._stdout: list[str] = []

    def text(self) -> str:
        captured = self._capsys.readouterr()
        self._stdout.append(captured.out + captured.err)
        return "".join(self._stdout) + self._log_stream.getvalue()

    def metrics(self) -> list[dict[str, Any]]:
        """Each metric of each EMF line as {"namespace", "name", "value", "dimensions"}."""
        found = []
        for line in self.text().splitlines():
            if not line.startswith("{") or '"_aws"' not in line:
                continue
            blob = json.loads(line)
            for directive in blob["_aws"]["CloudWatchMetrics"]:
                (dimension_names,) = directive["Dimensions"]
                dimensions = {name: blob[name] for name in dimension_names}
                for metric in directive["Metrics"]:
                    value = blob[metric["Name"]]
                    found.append(
                        {
                            "namespace": directive["Namespace"],
                            "name": metric["Name"],
                            "value": value[0] if isinstance(value, list) else value,
                            "dimensions": dimensions,
                        }
                    )
        return found

    def logs(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self._log_stream.getvalue().splitlines() if line.strip()]


@pytest.fixture
def telemetry(capsys: pytest.CaptureFixture[str]) -> Iterator[TelemetryOutput]:
    """Captures the functions' logs (the Powertools logger's own JSON formatter) and EMF metric lines."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(telemetry_module.logger.registered_formatter)
    powertools_logger = logging.getLogger(telemetry_module.logger.name)
    powertools_logger.addHandler(handler)
    try:
        yield TelemetryOutput(capsys, stream)
    finally:
        powertools_logger.removeHandler(handler)
