"""The daily lookup quota at the API's edge (docs/operations.md, "Daily rate limit (per client)"): which
requests count (limited prefixes, not the operator key), per client (the SHA-256 of its address:
`functions/handlers/viewer.py`), and the `X-RateLimit-*` headers. Counting itself is `functions/services/quota.py`, never waited for.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

from functions.adapters.secrets import Secrets
from functions.core.model import SECOND_MS
from functions.core.ports import Clock
from functions.core.quota import QuotaDecision, client_of
from functions.handlers.operator_auth import carries_operator_key
from functions.handlers.settings import ApiSettings
from functions.handlers.telemetry import emit_metric, logger
from functions.handlers.viewer import client_address
from functions.services.ports import QuotaStore
from functions.services.quota import DailyQuota


@dataclass(frozen=True)
class LimitedLookups:
    quota: DailyQuota
    prefixes: tuple[str, ...]

    def check(
        self, event: Mapping[str, Any], *, secrets: Callable[[], Secrets], now: int
    ) -> QuotaDecision | None:
        """The quota's decision for this request (counting it), or None when the request does not count."""
        if not str(event.get("rawPath") or "").startswith(self.prefixes):
            return None
        if carries_operator_key(event.get("headers") or {}, secrets):
            return None
        # A refusal is counted with the other error answers: LookupError{Code=DAILY_RATE_LIMIT_EXCEEDED}.
        return self.quota.admit(client_of(client_address(event, secrets)), now=now)


def limited_lookups(
    settings: ApiSettings, *, store: QuotaStore | None, executor: Executor, clock: Clock
) -> LimitedLookups | None:
    """The lookup function's quota from its settings; None when DAILY_RATE_LIMIT is 0 (no limit)."""
    prefixes = settings.limited_prefixes
    if not prefixes:
        return None
    quota = DailyQuota(
        settings.daily_rate_limit,
        store=store,
        executor=executor,
        clock=clock,
        on_flush_error=_flush_failed,
        on_untracked=_untracked,
        flush_interval_ms=round(settings.daily_rate_limit_flush_s * SECOND_MS),
    )
    return LimitedLookups(quota, prefixes)


def rate_limit_headers(decision: QuotaDecision) -> dict[str, str]:
    return {
        "X-RateLimit-Limit": str(decision.limit),
        "X-RateLimit-Remaining": str(decision.remaining),
        "X-RateLimit-Reset": str(decision.resets_at // SECOND_MS),
    }


def _flush_failed(error: Exception) -> None:
    # Lookups keep being counted here and the counts go into the next flush; only sharing is delayed.
    logger.warning(
        "daily quota flush failed",
        extra={"operation": "add_daily_lookups", "error_type": type(error).__name__},
    )
    emit_metric("StoreError", 1)


def _untracked() -> None:
    # Every tracked client still has counts on their way to the store: this lookup was let through uncounted.
    emit_metric("DailyQuotaUntracked", 1)
