"""The API's query models: one per lookup endpoint, with the exact parameter names of DESIGN §6.

These describe what a caller may send (validated, documented in OpenAPI). Mapping them onto the upstream
parameter names happens in `functions.lookups.operations`.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints, model_validator

SEOUL_CITY_HALL_LAT = 37.5665
SEOUL_CITY_HALL_LON = 126.9780
"""Where a store search looks when the caller gives no coordinates."""

# Free text: trimmed, 1..200 characters, no control characters (the upstream engines reject them).
SearchText = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$"),
]
# Retailer codes (goods numbers, item codes, store codes): short and plain, so they are safe in any URL.
Code = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^[A-Za-z0-9_-]{1,40}$")]
GoodsNumber = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^[A-Za-z0-9]{1,32}$")]
"""Olive Young goods numbers and master goods numbers (letters and digits only)."""
Latitude = Annotated[float, Field(ge=-90, le=90, description="WGS84 latitude")]
Longitude = Annotated[float, Field(ge=-180, le=180, description="WGS84 longitude")]
Page = Annotated[int, Field(ge=1, le=1000, description="1-based page number")]
PageSize = Annotated[int, Field(ge=1, le=100, description="Rows per page")]

_DASHED_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _dashed_date_only(value: object) -> object:
    # pydantic's lax `date` also takes "20240131" or epoch numbers; the API promises YYYY-MM-DD only.
    if isinstance(value, str) and not _DASHED_DATE.fullmatch(value.strip()):
        raise ValueError("must be a date in YYYY-MM-DD form")
    return value.strip() if isinstance(value, str) else value


DashedDate = Annotated[date, BeforeValidator(_dashed_date_only), Field(description="YYYY-MM-DD")]


class QueryModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", allow_inf_nan=False)


class OliveyoungStoresQuery(QueryModel):
    keyword: SearchText | None = Field(default=None, description="Store name, area or store code")
    lat: Latitude = SEOUL_CITY_HALL_LAT
    lon: Longitude = SEOUL_CITY_HALL_LON
    page: Page = 1


class OliveyoungProductsQuery(QueryModel):
    keyword: SearchText
    page: Page = 1
    size: PageSize = 20


class OliveyoungStockQuery(QueryModel):
    productId: GoodsNumber = Field(description="Master goods number (see /api/oliveyoung/products/{goodsNo})")
    keyword: SearchText | None = Field(default=None, description="Store name, area or store code")
    lat: Latitude = SEOUL_CITY_HALL_LAT
    lon: Longitude = SEOUL_CITY_HALL_LON
    page: Page = 1


class CuProductsQuery(QueryModel):
    keyword: SearchText
    offset: Annotated[int, Field(ge=0, le=9999)] = 0
    limit: PageSize = 20


class CuStoresQuery(QueryModel):
    lat: Latitude
    lon: Longitude
    keyword: SearchText | None = None
    itemCd: Code | None = Field(default=None, description="Also report this item's stock per store")


class Gs25ProductsQuery(QueryModel):
    keyword: SearchText


class Gs25StockQuery(QueryModel):
    itemCode: Code | None = Field(default=None, description="GS25 item code; or give `keyword`")
    keyword: SearchText | None = Field(default=None, description="Product keyword; or give `itemCode`")
    lat: Latitude
    lon: Longitude

    @model_validator(mode="after")
    def _item_code_or_keyword(self) -> Self:
        if self.itemCode is None and self.keyword is None:
            raise ValueError("give itemCode or keyword")
        return self


class SevenElevenProductsQuery(QueryModel):
    keyword: SearchText
    page: Page = 1
    size: PageSize = 20


class SevenElevenStoresQuery(QueryModel):
    keyword: SearchText
    limit: PageSize = 20


class SevenElevenPopwordsQuery(QueryModel):
    label: Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^[A-Za-z0-9_-]{1,32}$")] = "home"


class SevenElevenStockQuery(QueryModel):
    itemCd: Code
    storeCd: Code


BrandCode = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^[a-z][a-z0-9_-]{0,31}$")]
CinemaCode = Annotated[str, StringConstraints(strip_whitespace=True, pattern=r"^\d{6}$")]


class DtryxCinemaQuery(QueryModel):
    brandCode: BrandCode = Field(description="Cinema brand, e.g. indieart")
    cinemaCode: CinemaCode = Field(description="Six-digit cinema code, e.g. 000067")


class DtryxTimetableQuery(DtryxCinemaQuery):
    playDate: DashedDate
