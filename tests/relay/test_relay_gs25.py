"""GS25 stock: the operator's key, the caller's key, the app session file and its renewal."""

from __future__ import annotations

import base64
import json
import os
import stat
from pathlib import Path
from typing import Any

import httpx
import pytest

from functions.core import RelayGroup, RouteKey
from relay.config import ConfigError
from relay.gs25 import REISSUE_URL
from tests.relay.conftest import START_MS, RelayFactory, RelayUnderTest, auth, probe_body

REFUSED = {"error": "Relay request failed"}


def jwt(exp_ms: int, marker: str = "x") -> str:
    def part(value: object) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'HS256'})}.{part({'exp': exp_ms // 1000, 'sub': marker})}.c2ln"


def stock_body(**extra: str) -> dict[str, Any]:
    return {**probe_body(RouteKey.GS25_STOCK), **extra}


def stock_requests(relay: RelayUnderTest) -> list[httpx.Request]:
    return [r for r in relay.retailers.requests if r.url.path == "/api/bff/v2/store/stock"]


def session_file(tmp_path: Path, *, access_exp: int, refresh_exp: int, mode: int = 0o600) -> Path:
    path = tmp_path / "gs25-session.json"
    path.write_text(
        json.dumps(
            {
                "accessToken": jwt(access_exp, "a1"),
                "refreshToken": jwt(refresh_exp, "r1"),
                "deviceId": "device-1",
            }
        )
    )
    path.chmod(mode)
    return path


def minute_remaining(relay: RelayUnderTest) -> int:
    health = relay.client.get("/v1/convenience/health", headers=auth(RelayGroup.CONVENIENCE)).json()
    remaining: int = health["quota"]["minuteRemaining"]
    return remaining


def test_without_any_credential_gs25_stock_is_403_without_spending_a_unit(relay: RelayUnderTest) -> None:
    response = relay.post(RouteKey.GS25_STOCK)
    assert (response.status_code, response.json()) == (403, REFUSED)
    assert relay.retailers.calls() == 0
    assert minute_remaining(relay) == 690  # it would certainly fail: no unit spent


@pytest.mark.parametrize("api_key", ["키값", "caller key", "key\u00a0", "tab\tkey", "é"])
def test_an_api_key_no_header_can_carry_is_400_before_any_unit(relay: RelayUnderTest, api_key: str) -> None:
    response = relay.post(RouteKey.GS25_STOCK, stock_body(apiKey=api_key))
    assert (response.status_code, response.json()) == (400, REFUSED)
    assert relay.retailers.calls() == 0
    assert minute_remaining(relay) == 690
    assert not [line for line in relay.log_lines() if line["event"] == "job-failed"]


def test_every_visible_ascii_api_key_is_passed_on(relay: RelayUnderTest) -> None:
    visible = "".join(chr(code) for code in range(0x21, 0x7F))
    assert relay.post(RouteKey.GS25_STOCK, stock_body(apiKey=visible)).status_code == 200
    (sent,) = stock_requests(relay)
    assert sent.headers["Api-Key"] == visible


def test_the_callers_key_goes_only_into_the_api_key_header(relay: RelayUnderTest) -> None:
    assert relay.post(RouteKey.GS25_STOCK, stock_body(apiKey="caller-key")).status_code == 200
    (sent,) = stock_requests(relay)
    assert sent.headers["Api-Key"] == "caller-key"
    assert "caller-key" not in str(sent.url)
    assert "authorization" not in sent.headers


def test_the_operators_key_wins_over_the_callers(make_relay: RelayFactory) -> None:
    relay = make_relay(gs25_api_key=" operator-key ")
    assert relay.post(RouteKey.GS25_STOCK, stock_body(apiKey="caller-key")).status_code == 200
    assert relay.post(RouteKey.GS25_STOCK).status_code == 200
    assert [r.headers["Api-Key"] for r in stock_requests(relay)] == ["operator-key", "operator-key"]


@pytest.mark.parametrize("status", [401, 403])
def test_gs25s_refusal_of_the_key_is_passed_on(relay: RelayUnderTest, status: int) -> None:
    relay.retailers.answers[RouteKey.GS25_STOCK] = lambda request: httpx.Response(status, json={"x": 1})
    response = relay.post(RouteKey.GS25_STOCK, stock_body(apiKey="k"))
    assert (response.status_code, response.json()) == (status, REFUSED)


# --- the session file ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644])
def test_a_session_file_others_can_read_is_refused_at_startup(
    make_relay: RelayFactory, tmp_path: Path, mode: int
) -> None:
    path = session_file(
        tmp_path, access_exp=START_MS + 3_600_000, refresh_exp=START_MS + 86_400_000, mode=mode
    )
    with pytest.raises(ConfigError, match=r"readable by others .*chmod 600") as refused:
        make_relay(gs25_session_file=path)
    assert "eyJ" not in str(refused.value)  # never a token in the message


@pytest.mark.parametrize(
    "content",
    [
        "{",
        json.dumps({"accessToken": "not-a-jwt", "refreshToken": jwt(START_MS), "deviceId": "d"}),
        json.dumps({"accessToken": jwt(START_MS), "refreshToken": jwt(START_MS), "deviceId": "bad id"}),
        json.dumps({"accessToken": jwt(START_MS), "refreshToken": jwt(START_MS)}),
    ],
)
def test_a_malformed_session_file_is_refused_at_startup(
    make_relay: RelayFactory, tmp_path: Path, content: str
) -> None:
    path = tmp_path / "session.json"
    path.write_text(content)
    path.chmod(0o600)
    with pytest.raises(ConfigError, match="GS25_AUTH_SESSION_FILE"):
        make_relay(gs25_session_file=path)


def test_temporary_session_files_a_killed_relay_left_are_removed_at_start(
    make_relay: RelayFactory, tmp_path: Path
) -> None:
    path = session_file(tmp_path, access_exp=START_MS + 3_600_000, refresh_exp=START_MS + 86_400_000)
    stray = tmp_path / f"gs25-session.json.{os.urandom(16).hex()}.tmp"
    stray.write_text("{}")
    make_relay(gs25_session_file=path)
    assert sorted(os.listdir(tmp_path)) == ["gs25-session.json", "state"]


def test_the_session_is_used_instead_of_any_key(make_relay: RelayFactory, tmp_path: Path) -> None:
    path = session_file(tmp_path, access_exp=START_MS + 3_600_000, refresh_exp=START_MS + 86_400_000)
    relay = make_relay(gs25_session_file=path, gs25_api_key="operator-key")
    assert relay.post(RouteKey.GS25_STOCK, stock_body(apiKey="caller-key")).status_code == 200
    (sent,) = stock_requests(relay)
    assert sent.headers["Authorization"] == f"Bearer {jwt(START_MS + 3_600_000, 'a1')}"
    assert "Api-Key" not in sent.headers
    assert sent.headers["appinfo_device_id"] == "device-1"
    assert sent.headers["User-Agent"].startswith("woodongs-app/")
    assert sent.headers["request_id"]


def _reissue(relay: RelayUnderTest, answer: httpx.Response | None = None) -> list[httpx.Request]:
    """GS25's token renewal answers `answer` (default: new tokens); the renewal requests it received."""
    renewed = {
        "resultCode": "0000",
        "data": {
            "access": "Bearer " + jwt(START_MS + 7_200_000, "a2"),
            "refresh": jwt(START_MS + 90_000_000, "r2"),
        },
    }
    calls: list[httpx.Request] = []

    def reissue(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return answer or httpx.Response(200, json=renewed)

    relay.retailers.others[REISSUE_URL] = reissue
    return calls


def test_an_access_token_about_to_expire_is_renewed_and_written_back_first(
    make_relay: RelayFactory, tmp_path: Path
) -> None:
    path = session_file(tmp_path, access_exp=START_MS + 30_000, refresh_exp=START_MS + 86_400_000)
    relay = make_relay(gs25_session_file=path)
    reissues = _reissue(relay)
    assert relay.post(RouteKey.GS25_STOCK).status_code == 200
    (reissue,) = reissues
    assert reissue.method == "POST"
    assert reissue.headers["Refresh"] == jwt(START_MS + 86_400_000, "r1")
    (sent,) = stock_requests(relay)
    assert sent.headers["Authorization"] == f"Bearer {jwt(START_MS + 7_200_000, 'a2')}"
    assert json.loads(path.read_text()) == {
        "accessToken": jwt(START_MS + 7_200_000, "a2"),
        "refreshToken": jwt(START_MS + 90_000_000, "r2"),
        "deviceId": "device-1",
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(os.listdir(tmp_path)) == ["gs25-session.json", "state"]


def test_a_refused_access_token_is_renewed_once_and_retried(make_relay: RelayFactory, tmp_path: Path) -> None:
    path = session_file(tmp_path, access_exp=START_MS + 3_600_000, refresh_exp=START_MS + 86_400_000)
    relay = make_relay(gs25_session_file=path)
    reissues = _reissue(relay)
    answers = iter([httpx.Response(401), httpx.Response(200, json={"stores": []})])
    relay.retailers.answers[RouteKey.GS25_STOCK] = lambda request: next(answers)
    assert relay.post(RouteKey.GS25_STOCK).status_code == 200
    assert len(reissues) == 1
    assert len(stock_requests(relay)) == 2


@pytest.mark.parametrize(("reissue_status", "answer"), [(401, 403), (403, 403), (500, 502)])
def test_a_failed_renewal(make_relay: RelayFactory, tmp_path: Path, reissue_status: int, answer: int) -> None:
    path = session_file(tmp_path, access_exp=START_MS, refresh_exp=START_MS + 86_400_000)
    relay = make_relay(gs25_session_file=path)
    _reissue(relay, httpx.Response(reissue_status))
    response = relay.post(RouteKey.GS25_STOCK)
    assert (response.status_code, response.json()) == (answer, REFUSED)
    assert stock_requests(relay) == []
    revoked = answer == 403  # GS25 refused the renewal: the session is over until it is replaced
    spent = 690 - minute_remaining(relay)
    again = relay.post(RouteKey.GS25_STOCK, stock_body(keyword="사이다"))
    assert again.status_code == 403 if revoked else again.status_code == 502
    assert 690 - minute_remaining(relay) == spent + (0 if revoked else 1)  # a revoked session spends none


def test_an_expired_refresh_token_revokes_the_session_without_calling_gs25(
    make_relay: RelayFactory, tmp_path: Path
) -> None:
    path = session_file(tmp_path, access_exp=START_MS, refresh_exp=START_MS - 1000)
    relay = make_relay(gs25_session_file=path)
    reissues = _reissue(relay)
    assert relay.post(RouteKey.GS25_STOCK).status_code == 403
    assert reissues == []
    assert stock_requests(relay) == []
    assert minute_remaining(relay) == 690  # known to fail before any call: no unit spent
