"""What the relay servers accept as the body of `POST /v1/{group}/{operation}`, operation by operation.

Everything else the relays refuse before any upstream call: 413 when the body is over 16 KiB, 400 when it is
not JSON or breaks a rule (an extra or missing key, a wrong type, a bad pattern or range). The Lambda's relay
bodies must pass these rules (a test checks every operation), and the sandbox's simulated relays enforce them
so that a body the real relays would refuse fails locally too. The relays are JavaScript, and their semantics
are mirrored: `5.0` is the integer 5, a boolean is not a number, `NaN`/`Infinity` are not JSON, lengths count
UTF-16 code units, `\\d` is `[0-9]`, a duplicated key's last value wins.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from functions.catalog.common import text_rule
from functions.core import RelayGroup, RouteKey, group_of

MAX_RELAY_BODY_BYTES = 16_384


class RelayInputRejected(Exception):
    """The relay's refusal of a request body: `status` (400 or 413) and the JSON body it answers with."""

    def __init__(self, status: int, body: Mapping[str, str]) -> None:
        super().__init__(f"relay input rejected with {status}")
        self.status = status
        self.body = dict(body)


# --- value rules ----------------------------------------------------------------------------------


def _js_integer(value: object) -> object:
    """JSON `5.0` is the integer 5 in JavaScript."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _within(limit: float) -> Any:
    def check(value: str) -> str:
        if abs(float(value)) > limit:
            raise ValueError(f"must be within ±{limit:g}")
        return value

    return AfterValidator(check)


def _false(value: bool) -> bool:
    if value:
        raise ValueError("must be false")
    return value


def _real_compact_date(value: str) -> str:
    try:
        datetime.strptime(value, "%Y%m%d")
    except ValueError:
        raise ValueError("not a real calendar date") from None
    return value


JsNumber = Annotated[float, Field(allow_inf_nan=False)]
"""Any finite JSON number (strict: never a boolean or a string)."""
Text = Annotated[StrictStr, text_rule(0, 200)]
Text1 = Annotated[StrictStr, text_rule(1, 200)]
Code = Annotated[StrictStr, StringConstraints(pattern=r"^[A-Za-z0-9_-]*$", max_length=64)]
Code1 = Annotated[StrictStr, StringConstraints(pattern=r"^[A-Za-z0-9_-]+$", max_length=64)]
Count = Annotated[int, BeforeValidator(_js_integer), Field(ge=0, le=9999)]
Count1 = Annotated[int, BeforeValidator(_js_integer), Field(ge=1, le=9999)]
_DECIMAL = StringConstraints(pattern=r"^-?[0-9]+(\.[0-9]+)?$")
Latitude = Annotated[StrictStr, _DECIMAL, _within(90)]
Longitude = Annotated[StrictStr, _DECIMAL, _within(180)]
PageText = Annotated[StrictStr, StringConstraints(pattern=r"^[0-9]{1,4}$")]
ApiKey = Annotated[StrictStr, text_rule(1, 512)]
"""A retailer API key the relay passes on (gs25-stock's `apiKey`)."""
Empty = Annotated[list[Any], Field(max_length=0)]
FalseOnly = Annotated[StrictBool, AfterValidator(_false)]


class RelayInput(BaseModel):
    """One operation's body: exactly these keys, strict types; an optional key is absent, never null."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict) and any(value is None for value in data.values()):
            raise ValueError("null is not a value the relay accepts")
        return data


# --- Olive Young: exact keys, all required, JavaScript types only ----------------------------------


class OyFindStore(RelayInput):
    lat: JsNumber
    lon: JsNumber
    pageIdx: JsNumber
    mapLat: JsNumber
    mapLon: JsNumber
    searchWords: StrictStr
    pogKeys: StrictStr
    serviceKeys: StrictStr


class OyProductSearch(RelayInput):
    includeSoldOut: StrictBool
    keyword: StrictStr
    sort: StrictStr
    page: JsNumber
    size: JsNumber


class OyGoodsInfo(RelayInput):
    goodsNo: StrictStr


class OyStockStores(RelayInput):
    productId: StrictStr
    searchWords: StrictStr
    lat: JsNumber
    lon: JsNumber
    pageIdx: JsNumber
    mapLat: JsNumber
    mapLon: JsNumber


# --- convenience (CU, GS25, 7-Eleven) --------------------------------------------------------------


class NoFields(RelayInput):
    """`{}` exactly."""


class CuStock(RelayInput):
    searchWord: Text1
    prevSearchWord: Literal[""]
    spellModifyUseYn: Literal["Y"]
    offset: Count
    limit: Count1
    searchSort: Code1


class CuStore(RelayInput):
    latVal: Latitude
    longVal: Longitude
    baseLatVal: Latitude
    baseLongVal: Longitude
    tabId: Literal["2"]
    filterSvcList: Empty
    filterAdtList: Empty
    stockCdcYn: Literal["N"]
    searchStock: FalseOnly
    pickupType: Literal["change"]
    getRoute: Literal["IOS"]
    areaTplNo: Literal["0"]
    childMealPickUpYn: Literal["N"]
    isCurrentSearch: Literal["N"]
    pageType: Text
    searchWord: Text
    isRecommend: Literal["", "Y", "N"]
    recommendId: Code
    jipCd: Code
    itemCd: Code
    item_cd: Code
    onItemNo: Code


class SevenGoodsSearch(RelayInput):
    collection: Literal["goods"]
    query: Text1
    sort: Literal["quantity/desc,itemOnm/asc"]
    startCount: Count
    listCount: Count1


class SevenGoodsPage(RelayInput):
    query: Text1
    pageNo: Count
    pageSize: Count1


class SevenStore(RelayInput):
    collection: Literal["store"]
    query: Text1
    sort: Literal["Date/desc"]
    listCount: Count1


class SevenPopwords(RelayInput):
    label: Code1


class SevenStockMeta(RelayInput):
    itemCd: Code1


class SevenStock(RelayInput):
    smCd: Code1
    stokMngCd: Code1
    stokMngQty: Count
    stockApplicationRate: Annotated[
        StrictStr, StringConstraints(pattern=r"^[0-9]*(\.[0-9]+)?$", max_length=32)
    ]
    storeList: Annotated[list[Code1], Field(min_length=1, max_length=200)]


class Gs25Products(RelayInput):
    query: Text1


class Gs25Stock(RelayInput):
    """Every value a string (a number is refused), and an optional one is absent rather than empty."""

    serviceCode: Literal["01", "02"]
    realTimeStockYn: Literal["Y", "N"]
    itemCode: Code1 | None = None
    keyword: Text1 | None = None
    storeCode: Code1 | None = None
    pageNumber: PageText | None = None
    pageCount: PageText | None = None
    myPositionYCoordination: Latitude | None = None
    centerPositionYCoordination: Latitude | None = None
    myPositionXCoordination: Longitude | None = None
    centerPositionXCoordination: Longitude | None = None
    radiusCondition: Literal["1000"] | None = None
    pickupStoreYn: Literal["N"] | None = None
    isSuperDlvyStoreSelected: Literal["N"] | None = None
    isGs25DlvyStoreSelected: Literal["N"] | None = None
    apiKey: ApiKey | None = None


# --- Dtryx ---------------------------------------------------------------------------------------


BrandCode = Annotated[StrictStr, StringConstraints(pattern=r"^[a-z][a-z0-9_-]{0,31}$")]
CinemaCode = Annotated[StrictStr, StringConstraints(pattern=r"^[0-9]{6}$")]
CompactDate = Annotated[
    StrictStr, StringConstraints(pattern=r"^[0-9]{8}$"), AfterValidator(_real_compact_date)
]


class DtryxCinema(RelayInput):
    brandCode: BrandCode
    cinemaCode: CinemaCode


class DtryxTimetable(RelayInput):
    brandCode: BrandCode
    cinemaCode: CinemaCode
    playDate: CompactDate


RELAY_INPUTS: Mapping[RouteKey, TypeAdapter[Any]] = MappingProxyType(
    {
        RouteKey.OY_FIND_STORE: TypeAdapter(OyFindStore),
        RouteKey.OY_PRODUCT_SEARCH: TypeAdapter(OyProductSearch),
        RouteKey.OY_GOODS_INFO: TypeAdapter(OyGoodsInfo),
        RouteKey.OY_STOCK_STORES: TypeAdapter(OyStockStores),
        RouteKey.CU_PRIME: TypeAdapter(NoFields),
        RouteKey.CU_STOCK: TypeAdapter(CuStock),
        RouteKey.CU_STORE: TypeAdapter(CuStore),
        RouteKey.GS25_PRODUCTS: TypeAdapter(Gs25Products),
        RouteKey.GS25_STOCK: TypeAdapter(Gs25Stock),
        RouteKey.SEVEN_GOODS: TypeAdapter(SevenGoodsSearch | SevenGoodsPage),
        RouteKey.SEVEN_STORE: TypeAdapter(SevenStore),
        RouteKey.SEVEN_POPWORDS: TypeAdapter(SevenPopwords),
        RouteKey.SEVEN_STOCK_META: TypeAdapter(SevenStockMeta),
        RouteKey.SEVEN_STOCK: TypeAdapter(SevenStock),
        RouteKey.SEVEN_PAGES: TypeAdapter(NoFields),
        RouteKey.SEVEN_ISSUES: TypeAdapter(NoFields),
        RouteKey.SEVEN_EXHIBITIONS: TypeAdapter(NoFields),
        RouteKey.DTRYX_MOVIES: TypeAdapter(DtryxCinema),
        RouteKey.DTRYX_PLAY_DATES: TypeAdapter(DtryxCinema),
        RouteKey.DTRYX_TIMETABLE: TypeAdapter(DtryxTimetable),
    }
)
"""The input rule of each route key's relay operation."""

API_KEY = TypeAdapter(ApiKey)
"""The rule for a retailer API key the Lambda sends in a relay body."""


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
        RELAY_INPUTS[key].validate_python(body)
    except ValidationError:
        raise _refusal(group, "input") from None
    assert isinstance(body, dict)  # every rule is an object's
    return body
