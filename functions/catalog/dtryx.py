"""Dtryx (independent-cinema booking platform): three public GET operations; the relay takes the cinema (and
the date, compact) as JSON. Its three lookups' contracts end the module."""

import re
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime, timedelta, timezone, tzinfo
from functools import partial
from typing import Annotated, Any, Literal, TypeVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, BeforeValidator, Field, StrictStr, StringConstraints
from typing_extensions import TypedDict

from functions.catalog import common, contract
from functions.catalog.relay_rules import RelayInput
from functions.catalog.spec import OperationSpec, same_body
from functions.core import RouteKey

BASE_URL = "https://api.dtryx.com/dtryx/cms/thirdparty/movie"
HEADERS = common.frozen_headers({"Accept": "application/json"})

MOVIES_ENDPOINT = "third-party-type2-movie-now"
PLAY_DATES_ENDPOINT = "third-party-type2-timetable-play-date-list"
TIMETABLE_ENDPOINT = "third-party-type2-timetable-list"
WORK_GUIDS = {
    MOVIES_ENDPOINT: "6D741A36-A973-4BC4-87B4-2475E6654114",
    PLAY_DATES_ENDPOINT: "324A2914-AB19-42A3-BDFE-58A08B2DC35D",
    TIMETABLE_ENDPOINT: "37E0BA0F-DA5F-4376-9BA4-B5D27286AB87",
}

# 아트하우스모모 (Seoul), the catalog's probe cinema.
PROBE_BRAND = "indieart"
PROBE_CINEMA = "000067"


def _korea_zone() -> tzinfo:
    # Korea has had no DST since 1988, so a fixed +09:00 is exact if the tz database is missing.
    try:
        return ZoneInfo("Asia/Seoul")
    except ZoneInfoNotFoundError:
        return timezone(timedelta(hours=9), "KST")


KOREA = _korea_zone()

_COMPACT_DATE = re.compile(r"[0-9]{8}")
_DASHED_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _play_date(value: object) -> date:
    """A real calendar date, given as a date, `YYYYMMDD` (relay form) or `YYYY-MM-DD` (API form)."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            if _COMPACT_DATE.fullmatch(value):
                return datetime.strptime(value, "%Y%m%d").date()
            if _DASHED_DATE.fullmatch(value):
                return date.fromisoformat(value)
        except ValueError:
            raise ValueError("not a real calendar date") from None
    raise ValueError("expected a date as YYYYMMDD or YYYY-MM-DD")


def real_compact_date(value: str) -> str:
    try:
        datetime.strptime(value, "%Y%m%d")
    except ValueError:
        raise ValueError("not a real calendar date") from None
    return value


def korea_today(now_ms: int) -> date:
    return datetime.fromtimestamp(now_ms / 1000, tz=UTC).astimezone(KOREA).date()


BRAND_CODE = StringConstraints(pattern=r"^[a-z][a-z0-9_-]{0,31}$")
CINEMA_CODE = StringConstraints(pattern=r"^[0-9]{6}$")
BrandCode = Annotated[str, BRAND_CODE]
CinemaCode = Annotated[str, CINEMA_CODE]
PlayDate = Annotated[date, BeforeValidator(_play_date)]


# --- params ---------------------------------------------------------------------------------------
class CinemaParams(common.StrictParams):
    brandCode: BrandCode
    cinemaCode: CinemaCode


class TimetableParams(CinemaParams):
    playDate: PlayDate


# --- relay inputs ---------------------------------------------------------------------------------
class CinemaRelayInput(RelayInput):
    brandCode: Annotated[StrictStr, BRAND_CODE]
    cinemaCode: Annotated[StrictStr, CINEMA_CODE]


class TimetableRelayInput(CinemaRelayInput):
    playDate: Annotated[
        StrictStr, StringConstraints(pattern=r"^[0-9]{8}$"), AfterValidator(real_compact_date)
    ]


# --- responses ------------------------------------------------------------------------------------
ClockTime = Annotated[str, StringConstraints(pattern=r"^[0-9]{2}:?[0-9]{2}$")]


class DtryxResponse(common.UpstreamModel):
    """`RetCode` must be "success" and `Recordset` an array of objects (rows typed by subclasses)."""

    RetCode: Literal["success"]
    RetMsg: str | None = None
    RecordCount: common.Count | None = None


class MovieRow(common.UpstreamModel):
    MovieCd: common.NonEmptyStr
    MovieNm: common.NonEmptyStr
    RunningTime: common.Numeric | None = None


class PlayDateRow(common.UpstreamModel):
    PlaySDT: Annotated[str, StringConstraints(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    HiddenYn: common.YN | None = None
    RestYn: common.YN | None = None


class ShowtimeRow(common.UpstreamModel):
    MovieCd: common.NonEmptyStr
    MovieNm: common.NonEmptyStr
    CinemaCd: common.NonEmptyStr
    ScreenCd: common.NonEmptyStr
    PlaySDT: str | None = None
    ShowSeq: str | int | None = None
    StartTime: ClockTime | None = None
    EndTime: ClockTime | None = None
    TotalSeatCnt: common.Quantity = None
    RemainSeatCnt: common.Quantity = None
    RunningTime: common.Numeric | None = None


class MoviesResponse(DtryxResponse):
    Recordset: list[MovieRow]


class PlayDatesResponse(DtryxResponse):
    Recordset: list[PlayDateRow]


class TimetableResponse(DtryxResponse):
    Recordset: list[ShowtimeRow]


# --- answers (the lookup API's `data`) ---------------------------------------------------------------
HourMinute = Annotated[str, Field(pattern=r"^[0-9]{2}:[0-9]{2}$")]


@common.answer
class DtryxMovie(TypedDict):
    movieCode: str
    movieName: str
    runningTime: Annotated[common.Number | None, Field(description="Minutes")]
    rating: str | None


@common.answer
class DtryxMovies(TypedDict):
    totalCount: common.Tally | None
    movies: list[DtryxMovie]


@common.answer
class DtryxPlayDate(TypedDict):
    date: Annotated[str, Field(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    hidden: bool | None
    closed: bool | None


@common.answer
class DtryxPlayDates(TypedDict):
    playDates: list[DtryxPlayDate]


@common.answer
class DtryxShowtime(TypedDict):
    movieCode: str
    movieName: str
    cinemaCode: str
    cinemaName: str | None
    screenCode: str
    screenName: str | None
    playDate: str | None
    showSeq: str | None
    startTime: HourMinute | None
    endTime: HourMinute | None
    totalSeats: common.Tally | None
    remainingSeats: common.Tally | None
    runningTime: common.Number | None
    rating: str | None
    status: str | None


@common.answer
class DtryxTimetable(TypedDict):
    totalCount: common.Tally | None
    showtimes: list[DtryxShowtime]


# --- normalizers ----------------------------------------------------------------------------------
def _hh_mm(value: str | None) -> str | None:
    if value is None:
        return None
    digits = value.replace(":", "")
    return f"{digits[:2]}:{digits[2:]}"


def normalize_movies(body: MoviesResponse) -> DtryxMovies:
    return {
        "totalCount": body.RecordCount,
        "movies": [
            {
                "movieCode": row.MovieCd,
                "movieName": row.MovieNm,
                "runningTime": row.RunningTime,
                "rating": common.optional_text((row.model_extra or {}).get("RatingNm")),
            }
            for row in body.Recordset
        ],
    }


def normalize_play_dates(body: PlayDatesResponse) -> DtryxPlayDates:
    return {
        "playDates": [
            {"date": row.PlaySDT, "hidden": common.yn(row.HiddenYn), "closed": common.yn(row.RestYn)}
            for row in body.Recordset
        ]
    }


def normalize_timetable(body: TimetableResponse) -> DtryxTimetable:
    showtimes: list[DtryxShowtime] = []
    for row in body.Recordset:
        extra = row.model_extra or {}
        showtimes.append(
            {
                "movieCode": row.MovieCd,
                "movieName": row.MovieNm,
                "cinemaCode": row.CinemaCd,
                "cinemaName": common.optional_text(extra.get("CinemaNm")),
                "screenCode": row.ScreenCd,
                "screenName": common.optional_text(extra.get("ScreenNm")),
                "playDate": row.PlaySDT,
                "showSeq": None if row.ShowSeq is None else str(row.ShowSeq),
                "startTime": _hh_mm(row.StartTime),
                "endTime": _hh_mm(row.EndTime),
                "totalSeats": common.known(row.TotalSeatCnt),
                "remainingSeats": common.known(row.RemainSeatCnt),
                "runningTime": row.RunningTime,
                "rating": common.optional_text(extra.get("RatingNm")),
                "status": common.optional_text(extra.get("PlanStatus")),
            }
        )
    return {"totalCount": body.RecordCount, "showtimes": showtimes}


# --- specs ----------------------------------------------------------------------------------------

# Every Dtryx operation: a GET (its parameters in the query string) under the third-party API.
spec = partial(OperationSpec, base_url=BASE_URL, headers=HEADERS, method="GET")

ResponseT = TypeVar("ResponseT", bound=DtryxResponse)


def _query(endpoint: str, params: CinemaParams, *, play_date: date | None = None) -> list[tuple[str, str]]:
    # Parameter order follows the upstream client; PlaySDT must be dashed (YYYYMMDD silently gives 0 rows).
    pairs = [
        ("ChannelCd", "homepage"),
        ("EngVerYn", "N"),
        ("WorkGuID", WORK_GUIDS[endpoint]),
        ("BrandCd", params.brandCode),
        ("CinemaCd", params.cinemaCode),
    ]
    if play_date is not None:
        pairs.append(("PlaySDT", play_date.isoformat()))
    pairs.append(("MovieCd", "") if endpoint == PLAY_DATES_ENDPOINT else ("ImgSize", "small"))
    return pairs


def _cinema_spec(
    key: RouteKey,
    endpoint: str,
    response: type[ResponseT],
    normalizer: Callable[[ResponseT], Mapping[str, Any]],
    relay_operation: str,
) -> OperationSpec[CinemaParams, ResponseT]:
    """A listing for one cinema: the relay takes the cinema's codes as they are."""
    return spec(
        key,
        f"/{endpoint}",
        params=CinemaParams,
        probe_params=lambda _now: CinemaParams(brandCode=PROBE_BRAND, cinemaCode=PROBE_CINEMA),
        response=response,
        normalizer=normalizer,
        relay_input=CinemaRelayInput,
        query=lambda p: _query(endpoint, p),
        relay_operation=relay_operation,
    )


MOVIES = _cinema_spec(RouteKey.DTRYX_MOVIES, MOVIES_ENDPOINT, MoviesResponse, normalize_movies, "movies")
PLAY_DATES = _cinema_spec(
    RouteKey.DTRYX_PLAY_DATES, PLAY_DATES_ENDPOINT, PlayDatesResponse, normalize_play_dates, "play-dates"
)
TIMETABLE = spec(
    RouteKey.DTRYX_TIMETABLE,
    f"/{TIMETABLE_ENDPOINT}",
    params=TimetableParams,
    # "Today" in Korea: the cinemas' own calendar (the original used UTC, which is yesterday before 09:00 KST).
    probe_params=lambda now: TimetableParams(
        brandCode=PROBE_BRAND, cinemaCode=PROBE_CINEMA, playDate=korea_today(now)
    ),
    response=TimetableResponse,
    normalizer=normalize_timetable,
    relay_input=TimetableRelayInput,
    query=lambda p: _query(TIMETABLE_ENDPOINT, p, play_date=p.playDate),
    relay_operation="timetable",
    # Not strftime("%Y%m%d"): the C library writes year 991 as "991", not "0991".
    relay_body=lambda p: {**same_body(p), "playDate": p.playDate.isoformat().replace("-", "")},
)

SPECS = (MOVIES, PLAY_DATES, TIMETABLE)


# --- the API's contract ------------------------------------------------------------------------


# One cinema's films, bookable dates or (with a date) showtimes.
class DtryxCinemaQuery(contract.OperationQuery):
    brandCode: BrandCode = Field(description="Cinema brand, e.g. indieart")
    cinemaCode: CinemaCode = Field(description="Six-digit cinema code, e.g. 000067")


@contract.lookup("dtryx_movies", "/api/dtryx/movies")
class DtryxMoviesQuery(DtryxCinemaQuery):
    """Films now showing at a cinema

    Films now showing at one cinema of the Dtryx booking system (Korean independent cinemas, 독립영화관):
    `brandCode` (e.g. indieart) and six-digit `cinemaCode` (e.g. 000067). 상영 중인 영화.
    """

    key = RouteKey.DTRYX_MOVIES
    freshness = contract.Freshness(600, 60, stale_if_error=3600)


@contract.lookup("dtryx_play_dates", "/api/dtryx/play-dates")
class DtryxPlayDatesQuery(DtryxCinemaQuery):
    """Bookable screening dates

    Dates with bookable screenings at one Dtryx cinema (`brandCode`, `cinemaCode`); a date from here is
    the `playDate` of dtryxTimetable. 예매 가능한 상영일.
    """

    key = RouteKey.DTRYX_PLAY_DATES
    freshness = contract.Freshness(600, 60, stale_if_error=3600)


@contract.lookup("dtryx_timetable", "/api/dtryx/timetable")
class DtryxTimetableQuery(DtryxCinemaQuery):
    """Showtimes and seats for one date

    Showtimes of one Dtryx cinema (`brandCode`, `cinemaCode`) on one date (`playDate`, YYYY-MM-DD), with
    screens, start and end times and remaining seats. 상영 시간표와 잔여 좌석.
    """

    key = RouteKey.DTRYX_TIMETABLE
    freshness = contract.Freshness(180, 30)
    playDate: contract.DashedDate
