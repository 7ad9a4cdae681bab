"""The relay's configuration, from the environment variables the original relays use (docs/relay.md).

| group | token | state directory | port |
|---|---|---|---|
| oliveyoung | `OY_RELAY_TOKEN` | `OY_RELAY_STATE_DIR` | `OY_RELAY_PORT` (4319) |
| dtryx | `DTRYX_RELAY_TOKEN` | `DTRYX_RELAY_STATE_DIR` | `DTRYX_RELAY_PORT` (4320) |
| convenience | `CONVENIENCE_RELAY_TOKEN` | `CONVENIENCE_RELAY_STATE_DIR` | `CONVENIENCE_RELAY_PORT` (the Dtryx port) |

plus `GS25_API_KEY` and `GS25_AUTH_SESSION_FILE` (convenience, optional), `OY_RELAY_TRANSPORT` (only
`http`) and `RELAY_HEADER_TIMEOUT_S` (at most 10). Groups on the same port share one listener. Every problem is
a `ConfigError` naming the variable. CGV has no settings of its own but `CGV_SIGNING_KEY`: the Dtryx
relay's process serves it when that key is set (`relay/cgv.py`).

Refused at start, besides malformed values: a token shorter than 32 characters, a state directory that its
group or others may write (the ledger and its lock live there), and a file-descriptor limit that leaves room
for fewer than `MIN_CONNECTIONS` connections.
"""

from __future__ import annotations

import ipaddress
import math
import resource
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from functions.core import RelayGroup

DEFAULT_PORTS: Mapping[RelayGroup, int] = {RelayGroup.OLIVEYOUNG: 4319, RelayGroup.DTRYX: 4320}
ENV_PREFIX: Mapping[RelayGroup, str] = {
    RelayGroup.OLIVEYOUNG: "OY",
    RelayGroup.CONVENIENCE: "CONVENIENCE",
    RelayGroup.DTRYX: "DTRYX",
}
DEFAULT_HOST = "127.0.0.1"
MIN_TOKEN_CHARS = 32
HEADER_TIMEOUT_S = 10.0
"""The longest a connection may go without a request in progress (new, between requests, or after an answer)
before its next request's head is complete."""
MAX_CONNECTIONS = 1024
DESCRIPTOR_RESERVE = 64
"""File descriptors kept for everything but the callers' connections: the listeners, the ledgers and their
locks, the retailer connections (at most 16 per retailer host, 9 calls at a time), stdio, the event loop."""
MIN_CONNECTIONS = 16


class ConfigError(ValueError):
    """The relay cannot start; the message names the variable and never shows a secret."""


@dataclass(frozen=True, slots=True)
class ConnectionSettings:
    """How the server treats its callers' connections (relay/connections.py)."""

    header_timeout_s: float = HEADER_TIMEOUT_S
    max_connections: int | None = None
    """Open connections at once, for the whole process; None: from the descriptor limit at start."""
    overload_log_interval_s: float = 60.0
    """At most one `connections-closed` / `connections-refused` line per interval (each)."""


@dataclass(frozen=True, slots=True)
class GroupConfig:
    group: RelayGroup
    token: str
    state_dir: Path
    port: int

    def __repr__(self) -> str:
        return f"GroupConfig({self.group}, token=***, state_dir={self.state_dir}, port={self.port})"


@dataclass(frozen=True, slots=True)
class RelayConfig:
    groups: tuple[GroupConfig, ...]
    host: str = DEFAULT_HOST
    gs25_api_key: str | None = None
    gs25_session_file: Path | None = None
    connections: ConnectionSettings = field(default_factory=ConnectionSettings)
    cgv_signing_key: str | None = None
    """CGV's request-signing key: set, the Dtryx relay's process serves CGV too."""

    def __repr__(self) -> str:
        return f"RelayConfig({self.groups!r}, host={self.host}, gs25_api_key={'***' if self.gs25_api_key else None})"

    def signing_key(self, name: str) -> str | None:
        """A signing key by its secret value's name, for the specs that sign their requests (CGV's)."""
        return self.cgv_signing_key if name == "CGV_SIGNING_KEY" else None


def visible_ascii(text: str) -> bool:
    """Only the characters `!` to `~`: what may go into an HTTP header as a token or key, as is."""
    return all("!" <= char <= "~" for char in text)


def descriptor_limit() -> int:
    """This process's (soft) limit on open file descriptors."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return MAX_CONNECTIONS + DESCRIPTOR_RESERVE if soft == resource.RLIM_INFINITY else soft


def connection_cap(descriptors: int) -> int:
    """The connections the server keeps open at once under a descriptor limit. Raises `ConfigError` when the
    limit leaves room for fewer than `MIN_CONNECTIONS`."""
    cap = min(MAX_CONNECTIONS, descriptors - DESCRIPTOR_RESERVE)
    if cap < MIN_CONNECTIONS:
        raise ConfigError(
            f"the open-file limit ({descriptors}) leaves room for fewer than {MIN_CONNECTIONS} connections: "
            f"raise it to at least {MIN_CONNECTIONS + DESCRIPTOR_RESERVE} (ulimit -n; launchd NumberOfFiles; "
            "systemd LimitNOFILE)"
        )
    return cap


def host_warning(host: str) -> str | None:
    """What to tell the operator about listening on `host`: None for a loopback address."""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if loopback:
        return None
    return (
        f"--host {host} is not a loopback address: anyone who can reach it can try tokens, without Cloudflare "
        "Access in front. Keep 127.0.0.1 and publish the relay through Cloudflare Tunnel with an Access "
        "application and a service token (docs/running-a-relay.md)."
    )


def configured_groups(env: Mapping[str, str]) -> list[RelayGroup]:
    """The groups whose token is set."""
    return [group for group, prefix in ENV_PREFIX.items() if env.get(f"{prefix}_RELAY_TOKEN", "").strip()]


def load_config(
    env: Mapping[str, str], groups: Sequence[RelayGroup] = (), *, host: str = DEFAULT_HOST
) -> RelayConfig:
    """The configuration of `groups` (default: every group with a token). Creates the state directories
    (mode 0700). Raises `ConfigError`."""
    _check_pairs(env)
    transport = env.get("OY_RELAY_TRANSPORT", "").strip()
    if transport not in ("", "http"):
        raise ConfigError(
            "OY_RELAY_TRANSPORT: this relay calls Olive Young over plain HTTP only (`http`); "
            "it has no browser transport"
        )
    cgv_signing_key = _cgv_signing_key(env, groups)
    # CGV is served by the Dtryx relay's process: asking for it is asking for that process.
    asked: list[RelayGroup] = [RelayGroup.DTRYX if g is RelayGroup.CGV else g for g in groups]
    chosen = list(dict.fromkeys(asked)) or configured_groups(env)
    if not chosen:
        raise ConfigError(
            "no relay group configured: set OY_RELAY_TOKEN, CONVENIENCE_RELAY_TOKEN or DTRYX_RELAY_TOKEN "
            "(with its _STATE_DIR); see `route-health relay --help`"
        )
    configs = tuple(_group_config(env, group) for group in chosen)
    directories = [config.state_dir.resolve() for config in configs]
    if len(set(directories)) != len(directories):
        raise ConfigError("each relay group needs its own state directory (its quota ledger lives there)")
    session = env.get("GS25_AUTH_SESSION_FILE", "").strip()
    api_key = env.get("GS25_API_KEY", "").strip()
    if not visible_ascii(api_key):  # it goes into a header as is: anything else fails every stock call
        raise ConfigError("GS25_API_KEY must be visible ASCII (no spaces, control or non-ASCII characters)")
    connections = ConnectionSettings(
        header_timeout_s=_header_timeout(env), max_connections=connection_cap(descriptor_limit())
    )
    return RelayConfig(
        configs,
        host=host,
        gs25_api_key=api_key or None,
        gs25_session_file=Path(session).expanduser() if session else None,
        connections=connections,
        cgv_signing_key=cgv_signing_key,
    )


def _cgv_signing_key(env: Mapping[str, str], groups: Sequence[RelayGroup]) -> str | None:
    key = env.get("CGV_SIGNING_KEY", "").strip() or None
    if key is None and RelayGroup.CGV in groups:
        raise ConfigError("CGV_SIGNING_KEY is required to serve the cgv relay (CGV's request-signing key)")
    return key


def _header_timeout(env: Mapping[str, str]) -> float:
    text = env.get("RELAY_HEADER_TIMEOUT_S", "").strip()
    if not text:
        return HEADER_TIMEOUT_S
    try:
        seconds = float(text)
    except ValueError:
        seconds = math.nan
    if not 0 < seconds <= HEADER_TIMEOUT_S:  # also refuses nan
        raise ConfigError(
            f"RELAY_HEADER_TIMEOUT_S must be a number of seconds above 0 and at most {HEADER_TIMEOUT_S:g}"
        )
    return seconds


def _check_pairs(env: Mapping[str, str]) -> None:
    token, state = (env.get(f"CONVENIENCE_RELAY_{name}", "").strip() for name in ("TOKEN", "STATE_DIR"))
    if bool(token) != bool(state):
        raise ConfigError(
            "CONVENIENCE_RELAY_TOKEN and CONVENIENCE_RELAY_STATE_DIR go together: set both or neither"
        )


def _group_config(env: Mapping[str, str], group: RelayGroup) -> GroupConfig:
    prefix = ENV_PREFIX[group]
    token = env.get(f"{prefix}_RELAY_TOKEN", "").strip()
    if not token:
        raise ConfigError(f"{prefix}_RELAY_TOKEN is required to serve the {group} relay")
    if not visible_ascii(token):
        raise ConfigError(f"{prefix}_RELAY_TOKEN must be visible ASCII (no spaces or control characters)")
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(
            f"{prefix}_RELAY_TOKEN must be at least {MIN_TOKEN_CHARS} characters "
            "(python3 -c 'import secrets; print(secrets.token_urlsafe(32))' makes one)"
        )
    state = env.get(f"{prefix}_RELAY_STATE_DIR", "").strip()
    if not state:
        raise ConfigError(
            f"{prefix}_RELAY_STATE_DIR is required: the {group} relay keeps its quota ledger there"
        )
    state_dir = Path(state).expanduser()
    try:
        state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        mode = stat.S_IMODE(state_dir.stat().st_mode)
    except OSError as error:
        raise ConfigError(f"{prefix}_RELAY_STATE_DIR {state_dir}: {error.strerror}") from None
    if mode & 0o022:  # whoever may write there may replace the ledger or take its lock
        raise ConfigError(
            f"{prefix}_RELAY_STATE_DIR {state_dir} is writable by others (mode {mode:04o}): "
            f"run `chmod 700 {state_dir}`"
        )
    return GroupConfig(group, token, state_dir, _port(env, group))


def _port(env: Mapping[str, str], group: RelayGroup) -> int:
    name = f"{ENV_PREFIX[group]}_RELAY_PORT"
    if group is RelayGroup.CONVENIENCE and not env.get(name, "").strip():
        return _port(env, RelayGroup.DTRYX)  # the original serves convenience beside Dtryx
    text = env.get(name, "").strip()
    if not text:
        return DEFAULT_PORTS[group]
    if not (text.isascii() and text.isdigit() and 1024 <= int(text) <= 65535):
        raise ConfigError(f"{name} must be a port number from 1024 to 65535")
    return int(text)
