"""What the relays accept as the body of `POST /v1/{group}/{operation}`, and how they refuse the rest
(docs/relay.md, step 6 of each group's table): 413 over 16 KiB, 400 when not JSON or against the operation's
rule (its spec's `relay_input`). The Lambda's relay bodies pass these rules (a test checks every operation),
and the sandbox's relays enforce them. As in JavaScript, a duplicated key's last value wins.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import ValidationError

from functions.catalog import spec_for
from functions.core import RelayGroup, RouteKey, group_of

MAX_RELAY_BODY_BYTES = 16_384


class RelayInputRejected(Exception):
    """The relay's refusal of a request body: `status` (400 or 413) and the JSON body it answers with."""

    def __init__(self, status: int, body: Mapping[str, str]) -> None:
        super().__init__(f"relay input rejected with {status}")
        self.status = status
        self.body = dict(body)


# --- reading a request body ------------------------------------------------------------------------

# Olive Young's relay names each refusal; the shared relay core answers one text for all of them.
_OLIVEYOUNG_ERRORS = {"too-large": "Body too large", "json": "Invalid JSON", "input": "Invalid payload"}
_CORE_ERROR = "Relay request failed"


def _refusal(group: RelayGroup, kind: Literal["too-large", "json", "input"]) -> RelayInputRejected:
    text = _OLIVEYOUNG_ERRORS[kind] if group is RelayGroup.OLIVEYOUNG else _CORE_ERROR
    return RelayInputRejected(413 if kind == "too-large" else 400, {"error": text})


def _not_json(constant: str) -> object:
    raise ValueError(f"{constant} is not JSON")


def read_relay_input(key: RouteKey, raw: bytes) -> dict[str, Any]:
    """The body exactly as received (what the relay sends on), once it passed the operation's rule.

    Raises `RelayInputRejected` with the status and body the relay answers instead.
    """
    group = group_of(key)
    if len(raw) > MAX_RELAY_BODY_BYTES:
        raise _refusal(group, "too-large")
    try:
        body = json.loads(raw.decode("utf-8"), parse_constant=_not_json)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise _refusal(group, "json") from None
    try:
        spec_for(key).relay_input.model_validate(body)
    except ValidationError:
        raise _refusal(group, "input") from None
    assert isinstance(body, dict)  # every rule is an object's
    return body
