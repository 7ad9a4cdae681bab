"""Validated upstream bodies -> the API's `data` (DESIGN §6): clear names, numbers as numbers, stock as
`{"quantity": int | None, "status": in_stock | out_of_stock | not_sold | unknown}`.

Only bodies that passed `spec.validate` get here, so a failed or malformed answer can never turn into an
empty list or "stock 0"."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel

from functions.catalog import cu, dtryx, gs25, oliveyoung, seveneleven
from functions.catalog.common import NormalizerEntry
from functions.core import RouteKey

_NORMALIZERS: Mapping[RouteKey, NormalizerEntry] = MappingProxyType(
    {
        **oliveyoung.NORMALIZERS,
        **cu.NORMALIZERS,
        **gs25.NORMALIZERS,
        **seveneleven.NORMALIZERS,
        **dtryx.NORMALIZERS,
    }
)


def normalize(key: RouteKey, body: BaseModel) -> dict[str, Any]:
    """`body` must be what `spec_for(key).validate` returned."""
    model, normalizer = _NORMALIZERS[key]
    if not isinstance(body, model):
        raise TypeError(f"{key} expects a validated {model.__name__}, got {type(body).__name__}")
    return normalizer(body)
