"""CGV (Korea's largest cinema chain): four signed GET operations of its booking API; the relay takes the
theater, the date and the movie as JSON. Every request carries CGV's browser headers (a generic User-Agent
gets a 403 page) and the signature under the operator's `CGV_SIGNING_KEY` (docs/design.md, "Signed requests
(CGV)"); without the key the operations report `configuration`. Its three lookups' contracts end the module,
with their rules that need no upstream call.
"""

import base64
import hashlib
import hmac
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, Field, StrictStr, StringConstraints
from typing_extensions import TypedDict

from functions.catalog import common, contract
from functions.catalog.dtryx import korea_today, real_compact_date
from functions.catalog.relay_rules import WITHOUT_PARAMS, RelayInput
from functions.catalog.spec import OperationSpec, RequestSigning
from functions.core import RouteKey
from functions.core.errors import ApiError, ErrorCode

BASE_URL = "https://api.cgv.co.kr/cnm/atkt"
COMPANY_CODE = "A420"
SITE_TIMETABLE_SCOPE = "08"
MOVIE_TIMETABLE_SCOPE = "01"
"""`rtctlScopCd`, which CGV requires on its timetables ("발매통제범위코드는 필수 요청 파라미터")."""
USER_AGENT = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/140.0.0.0 Safari/537.36"
)
HEADERS = common.frozen_headers(
    {"Accept": "application/json", "Accept-Language": "ko-KR", "User-Agent": USER_AGENT}
)
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
class SiteParams(common.StrictParams):
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


class CgvResponse(common.UpstreamModel):
    """`statusCode` 0 and `data` a list of objects (empty is a valid answer); rows are read leniently."""

    statusCode: Annotated[int | float, BeforeValidator(_zero)]
    data: list[dict[str, Any]]


# --- answers (the lookup API's `data`) ---------------------------------------------------------------
CompactDate = Annotated[str, Field(pattern=r"^[0-9]{8}$", description="YYYYMMDD")]


@common.answer
class CgvTheater(TypedDict):
    theaterCode: str
    theaterName: str
    regionCode: str | None


@common.answer
class CgvTheaterFilters(TypedDict):
    keyword: str | None
    regionCode: str | None


@common.answer
class CgvTheaters(TypedDict):
    filters: CgvTheaterFilters
    theaters: list[CgvTheater]


@common.answer
class CgvMovie(TypedDict):
    movieCode: str
    movieName: str
    rating: str | None


@common.answer
class CgvMovieFilters(TypedDict):
    theaterCode: Annotated[
        str | None, Field(description="The theater asked for or chosen; null when none matched")
    ]
    keyword: str | None


@common.answer
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


@common.answer
class CgvScreening(TypedDict):
    scheduleId: str
    movieCode: Annotated[str, Field(description='"" when CGV names a screening by its product only')]
    movieName: str
    theaterCode: str
    theaterName: str
    playDate: str
    startTime: Annotated[str, Field(description='HH:MM as a rule; as CGV sent it otherwise; "" when missing')]
    endTime: str
    totalSeats: Annotated[common.Tally | None, Field(description="null: unknown (never 0)")]
    remainingSeats: Annotated[
        common.Tally | None, Field(description="null: unknown (never 0, which means sold out)")
    ]


@common.answer
class CgvTimetableFilters(TypedDict):
    theaterCode: str | None
    movieCode: str | None


@common.answer
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
    **WITHOUT_PARAMS,
    normalizer=normalize_theaters,
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


# --- the API's contract ------------------------------------------------------------------------
# A keyword matches theater names, word by word: there is no geocoding here, so no coordinates and no distance.

DEFAULT_THEATER = "0056"
"""CGV 강남: the theater when none is given and CGV lists none."""
MAX_FALLBACK_THEATERS = 5
"""At most this many theaters' per-movie timetables are tried when a site timetable is empty."""

_WORD = re.compile(r"[0-9A-Za-z가-힣]+")
_NOT_A_PLACE = frozenset({
    "cgv", "씨지브이", "극장", "영화", "영화관", "주변", "근처", "오늘", "상영", "시간표", "좌석", "잔여", "찾아", "주세요"
})  # fmt: skip
"""Words of a request that name no theater ("CGV 강남 근처 극장" looks for 강남)."""


def _squashed(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def keyword_words(keyword: str) -> list[str]:
    """The keyword's words that can name a theater: two characters or more, not one of `_NOT_A_PLACE`."""
    words = (_squashed(word) for word in _WORD.findall(keyword))
    return list(dict.fromkeys(word for word in words if len(word) >= 2 and word not in _NOT_A_PLACE))


def matching_theaters(theaters: Iterable[CgvTheater], keyword: str) -> list[CgvTheater]:
    """The theaters whose name contains any of the keyword's words, the most words first (then by name). A
    keyword without such words matches nothing: never a broader list."""
    words = keyword_words(keyword)
    scored = [
        (sum(word in _squashed(theater["theaterName"]) for word in words), theater) for theater in theaters
    ]
    ranked = sorted(
        ((score, theater) for score, theater in scored if score > 0),
        key=lambda item: (-item[0], item[1]["theaterName"]),
    )
    return [theater for _score, theater in ranked]


def fallback_theaters(listed: Sequence[Mapping[str, Any]]) -> list[str]:
    """The theaters whose per-movie timetables are tried: 강남 first, then CGV's list, at most five."""
    codes = [DEFAULT_THEATER, *(theater["theaterCode"] for theater in listed)]
    return list(dict.fromkeys(codes))[:MAX_FALLBACK_THEATERS]


def timetable_rows(
    rows: Iterable[CgvScreening], *, theater: str | None, movie: str | None, limit: int
) -> list[CgvScreening]:
    """Screenings of `theater` and `movie` (each when given), by start time then theater name, at most
    `limit`."""
    kept = [
        row
        for row in rows
        if (theater is None or row["theaterCode"] == theater) and (movie is None or row["movieCode"] == movie)
    ]
    return sorted(kept, key=lambda row: (row["startTime"], row["theaterName"]))[:limit]


def _cgv(lookup: contract.OperationRunner, key: RouteKey, values: Mapping[str, Any], rows: str) -> list[Any]:
    """The rows of one CGV operation's `data`. Its theater or movie code may come from CGV's own lists: one
    the operation refuses is CGV's unusable answer (502), not the caller's bad input."""
    try:
        params = contract.operation_params(key, values)
    except contract.InvalidParams:
        raise ApiError(ErrorCode.UPSTREAM_BAD_RESPONSE) from None
    found: list[Any] = lookup.data(key, params)[rows]  # the rows of the operation's answer type
    return found


def _today(lookup: contract.OperationRunner) -> str:
    return compact_today(lookup.clock())


@contract.lookup("cgv_theaters", "/api/cgv/theaters")
class CgvTheatersQuery(contract.LookupQuery):
    """CGV theaters

    Finds CGV (씨지브이) cinemas: all of them, or those whose name has the words of `keyword` (e.g. 강남),
    or one region's (`regionCode`, e.g. 01 for Seoul); `limit` caps the rows. The `theaterCode` of a
    result is what cgvMovies and cgvTimetable ask for. CGV 극장 검색.
    """

    freshness = contract.Freshness(86400, 300, stale_if_error=86400)
    keyword: contract.SearchText | None = Field(
        default=None, description="Words of the theater's name, e.g. 강남"
    )
    regionCode: contract.Code | None = Field(default=None, description="CGV's region code, e.g. 01 (Seoul)")
    limit: contract.PageSize = 30

    def fetch(self, lookup: contract.OperationRunner) -> CgvTheaters:
        theaters = _cgv(lookup, RouteKey.CGV_THEATERS, {}, "theaters")
        if self.regionCode is not None:
            theaters = [theater for theater in theaters if theater["regionCode"] == self.regionCode]
        if self.keyword is not None:
            theaters = matching_theaters(theaters, self.keyword)
        return {
            "filters": {"keyword": self.keyword, "regionCode": self.regionCode},
            "theaters": theaters[: self.limit],
        }


# Without a theaterCode the theater is the best name match for `keyword`, else the first CGV lists (강남 if
# it lists none); a keyword that names no theater answers no movies rather than another theater's.
@contract.lookup("cgv_movies", "/api/cgv/movies")
class CgvMoviesQuery(contract.LookupQuery):
    """Films showing at a CGV theater

    Films showing at one CGV (씨지브이) cinema on one date: `theaterCode` (e.g. 0056, 강남), or the best
    name match for `keyword`; `playDate` as YYYYMMDD (default: today in Korea). The `movieCode` of a
    result is what cgvTimetable filters by. CGV 상영 영화.
    """

    freshness = contract.Freshness(600, 60, stale_if_error=3600)
    theaterCode: TheaterCode | None = Field(default=None, description="CGV theater code, e.g. 0056 (강남)")
    playDate: PlayDate | None = Field(default=None, description="YYYYMMDD (default: today in Korea)")
    keyword: contract.SearchText | None = Field(
        default=None, description="Words of the theater's name, when no theaterCode is given"
    )

    def fetch(self, lookup: contract.OperationRunner) -> CgvMovies:
        play_date = self.playDate or _today(lookup)
        theater, resolved, movies = self.theaterCode, None, []
        if theater is None:
            listed = _cgv(lookup, RouteKey.CGV_THEATERS, {}, "theaters")
            if self.keyword is not None:
                listed = matching_theaters(listed, self.keyword)
            resolved = listed[0] if listed else None
            if resolved is not None or self.keyword is None:
                theater = DEFAULT_THEATER if resolved is None else resolved["theaterCode"]
        if theater is not None:
            site = {"theaterCode": theater, "playDate": play_date}
            movies = _cgv(lookup, RouteKey.CGV_MOVIES, site, "movies")
        return {
            "playDate": play_date,
            "filters": {"theaterCode": theater, "keyword": self.keyword},
            "resolvedTheater": resolved,
            "movies": movies,
        }


# The theater's site timetable; where it lacks `movieCode`, that movie's timetable; with neither a movie nor
# any screening, each movie's timetable at up to five theaters (강남 first) until one has screenings. Every
# call shares the lookup's time budget (504 past it) and its relay calls (functions/services/lookup.py: 429
# past them, never a timetable cut short), which bound these fallbacks.
@contract.lookup("cgv_timetable", "/api/cgv/timetable")
class CgvTimetableQuery(contract.LookupQuery):
    """CGV screenings and seats for one date

    Showtimes and remaining seats at one CGV (씨지브이) cinema (`theaterCode`, default: the first CGV
    lists) on one date (`playDate`, YYYYMMDD, default: today in Korea), optionally only one film
    (`movieCode`, from cgvMovies); `limit` caps the rows. CGV 상영 시간표와 잔여 좌석.
    """

    freshness = contract.Freshness(180, 30)
    theaterCode: TheaterCode | None = Field(
        default=None, description="CGV theater code, e.g. 0056 (default: the first CGV lists)"
    )
    playDate: PlayDate | None = Field(default=None, description="YYYYMMDD (default: today in Korea)")
    movieCode: MovieCode | None = Field(default=None, description="Only this movie's screenings")
    limit: contract.PageSize = 50

    def fetch(self, lookup: contract.OperationRunner) -> CgvTimetable:
        play_date = self.playDate or _today(lookup)
        theater, resolved, listed = self.theaterCode, None, []
        if theater is None:
            listed = _cgv(lookup, RouteKey.CGV_THEATERS, {}, "theaters")
            resolved = listed[0] if listed else None
            theater = DEFAULT_THEATER if resolved is None else resolved["theaterCode"]
        site = {"theaterCode": theater, "playDate": play_date}
        rows = _cgv(lookup, RouteKey.CGV_TIMETABLE, site, "timetable")
        if self.movieCode is not None:
            if not any(row["movieCode"] == self.movieCode for row in rows):
                by_movie = {**site, "movieCode": self.movieCode}
                rows = _cgv(lookup, RouteKey.CGV_TIMETABLE_MOVIE, by_movie, "timetable")
        elif not rows:
            theaters = [theater] if self.theaterCode else fallback_theaters(listed)
            rows = self._first_with_screenings(lookup, theaters, play_date)
        return {
            "playDate": play_date,
            "filters": {"theaterCode": self.theaterCode, "movieCode": self.movieCode},
            "resolvedTheater": resolved,
            "filterRelaxed": False,
            "timetable": timetable_rows(
                rows, theater=self.theaterCode, movie=self.movieCode, limit=self.limit
            ),
        }

    @staticmethod
    def _first_with_screenings(
        lookup: contract.OperationRunner, theaters: list[str], play_date: str
    ) -> list[dict[str, Any]]:
        """Every movie's screenings at the first of `theaters` that has any (N+1 calls per theater)."""
        for theater in theaters:
            site = {"theaterCode": theater, "playDate": play_date}
            rows = [
                row
                for movie in _cgv(lookup, RouteKey.CGV_MOVIES, site, "movies")
                for row in _cgv(
                    lookup,
                    RouteKey.CGV_TIMETABLE_MOVIE,
                    {**site, "movieCode": movie["movieCode"]},
                    "timetable",
                )
            ]
            if rows:
                return rows
        return []
