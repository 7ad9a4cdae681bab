"""Operation specs for transport tests: a params model and a response model, the rest as the catalog does it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel

from functions.catalog.spec import OperationSpec
from functions.core import RouteKey

P = TypeVar("P", bound=BaseModel)
B = TypeVar("B", bound=BaseModel)


def spec_of(
    key: RouteKey,
    *,
    url: str,
    params: type[P],
    probe: P,
    response: type[B],
    headers: Mapping[str, str] | None = None,
    **options: Any,
) -> OperationSpec[P, B]:
    """`key`'s spec calling `url`, probing with `probe`; the relay takes the same params, `options` the rest."""
    return OperationSpec(
        key=key,
        base_url=url,  # the whole URL: no sibling operation shares a base with it
        path="",
        headers=headers or {},
        params=params,
        probe_params=lambda _now: probe,
        response=response,
        normalizer=response.model_dump,
        relay_input=params,
        **options,
    )
