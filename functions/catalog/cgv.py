"""CGV (Korea's largest cinema chain): four signed GET operations of its booking API; the relay takes the
theater, the date and the movie as JSON. Every request carries CGV's browser headers (a generic User-Agent
gets a 403 page) and the signature under the operator's `CGV_SIGNING_KEY` (docs/design.md, "Signed requests
(CGV)"); without the key the operations report `configuration`.
"""

import base64
import hashlib
import hmac
import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, StrictStr, StringConstraints
from typing_extensions import TypedDict

from functions.catalog.common import NoParams, StrictParams, Tally, UpstreamModel, answer, frozen_headers
from functions.catalog.dtryx import korea_today, real_compact_date
from functions.catalog.relay_rules import NoFields, RelayInput
from functions.catalog.spec import OperationSpec, RequestSigning
from functions.core import RouteKey

BASE_URL = "https://api.cgv.co.kr/cnm/atkt"
COMPANY_CODE = "A420"
SITE_TIMETABLE_SCOPE = "08"
MOVIE_TIMETABLE_SCOPE = "01"
"""`rtctlScopCd`, which CGV requires on its timetables ("발매통제범위코드는 필수 요청 파라미터")."""
USER_AGENT = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/140.0.0.0 Safari/537.36"
)
HEADERS = frozen_headers({"Accept": "application/json", "Accept-Language": "ko-KR", "User-Agent": USER_AGENT})
SIGNING_KEY = "CGV_SIGNING_KEY"
"""The secret value holding the HMAC key."""

PROBE_THEATER = "0056"
"""CGV 강남."""
PROBE_MOVIE = "20000000"
"""A fixed movie code: an empty timetable is a valid answer, so the probe needs no current film."""


def signature_headers(key: str, path: str, now_ms: int) -> dict[str, str]:
    """CGV's signed headers for a GET of `path` (no query) at `now_ms`: the body part of the message is
    empty."""
    timestamp = str(now_ms // 1000)
    digest = hmac.new(key.encode(), f"{timestamp}|{path}|".encode(), hashlib.sha256).digest()
    return {"X-TIMESTAMP": timestamp, "X-SIGNATURE": base64.b64encode(digest).decode("ascii")}


SIGNING = RequestSigning(SIGNING_KEY, signature_headers)

_YEAR = "(?:[0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)"
_LEAP_YEAR = "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_MONTH_DAY = (
    "(?:(?:0[13578]|1[02])(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)(?:0[1-9]|[12][0-9]|30)"
    "|02(?:0[1-9]|1[0-9]|2[0-8]))"
)
REAL_COMPACT_DATE = f"^(?:{_YEAR}{_MONTH_DAY}|{_LEAP_YEAR}0229)$"
"""`YYYYMMDD` of a real Gregorian date, year 0001 to 9999, as one pattern (no look-around): the API document
shows it, so what it calls valid is exactly what the lookup takes."""

THEATER_CODE = StringConstraints(pattern=r"^[0-9]{4}$")
MOVIE_CODE = StringConstraints(pattern=r"^[0-9]{1,16}$")
COMPACT_DATE = StringConstraints(pattern=r"^[0-9]{8}$")
TheaterCode = Annotated[str, THEATER_CODE]
MovieCode = Annotated[str, MOVIE_CODE]
PlayDate = Annotated[str, StringConstraints(pattern=REAL_COMPACT_DATE)]
"""`YYYYMMDD`, a real calendar date (`20260230` is refused before any call)."""


def compact_today(now_ms: int) -> str:
    """Today in Korea (CGV's calendar) as `YYYYMMDD`."""
    return korea_today(now_ms).strftime("%Y%m%d")


# --- params (the relay's names; the query builders give CGV's) -----------------------------------------
class SiteParams(StrictParams):
    theaterCode: TheaterCode
    playDate: PlayDate


class MovieTimetableParams(SiteParams):
    movieCode: MovieCode


# --- relay inputs ---------------------------------------------------------------------------------
class SiteRelayInput(RelayInput):
    theaterCode: Annotated[StrictStr, THEATER_CODE]
    playDate: Annotated[StrictStr, COMPACT_DATE, AfterValidator(real_compact_date)]


class MovieTimetableRelayInput(SiteRelayInput):
    movieCode: Annotated[StrictStr, MOVIE_CODE]


# --- response -------------------------------------------------------------------------------------
def _zero(value: object) -> object:
    # `statusCode === 0` in JavaScript: the number 0 (0.0 is the same number), never false or "0".
    if isinstance(value, bool) or not isinstance(value, int | float) or value != 0:
        raise ValueError("statusCode must be 0")
    return value


class CgvResponse(UpstreamModel):
    """`statusCode` 0 and `data` a list of objects (empty is a valid answer); rows are read leniently."""

    statusCode: Annotated[int | float, BeforeValidator(_zero)]
    data: list[dict[str, Any]]


# --- answers (the lookup API's `data`) ---------------------------------------------------------------
CompactDate = Annotated[str, Field(pattern=r"^[0-9]{8}$", description="YYYYMMDD")]


@answer
class CgvTheater(TypedDict):
    theaterCode: str
    theaterName: str
    regionCode: str | None


@answer
class CgvTheaterFilters(TypedDict):
    keyword: str | None
    regionCode: str | None


@answer
class CgvTheaters(TypedDict):
    filters: CgvTheaterFilters
    theaters: list[CgvTheater]


@answer
class CgvMovie(TypedDict):
    movieCode: str
    movieName: str
    rating: str | None


@answer
class CgvMovieFilters(TypedDict):
    theaterCode: Annotated[
        str | None, Field(description="The theater asked for or chosen; null when none matched")
    ]
    keyword: str | None


@answer
class CgvMovies(TypedDict):
    playDate: CompactDate
    filters: CgvMovieFilters
    resolvedTheater: Annotated[
        CgvTheater | None,
        Field(
            description="The theater chosen when no theaterCode was given (null when none was, or none matched)"
        ),
    ]
    movies: list[CgvMovie]


@answer
class CgvScreening(TypedDict):
    scheduleId: str
    movieCode: Annotated[str, Field(description='"" when CGV names a screening by its product only')]
    movieName: str
    theaterCode: str
    theaterName: str
    playDate: str
    startTime: Annotated[str, Field(description='HH:MM as a rule; as CGV sent it otherwise; "" when missing')]
    endTime: str
    totalSeats: Annotated[Tally | None, Field(description="null: unknown (never 0)")]
    remainingSeats: Annotated[
        Tally | None, Field(description="null: unknown (never 0, which means sold out)")
    ]


@answer
class CgvTimetableFilters(TypedDict):
    theaterCode: str | None
    movieCode: str | None


@answer
class CgvTimetable(TypedDict):
    playDate: CompactDate
    filters: CgvTimetableFilters
    resolvedTheater: Annotated[
        CgvTheater | None,
        Field(description="The theater chosen when no theaterCode was given (the first CGV lists)"),
    ]
    filterRelaxed: Literal[False]
    timetable: list[CgvScreening]


class CgvTheaterList(TypedDict):
    theaters: list[CgvTheater]


class CgvMovieList(TypedDict):
    movies: list[CgvMovie]


class CgvScreenings(TypedDict):
    timetable: list[CgvScreening]


# --- normalizers ----------------------------------------------------------------------------------
MAX_SAFE_INTEGER = 2**53 - 1
_DIGITS = re.compile(r"[0-9]+")
_HHMM = re.compile(r"[0-9]{4}")


def _text(value: object) -> str | None:
    """A field CGV sends as text; anything else (absent, empty, not a string) counts as unset."""
    return value if isinstance(value, str) and value else None


def seat_count(value: object) -> int | None:
    """A seat count: an integer >= 0 from a number or a digit string (spaces around allowed). Anything else
    (blank, "unknown", -1, 1.5, a boolean) is unknown, null: never 0, which would read as sold out."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        value = int(text) if _DIGITS.fullmatch(text) else None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and 0 <= value <= MAX_SAFE_INTEGER:
        return value
    return None


def clock_time(value: object) -> str:
    """`HHMM` as `HH:MM`; other text as CGV sent it; a missing time is ""."""
    if not isinstance(value, str):
        return ""
    return f"{value[:2]}:{value[2:]}" if _HHMM.fullmatch(value) else value


def normalize_theaters(body: CgvResponse) -> CgvTheaterList:
    """Regions `{regnGrpCd, siteList: [{siteNo, siteNm}]}` -> theaters; a site without code or name is
    left out."""
    theaters: list[CgvTheater] = []
    for region in body.data:
        sites = region.get("siteList")
        for site in sites if isinstance(sites, list) else []:
            code, name = (
                _text(site.get(f)) if isinstance(site, dict) else None for f in ("siteNo", "siteNm")
            )
            if code and name:
                theaters.append(
                    {"theaterCode": code, "theaterName": name, "regionCode": _text(region.get("regnGrpCd"))}
                )
    return {"theaters": theaters}


def normalize_movies(body: CgvResponse) -> CgvMovieList:
    movies: list[CgvMovie] = []
    for row in body.data:
        code, name = _text(row.get("movNo")), _text(row.get("movNm"))
        if code and name:
            movies.append({"movieCode": code, "movieName": name, "rating": _text(row.get("cratgClsNm"))})
    return {"movies": movies}


def _sequence(value: object) -> str:
    """The screening's sequence number as the scheduleId's last part ("" when CGV sends none)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value) if value else ""
    return _text(value) or ""


def _movie_name(row: dict[str, Any], *, site_timetable: bool) -> str:
    name = _text(row.get("movNm"))
    if name is None and site_timetable:  # the site timetable names some screenings by their product only
        name = _text(row.get("prodNm"))
    return name or ""


def _showtime(row: dict[str, Any], *, site_timetable: bool) -> CgvScreening | None:
    theater, day, movie = (_text(row.get(name)) for name in ("siteNo", "scnYmd", "movNo"))
    if not (theater and day) or not (movie or site_timetable):
        return None
    remaining = row.get("frSeatCnt")
    if remaining is None:  # the temporary count only when the real one is missing, never over a 0
        remaining = row.get("frtmpSeatCnt")
    return {
        "scheduleId": f"{day}{theater}{_sequence(row.get('scnSseq'))}",
        "movieCode": movie or "",
        "movieName": _movie_name(row, site_timetable=site_timetable),
        "theaterCode": theater,
        "theaterName": _text(row.get("siteNm")) or "",
        "playDate": day,
        "startTime": clock_time(row.get("scnsrtTm")),
        "endTime": clock_time(row.get("scnendTm")),
        "totalSeats": seat_count(row.get("stcnt")),
        "remainingSeats": seat_count(remaining),
    }


def _timetable_normalizer(*, site_timetable: bool) -> Callable[[CgvResponse], CgvScreenings]:
    def normalize(body: CgvResponse) -> CgvScreenings:
        rows = (_showtime(row, site_timetable=site_timetable) for row in body.data)
        return {"timetable": [row for row in rows if row is not None]}

    return normalize


normalize_site_timetable = _timetable_normalizer(site_timetable=True)
normalize_movie_timetable = _timetable_normalizer(site_timetable=False)


# --- specs ----------------------------------------------------------------------------------------

# Every CGV operation: a signed GET (its parameters in the query string, in CGV's order) under the booking API.
spec = partial(
    OperationSpec, base_url=BASE_URL, headers=HEADERS, method="GET", response=CgvResponse, signing=SIGNING
)


def _site_query(params: SiteParams, *extra: tuple[str, str]) -> Sequence[tuple[str, str]]:
    return [("coCd", COMPANY_CODE), ("siteNo", params.theaterCode), ("scnYmd", params.playDate), *extra]


def _site_probe(now: int) -> SiteParams:
    return SiteParams(theaterCode=PROBE_THEATER, playDate=compact_today(now))


def _site_spec(
    key: RouteKey,
    path: str,
    relay_operation: str,
    normalizer: Callable[[CgvResponse], Mapping[str, Any]],
    *query: tuple[str, str],
) -> OperationSpec[SiteParams, CgvResponse]:
    """A theater's listing for a date: the relay takes the theater and the date; `query` ends CGV's query."""
    return spec(
        key,
        path,
        params=SiteParams,
        probe_params=_site_probe,
        normalizer=normalizer,
        relay_input=SiteRelayInput,
        query=lambda p: _site_query(p, *query),
        relay_operation=relay_operation,
    )


THEATERS = spec(
    RouteKey.CGV_THEATERS,
    "/searchRegnList",
    params=NoParams,
    probe_params=lambda _now: NoParams(),
    normalizer=normalize_theaters,
    relay_input=NoFields,
    query=lambda _params: [("coCd", COMPANY_CODE)],
    relay_operation="theaters",
)
MOVIES = _site_spec(RouteKey.CGV_MOVIES, "/searchOnlyCgvMovList", "movies", normalize_movies)
TIMETABLE = _site_spec(
    RouteKey.CGV_TIMETABLE,
    "/searchMovScnInfo",
    "timetable",
    normalize_site_timetable,
    ("rtctlScopCd", SITE_TIMETABLE_SCOPE),
)
TIMETABLE_MOVIE = spec(
    RouteKey.CGV_TIMETABLE_MOVIE,
    "/searchSchByMov",
    params=MovieTimetableParams,
    probe_params=lambda now: MovieTimetableParams(
        theaterCode=PROBE_THEATER, playDate=compact_today(now), movieCode=PROBE_MOVIE
    ),
    normalizer=normalize_movie_timetable,
    relay_input=MovieTimetableRelayInput,
    query=lambda p: _site_query(p, ("movNo", p.movieCode), ("rtctlScopCd", MOVIE_TIMETABLE_SCOPE)),
    relay_operation="timetable-movie",
)

SPECS = (THEATERS, MOVIES, TIMETABLE, TIMETABLE_MOVIE)
