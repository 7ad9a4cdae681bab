"""The quota ledger: per UTC minute and day, persisted atomically, kept across restarts, one holder per state
directory; the 429 answers."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from functions.core import RelayGroup, RouteKey
from relay.config import ConfigError
from relay.quota import (
    DAY_MS,
    LOCK_FILE,
    LedgerInUse,
    LedgerUnavailable,
    LedgerUnreadable,
    QuotaDenied,
    QuotaLedger,
    QuotaLimits,
)
from tests.relay.conftest import START_MS, RelayFactory, auth, probe_body
from tests.support.clock import ManualClock

LIMITS = QuotaLimits(per_minute=2, per_day=3)


def test_units_per_minute_then_per_day(tmp_path: Path) -> None:
    clock = ManualClock(START_MS)
    with QuotaLedger(tmp_path, LIMITS, clock=clock) as ledger:
        assert [ledger.take(), ledger.take()] == [None, None]
        assert ledger.take() == QuotaDenied("minute", 40)  # 20 s into the minute
        clock.advance(40_000)
        assert ledger.take() is None
        clock.advance(60_000)
        seconds_to_midnight = -(-(DAY_MS - clock() % DAY_MS) // 1000)
        assert ledger.take() == QuotaDenied("daily", seconds_to_midnight)
        status = ledger.status()
        assert (status["dailyRemaining"], status["minuteRemaining"], status["blockedBy"]) == (0, 2, "daily")
        assert status["retryAfter"] == seconds_to_midnight
        clock.advance(DAY_MS)
        assert ledger.take() is None


def test_the_ledger_is_written_privately_and_read_back_after_a_restart(tmp_path: Path) -> None:
    clock = ManualClock(START_MS)
    with QuotaLedger(tmp_path, LIMITS, clock=clock) as ledger:
        ledger.take()
    path = tmp_path / "quota.json"
    assert json.loads(path.read_text()) == {
        "day": START_MS // DAY_MS,
        "minute": START_MS // 60_000,
        "dayCount": 1,
        "minuteCount": 1,
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(tmp_path.iterdir()) == [path, tmp_path / LOCK_FILE]  # no temporary file left behind
    with QuotaLedger(tmp_path, QuotaLimits(per_minute=10, per_day=10), clock=clock) as restarted:
        assert restarted.status()["minuteRemaining"] == 9  # new limits never reset the counts


def test_one_ledger_per_state_directory_at_a_time(tmp_path: Path) -> None:
    clock = ManualClock(START_MS)
    with QuotaLedger(tmp_path, LIMITS, clock=clock) as first:
        with pytest.raises(LedgerInUse, match=f"pid {os.getpid()}.*state directory {tmp_path}"):
            QuotaLedger(tmp_path, LIMITS, clock=clock)
        first.take()
    with QuotaLedger(tmp_path, LIMITS, clock=clock) as second:  # given up by `close`
        assert second.status()["minuteRemaining"] == 1


def test_stray_temporary_files_are_removed_at_start(tmp_path: Path) -> None:
    strays = [tmp_path / f"quota.json.{os.urandom(16).hex()}.tmp" for _ in range(2)]
    kept = [tmp_path / "quota.json.backup.tmp", tmp_path / "notes.tmp", tmp_path / "other.json.0.tmp"]
    for path in [*strays, *kept]:
        path.write_text("{}")
    with QuotaLedger(tmp_path, LIMITS, clock=ManualClock(START_MS)):
        assert not any(path.exists() for path in strays)
        assert all(path.exists() for path in kept)


def test_each_write_syncs_the_file_then_the_directory_after_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[tuple[str, str]] = []
    real_fsync = os.fsync

    def observed_fsync(descriptor: int) -> None:
        kind = "directory" if stat.S_ISDIR(os.fstat(descriptor).st_mode) else "file"
        synced.append((kind, (tmp_path / "quota.json").read_text() if kind == "directory" else ""))
        real_fsync(descriptor)

    monkeypatch.setattr("relay.files.os.fsync", observed_fsync)
    with QuotaLedger(tmp_path, LIMITS, clock=ManualClock(START_MS)) as ledger:
        ledger.take()
    ((file_kind, _), (directory_kind, seen_then)) = synced
    assert (file_kind, directory_kind) == ("file", "directory")
    assert json.loads(seen_then)["minuteCount"] == 1  # the directory is synced after the rename


def test_a_clock_going_back_restores_nothing(tmp_path: Path) -> None:
    clock = ManualClock(START_MS)
    with QuotaLedger(tmp_path, LIMITS, clock=clock) as ledger:
        ledger.take()
        ledger.take()
        clock.advance(-120_000)
        assert ledger.take() == QuotaDenied("minute", 160)  # the stored minute ends 160 s from now


@pytest.mark.parametrize(
    "content",
    [
        b"{",
        b"[]",
        b'{"day":1,"minute":1,"dayCount":1}',
        b'{"day":1,"minute":1,"dayCount":-1,"minuteCount":0}',
    ],
)
def test_an_unreadable_ledger_stops_the_relay_from_starting(
    tmp_path: Path, content: bytes, make_relay: RelayFactory
) -> None:
    (tmp_path / "quota.json").write_bytes(content)
    with pytest.raises(LedgerUnreadable):
        QuotaLedger(tmp_path, LIMITS, clock=ManualClock(START_MS))
    state = tmp_path / "state"
    (state / "dtryx").mkdir(parents=True)
    (state / "dtryx" / "quota.json").write_bytes(content)
    with pytest.raises(ConfigError, match=r"quota\.json"):
        make_relay((RelayGroup.DTRYX,), state_root=state)


def test_a_failed_write_spends_the_unit_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full_disk(path: Path, content: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("relay.quota.write_private_file", full_disk)
    with QuotaLedger(tmp_path, LIMITS, clock=ManualClock(START_MS)) as ledger:
        with pytest.raises(LedgerUnavailable):
            ledger.take()
        assert ledger.status()["minuteRemaining"] == 1


@pytest.mark.parametrize(
    ("key", "body"),
    [
        (RouteKey.OY_GOODS_INFO, {"error": "Relay quota exceeded", "reason": "minute"}),
        (RouteKey.DTRYX_MOVIES, {"error": "Relay request failed"}),
    ],
)
def test_an_exhausted_ledger_answers_429_with_reason_and_retry_after(
    make_relay: RelayFactory, key: RouteKey, body: dict[str, str]
) -> None:
    relay = make_relay(quota=LIMITS)
    cinema = probe_body(RouteKey.DTRYX_MOVIES)
    bodies = (
        [{"goodsNo": f"A{i}"} for i in range(3)]
        if key is RouteKey.OY_GOODS_INFO
        else [{**cinema, "cinemaCode": f"00006{i}"} for i in range(3)]
    )
    assert [relay.post(key, b).status_code for b in bodies[:2]] == [200, 200]
    refused = relay.post(key, bodies[2])
    assert (refused.status_code, refused.json()) == (429, body)
    assert (refused.headers["x-relay-quota-reason"], refused.headers["retry-after"]) == ("minute", "40")
    assert relay.retailers.calls() == 2
    path = "/health" if key is RouteKey.OY_GOODS_INFO else "/v1/dtryx/health"
    group = RelayGroup.OLIVEYOUNG if key is RouteKey.OY_GOODS_INFO else RelayGroup.DTRYX
    health = relay.client.get(path, headers=auth(group)).json()
    assert health["quota"]["blockedBy"] == "minute"
    assert health.get("state", health.get("status")) in ("ready", "ok")  # exhausted quota is still healthy


def test_counts_survive_a_restart_of_the_relay(make_relay: RelayFactory, tmp_path: Path) -> None:
    state = tmp_path / "kept"
    first = make_relay((RelayGroup.DTRYX,), state_root=state, quota=LIMITS)
    assert first.post(RouteKey.DTRYX_MOVIES).status_code == 200
    first.app.close()
    second = make_relay((RelayGroup.DTRYX,), state_root=state, quota=LIMITS)
    assert second.post(RouteKey.DTRYX_PLAY_DATES).status_code == 200
    assert second.post(RouteKey.DTRYX_TIMETABLE).status_code == 429


def test_a_ledger_that_cannot_be_written_is_503(
    make_relay: RelayFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    relay = make_relay()

    def full_disk(path: Path, content: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("relay.quota.write_private_file", full_disk)
    oy = relay.post(RouteKey.OY_GOODS_INFO)
    assert (oy.status_code, oy.json()) == (503, {"error": "Relay quota unavailable"})
    core = relay.post(RouteKey.CU_PRIME)
    assert (core.status_code, core.json()) == (503, {"error": "Relay request failed"})
    assert relay.retailers.calls() == 0
