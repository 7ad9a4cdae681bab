"""The CGV endpoints' rules that need no upstream call: which theaters a keyword names, which theaters the
timetable falls back to, and how its rows are filtered, ordered and cut (the calls are in
`functions/services/queries.py`).

A keyword matches theater names, word by word: there is no geocoding here, so no coordinates and no distance.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from functions.catalog.cgv import CgvScreening, CgvTheater

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
