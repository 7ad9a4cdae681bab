"""The CGV relay (`/v1/cgv/…`), served by the Dtryx relay's process as the original serves it: the Dtryx token
and the same log, with CGV's own limits, response cache and coalescing (`POLICIES[RelayGroup.CGV]`). Unlike
the original's, its quota ledger is its own (`cgv-quota.json` in the Dtryx state directory, under the Dtryx
relay's lock), with its own share of the process's quota: CGV's callers cannot use up Dtryx's, nor the
other way round.

It needs CGV's signing key (`CGV_SIGNING_KEY`). Without it the process does not serve CGV: its paths then
answer like any other path the Dtryx relay does not know (401, or 404 with the token), so the Lambda's health
check of the cgv relay fails rather than every CGV lookup.
"""

from __future__ import annotations

from functions.core import Clock, RelayGroup
from relay.app import POLICIES, GroupPolicy, GroupRelay
from relay.config import GroupConfig
from relay.logs import RelayLog
from relay.quota import QuotaLedger
from relay.upstream import UpstreamCaller

LEDGER_FILE = "cgv-quota.json"


def cgv_beside(
    dtryx: GroupRelay,
    dtryx_config: GroupConfig,
    *,
    upstream: UpstreamCaller,
    clock: Clock,
    log: RelayLog,
    policy: GroupPolicy = POLICIES[RelayGroup.CGV],
) -> GroupRelay:
    """The CGV relay of the Dtryx relay `dtryx` (configured by `dtryx_config`): same token and log, a ledger
    of its own beside Dtryx's. Raises `LedgerUnreadable`."""
    return GroupRelay(
        RelayGroup.CGV,
        dtryx_config.token,
        ledger=QuotaLedger.beside(dtryx.ledger, LEDGER_FILE, policy.quota),
        upstream=upstream,
        clock=clock,
        log=log,
        policy=policy,
    )
