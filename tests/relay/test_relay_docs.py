"""The README's launchd plist and systemd unit give the relay an open-file limit its connection cap fits in
(launchd's default of 256 would leave 192 connections)."""

from __future__ import annotations

import plistlib
import re
from pathlib import Path

from relay.config import MAX_CONNECTIONS, connection_cap

README = (Path(__file__).parents[2] / "README.md").read_text()


def _block(language: str, containing: str) -> str:
    blocks: list[str] = re.findall(rf"```{language}\n(.*?)```", README, re.S)
    (block,) = [text for text in blocks if containing in text]
    return block


def test_the_launchd_plist_raises_the_open_file_limit_to_fit_the_cap() -> None:
    plist = plistlib.loads(_block("xml", "route-health").encode())
    assert plist["Label"] == "com.example.route-health-relay"
    assert connection_cap(plist["SoftResourceLimits"]["NumberOfFiles"]) == MAX_CONNECTIONS


def test_the_systemd_unit_raises_the_open_file_limit_to_fit_the_cap() -> None:
    unit = _block("ini", "route-health relay")
    (limit,) = re.findall(r"^LimitNOFILE=(\d+)$", unit, re.M)
    assert connection_cap(int(limit)) == MAX_CONNECTIONS
