"""Typed settings per function, read from the environment by exact variable name and validated at INIT
(docs/configuration.md, "Configuration"); a bad value fails INIT naming the variable. Secret values are not here.

Plain pydantic models: pydantic-settings would add ~40 ms of imports to every cold start (bench/profile_notes.md).
"""

from __future__ import annotations

import os
import re
from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from functions.core import RelayGroup
from functions.services.quota import FLUSH_INTERVAL_MS

Seconds = Annotated[float, Field(gt=0, le=60)]
SECRET_MAX_AGE_S = 600
"""How long a secret read is reused: rotated values apply within 10 minutes, and the probe, every 5 minutes,
reads Secrets Manager every other run (half of the idle bill's reads)."""
DAILY_LIMITED_PREFIXES = (
    "/api/oliveyoung/",
    "/api/cu/",
    "/api/gs25/",
    "/api/cgv/",
    "/api/dtryx/",
    "/api/compare/",
)
"""CGV and Dtryx both count: the Dtryx relay serves both, and a caller's lookups of either would otherwise spend
its relay budget without limit (docs/operations.md, "Daily rate limit"); a comparison is one lookup."""
LOOPBACK_HOSTS = ("localhost:*", "127.0.0.1:*", "[::1]:*")
"""The names the MCP endpoint answers to when none are configured (the sandbox): loopback, any port."""
_HOST_ENTRY = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9.-]*[a-z0-9])?)(:([0-9]{1,5}|\*))?")


class CommonSettings(BaseModel):
    """What every function reads: the verdict store, where secrets live, and the relay base URLs."""

    model_config = ConfigDict(frozen=True, extra="ignore", str_strip_whitespace=True)

    route_health_table: str | None = Field(default=None, alias="ROUTE_HEALTH_TABLE")
    """Unset: no verdict store (local/legacy install): relay first wherever a relay is configured."""
    route_health_secret_id: str | None = Field(default=None, alias="ROUTE_HEALTH_SECRET_ID")
    """Unset: secret values come from the environment."""
    secret_max_age_s: int = Field(
        default=SECRET_MAX_AGE_S, ge=0, le=3600, alias="ROUTE_HEALTH_SECRET_MAX_AGE"
    )
    # Relay URLs are validated by the relay adapter, not here: a bad one must surface as the relay's
    # `configuration` verdict, not as a function that cannot start.
    oy_relay_url: str | None = Field(default=None, alias="OY_RELAY_URL")
    convenience_relay_url: str | None = Field(default=None, alias="CONVENIENCE_RELAY_URL")
    dtryx_relay_url: str | None = Field(default=None, alias="DTRYX_RELAY_URL")
    cgv_relay_url: str | None = Field(default=None, alias="CGV_RELAY_URL")
    """Unset, with no CGV relay credentials either: CGV goes through the Dtryx relay's URL and credentials."""

    @property
    def relay_urls(self) -> dict[RelayGroup, str | None]:
        """Each relay group's base URL (functions/adapters/relay_config.py makes the endpoints)."""
        return {
            RelayGroup.OLIVEYOUNG: self.oy_relay_url,
            RelayGroup.CONVENIENCE: self.convenience_relay_url,
            RelayGroup.DTRYX: self.dtryx_relay_url,
            RelayGroup.CGV: self.cgv_relay_url,
        }

    # Read by Powertools itself (logs, metrics, traces); required here so that a function deployed without
    # them fails INIT naming the variable, instead of writing metrics nowhere.
    service_name: str = Field(alias="POWERTOOLS_SERVICE_NAME", min_length=1)
    metrics_namespace: str = Field(alias="POWERTOOLS_METRICS_NAMESPACE", min_length=1)

    @classmethod
    def from_environment(cls, **overrides: object) -> Self:
        """The settings from this process's environment; `overrides` (by variable name) win over it."""
        return cls.model_validate({**os.environ, **overrides})

    @model_validator(mode="before")
    @classmethod
    def _blank_is_unset(cls, values: object) -> object:
        # A blank variable means "use the default". Dropped before validation: a field validator could only
        # turn it into None, which a number field refuses ("input should be a valid number").
        if not isinstance(values, dict):
            return values
        return {
            name: value
            for name, value in values.items()
            if not (isinstance(value, str) and not value.strip())
        }


class ApiSettings(CommonSettings):
    """The lookup function."""

    lookup_budget_s: Seconds = Field(default=10.0, alias="LOOKUP_BUDGET_SECONDS")
    snapshot_prefetch_s: Annotated[float, Field(ge=0, le=0.3)] = Field(
        default=0.3, alias="SNAPSHOT_PREFETCH_SECONDS"
    )
    daily_rate_limit: int = Field(default=3000, ge=0, alias="DAILY_RATE_LIMIT")
    """Lookups per client per Korea day under the limited prefixes; 0 turns the limit off."""
    daily_rate_limit_prefixes: Annotated[tuple[str, ...], Field(min_length=1)] = Field(
        default=DAILY_LIMITED_PREFIXES, alias="DAILY_RATE_LIMIT_PREFIXES"
    )
    """Comma-separated path prefixes whose lookups count against the limit."""
    daily_rate_limit_flush_s: Annotated[float, Field(ge=0.05, le=5)] = Field(
        default=FLUSH_INTERVAL_MS / 1000, alias="DAILY_RATE_LIMIT_FLUSH_SECONDS"
    )
    """How often a container shares its counts at most; the overshoot past the limit grows with it."""
    response_cache: Literal["on", "off"] = Field(default="on", alias="RESPONSE_CACHE")
    """on: answers are reused from the container's memory for their max-age (docs/design.md, "Caching")."""
    response_cache_max_bytes: int = Field(default=16 * 1024 * 1024, ge=0, alias="RESPONSE_CACHE_MAX_BYTES")
    """The cache's cap on the answers' text, in bytes (the function has 512 MB)."""
    response_cache_max_entries: int = Field(default=5000, ge=1, alias="RESPONSE_CACHE_MAX_ENTRIES")

    @property
    def limited_prefixes(self) -> tuple[str, ...]:
        """The paths whose lookups count against the daily limit: none when the limit is off."""
        return self.daily_rate_limit_prefixes if self.daily_rate_limit else ()

    @field_validator("daily_rate_limit_prefixes", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @field_validator("daily_rate_limit_prefixes")
    @classmethod
    def _paths(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for prefix in value:
            if not prefix.startswith("/api/"):
                raise ValueError(f"a limited prefix is an API path starting with /api/, not {prefix!r}")
        return value


class McpSettings(ApiSettings):
    """The MCP function: the lookup function's settings (its tool calls are lookups), and the names it answers
    to."""

    mcp_allowed_hosts: Annotated[tuple[str, ...], Field(min_length=1)] = Field(
        default=LOOPBACK_HOSTS, alias="MCP_ALLOWED_HOSTS"
    )
    """Comma-separated names `POST /mcp` answers to in `Host` and `Origin` (against DNS rebinding): `name`
    exactly, `name:port`, or `name:*` for any port. The stack sets the API's own domain and its edge's."""

    @field_validator("mcp_allowed_hosts", mode="before")
    @classmethod
    def _host_list(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip().lower() for part in value.split(",") if part.strip())
        return value

    @field_validator("mcp_allowed_hosts")
    @classmethod
    def _host_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for entry in value:
            if _HOST_ENTRY.fullmatch(entry) is None:
                raise ValueError(f"{entry!r} is not a host name, name:port or name:*")
        return value


class OpsSettings(CommonSettings):
    """The operator function (GET/POST /api/health/routes)."""


class ProbeSettings(CommonSettings):
    """The scheduled probe."""
