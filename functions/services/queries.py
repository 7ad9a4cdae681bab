"""The API's query models: one per lookup endpoint, with the exact parameter names of DESIGN §6.

These describe what a caller may send (validated, documented in OpenAPI). Mapping them onto the upstream
parameter names happens in `functions.services.operations`.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from functions.catalog import common, dtryx, oliveyoung, seveneleven

SEOUL_CITY_HALL_LAT = 37.5665
SEOUL_CITY_HALL_LON = 126.9780
"""Where a store search looks when the caller gives no coordinates."""


def _trimmed(value: object) -> object:
    return value.strip() if isinstance(value, str) else value


# The catalog's own value types, trimmed first: whatever passes here also passes the operation's params, so
# a 400 always names a field the caller sent.
Trimmed = BeforeValidator(_trimmed)
SearchText = Annotated[common.SearchText, Trimmed]
"""Free text: trimmed, 1..200 characters, no control characters (the upstream engines reject them)."""
Code = Annotated[common.Code, Trimmed]
"""Retailer codes (item codes, store codes, labels): short and plain, so they are safe in any URL."""
GoodsNumber = Annotated[oliveyoung.GoodsCode, Trimmed]
"""Olive Young goods numbers and master goods numbers (letters and digits only)."""
Latitude = Annotated[common.Latitude, Field(description="WGS84 latitude")]
Longitude = Annotated[common.Longitude, Field(description="WGS84 longitude")]
Page = Annotated[int, Field(ge=1, le=1000, description="1-based page number")]
PageSize = Annotated[int, Field(ge=1, le=100, description="Rows per page")]
BrandCode = Annotated[dtryx.BrandCode, Trimmed]
CinemaCode = Annotated[dtryx.CinemaCode, Trimmed]

_DASHED_DATE = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")


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

    @model_validator(mode="after")
    def _within_the_search_window(self) -> Self:
        # The upstream search starts at row (page-1)*size and goes no deeper than MAX_START_COUNT.
        if (self.page - 1) * self.size > seveneleven.MAX_START_COUNT:
            limit = seveneleven.MAX_START_COUNT
            error = PydanticCustomError(
                "search_window", "(page - 1) * size must be at most {limit}", {"limit": limit}
            )
            raise ValidationError.from_exception_data(
                type(self).__name__,
                [
                    InitErrorDetails(type=error, loc=(name,), input=getattr(self, name))
                    for name in ("page", "size")
                ],
            )
        return self


class SevenElevenStoresQuery(QueryModel):
    keyword: SearchText
    limit: PageSize = 20


class SevenElevenPopwordsQuery(QueryModel):
    label: Code = "home"


class SevenElevenStockQuery(QueryModel):
    itemCd: Code
    storeCd: Code


class DtryxCinemaQuery(QueryModel):
    brandCode: BrandCode = Field(description="Cinema brand, e.g. indieart")
    cinemaCode: CinemaCode = Field(description="Six-digit cinema code, e.g. 000067")


class DtryxTimetableQuery(DtryxCinemaQuery):
    playDate: DashedDate
