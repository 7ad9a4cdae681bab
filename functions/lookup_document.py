"""The lookup API's operations as the MCP endpoint and `route-health lookup` read them: every public GET
operation of the lookup function's OpenAPI document, with its parameters and its `data` schema, `$ref`s
inlined (docs/design.md, "MCP endpoint and lookup command")."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

from functions.handlers.settings import DAILY_LIMITED_PREFIXES

PUBLIC_METHOD = "get"
"""Lookups are GETs; the operator's GET is not public (it has `security`) and is left out."""


def lookup_document(limited_prefixes: tuple[str, ...] = DAILY_LIMITED_PREFIXES) -> dict[str, Any]:
    """The lookup function's OpenAPI document: what `GET /api/openapi.json` serves with these paths counting
    against the daily limit (by default, the default settings'), as a dict.

    The only place the other surfaces reach into the REST edge. Loads the document builder and the data
    models, so callers build it once (the MCP function at INIT).
    """
    from functions.handlers.api import openapi_json

    document: dict[str, Any] = json.loads(openapi_json(limited_prefixes))
    return document


class MissingArgument(ValueError):
    """A required path parameter has no value: there is no REST request to send."""

    def __init__(self, name: str) -> None:
        super().__init__(f"{name} is required")
        self.name = name


@dataclass(frozen=True)
class Parameter:
    name: str
    location: Literal["query", "path"]
    required: bool
    schema: Mapping[str, Any]
    """Its JSON Schema with every `$ref` resolved."""
    description: str


@dataclass(frozen=True)
class LookupOperation:
    """One lookup of the document."""

    name: str
    """The `operationId`: the MCP tool's and the command's name for it."""
    path: str
    """OpenAPI form: `/api/oliveyoung/products/{goodsNo}`."""
    summary: str
    description: str
    tag: str
    parameters: tuple[Parameter, ...]
    data_schema: Mapping[str, Any]
    """The JSON Schema of its 200 answer's `data`, every `$ref` resolved."""

    def input_schema(self) -> dict[str, Any]:
        """The parameters as one JSON Schema object, each with its constraints and description."""
        properties = {
            parameter.name: {
                **parameter.schema,
                **({"description": parameter.description} if parameter.description else {}),
            }
            for parameter in self.parameters
        }
        required = [parameter.name for parameter in self.parameters if parameter.required]
        return {"type": "object", "properties": properties, **({"required": required} if required else {})}

    def request(self, arguments: Mapping[str, object]) -> tuple[str, list[tuple[str, str]]]:
        """The REST request for these arguments: its path (path parameters filled in, percent-encoded) and
        its query. Values are sent as their text; null or absent ones are left out; names the operation does
        not have are ignored, as the REST API ignores them. The REST API validates everything else."""
        path = self.path
        query: list[tuple[str, str]] = []
        for parameter in self.parameters:
            value = arguments.get(parameter.name)
            if parameter.location == "path":
                if value is None:
                    raise MissingArgument(parameter.name)
                path = path.replace(f"{{{parameter.name}}}", quote(as_text(value), safe=""))
            elif value is not None:
                query.append((parameter.name, as_text(value)))
        return path, query


def as_text(value: object) -> str:
    """A JSON value as a query string carries it: strings as they are, `true`/`false`, numbers and anything
    else as JSON (which the REST API's validation then judges)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def lookup_operations(document: Mapping[str, Any]) -> tuple[LookupOperation, ...]:
    """Every public GET operation of the document, in the document's order."""
    resolve = _Resolver(document)
    return tuple(
        _operation(path, operation, resolve)
        for path, item in document.get("paths", {}).items()
        for method, operation in item.items()
        if method == PUBLIC_METHOD and not operation.get("security")
    )


def _operation(path: str, operation: Mapping[str, Any], resolve: _Resolver) -> LookupOperation:
    parameters = tuple(
        Parameter(
            name=parameter["name"],
            location="path" if parameter["in"] == "path" else "query",
            required=bool(parameter.get("required")) or parameter["in"] == "path",
            schema=resolve(parameter.get("schema", {})),
            description=parameter.get("description", ""),
        )
        for parameter in map(resolve, operation.get("parameters", ()))
        if parameter["in"] in ("query", "path")
    )
    answer = resolve(operation["responses"]["200"])["content"]["application/json"]["schema"]
    return LookupOperation(
        name=operation["operationId"],
        path=path,
        summary=operation.get("summary", ""),
        description=operation.get("description", ""),
        tag=next(iter(operation.get("tags", ())), ""),
        parameters=parameters,
        data_schema=_data_schema(answer, operation["operationId"]),
    )


def _data_schema(answer: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """`data` of the success envelope `{"success": true, "data": ...}` (directly or in an `allOf` part)."""
    for part in [answer, *answer.get("allOf", ())]:
        data = part.get("properties", {}).get("data")
        if data is not None:
            return dict(data)
    raise ValueError(f"{name}: its 200 answer has no `data`")


class _Resolver:
    """Inlines every local `$ref` (`#/components/...`) of the document: the tools' schemas stand alone."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self._document = document

    def __call__(self, node: Any) -> Any:
        return self._resolve(node, ())

    def _resolve(self, node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [self._resolve(item, seen) for item in node]
        if not isinstance(node, Mapping):
            return node
        reference = node.get("$ref")
        if isinstance(reference, str):
            if reference in seen:
                raise ValueError(f"recursive schema {reference} cannot be inlined")
            target = self._resolve(self._target(reference), (*seen, reference))
            # Siblings of `$ref` (a description, a default) add to the target, as in OpenAPI 3.1.
            return {
                **target,
                **{key: self._resolve(value, seen) for key, value in node.items() if key != "$ref"},
            }
        return {key: self._resolve(value, seen) for key, value in node.items()}

    def _target(self, reference: str) -> Any:
        if not reference.startswith("#/"):
            raise ValueError(f"only local references are resolved, not {reference}")
        node: Any = self._document
        for part in _pointer(reference):
            node = node[part]
        return node


def _pointer(reference: str) -> Iterator[str]:
    for part in reference[2:].split("/"):
        yield part.replace("~1", "/").replace("~0", "~")
