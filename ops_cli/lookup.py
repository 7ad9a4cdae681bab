"""`route-health lookup OPERATION [--param value ...]`: any lookup of the API from a terminal (docs/design.md,
"MCP endpoint and lookup command").

The operations, their options and their `--help` come from the lookup function's OpenAPI document
(`functions/lookup_document.py`), named as the MCP tools are: a new endpoint is a new operation here with no
other change. The answer's `data` prints as a table (or JSON with `--json`); an error prints as one line with
the API's code and message, and the command exits 1.
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from functions.catalog.cgv import REAL_COMPACT_DATE
from functions.core import input_rules
from functions.core.input_rules import CONTROL
from functions.lookup_document import LookupOperation, Parameter, lookup_document, lookup_operations
from ops_cli.connection import DEFAULT_STACK, CliError, stack_api_url
from ops_cli.untrusted import printable, printable_json, send

SANDBOX_URL = "http://127.0.0.1:8080"
EXIT_FAILED = 1
TIMEOUT = httpx.Timeout(10.0, read=30.0)
"""A lookup's budget is 10 s behind API Gateway's 30 s."""
ANSWER_WITHIN_S = 40.0
"""An answer still arriving after this long is not the API's (API Gateway ends every request at 30 s)."""
MAX_CELL = 40
"""Display columns a table cell may take before it is cut (`--json` shows everything)."""
HELP_WIDTH = 100
MAX_SHOWN_PATTERN = 32
"""Longer patterns (dates, free text) are shown in words: `PATTERN_HINTS`."""
PATTERN_HINTS: Mapping[str, str] = {
    input_rules.visible_text(CONTROL): "some visible text, no control characters",
    input_rules.DASHED_DATE: "YYYY-MM-DD, a real date",
    REAL_COMPACT_DATE: "YYYYMMDD, a real date",
}

DESCRIPTION = """\
Run any lookup of the Route Health API and print its answer: a table, or the API's `data` as JSON.

Where: --url (an API base URL), or --stack (a deployed CloudFormation stack's ApiUrl output, read with your
AWS credentials), else the local sandbox at http://127.0.0.1:8080 (`make run`). The operations are the
API's lookup endpoints, named as the MCP tools are; `route-health lookup OPERATION --help` shows one's
parameters."""

EPILOG = """\
examples:
  route-health lookup --list
  route-health lookup cuProducts --keyword 레쓰비 --limit 5
  route-health lookup gs25Stock --keyword 코카콜라 --lat 37.5665 --lon 126.978 --json
  route-health lookup dtryxMovies --brandCode indieart --cinemaCode 000067 --stack RouteHealth-prod

Exit status: 0 answered, 1 failed (the API's code and message, or why it could not be asked, on stderr),
2 bad usage."""


def main(argv: Sequence[str], operations: Sequence[LookupOperation] | None = None) -> int:
    """Parses and runs `route-health lookup ...` (`argv` without the `lookup`)."""
    known = tuple(operations) if operations is not None else lookup_operations(lookup_document())
    args = parser(known).parse_args(argv)
    if args.list or args.operation is None:
        print(operations_table(known))
        return 0
    operation = next(operation for operation in known if operation.name == args.operation)
    arguments = {parameter.name: getattr(args, _dest(parameter)) for parameter in operation.parameters}
    try:
        data = call(base_url(args), operation, arguments)
    except CliError as error:
        print(f"route-health lookup: {printable(str(error))}", file=sys.stderr)
        return EXIT_FAILED
    print(printable_json(data) if args.json else data_report(data))
    return 0


def parser(operations: Sequence[LookupOperation]) -> argparse.ArgumentParser:
    where = argparse.ArgumentParser(add_help=False)
    where.add_argument("--url", default=argparse.SUPPRESS, help=f"the API's base URL (default {SANDBOX_URL})")
    where.add_argument(
        "--stack", default=argparse.SUPPRESS, help=f"a deployed stack's API instead (e.g. {DEFAULT_STACK})"
    )
    where.add_argument("--region", default=argparse.SUPPRESS, help="AWS region of the stack")
    where.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print `data` as JSON")
    layout: dict[str, Any] = {"formatter_class": argparse.RawDescriptionHelpFormatter, "allow_abbrev": False}
    command = argparse.ArgumentParser(
        prog="route-health lookup", description=DESCRIPTION, epilog=EPILOG, parents=[where], **layout
    )
    command.add_argument("--list", action="store_true", help="list the operations and what each finds")
    chosen = command.add_subparsers(dest="operation", metavar="OPERATION")
    for operation in operations:
        one = chosen.add_parser(
            operation.name,
            parents=[where],
            help=operation.summary,
            description="\n\n".join(
                textwrap.fill(paragraph, HELP_WIDTH)
                for part in (operation.summary, operation.description)
                for paragraph in part.split("\n\n")
                if paragraph
            ),
            **layout,
        )
        for parameter in operation.parameters:
            one.add_argument(
                f"--{parameter.name}",
                dest=_dest(parameter),
                required=parameter.required,
                metavar=_metavar(parameter),
                help=parameter_help(parameter),
            )
    command.set_defaults(list=False, json=False)
    return command


def parameter_help(parameter: Parameter) -> str:
    """Its description and its constraints, as the document states them."""
    schema = parameter.schema
    facts = [str(schema.get("format") or schema.get("type") or "value")]
    if "minLength" in schema or "maxLength" in schema:
        facts.append(f"{schema.get('minLength', 0)}-{schema.get('maxLength', '')} characters")
    if "minimum" in schema or "maximum" in schema:
        facts.append(f"{schema.get('minimum', '')}..{schema.get('maximum', '')}")
    if "pattern" in schema:
        facts.append(pattern_hint(str(schema["pattern"])))
    if "enum" in schema:
        facts.append("one of " + ", ".join(map(str, schema["enum"])))
    if "default" in schema:
        facts.append(f"default {schema['default']}")
    description = f"{parameter.description} " if parameter.description else ""
    return f"{description}({'; '.join(facts)})".replace("%", "%%")


def pattern_hint(pattern: str) -> str:
    """What a value must look like, for a person: a short pattern as it is, a long one in words (the OpenAPI
    document keeps the pattern itself)."""
    if len(pattern) <= MAX_SHOWN_PATTERN:
        return f"matching {pattern}"
    choices = input_rules.choices_of(pattern)
    if choices is not None:
        return f"comma-separated, any of {','.join(choices)}"
    return PATTERN_HINTS.get(pattern, "matching the pattern in the API's OpenAPI document")


def _dest(parameter: Parameter) -> str:
    return f"param_{parameter.name}"


def _metavar(parameter: Parameter) -> str:
    return str(parameter.schema.get("format") or parameter.schema.get("type") or "value").upper()


def base_url(args: argparse.Namespace) -> str:
    url, stack = getattr(args, "url", None), getattr(args, "stack", None)
    if url is not None and stack is not None:
        raise CliError("--url and --stack exclude each other")
    if stack is not None:
        return stack_api_url(stack, getattr(args, "region", None))
    return (url or SANDBOX_URL).rstrip("/")


def call(
    url: str,
    operation: LookupOperation,
    arguments: Mapping[str, object],
    *,
    transport: httpx.BaseTransport | None = None,
) -> Any:
    """The lookup's `data`; its error (or why it could not be asked) as a CliError of one line, every part
    of it from the answer made `printable`."""
    path, query = operation.request(arguments)
    try:
        with httpx.Client(timeout=TIMEOUT, follow_redirects=False, transport=transport) as http:
            request = http.build_request("GET", f"{url}{path}", params=tuple(query))
            reply = send(http, request, where=url, within_s=ANSWER_WITHIN_S)
    except httpx.TimeoutException:
        raise CliError(f"no answer from {url} in time") from None
    except httpx.TransportError as failure:
        hint = " (is the sandbox running? make run)" if url == SANDBOX_URL else ""
        raise CliError(f"cannot reach {url}: {type(failure).__name__}{hint}") from None
    body, status = reply.body, reply.status_code
    if not isinstance(body, dict):
        raise CliError(f"HTTP {status} from {url} without the API's JSON answer")
    if status == 200 and body.get("success") is True:
        return body.get("data")
    error = body.get("error")
    if not isinstance(error, dict):  # API Gateway's own answer: {"message": "..."}
        raise CliError(f"HTTP {status}: {_text(body.get('message', 'no message'))}")
    listed = error.get("fields")
    fields = "; ".join(
        f"{_text(f.get('field') or 'parameters')}: {_text(f.get('message'))}"
        for f in (listed if isinstance(listed, list) else [])
        if isinstance(f, dict)
    )
    detail = f" ({fields})" if fields else ""
    retry_after = reply.headers.get("retry-after")
    retry = f"; retry in {printable(retry_after)} s" if retry_after else ""
    raise CliError(
        f"{_text(error.get('code'))}: {_text(error.get('message'))}{detail} [HTTP {status}{retry}]"
    )


def _text(value: object) -> str:
    return printable(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def operations_table(operations: Sequence[LookupOperation]) -> str:
    rows = [{"operation": op.name, "what it finds": op.summary, "tag": op.tag} for op in operations]
    return table(rows, max_cell=None)


def data_report(data: Any) -> str:
    """`data` for a person: its single values as `name: value`, each list of records as a table."""
    if not isinstance(data, Mapping):
        return _cell(data)
    lines = [f"{printable(name)}: {_cell(value)}" for name, value in _flat(data).items()]
    for name, value in data.items():
        if isinstance(value, list):
            lines += ["", f"{printable(name)} ({len(value)})"]
            if value:
                lines.append(
                    table([_flat(row) if isinstance(row, Mapping) else {name: row} for row in value])
                )
    return "\n".join(lines)


def _flat(record: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested records as dotted names (`stock.quantity`); lists are left out (shown as tables)."""
    flat: dict[str, Any] = {}
    for name, value in record.items():
        if isinstance(value, Mapping):
            flat.update(_flat(value, f"{prefix}{name}."))
        elif not isinstance(value, list):
            flat[f"{prefix}{name}"] = value
    return flat


def table(rows: Sequence[Mapping[str, Any]], *, max_cell: int | None = MAX_CELL) -> str:
    columns = list(dict.fromkeys(name for row in rows for name in row))
    cells = [[_cut(_cell(row.get(name)), max_cell) for name in columns] for row in rows]
    header = [printable(name) for name in columns]
    widths = [
        max(_width(text) for text in [name, *(line[i] for line in cells)]) for i, name in enumerate(header)
    ]
    return "\n".join(
        "  ".join(_pad(text, width) for text, width in zip(line, widths, strict=True)).rstrip()
        for line in [header, *cells]
    )


def _cell(value: Any) -> str:
    """A value as one line of text: a control character the answer holds shows as an escape (`\\x1b`), cut
    like any other text, never acting on the terminal or breaking the table's lines."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return printable(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def _width(text: str) -> int:
    """Terminal columns: Korean (wide) characters take two."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def _cut(text: str, limit: int | None) -> str:
    if limit is None or _width(text) <= limit:
        return text
    kept = ""
    for char in text:
        if _width(kept + char) > limit - 1:
            break
        kept += char
    return kept + "…"


def _pad(text: str, width: int) -> str:
    return text + " " * (width - _width(text))
