"""The per-client daily quota's arithmetic: Korea days, the client's identity and a decision
(docs/design.md, "HTTP API"). The counting itself is `functions/services/quota.py`.

Korea has no daylight saving time (UTC+9 all year).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from functions.core.model import MINUTE_MS

DAY_MS = 24 * 60 * MINUTE_MS
KST_OFFSET_MS = 9 * 60 * MINUTE_MS
"""Asia/Seoul is UTC+9 all year."""


def korea_day(now: int) -> int:
    """The Asia/Seoul calendar day of `now` (epoch ms), as days since 1970-01-01 in Korea."""
    return (now + KST_OFFSET_MS) // DAY_MS


def korea_day_end(day: int) -> int:
    """When Korea day `day` ends (its next midnight in Seoul), in epoch ms."""
    return (day + 1) * DAY_MS - KST_OFFSET_MS


def client_of(source_ip: str) -> str:
    """The client's identity: the SHA-256 (hex) of its source IP, so the raw IP is never kept."""
    return hashlib.sha256(source_ip.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class QuotaDecision:
    allowed: bool
    limit: int
    remaining: int
    """Lookups left today as far as this container knows (0 when refused)."""
    resets_at: int
    """The next midnight in Seoul, epoch ms."""
    retry_after_s: int
    """Whole seconds until `resets_at`, at least 1."""
