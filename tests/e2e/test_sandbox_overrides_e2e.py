"""Operator overrides over real HTTP against `route-health sandbox`: set, obeyed within the 30 s snapshot TTL
of the sandbox clock, expiry or clearing, and back to the verdicts. Each test starts settled (conftest `fresh`)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from functions.core.model import COOLDOWN_MS, SNAPSHOT_TTL_MS

if TYPE_CHECKING:
    from tests.e2e.conftest import Sandbox

pytestmark = pytest.mark.e2e

GOODS = ("/api/seveneleven/products", {"keyword": "코카콜라"})
OVERRIDE = "/api/health/routes/seven-goods/override"


def _set(sandbox: Sandbox, mode: str, ttl_seconds: int) -> dict[str, Any]:
    body = {"mode": mode, "reason": "e2e: retailer maintenance", "ttlSeconds": ttl_seconds}
    response = sandbox.http.put(OVERRIDE, json=body, headers=sandbox.auth())
    assert response.status_code == 200, response.text
    stored: dict[str, Any] = response.json()["data"]
    return stored


def _goods(sandbox: Sandbox) -> tuple[httpx.Response, dict[str, int]]:
    return sandbox.lookup(*GOODS)


def _past_the_snapshot_ttl(sandbox: Sandbox) -> None:
    """Move the sandbox clock past the lookup container's 30 s snapshot TTL and wait until it has reloaded
    (seen when an unaffected route goes direct again: a stale snapshot always means relay)."""
    sandbox.advance(SNAPSHOT_TTL_MS + 1)
    deadline = time.monotonic() + 10
    while sandbox.lookup("/api/seveneleven/popwords")[1] != {"direct:seven-popwords": 1}:
        assert time.monotonic() < deadline, "the lookup container never reloaded its snapshot"
        time.sleep(0.05)


def test_force_relay_is_obeyed_within_the_snapshot_ttl_and_expiry_gives_the_verdicts_back(
    fresh: Sandbox,
) -> None:
    assert _goods(fresh)[1] == {"direct:seven-goods": 1}
    stored = _set(fresh, "force-relay", ttl_seconds=40)
    assert stored["expiresAt"] - stored["createdAt"] <= 40_000
    assert fresh.health()["routes"]["seven-goods"]["override"]["mode"] == "force-relay"

    _past_the_snapshot_ttl(fresh)
    response, calls = _goods(fresh)
    assert response.status_code == 200, response.text
    assert calls == {"relay:seven-goods": 1}
    assert fresh.health()["routes"]["seven-goods"]["direct"] is True  # the verdict underneath is unchanged

    # Past the expiry but within the snapshot's 30 s: the container ignores the override at once.
    fresh.advance(10_000)
    assert _goods(fresh)[1] == {"direct:seven-goods": 1}
    assert "override" not in fresh.health()["routes"]["seven-goods"]


def test_force_direct_beats_a_blocked_verdict_a_failure_still_falls_back_and_clearing_restores_it(
    fresh: Sandbox,
) -> None:
    fresh.fault("direct:seven-goods", "http-403")
    assert _goods(fresh)[1] == {"direct:seven-goods": 1, "relay:seven-goods": 1}
    deadline = time.monotonic() + 5
    while "blockedUntil" not in fresh.health()["routes"]["seven-goods"]:
        assert time.monotonic() < deadline, "the failure report never reached the store"
        time.sleep(0.05)

    _set(fresh, "force-direct", ttl_seconds=600)
    _past_the_snapshot_ttl(fresh)
    # Direct despite the stored block and this container's own; the failure falls back to the relay.
    response, calls = _goods(fresh)
    assert response.status_code == 200, response.text
    assert calls == {"direct:seven-goods": 1, "relay:seven-goods": 1}
    fresh.clear_faults()
    assert _goods(fresh)[1] == {"direct:seven-goods": 1}

    cleared = fresh.http.delete(OVERRIDE, headers=fresh.auth())
    assert cleared.status_code == 200, cleared.text
    assert fresh.http.delete(OVERRIDE, headers=fresh.auth()).status_code == 404
    _past_the_snapshot_ttl(fresh)
    assert _goods(fresh)[1] == {"relay:seven-goods": 1}  # the verdicts rule again: still blocked


def test_force_relay_with_the_relay_known_unhealthy_answers_503_without_calling(fresh: Sandbox) -> None:
    fresh.fault("relay:convenience", "http-503")
    assert fresh.advance(COOLDOWN_MS)["probe"]["relays"]["convenience"]["healthy"] is False
    _set(fresh, "force-relay", ttl_seconds=600)
    _past_the_snapshot_ttl(fresh)

    response, calls = _goods(fresh)
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "UPSTREAM_ROUTE_UNAVAILABLE"
    assert calls == {}
    assert fresh.http.delete(OVERRIDE, headers=fresh.auth()).status_code == 200


def test_override_requests_are_checked(fresh: Sandbox) -> None:
    pinned = fresh.http.put(
        "/api/health/routes/gs25-stock/override",
        json={"mode": "force-direct", "reason": "no", "ttlSeconds": 60},
        headers=fresh.auth(),
    )
    assert pinned.status_code == 400, pinned.text
    assert pinned.json()["error"]["fields"][0]["field"] == "mode"
    unknown = fresh.http.put(
        "/api/health/routes/daiso-stock/override",
        json={"mode": "force-relay", "reason": "no", "ttlSeconds": 60},
        headers=fresh.auth(),
    )
    assert unknown.status_code == 404
    assert fresh.http.put(OVERRIDE, json={}).status_code == 401
