"""The operator key: `Authorization: Bearer <secret>` or `x-health-check-key: <secret>`, compared in constant time.

It opens the operator endpoints and lets a lookup bypass the daily quota.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Mapping

from functions.adapters.secrets import Secrets


def presented_secret(headers: Mapping[str, str]) -> str | None:
    """The secret from `Authorization: Bearer <s>` (any scheme case), else from `x-health-check-key`."""
    scheme, _, value = (headers.get("authorization") or "").strip().partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    key = (headers.get("x-health-check-key") or "").strip()
    return key or None


def secrets_match(presented: str, expected: str) -> bool:
    """Constant-time comparison; hashing first also hides the expected length."""
    return hmac.compare_digest(_digest(presented), _digest(expected))


def _digest(secret: str) -> bytes:
    # A header may hold any text, even a lone surrogate that strict UTF-8 cannot encode: "surrogatepass"
    # encodes every str, each to distinct bytes, so such a value is simply a wrong secret.
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).digest()


def carries_operator_key(headers: Mapping[str, str], secrets: Callable[[], Secrets]) -> bool:
    """The request presents the configured operator secret; `secrets` is read only when a key is presented."""
    presented = presented_secret(headers)
    if presented is None:
        return False
    expected = secrets().health_check_secret
    return expected is not None and secrets_match(presented, expected.get_secret_value())
