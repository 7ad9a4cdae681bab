"""A lookup endpoint as `functions/handlers/api.py` registers it and the OpenAPI document describes it.

Apart from the OpenAPI builder (`functions/handlers/openapi.py`) and the documented data models
(`functions/handlers/lookup_data.py`): the lookup function loads those only to serve `GET /api/openapi.json`,
never during INIT.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler.openapi.params import Path, Query


@dataclass(frozen=True)
class LookupEndpoint:
    """One lookup endpoint as `api.py` registers it."""

    path: str
    """OpenAPI form: `/api/oliveyoung/products/{goodsNo}`."""
    handler: Callable[..., Any]
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

    def inputs(self) -> list[tuple[Literal["query", "path"], str, Any]]:
        """(location, name, type) of each handler argument: a query model, or one path parameter."""
        hints = typing.get_type_hints(self.handler, include_extras=True)
        found: list[tuple[Literal["query", "path"], str, Any]] = []
        for name in inspect.signature(self.handler).parameters:
            # Annotated[T, <constraints...>, Query() or Path()]: keep T with its constraints.
            base, *metadata = typing.get_args(hints[name])
            location: Literal["query", "path"] = (
                "path" if any(isinstance(m, Path) for m in metadata) else "query"
            )
            assert location == "path" or any(isinstance(m, Query) for m in metadata), name
            constraints = [m for m in metadata if not isinstance(m, Path | Query)]
            found.append((location, name, Annotated[(base, *constraints)] if constraints else base))
        return found
