"""The CGV relay (`/v1/cgv/…`), served by the Dtryx relay's process as the original serves it: the Dtryx token,
the Dtryx quota ledger (one ledger counts both groups' retailer calls) and the same log, with CGV's own limits,
response cache and coalescing (`POLICIES[RelayGroup.CGV]`).

It needs CGV's signing key (`CGV_SIGNING_KEY`). Without it the process does not serve CGV: its paths then
answer like any other path the Dtryx relay does not know (401, or 404 with the token), so the Lambda's health
check of the cgv relay fails rather than every CGV lookup.
"""

from __future__ import annotations

from functions.core import Clock, RelayGroup
from relay.app import POLICIES, GroupPolicy, GroupRelay
from relay.config import GroupConfig
from relay.logs import RelayLog
from relay.upstream import UpstreamCaller


def cgv_beside(
    dtryx: GroupRelay,
    dtryx_config: GroupConfig,
    *,
    upstream: UpstreamCaller,
    clock: Clock,
    log: RelayLog,
    policy: GroupPolicy = POLICIES[RelayGroup.CGV],
) -> GroupRelay:
    """The CGV relay of the Dtryx relay `dtryx` (configured by `dtryx_config`): same token, ledger and log."""
    return GroupRelay(
        RelayGroup.CGV,
        dtryx_config.token,
        ledger=dtryx.ledger,
        upstream=upstream,
        clock=clock,
        log=log,
        policy=policy,
    )
