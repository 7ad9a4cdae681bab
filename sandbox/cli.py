"""`route-health sandbox [--port 8080] [--upstream sim|real] [--no-edge-cache]`: the whole system on 127.0.0.1
(docs/design.md#sandbox).

The same console script carries `route-health ops` (ops_cli/cli.py), the operator's command line, and
`route-health lookup` (ops_cli/lookup.py), any lookup from a terminal.
"""

from __future__ import annotations

import argparse
import errno
import logging
import os
import secrets
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from ops_cli import cli as ops_cli
from relay.cli import add_relay_command, run_relay

SECRET_FILE = Path(".sandbox") / "health-check-secret"
EXIT_PORT_TAKEN = 2


def main(argv: Sequence[str] | None = None) -> int:
    try:
        status = _run(argv)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # The reader went away (`| head`): end quietly, as a failure, with no traceback. Python's own recipe:
        # stdout now goes nowhere, so the interpreter's last flush cannot fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _run(argv: Sequence[str] | None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["lookup"]:
        # Its parser is built from the lookup API's document, which only this command needs to load.
        from ops_cli import lookup

        return lookup.main(given[1:])
    parser = argparse.ArgumentParser(prog="route-health", description="Route Health tools.")
    commands = parser.add_subparsers(dest="command", required=True)
    sandbox = commands.add_parser("sandbox", help="run the whole stack locally on 127.0.0.1")
    sandbox.add_argument("--port", type=_port, default=8080, help="gateway port on 127.0.0.1 (default 8080)")
    sandbox.add_argument(
        "--upstream",
        choices=["sim", "real"],
        default="sim",
        help="sim: simulated retailers behind the reference relays (default); real: real retailers, relays "
        "from the environment",
    )
    sandbox.add_argument(
        "--no-edge-cache",
        action="store_true",
        help="the gateway does not play the edge cache: every lookup reaches the lookup function, and no "
        "answer carries X-Cache (RESPONSE_CACHE=off in the environment turns the functions' caches off)",
    )
    ops_cli.add_parser(commands)
    commands.add_parser(
        "lookup", help="run any lookup of the API and print its answer (route-health lookup --help)"
    )
    add_relay_command(commands)
    args = parser.parse_args(given)
    if args.command == "ops":
        return ops_cli.run(args)
    if args.command == "relay":
        return run_relay(args)
    return run_sandbox(port=args.port, upstream=args.upstream, edge_cache=not args.no_edge_cache)


def _port(value: str) -> int:
    port = int(value)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError("a port is 0-65535")
    return port


def operator_secret() -> tuple[str, str]:
    """The operator secret and where it came from: HEALTH_CHECK_SECRET, or a file (created mode 600)."""
    from_env = os.environ.get("HEALTH_CHECK_SECRET", "").strip()
    if from_env:
        return from_env, "$HEALTH_CHECK_SECRET"
    if SECRET_FILE.is_file() and SECRET_FILE.read_text().strip():
        SECRET_FILE.chmod(0o600)
        return SECRET_FILE.read_text().strip(), f"$(cat {SECRET_FILE})"
    SECRET_FILE.parent.mkdir(mode=0o700, exist_ok=True)
    value = secrets.token_urlsafe(32)
    descriptor = os.open(SECRET_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        file.write(value + "\n")
    SECRET_FILE.chmod(0o600)
    return value, f"$(cat {SECRET_FILE})"


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def run_sandbox(*, port: int, upstream: str, edge_cache: bool = True) -> int:
    logging.basicConfig(level=logging.WARNING, format="sandbox: %(levelname)s %(message)s")
    signal.signal(signal.SIGTERM, _raise_interrupt)
    secret, secret_shell = operator_secret()

    from sandbox.stack import SandboxStack, Upstream

    try:
        stack = SandboxStack(
            port=port, upstream=Upstream(upstream), health_check_secret=secret, edge_cache=edge_cache
        )
    except OSError as error:
        if error.errno == errno.EADDRINUSE:
            print(
                f"route-health sandbox: port {port} on 127.0.0.1 is already in use; pick another with --port",
                file=sys.stderr,
            )
            return EXIT_PORT_TAKEN
        raise
    try:
        stack.start()
        print(f"ready: {stack.url}", flush=True)
        command = runnable(sys.argv[0], Path.cwd())
        print(banner(stack.url, upstream=upstream, secret_shell=secret_shell, command=command), flush=True)
        threading.Event().wait()  # until Ctrl-C / SIGTERM
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stack.stop()
    print("sandbox stopped", flush=True)
    return 0


def runnable(script: str, cwd: Path) -> str:
    """How a new shell in `cwd` runs this command: `.venv/bin/route-health` from a checkout (as the README
    writes it), the absolute path elsewhere, or the bare name when started some other way (`python -m`)."""
    path = Path(script)
    if path.name != "route-health":
        return "route-health"
    absolute = path.absolute()
    return str(absolute.relative_to(cwd)) if absolute.is_relative_to(cwd) else str(absolute)


def banner(url: str, *, upstream: str, secret_shell: str, command: str = "route-health") -> str:
    where = (
        "simulated retailers behind the reference relays"
        if upstream == "sim"
        else "REAL retailer APIs and the relays named in the environment"
    )
    from_environment = secret_shell.startswith("$HEALTH")
    secret_note = "from HEALTH_CHECK_SECRET" if from_environment else f"stored in {SECRET_FILE} (mode 600)"
    operator_view = (
        f'curl -s -H "x-health-check-key: {secret_shell}" {url}/api/health/routes'
        if from_environment
        else f"{command} ops routes --url {url} --secret-file {SECRET_FILE}"
    )
    return "\n".join(
        [
            f"Route Health sandbox: {where}; embedded DynamoDB and Secrets Manager; probe every 5 minutes.",
            f"Operator secret {secret_note}.",
            "Try:",
            f"  curl -s '{url}/api/cu/products?keyword=cola'",
            f"  {command} lookup cuProducts --keyword cola --url {url}",
            f"  {operator_view}",
            f'  curl -s -X POST {url}/_sandbox/faults -d \'{{"target": "direct:cu-prime", "fault": "http-403"}}\'',
            f"  curl -s {url}/_sandbox/calls",
            f"  curl -s -X POST {url}/_sandbox/clock -d '{{\"advanceMs\": 300000}}'",
            f"  curl -s -X DELETE {url}/_sandbox/faults",
            f"MCP endpoint for AI assistants: {url}/mcp (docs/mcp-and-cli.md, 'Use it from an AI assistant').",
            "Ctrl-C stops the sandbox.",
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
