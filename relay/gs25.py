"""How the convenience relay authenticates `gs25-stock` to GS25.

1. With `GS25_AUTH_SESSION_FILE`: the logged-in Woodongs app session in that file (never a key). The access
   token is renewed a minute before it expires, or once after GS25 refuses it; the new tokens are written
   back to the file (atomically) before they are used. When GS25 refuses the renewal, the session is revoked:
   every later stock call is refused (403) until the file is replaced and the relay restarted.
2. Otherwise the operator's `GS25_API_KEY`, else the caller's `apiKey`, sent only as the `Api-Key` header.
3. Neither: refused with 403 (before any quota unit is spent: `certainly_refused`).

The session file must be a regular file of the relay's own user, readable by nobody else (mode 0600).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import re
import stat
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from functions.adapters.http import Answer, decode_json, exchange
from functions.core import Clock, Reason, RouteFailure
from relay.files import write_private_file

REISSUE_URL = "https://b2c-bff.woodongs.com/api/bff/v4/auth/tokenReissue"
APP_VERSION = "5.3.61"
APP_BUILD = "2132"
DEVICE_MODEL = "sdk_gphone64_arm64"
ANDROID_VERSION = "14"
REFRESH_MARGIN_MS = 60_000
REISSUE_TIMEOUT_MS = 10_000
MAX_SESSION_FILE_BYTES = 16_384
MAX_REISSUE_BYTES = 128 * 1024
REFUSED = frozenset({401, 403})
_JWT = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+")
_DEVICE_ID = re.compile(r"[A-Za-z0-9_-]{1,100}")

Send = Callable[[Mapping[str, str]], Answer]
"""One stock request with these auth headers added."""


class Gs25Refused(Exception):
    """No stock call is possible: `status` is what the relay answers (403, 502 or 504)."""

    def __init__(self, status: int) -> None:
        super().__init__(f"gs25 stock refused with {status}")
        self.status = status


class SessionFileError(ValueError):
    """The session file cannot be used; the message says why and what to do, never a token."""


@dataclass(frozen=True, slots=True)
class Tokens:
    access: str
    refresh: str
    device_id: str

    def __repr__(self) -> str:
        return "Tokens(***)"


def jwt_expiry_ms(token: str) -> int | None:
    """The `exp` claim (epoch ms) of a JWT, or None when the token is not one with a usable `exp`."""
    if not _JWT.fullmatch(token):
        return None
    payload = token.split(".")[1]
    try:
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (binascii.Error, ValueError):
        return None
    exp = claims.get("exp") if isinstance(claims, dict) else None
    if isinstance(exp, bool) or not isinstance(exp, int | float) or not math.isfinite(exp) or exp <= 0:
        return None
    return int(exp * 1000)


def load_session_file(path: Path) -> Tokens:
    """The tokens in `path`, after checking it is a private regular file of ours. Raises SessionFileError."""
    try:
        info = path.lstat()
    except OSError as error:
        raise SessionFileError(f"GS25_AUTH_SESSION_FILE {path}: {error.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise SessionFileError(f"GS25_AUTH_SESSION_FILE {path} is not a regular file")
    if info.st_mode & 0o077:
        raise SessionFileError(
            f"GS25_AUTH_SESSION_FILE {path} is readable by others (mode {stat.S_IMODE(info.st_mode):04o}): "
            f"it holds a login session; run `chmod 600 {path}`"
        )
    if info.st_uid != os.getuid():
        raise SessionFileError(f"GS25_AUTH_SESSION_FILE {path} belongs to another user")
    if info.st_size > MAX_SESSION_FILE_BYTES:
        raise SessionFileError(f"GS25_AUTH_SESSION_FILE {path} is over {MAX_SESSION_FILE_BYTES} bytes")
    try:
        record = json.loads(path.read_bytes())
    except (OSError, ValueError):
        raise SessionFileError(f"GS25_AUTH_SESSION_FILE {path} is not JSON") from None
    tokens = _tokens_of(record)
    if tokens is None:
        raise SessionFileError(
            f"GS25_AUTH_SESSION_FILE {path} must hold exactly accessToken and refreshToken (JWTs without "
            "'Bearer ', with an exp) and deviceId (1-100 letters, digits, _ or -)"
        )
    return tokens


def _tokens_of(record: object) -> Tokens | None:
    if not isinstance(record, dict) or set(record) != {"accessToken", "refreshToken", "deviceId"}:
        return None
    access, refresh, device_id = record["accessToken"], record["refreshToken"], record["deviceId"]
    if not all(isinstance(value, str) for value in (access, refresh, device_id)):
        return None
    if jwt_expiry_ms(access) is None or jwt_expiry_ms(refresh) is None or not _DEVICE_ID.fullmatch(device_id):
        return None
    return Tokens(access, refresh, device_id)


def app_headers(device_id: str) -> dict[str, str]:
    """What the Woodongs app sends with every call (a fresh `request_id` each time)."""
    return {
        "User-Agent": f"woodongs-app/{APP_VERSION} (Android; {ANDROID_VERSION}; {DEVICE_MODEL})",
        "request_id": str(uuid.uuid4()),
        "appinfo_device_id": device_id,
        "appinfo_model_name": DEVICE_MODEL,
        "appinfo_os_version": ANDROID_VERSION,
        "appinfo_app_version": APP_VERSION,
        "appinfo_app_build_number": APP_BUILD,
        "appinfo_os_type": "android",
    }


class Gs25Session:
    """The app session: thread-safe, one renewal at a time (the others wait for it and use its tokens)."""

    def __init__(self, path: Path, tokens: Tokens, *, client: httpx.Client, clock: Clock) -> None:
        self._path = path
        self._tokens = tokens
        self._client = client
        self._clock = clock
        self._lock = threading.Lock()
        self._revoked = False

    def call(self, send: Send) -> Answer:
        """One stock call; renews first when the access token is about to expire, and once after a refusal."""
        tokens = self._current()
        if self._expires_soon(tokens.access):
            tokens = self._renew(tokens)
        answer = send(self._headers(tokens))
        if answer.status not in REFUSED:
            return answer
        answer = send(self._headers(self._renew(tokens)))
        if answer.status in REFUSED:
            self._revoke()
        return answer

    def certainly_refused(self) -> bool:
        """Revoked, or due for a renewal that its expired refresh token cannot get: a call would be 403."""
        with self._lock:
            if self._revoked:
                return True
            tokens = self._tokens
        if not self._expires_soon(tokens.access):
            return False
        refresh_expiry = jwt_expiry_ms(tokens.refresh)
        return refresh_expiry is None or refresh_expiry <= self._clock()

    def _current(self) -> Tokens:
        with self._lock:
            if self._revoked:
                raise Gs25Refused(403)
            return self._tokens

    def _headers(self, tokens: Tokens) -> dict[str, str]:
        return {**app_headers(tokens.device_id), "Authorization": f"Bearer {tokens.access}"}

    def _expires_soon(self, access: str) -> bool:
        expiry = jwt_expiry_ms(access)
        return expiry is None or expiry <= self._clock() + REFRESH_MARGIN_MS

    def _revoke(self) -> None:
        with self._lock:
            self._revoked = True

    def _renew(self, stale: Tokens) -> Tokens:
        with self._lock:
            if self._revoked:
                raise Gs25Refused(403)
            if self._tokens is not stale:  # another call renewed it while we waited
                return self._tokens
            refresh_expiry = jwt_expiry_ms(stale.refresh)
            if refresh_expiry is None or refresh_expiry <= self._clock():
                self._revoked = True
                raise Gs25Refused(403)
            fresh = self._reissue(stale)
            try:
                write_private_file(
                    self._path,
                    json.dumps(
                        {
                            "accessToken": fresh.access,
                            "refreshToken": fresh.refresh,
                            "deviceId": fresh.device_id,
                        }
                    ).encode(),
                )
            except OSError:
                self._revoked = True
                raise Gs25Refused(502) from None
            self._tokens = fresh
            return fresh

    def _reissue(self, stale: Tokens) -> Tokens:
        request = self._client.build_request(
            "POST", REISSUE_URL, headers={**app_headers(stale.device_id), "Refresh": stale.refresh}
        )
        try:
            answer = exchange(
                self._client, request, timeout_ms=REISSUE_TIMEOUT_MS, max_bytes=MAX_REISSUE_BYTES
            )
            if answer.status in REFUSED:
                self._revoked = True
                raise Gs25Refused(403)
            if answer.status // 100 != 2:
                raise Gs25Refused(502)
            fresh = self._reissued_tokens(decode_json(answer.body), stale.device_id)
        except RouteFailure as failure:
            raise Gs25Refused(504 if failure.reason is Reason.TIMEOUT else 502) from None
        if fresh is None:
            raise Gs25Refused(502)
        return fresh

    def _reissued_tokens(self, body: object, device_id: str) -> Tokens | None:
        if (
            not isinstance(body, dict)
            or body.get("resultCode") != "0000"
            or not isinstance(body.get("data"), dict)
        ):
            return None
        data: dict[str, Any] = body["data"]
        access, refresh = (_without_bearer(data.get(name)) for name in ("access", "refresh"))
        if access is None or refresh is None:
            return None
        access_expiry, refresh_expiry = jwt_expiry_ms(access), jwt_expiry_ms(refresh)
        now = self._clock()
        if access_expiry is None or access_expiry <= now + REFRESH_MARGIN_MS:
            return None
        if refresh_expiry is None or refresh_expiry <= now:
            return None
        return Tokens(access, refresh, device_id)


def _without_bearer(value: object) -> str | None:
    return value.removeprefix("Bearer ") if isinstance(value, str) else None


class Gs25Auth:
    """Picks the session, the operator's key or the caller's key, in that order."""

    def __init__(self, *, api_key: str | None = None, session: Gs25Session | None = None) -> None:
        self._api_key = (api_key or "").strip() or None
        self._session = session

    def certainly_refused(self, caller_api_key: str | None) -> bool:
        """Whether a call would be refused (403) without reaching GS25: no credential, or a session that
        cannot be used."""
        if self._session is not None:
            return self._session.certainly_refused()
        return not (self._api_key or caller_api_key)

    def call(self, send: Send, caller_api_key: str | None) -> Answer:
        """Raises `Gs25Refused` when there is no credential, or the session cannot be used."""
        if self._session is not None:
            return self._session.call(send)
        key = self._api_key or caller_api_key
        if not key:
            raise Gs25Refused(403)
        return send({"Api-Key": key})
