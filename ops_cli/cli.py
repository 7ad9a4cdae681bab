"""`route-health ops routes | probe | override set | override clear`: the operator's daily work in one command."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import Any

import httpx
from pydantic import ValidationError

from functions.core.model import PINNED_TO_RELAY, SECOND_MS, OverrideMode, RelayGroup, RouteKey, group_of
from functions.core.overrides import MAX_TTL_SECONDS
from functions.handlers.wire import READ_NEWER, ActiveOverride
from ops_cli.api import Answer, ApiError, OpsApi, SlotTaken
from ops_cli.connection import DEFAULT_STACK, CliError, Connection, from_secret_file, from_stack
from ops_cli.report import duration, routes_report, when
from ops_cli.snapshot import snapshot_from_wire
from ops_cli.untrusted import printable_json, printable_lines

EXIT_FAILED = 1
EXIT_USAGE = 2

DESCRIPTION = """\
Operate Route Health: read the verdicts, run the probe, and override a route for a while.

Where: by default the CloudFormation stack RouteHealth-prod, read with your AWS credentials (its ApiUrl
output and the HEALTH_CHECK_SECRET of its SecretArn secret); or --url with --secret-file, a file holding
only the operator secret that no one but you may read (chmod 600). The secret is never an argument."""

EPILOG = """\
examples:
  route-health ops routes
  route-health ops routes --stack RouteHealth-staging --region ap-northeast-2 --json
  route-health ops probe
  route-health ops override set cu-stock force-relay --ttl 2h --reason "CU maintenance 02:00-04:00 KST"
  route-health ops override set dtryx force-direct --ttl 30m --reason "relay host moving; direct verified"
  route-health ops override clear dtryx
  route-health ops override set cgv force-relay --ttl 1h --reason "CGV blocks our region again"
  route-health ops routes --url http://127.0.0.1:8080 --secret-file .sandbox/health-check-secret

A GROUP (oliveyoung, convenience, dtryx, cgv) means each of its route keys; force-direct skips gs25-stock,
which is pinned to the relay. Exit status: 0 done, 1 failed (the reason is on stderr), 2 bad usage."""

PROBED = "Probed: every route and relay was checked just now.\n"
NOT_PROBED = "Not probed: this 5-minute slot was already probed. The verdicts as they stand:\n"
TARGET_HELP = "a route key (cu-stock) or a relay group (convenience) for each of its keys"
_TTL = re.compile(r"(?:(?P<h>\d+)h)?(?:(?P<m>\d+)m)?(?:(?P<s>\d+)s)?")


class UsageError(CliError):
    """The arguments do not make sense together (exit 2)."""


def parse_ttl(text: str) -> int:
    """`90s`, `30m`, `2h`, `1h30m` or plain seconds -> seconds, from 1 s to 24 h."""
    value = text.strip().lower()
    match = _TTL.fullmatch(value)
    if value.isdigit():
        seconds = int(value)
    elif value and match is not None:
        seconds = 3600 * int(match["h"] or 0) + 60 * int(match["m"] or 0) + int(match["s"] or 0)
    else:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration like 90s, 30m, 2h or 1h30m")
    if not 1 <= seconds <= MAX_TTL_SECONDS:
        raise argparse.ArgumentTypeError(f"{text!r}: an override lasts from 1s to 24h")
    return seconds


def parse_target(text: str) -> tuple[RouteKey, ...]:
    """A route key, or a relay group meaning each of its keys."""
    name = text.strip()
    if name in {key.value for key in RouteKey}:
        return (RouteKey(name),)
    if name in {group.value for group in RelayGroup}:
        return tuple(key for key in RouteKey if group_of(key) is RelayGroup(name))
    known = ", ".join([*(g.value for g in RelayGroup), *(k.value for k in RouteKey)])
    raise argparse.ArgumentTypeError(f"{text!r} is neither a relay group nor a route key ({known})")


def add_parser(commands: Any) -> None:
    """Registers `ops` on the `route-health` command's subparsers."""
    where = argparse.ArgumentParser(add_help=False)
    # SUPPRESS: given before or after the subcommand, a value is never reset by the other parser's default.
    where.add_argument(
        "--stack", default=argparse.SUPPRESS, help=f"CloudFormation stack (default {DEFAULT_STACK})"
    )
    where.add_argument(
        "--region", default=argparse.SUPPRESS, help="AWS region of the stack (default: your AWS config)"
    )
    where.add_argument(
        "--url", default=argparse.SUPPRESS, help="API base URL instead of a stack (needs --secret-file)"
    )
    where.add_argument(
        "--secret-file",
        type=Path,
        default=argparse.SUPPRESS,
        help="file holding the operator secret (mode 600)",
    )
    output = argparse.ArgumentParser(add_help=False)
    output.add_argument("--json", action="store_true", help="print the API's data as JSON (for scripts)")
    # No abbreviations: `--secret VALUE` must not pass for `--secret-file` (and print VALUE as a path).
    layout = {
        "formatter_class": argparse.RawDescriptionHelpFormatter,
        "epilog": EPILOG,
        "allow_abbrev": False,
    }

    ops = commands.add_parser(
        "ops",
        parents=[where],
        help="operate a deployed stack or the sandbox",
        description=DESCRIPTION,
        **layout,
    )
    actions = ops.add_subparsers(dest="ops_command", required=True, metavar="COMMAND")
    routes = actions.add_parser(
        "routes", parents=[where, output], help="verdicts, relays and overrides as a table", **layout
    )
    routes.set_defaults(action=_routes)
    probe = actions.add_parser(
        "probe",
        parents=[where, output],
        help="check every route and relay now (once per 5-minute slot)",
        **layout,
    )
    probe.set_defaults(action=_probe)

    override = actions.add_parser(
        "override", help="force a route (or a group) to the relay or direct", **layout
    )
    changes = override.add_subparsers(dest="override_command", required=True, metavar="COMMAND")
    set_ = changes.add_parser("set", parents=[where], help="set an override that expires", **layout)
    set_.add_argument("target", type=parse_target, metavar="KEY|GROUP", help=TARGET_HELP)
    set_.add_argument(
        "mode",
        choices=[mode.value for mode in OverrideMode],
        help="force-relay: never direct; force-direct: "
        "direct whatever the verdicts (a live failure still falls back to the relay)",
    )
    set_.add_argument(
        "--ttl", required=True, type=parse_ttl, help="how long it lasts: 90s, 30m, 2h, 1h30m (≤ 24h)"
    )
    set_.add_argument(
        "--reason", required=True, help="why; shown to every operator (≤ 200 characters, no secrets)"
    )
    set_.set_defaults(action=_set)
    clear = changes.add_parser(
        "clear", parents=[where], help="remove an override before it expires", **layout
    )
    clear.add_argument("target", type=parse_target, metavar="KEY|GROUP", help=TARGET_HELP)
    clear.set_defaults(action=_clear)


def run(
    args: argparse.Namespace, *, transport: httpx.BaseTransport | None = None, tz: tzinfo | None = None
) -> int:
    """Runs the parsed `ops` command; every failure ends as a message on stderr and a non-zero status."""
    action: Callable[[OpsApi, argparse.Namespace, tzinfo], int] = args.action
    try:
        with OpsApi(_connection(args), transport=transport) as api:
            return action(api, args, tz or _local_timezone())
    except UsageError as error:
        print(f"route-health ops: {printable_lines(str(error))}", file=sys.stderr)
        return EXIT_USAGE
    except CliError as error:
        print(f"route-health ops: {printable_lines(str(error))}", file=sys.stderr)
        return EXIT_FAILED


def _local_timezone() -> tzinfo:
    local = datetime.now().astimezone().tzinfo
    return local if local is not None else UTC


def _connection(args: argparse.Namespace) -> Connection:
    url, secret_file = getattr(args, "url", None), getattr(args, "secret_file", None)
    if url is None and secret_file is None:
        return from_stack(getattr(args, "stack", DEFAULT_STACK), getattr(args, "region", None))
    if url is None or secret_file is None:
        raise UsageError("--url and --secret-file go together (the secret is never taken from an argument)")
    if hasattr(args, "stack"):
        raise UsageError("--stack and --url exclude each other")
    return from_secret_file(url, secret_file)


def _routes(api: OpsApi, args: argparse.Namespace, tz: tzinfo) -> int:
    answer = api.routes()
    print(
        _json(answer.data)
        if args.json
        else routes_report(snapshot_from_wire(answer.data), now=answer.server_now, tz=tz)
    )
    return 0


def _probe(api: OpsApi, args: argparse.Namespace, tz: tzinfo) -> int:
    """A refused probe still shows the verdicts, if the API sent them: that slot's probe checked them less
    than 5 minutes ago."""
    answer = api.probe()
    taken = isinstance(answer, SlotTaken)
    if answer.data is not None:  # an older API's 429 may not carry them
        if args.json:
            print(_json(answer.data))
        else:
            print(NOT_PROBED if taken else PROBED)
            print(routes_report(snapshot_from_wire(answer.data), now=answer.server_now, tz=tz))
    if isinstance(answer, SlotTaken):
        raise CliError(f"already probed; next slot in {duration(answer.retry_after_s * SECOND_MS)}")
    return 0


def _set(api: OpsApi, args: argparse.Namespace, tz: tzinfo) -> int:
    """Each key of the target in turn; a refused key is reported and the others still go ahead."""
    refused = 0
    mode = OverrideMode(args.mode)
    for key in args.target:
        if mode is OverrideMode.FORCE_DIRECT and key in PINNED_TO_RELAY and len(args.target) > 1:
            _line(key, "skipped: pinned to the relay, never direct")
            continue
        try:
            answer = api.set_override(key.value, mode, args.reason, args.ttl)
        except ApiError as error:
            if error.status not in (400, 404):
                raise
            refused += 1
            _line(key, f"refused: {error}")
            continue
        _line(key, f"{mode.value} until {_until(answer, tz)}")
    return EXIT_FAILED if refused else 0


def _clear(api: OpsApi, args: argparse.Namespace, tz: tzinfo) -> int:
    for key in args.target:
        answer = api.clear_override(key.value)
        if answer is None:
            _line(key, "no override")
        else:
            was = _override_of(answer).mode.value
            _line(key, f"cleared (was {was} until {_until(answer, tz)})")
    return 0


def _until(answer: Answer, tz: tzinfo) -> str:
    return when(_override_of(answer).expires_at, now=answer.server_now, tz=tz)


def _override_of(answer: Answer) -> ActiveOverride:
    try:
        return ActiveOverride.model_validate(answer.data, context=READ_NEWER, by_name=False)
    except ValidationError:
        raise CliError(
            "the API answered an override this CLI cannot read (is the CLI older than the API?)"
        ) from None


def _line(key: RouteKey, text: str) -> None:
    print(f"{key.value:<18} {printable_lines(text)}")


def _json(data: object) -> str:
    return printable_json(data, sort_keys=True)
