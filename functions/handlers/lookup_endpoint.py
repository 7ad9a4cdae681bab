"""A lookup endpoint as `functions/handlers/api.py` registers it and the OpenAPI document describes it.

Apart from the OpenAPI builder (`functions/handlers/openapi.py`) and the documented data models
(`functions/handlers/lookup_data.py`): the lookup function loads those only to serve `GET /api/openapi.json`,
never during INIT.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

if TYPE_CHECKING:
    from functions.services.queries import LookupQuery

_PATH_PARAMETER = re.compile(r"{(\w+)}")


def path_parameters(path: str) -> list[str]:
    """The path's parameters, in order: `["goodsNo"]` for `/api/oliveyoung/products/{goodsNo}`."""
    return _PATH_PARAMETER.findall(path)


@dataclass(frozen=True)
class LookupEndpoint:
    """One lookup endpoint as `api.py` registers it."""

    path: str
    """OpenAPI form: `/api/oliveyoung/products/{goodsNo}`."""
    handler: Callable[..., Any]
    query: type[LookupQuery]
    """The query model the handler validates the caller's parameters with (and its rules across
    parameters)."""
    summary: str
    tag: str
    data: str
    """The name of its 200 `data` model in `functions/handlers/lookup_data.py`, which only the OpenAPI document
    loads."""

    @property
    def operation_id(self) -> str:
        """The handler's name in camelCase: stable as long as the handler keeps its name."""
        first, *rest = self.handler.__name__.split("_")
        return first + "".join(part.title() for part in rest)

    def arguments(self) -> dict[str, Any]:
        """The handler's arguments as a Powertools route declares them: the query model from the query string;
        or, on a path with parameters, each one typed as the query model types it; or, for a query without
        fields, nothing.

        Made on demand, for the OpenAPI document and the tests, not at INIT: the handler validates the query
        model itself, and Powertools' parameter classes load its OpenAPI models (about a fifth of
        `import boto3`, bench/profile_notes.md)."""
        from aws_lambda_powertools.event_handler.openapi.params import Path, Query

        if self.query.model_fields and not path_parameters(self.path):
            return {"query": Annotated[self.query, Query()]}
        types = typing.get_type_hints(self.query, include_extras=True)
        return {name: Annotated[types[name], Path()] for name in path_parameters(self.path)}

    def inputs(self) -> list[tuple[Literal["query", "path"], str, Any]]:
        """(location, name, type) of each handler argument: a query model, or one path parameter."""
        from aws_lambda_powertools.event_handler.openapi.params import Path, Query

        found: list[tuple[Literal["query", "path"], str, Any]] = []
        for name, annotated in self.arguments().items():
            # Annotated[T, <constraints...>, Query() or Path()]: keep T with its constraints.
            base, *metadata = typing.get_args(annotated)
            location: Literal["query", "path"] = (
                "path" if any(isinstance(m, Path) for m in metadata) else "query"
            )
            assert location == "path" or any(isinstance(m, Query) for m in metadata), name
            constraints = [m for m in metadata if not isinstance(m, Path | Query)]
            found.append((location, name, Annotated[(base, *constraints)] if constraints else base))
        return found
