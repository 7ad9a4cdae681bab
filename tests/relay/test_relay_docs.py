"""docs/running-a-relay.md's launchd plist and systemd unit give the relay an open-file limit its connection cap fits in
(launchd's default of 256 would leave 192 connections); what it says one client can cost a relay follows
from the constants."""

from __future__ import annotations

import math
import plistlib
import re
from pathlib import Path

from functions.core import RelayGroup
from functions.handlers.settings import ApiSettings
from functions.services.lookup import MAX_RELAY_CALLS_PER_LOOKUP
from relay.app import DTRYX_PROCESS_QUOTA, POLICIES
from relay.config import MAX_CONNECTIONS, connection_cap

DOCS = Path(__file__).parents[2] / "docs"
README = (DOCS / "running-a-relay.md").read_text() + (DOCS / "operations.md").read_text()
"""The pages that say how to run a relay and what a client can cost one."""


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


def _paragraph(starting: str) -> str:
    start = README.index(starting)
    return " ".join(README[start : README.index("\n- **", start + 1)].split())


def test_the_readme_states_what_one_client_can_cost_a_relay_from_the_constants() -> None:
    text = _paragraph("- **What one client can cost a relay.**")
    per_day = ApiSettings.model_fields["daily_rate_limit"].default
    share = POLICIES[RelayGroup.CGV].quota
    assert share == POLICIES[RelayGroup.DTRYX].quota
    assert f"at most {MAX_RELAY_CALLS_PER_LOOKUP} relay calls" in text
    assert f"a {MAX_RELAY_CALLS_PER_LOOKUP + 1}th relay call is never made" in text
    spent = MAX_RELAY_CALLS_PER_LOOKUP * per_day
    assert f"{MAX_RELAY_CALLS_PER_LOOKUP} × {per_day:,} = **{spent:,} relay units per Korea day**" in text
    assert f"({round(100 * spent / share.per_day)} % of the {share.per_day:,} a day" in text
    lookups = math.ceil(share.per_minute / MAX_RELAY_CALLS_PER_LOOKUP)
    assert f"minute share ({share.per_minute} units) with {lookups} lookups" in text
    convenience = POLICIES[RelayGroup.CONVENIENCE].quota
    assert f"({convenience.per_minute} a minute, {convenience.per_day:,} a day)" in text
    process = f"half of the Dtryx process's {DTRYX_PROCESS_QUOTA.per_minute} a minute"
    assert process in " ".join(README.split())
