"""The `data` of each lookup endpoint's 200 answer, as the OpenAPI document describes it.

The catalog's normalizers (`functions/catalog/`) and the composite operations (`functions/services/operations.py`)
build these shapes as plain JSON; these models only document them. Every key is always present (null when
unknown) unless it says otherwise, and nothing else is ever added: the tests check real answers of every
endpoint against the documented schemas.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema


class Data(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Number = float
"""A JSON number (integers stay integers on the wire)."""
Count = Annotated[int, Field(ge=0)]


class Stock(Data):
    """A stock figure. -1 and null upstream are `unknown`, never 0 and never `out_of_stock`."""

    quantity: Count | None
    status: Literal["in_stock", "out_of_stock", "not_sold", "unknown"]


# --- Olive Young ---------------------------------------------------------------------------------


class OliveyoungStore(Data):
    storeCode: str
    storeName: str
    address: str | None
    latitude: Number | None
    longitude: Number | None
    distance: Number | None
    open: bool | None
    pickup: bool | None


class OliveyoungStores(Data):
    totalCount: Count | None
    stores: list[OliveyoungStore]


class OliveyoungProduct(Data):
    goodsNumber: str
    goodsName: str
    price: Number
    originalPrice: Number
    discountRate: Number
    imagePath: str | None
    todayDelivery: bool
    onlineStock: Stock


class OliveyoungProducts(Data):
    totalCount: Count | None
    nextPage: bool | int | None
    products: list[OliveyoungProduct]


class OliveyoungGoods(Data):
    masterGoodsNumber: str = Field(description="The `productId` of /api/oliveyoung/stock")
    goodsNumber: str | None
    goodsName: str | None


class OliveyoungStockStore(OliveyoungStore):
    stock: Stock


class OliveyoungStock(Data):
    totalCount: Count | None
    stores: list[OliveyoungStockStore]


# --- CU ------------------------------------------------------------------------------------------


class CuProduct(Data):
    itemCode: str
    itemName: str
    price: Number
    onlineItemNo: str | None
    pickup: bool | None
    delivery: bool | None
    reservation: bool | None


class CuProducts(Data):
    totalCount: Count | None
    products: list[CuProduct]


class CuStore(Data):
    storeCode: str
    storeName: str
    latitude: Number | None
    longitude: Number | None
    distance: Number | None
    delivery: bool | None
    deliveryPickup: bool | None
    storePickup: bool | None
    reservation: bool | None
    stock: Stock | SkipJsonSchema[None] = Field(default=None, description="Only when `itemCd` was given")


class CuStores(Data):
    totalCount: Count | None
    stores: list[CuStore]


# --- GS25 ----------------------------------------------------------------------------------------


class Gs25Product(Data):
    itemCode: str
    itemName: str
    shortItemName: str | None
    rating: Number | None
    stockCheckable: bool | None


class Gs25Products(Data):
    totalCount: Count | None
    products: list[Gs25Product]


class Gs25StockStore(Data):
    storeCode: str | None
    storeName: str | None
    address: str | None
    latitude: Number | None
    longitude: Number | None
    itemName: str | None
    price: Number | None
    stock: Stock
    pickupStock: Stock
    deliveryStock: Stock


class Gs25Stock(Data):
    stores: list[Gs25StockStore]


# --- 7-Eleven ------------------------------------------------------------------------------------


class SevenElevenProduct(Data):
    itemCode: str
    itemName: str
    price: Number | None
    cost: Number | None
    productNo: str | None
    imageUrl: str | None
    event: str | None
    rating: Number | None
    reviewCount: Number | None


class SevenElevenProducts(Data):
    totalCount: Count | None
    products: list[SevenElevenProduct]


class SevenElevenStore(Data):
    storeCode: str
    storeName: str
    address: str | None
    latitude: Number | None
    longitude: Number | None
    pickup: bool | None
    delivery: bool | None
    closed: bool | None


class SevenElevenStores(Data):
    totalCount: Count | None
    stores: list[SevenElevenStore]


class PopularKeyword(Data):
    rank: Annotated[int, Field(ge=1)]
    keyword: str


class SevenElevenPopwords(Data):
    keywords: list[PopularKeyword]


class SevenElevenStock(Data):
    itemCode: str
    itemName: str | None
    storeCode: str
    stock: Stock


class SevenElevenCatalogProducts(Data):
    products: list[SevenElevenProduct]


class SevenElevenExhibition(Data):
    id: str | int | None
    name: str | None
    startDate: str | None
    endDate: str | None
    productCount: Count | None


class SevenElevenExhibitions(Data):
    exhibitions: list[SevenElevenExhibition]


# --- Dtryx ---------------------------------------------------------------------------------------

ClockTime = Annotated[str, Field(pattern=r"^[0-9]{2}:[0-9]{2}$")]


class DtryxMovie(Data):
    movieCode: str
    movieName: str
    runningTime: Number | None = Field(description="Minutes")
    rating: str | None


class DtryxMovies(Data):
    totalCount: Count | None
    movies: list[DtryxMovie]


class DtryxPlayDate(Data):
    date: Annotated[str, Field(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    hidden: bool | None
    closed: bool | None


class DtryxPlayDates(Data):
    playDates: list[DtryxPlayDate]


class DtryxShowtime(Data):
    movieCode: str
    movieName: str
    cinemaCode: str
    cinemaName: str | None
    screenCode: str
    screenName: str | None
    playDate: str | None
    showSeq: str | None
    startTime: ClockTime | None
    endTime: ClockTime | None
    totalSeats: Count | None
    remainingSeats: Count | None
    runningTime: Number | None
    rating: str | None
    status: str | None


class DtryxTimetable(Data):
    totalCount: Count | None
    showtimes: list[DtryxShowtime]


# --- CGV -----------------------------------------------------------------------------------------

CompactDate = Annotated[str, Field(pattern=r"^[0-9]{8}$", description="YYYYMMDD")]


class CgvTheater(Data):
    theaterCode: str
    theaterName: str
    regionCode: str | None


class CgvTheaterFilters(Data):
    keyword: str | None
    regionCode: str | None


class CgvTheaters(Data):
    filters: CgvTheaterFilters
    theaters: list[CgvTheater]


class CgvMovie(Data):
    movieCode: str
    movieName: str
    rating: str | None


class CgvMovieFilters(Data):
    theaterCode: str | None = Field(description="The theater asked for or chosen; null when none matched")
    keyword: str | None


class CgvMovies(Data):
    playDate: CompactDate
    filters: CgvMovieFilters
    resolvedTheater: CgvTheater | None = Field(
        description="The theater chosen when no theaterCode was given (null when none was, or none matched)"
    )
    movies: list[CgvMovie]


class CgvScreening(Data):
    scheduleId: str
    movieCode: str = Field(description='"" when CGV names a screening by its product only')
    movieName: str
    theaterCode: str
    theaterName: str
    playDate: str
    startTime: str = Field(description='HH:MM as a rule; as CGV sent it otherwise; "" when missing')
    endTime: str
    totalSeats: Count | None = Field(description="null: unknown (never 0)")
    remainingSeats: Count | None = Field(description="null: unknown (never 0, which means sold out)")


class CgvTimetableFilters(Data):
    theaterCode: str | None
    movieCode: str | None


class CgvTimetable(Data):
    playDate: CompactDate
    filters: CgvTimetableFilters
    resolvedTheater: CgvTheater | None = Field(
        description="The theater chosen when no theaterCode was given (the first CGV lists)"
    )
    filterRelaxed: Literal[False]
    timetable: list[CgvScreening]
