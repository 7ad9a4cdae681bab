"""`route-health relay [GROUP ...]`: the reference relay server (docs/relay.md; README "Run a relay")."""

from __future__ import annotations

import argparse
import os

from functions.core import RelayGroup

DESCRIPTION = """\
Serve one or more relay groups (oliveyoung, convenience, dtryx, cgv) from this machine, speaking the relay
protocol the Route Health Lambda functions use. Without GROUP arguments, every group whose token is set
is served; the Dtryx relay also serves cgv when CGV_SIGNING_KEY is set. Listens on 127.0.0.1 only (put Cloudflare Tunnel + Access in front; see docs/running-a-relay.md).

environment:
  OY_RELAY_TOKEN, OY_RELAY_STATE_DIR          Olive Young relay: Bearer token (32+ characters), state
                                              directory (required)
  OY_RELAY_PORT                               its port (default 4319)
  OY_RELAY_TRANSPORT                          unset or "http" (the only transport)
  DTRYX_RELAY_TOKEN, DTRYX_RELAY_STATE_DIR    Dtryx relay (required to serve it)
  DTRYX_RELAY_PORT                            its port (default 4320)
  CONVENIENCE_RELAY_TOKEN,                    CU / GS25 / 7-Eleven relay (both or neither; the state
    CONVENIENCE_RELAY_STATE_DIR               directory must differ from the others)
  CONVENIENCE_RELAY_PORT                      its port (default: the Dtryx port, shared)
  GS25_API_KEY                                optional: GS25's key for gs25-stock (else the caller's apiKey)
  GS25_AUTH_SESSION_FILE                      optional: a Woodongs app session file (mode 0600), used
                                              instead of any key; renewed tokens are written back to it
  CGV_SIGNING_KEY                             optional: CGV's request-signing key; set, the Dtryx relay
                                              serves /v1/cgv/ too (its token; CGV's own quota ledger,
                                              cgv-quota.json, in its state directory)
  RELAY_HEADER_TIMEOUT_S                      seconds a connection may wait without a request in
                                              progress for a complete request head (default, at most 10)

Each state directory (created mode 0700; refused if others may write to it) holds quota.json, the group's
quota ledger (per UTC minute and day), kept across restarts, and relay.lock: one relay process per state
directory. Dtryx and CGV each have half of the Dtryx process's quota, in ledgers of their own. Tokens must be at least 32 characters. Open connections are capped below the open-file limit
(ulimit -n; at least 80), up to 1024. The Lambda side needs the same token in its secret and the public URL
of the tunnel as the group's relay URL (the stack parameters OyRelayUrl, ConvenienceRelayUrl, DtryxRelayUrl).
Logs: JSON lines on stderr, never tokens, keys, sessions or request contents. SIGTERM stops gracefully.
"""
EXIT_STARTUP_FAILED = 1


def add_relay_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "relay",
        help="run the reference relay server for one or more relay groups",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "groups",
        nargs="*",
        type=_group,
        metavar="GROUP",
        help="oliveyoung, convenience, dtryx or cgv (the Dtryx relay; default: every group whose token is set)",
    )
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1; anything else is reachable without Cloudflare Access)",
    )


def _group(name: str) -> RelayGroup:
    try:
        return RelayGroup(name)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{name!r} is not one of: {', '.join(RelayGroup)}") from None


def run_relay(args: argparse.Namespace) -> int:
    from relay.config import ConfigError, host_warning, load_config
    from relay.logs import RelayLog, route_process_output
    from relay.server import build_apps, serve

    log = RelayLog()
    route_process_output(log)  # from here, every line on stderr is one JSON object
    warning = host_warning(args.host)
    if warning is not None:
        log.tell("process-warning", warning, outcome="non-loopback-host")
    try:
        config = load_config(os.environ, args.groups, host=args.host)
        apps = build_apps(config, log=log)
    except ConfigError as error:
        log.tell("process-startup-failed", str(error))
        return EXIT_STARTUP_FAILED
    return serve(config, apps, log=log)
