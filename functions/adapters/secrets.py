"""Secret values (docs/design.md, "Configuration and secrets"): one Secrets Manager JSON secret, or the
environment when none is named.

Every value is a `SecretStr`, so a `repr`, a log line or a validation error never shows it. Errors raised
from here name the secret and the problem, never a value.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import boto3
from aws_lambda_powertools.utilities.parameters import SecretsProvider
from aws_lambda_powertools.utilities.parameters.exceptions import (
    GetParameterError,
    TransformParameterError,
)
from botocore.config import Config
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from functions.adapters.relay import RelayCredentials
from functions.core import RelayGroup

if TYPE_CHECKING:
    from mypy_boto3_secretsmanager import SecretsManagerClient

# Short timeouts and no retry storm: a slow Secrets Manager must not eat a function's INIT.
SECRETS_CLIENT_CONFIG = Config(
    connect_timeout=2, read_timeout=2, retries={"max_attempts": 2, "mode": "standard"}
)


EDGE_ORIGIN_SECRET_KEY = "EDGE_ORIGIN_SECRET"  # noqa: S105 - the JSON key's name, not a value
"""The key the stack generates into its secret for the edge's origin header (infra/edge.py)."""

RETRY_AFTER_FAILURE_S = 30
"""After a failed background refresh, keep serving the last good secrets this long before trying again."""


class SecretsError(Exception):
    """The secret could not be read or is malformed. The message never contains a secret value."""


@dataclass(frozen=True, slots=True)
class RelaySecrets:
    """One relay group's credentials: the Bearer token, the optional Cloudflare Access pair and the optional
    retailer API key the relay passes on (the convenience relay's GS25 key)."""

    token: SecretStr | None
    access_client_id: SecretStr | None
    access_client_secret: SecretStr | None
    api_key: SecretStr | None = None

    def credentials(self) -> RelayCredentials:
        """The plain values the relay transport sends (no token: empty, which the relay endpoint refuses)."""

        def plain(value: SecretStr | None) -> str | None:
            return value.get_secret_value() if value else None

        return RelayCredentials(
            plain(self.token) or "",
            plain(self.access_client_id),
            plain(self.access_client_secret),
            plain(self.api_key),
        )


class Secrets(BaseModel):
    """All secret values, by their JSON keys (and environment variable names) as docs/configuration.md lists them."""

    model_config = ConfigDict(frozen=True, extra="ignore", hide_input_in_errors=True)

    health_check_secret: SecretStr | None = Field(default=None, alias="HEALTH_CHECK_SECRET")
    oy_relay_token: SecretStr | None = Field(default=None, alias="OY_RELAY_TOKEN")
    oy_access_client_id: SecretStr | None = Field(default=None, alias="OY_ACCESS_CLIENT_ID")
    oy_access_client_secret: SecretStr | None = Field(default=None, alias="OY_ACCESS_CLIENT_SECRET")
    convenience_relay_token: SecretStr | None = Field(default=None, alias="CONVENIENCE_RELAY_TOKEN")
    convenience_access_client_id: SecretStr | None = Field(default=None, alias="CONVENIENCE_ACCESS_CLIENT_ID")
    convenience_access_client_secret: SecretStr | None = Field(
        default=None, alias="CONVENIENCE_ACCESS_CLIENT_SECRET"
    )
    dtryx_relay_token: SecretStr | None = Field(default=None, alias="DTRYX_RELAY_TOKEN")
    dtryx_access_client_id: SecretStr | None = Field(default=None, alias="DTRYX_ACCESS_CLIENT_ID")
    dtryx_access_client_secret: SecretStr | None = Field(default=None, alias="DTRYX_ACCESS_CLIENT_SECRET")
    gs25_api_key: SecretStr | None = Field(default=None, alias="GS25_API_KEY")
    """Sent only to the convenience relay, as `apiKey` in the gs25-stock body."""
    cgv_relay_token: SecretStr | None = Field(default=None, alias="CGV_RELAY_TOKEN")
    cgv_access_client_id: SecretStr | None = Field(default=None, alias="CGV_ACCESS_CLIENT_ID")
    cgv_access_client_secret: SecretStr | None = Field(default=None, alias="CGV_ACCESS_CLIENT_SECRET")
    """The CGV relay's own credentials: all unset, the CGV routes use the Dtryx relay's (`relay_config.relay_settings_of`)."""
    cgv_signing_key: SecretStr | None = Field(default=None, alias="CGV_SIGNING_KEY")
    """The HMAC key of CGV's signed requests (direct only; never sent, only its signatures are)."""
    edge_origin_secret: SecretStr | None = Field(default=None, alias=EDGE_ORIGIN_SECRET_KEY)
    """What the stack's CloudFront distribution sends in `x-origin-verify`: with it, a request's
    `CloudFront-Viewer-Address` is trusted as the client's (functions/handlers/viewer.py)."""

    @field_validator("*", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        # An empty or whitespace-only value is "not configured", never a usable secret.
        if isinstance(value, str) and not value.strip():
            return None
        return value

    def relay(self, group: RelayGroup) -> RelaySecrets:
        prefix = _GROUP_PREFIX[group]
        return RelaySecrets(
            token=getattr(self, f"{prefix}_relay_token"),
            access_client_id=getattr(self, f"{prefix}_access_client_id"),
            access_client_secret=getattr(self, f"{prefix}_access_client_secret"),
            api_key=self.gs25_api_key if group is RelayGroup.CONVENIENCE else None,
        )

    def has_own_relay(self, group: RelayGroup) -> bool:
        """Whether any of the group's own relay credentials is set."""
        own = self.relay(group)
        return any(value is not None for value in (own.token, own.access_client_id, own.access_client_secret))

    def value(self, name: str) -> str | None:
        """A secret value by its name (`CGV_SIGNING_KEY`), None when unset: how a signing key is read."""
        field = _BY_ALIAS.get(name)
        secret: SecretStr | None = None if field is None else getattr(self, field)
        return None if secret is None else secret.get_secret_value()

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any], *, source: str) -> Secrets:
        try:
            return cls.model_validate(dict(values))
        except ValidationError as error:
            # Only the field names and error kinds: pydantic's text could carry the value.
            problems = ", ".join(
                f"{'.'.join(str(part) for part in item['loc'])}: {item['type']}" for item in error.errors()
            )
            raise SecretsError(f"{source} has invalid values ({problems})") from None

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Secrets:
        environ = os.environ if environ is None else environ
        names = {field.alias for field in cls.model_fields.values() if field.alias}
        return cls.from_mapping(
            {name: environ[name] for name in names if name in environ}, source="environment"
        )


_GROUP_PREFIX: Mapping[RelayGroup, str] = {
    RelayGroup.OLIVEYOUNG: "oy",
    RelayGroup.CONVENIENCE: "convenience",
    RelayGroup.DTRYX: "dtryx",
    RelayGroup.CGV: "cgv",
}
_BY_ALIAS: Mapping[str, str] = {
    field.alias: name for name, field in Secrets.model_fields.items() if field.alias
}


class SecretSource(Protocol):
    """Where the current secrets come from; `get` is cheap after the first call (cached)."""

    def get(self) -> Secrets: ...

    def expire(self) -> None:
        """The cached values count as expired: the next `get` re-reads them (in the background when it can)."""


@dataclass(frozen=True, slots=True)
class StaticSecrets:
    """Fixed secrets: read from the environment once, or injected by the sandbox and tests."""

    secrets: Secrets

    def get(self) -> Secrets:
        return self.secrets

    def expire(self) -> None:
        """Nothing to re-read: fixed values never change."""


class SecretsManagerSource:
    """One JSON secret from Secrets Manager via Powertools Parameters, cached for `max_age_s`.

    With an `executor`, only the first read waits (at INIT); after that an expired value is served at once
    while one background read fetches the new one, so a lookup never waits on Secrets Manager. A failed
    refresh keeps the last good value (raising only when there is none), so a Secrets Manager hiccup does
    not take the operator API or the relays down.
    """

    def __init__(
        self,
        secret_id: str,
        *,
        max_age_s: int,
        client: SecretsManagerClient | None = None,
        executor: Executor | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._secret_id = secret_id
        self._max_age_s = max_age_s
        self._provider = SecretsProvider(
            boto3_client=client or boto3.client("secretsmanager", config=SECRETS_CLIENT_CONFIG)
        )
        self._executor = executor
        self._monotonic = monotonic
        self._lock = threading.Lock()
        self._last: tuple[dict[str, Any], Secrets] | None = None
        self._fresh_until = 0.0
        self._refreshing = False

    def get(self) -> Secrets:
        with self._lock:
            last, expired = self._last, self._monotonic() >= self._fresh_until
            refresh_in_background = (
                last is not None and expired and self._executor is not None and not self._refreshing
            )
            if refresh_in_background:
                self._refreshing = True
        if last is None or (expired and self._executor is None):
            return self._read(force=expired)
        if refresh_in_background:
            assert self._executor is not None
            self._executor.submit(self._refresh)
        return last[1]

    def expire(self) -> None:
        # After a SnapStart restore the monotonic clock need not have counted the time the snapshot was kept.
        with self._lock:
            self._fresh_until = 0.0

    def _refresh(self) -> None:
        try:
            self._read(force=True)
        except SecretsError:
            pass  # the last good value stays
        finally:
            with self._lock:
                self._refreshing = False
                if self._monotonic() >= self._fresh_until:  # the read failed: wait before the next one
                    self._fresh_until = self._monotonic() + min(self._max_age_s, RETRY_AFTER_FAILURE_S)

    def _read(self, *, force: bool) -> Secrets:
        source = f"secret {self._secret_id!r}"
        try:
            raw = self._provider.get(
                self._secret_id, max_age=self._max_age_s, transform="json", force_fetch=force
            )
        except TransformParameterError:
            raise SecretsError(f"{source} is not valid JSON") from None
        except GetParameterError as error:
            with self._lock:
                if self._last is not None:
                    return self._last[1]
            # Powertools' message is the AWS error text (code and operation), never the secret's value.
            raise SecretsError(f"{source} could not be read: {error}") from None
        if not isinstance(raw, dict):
            raise SecretsError(f"{source} must be a JSON object")
        with self._lock:
            # Powertools returns the same cached dict until it expires: parse once per fetch.
            if self._last is None or self._last[0] is not raw:
                self._last = (raw, Secrets.from_mapping(raw, source=source))
                self._fresh_until = self._monotonic() + self._max_age_s
            return self._last[1]


def secret_source(
    secret_id: str | None,
    *,
    max_age_s: int,
    client: SecretsManagerClient | None = None,
    executor: Executor | None = None,
) -> SecretSource:
    """The secret source for these settings: Secrets Manager when a secret is named, else the environment."""
    if secret_id is None:
        return StaticSecrets(Secrets.from_environment())
    return SecretsManagerSource(secret_id, max_age_s=max_age_s, client=client, executor=executor)
