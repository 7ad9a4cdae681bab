"""An API's answer is untrusted input: `--url` may name any server, and lookups carry retailers' text.

Both commands read answers through `send`, which keeps at most `MAX_ANSWER_BYTES` of one, gives up on one
still arriving after its time, and decodes JSON as the Lambda decodes a retailer's (nesting bounded, lone
surrogates as U+FFFD; functions/adapters/http.py). Whatever came from an answer is printed only through
`printable` or `printable_json`: no control character it holds reaches the terminal, so an answer can never
move the cursor, clear the screen, set the window title, write the clipboard or fake a line of output.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass

import httpx

from functions.adapters.http import decode_json
from functions.core import RouteFailure
from ops_cli.connection import CliError

MAX_ANSWER_BYTES = 10 * 1024 * 1024
"""API Gateway's own limit on a response payload: no answer of the API is larger."""

_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
"""Control characters (C0, DEL and C1: Unicode's Cc) and lone surrogates (which no terminal can be sent)."""
_UNPRINTABLE_IN_JSON = re.compile("[\x7f-\x9f\ud800-\udfff]")
"""What `json.dumps(..., ensure_ascii=False)` leaves as it is; it escapes C0 itself."""


@dataclass(frozen=True)
class Reply:
    status_code: int
    headers: httpx.Headers
    body: object
    """The decoded JSON; None when the answer is not JSON (or is nested too deep to be the API's)."""


def send(client: httpx.Client, request: httpx.Request, *, where: str, within_s: float) -> Reply:
    """Sends `request` and reads its answer: at most `MAX_ANSWER_BYTES` of it, all within `within_s` (each read
    also has the client's timeout). The answer is asked for uncompressed, so what is read is what is kept: a
    compressed one (a bomb expands a thousandfold) is refused. httpx's errors pass through; any other failure
    is a CliError naming `where`."""
    deadline = time.monotonic() + within_s
    request.headers["Accept-Encoding"] = "identity"
    response = client.send(request, stream=True)
    try:
        coding = response.headers.get("content-encoding", "identity").strip().lower()
        if coding not in ("", "identity"):
            raise CliError(
                f"the answer from {where} is compressed ({printable(coding)}), which was not asked for"
            )
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_ANSWER_BYTES:
            raise _too_large(where)
        body = bytearray()
        for chunk in response.iter_bytes():  # no coding to undo: refused above
            body += chunk
            if len(body) > MAX_ANSWER_BYTES:
                raise _too_large(where)
            if time.monotonic() > deadline:
                raise CliError(f"no complete answer from {where} in {within_s:g} s")
    finally:
        response.close()
    return Reply(response.status_code, response.headers, _json_or_none(bytes(body)))


def _too_large(where: str) -> CliError:
    return CliError(f"the answer from {where} is larger than {MAX_ANSWER_BYTES // (1024 * 1024)} MiB")


def _json_or_none(body: bytes) -> object:
    try:
        return decode_json(body)
    except RouteFailure:
        return None


def printable(text: str) -> str:
    """`text` with each control character and lone surrogate shown as an escape (`\\x1b`, `\\x9b`,
    `\\ud800`): one line, whatever it held."""
    return _UNPRINTABLE.sub(_escaped, text)


def printable_lines(text: str) -> str:
    """`printable` for a message whose line breaks are this program's own (each part from an answer was made
    `printable` before it was put in)."""
    return "\n".join(printable(line) for line in text.split("\n"))


def printable_json(data: object, *, sort_keys: bool = False) -> str:
    """`data` as indented JSON, non-ASCII text as itself; every control character and lone surrogate as a
    `\\u` escape, so any JSON reader still reads the same value."""
    text = json.dumps(data, ensure_ascii=False, indent=2, sort_keys=sort_keys)
    return _UNPRINTABLE_IN_JSON.sub(lambda match: f"\\u{ord(match[0]):04x}", text)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"
