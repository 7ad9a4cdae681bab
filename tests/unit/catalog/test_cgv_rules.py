"""CGV's own rules: the signed headers, the seat counts (unknown is null, never 0), the times, which rows the
normalizers keep, and what the operations' params refuse before any call."""

from __future__ import annotations

import base64
import re
from datetime import datetime
from typing import Any

import pytest

from functions.catalog import cgv, spec_for
from functions.catalog.spec import no_keys
from functions.core import Reason, RouteFailure, RouteKey

NOW = 1_748_822_400_000  # 2025-06-02 09:00 KST
KEY = "made-up-cgv-key-for-tests-0123456789abcdefg"  # 43 characters, like CGV's


def test_the_signature_is_padded_base64_hmac_sha256_of_timestamp_and_path() -> None:
    # Reference value from `openssl dgst -sha256 -hmac KEY -binary | base64` over the same message.
    assert cgv.signature_headers(KEY, "/cnm/atkt/searchRegnList", NOW + 999) == {
        "X-TIMESTAMP": "1748822400",
        "X-SIGNATURE": "pamq2zBPsNceMMILl11EFfNDPOQKPvpgo2jiNOBy7Sk=",
    }


@pytest.mark.parametrize("key", [k for k in RouteKey if k.value.startswith("cgv-")])
def test_every_cgv_request_is_signed_over_its_path_without_the_query(key: RouteKey) -> None:
    spec = spec_for(key)
    params = spec.probe_params(NOW)
    sent = spec.request_to_send(params, keys={cgv.SIGNING_KEY: KEY}.get, now=NOW)
    unsigned = spec.build_request(params)
    path = unsigned.url.removeprefix("https://api.cgv.co.kr").partition("?")[0]
    assert path.startswith("/cnm/atkt/")
    assert dict(sent.headers) == {**unsigned.headers, **cgv.signature_headers(KEY, path, NOW)}
    assert (sent.method, sent.url, sent.json_body) == (unsigned.method, unsigned.url, None)
    assert len(base64.b64decode(sent.headers["X-SIGNATURE"], validate=True)) == 32
    assert KEY not in repr(sent)


@pytest.mark.parametrize("keys", [no_keys, {cgv.SIGNING_KEY: ""}.get])
def test_without_the_signing_key_a_cgv_request_is_a_configuration_failure(keys: Any) -> None:
    spec = spec_for(RouteKey.CGV_THEATERS)
    with pytest.raises(RouteFailure) as failed:
        spec.request_to_send(spec.probe_params(NOW), keys=keys, now=NOW)
    assert failed.value.reason is Reason.CONFIGURATION


def test_an_unsigned_operation_is_sent_as_built_whatever_the_keys() -> None:
    spec = spec_for(RouteKey.DTRYX_MOVIES)
    params = spec.probe_params(NOW)
    assert spec.request_to_send(params, keys=no_keys, now=NOW) == spec.build_request(params)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, 0),
        ("0", 0),
        (" 0 ", 0),
        (17, 17),
        ("17", 17),
        (17.0, 17),
        (None, None),
        ("", None),
        (" ", None),
        ("unknown", None),
        ("17seats", None),
        (True, None),
        ({}, None),
        (-1, None),
        ("-1", None),
        (1.5, None),
        (float("nan"), None),
        (float("inf"), None),
        (2**53, None),
        ("١٧", None),  # Arabic-Indic digits are not digits to CGV's client
    ],
)
def test_a_seat_count_is_a_non_negative_integer_or_unknown(value: object, expected: int | None) -> None:
    assert cgv.seat_count(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1230", "12:30"),
        ("12:30", "12:30"),
        ("12345", "12345"),
        ("93", "93"),
        ("", ""),
        (None, ""),
        (930, ""),
    ],
)
def test_times(value: object, expected: str) -> None:
    assert cgv.clock_time(value) == expected


def _normalize(key: RouteKey, rows: list[Any]) -> dict[str, Any]:
    spec = spec_for(key)
    return dict(spec.normalize(spec.validate({"statusCode": 0, "data": rows})))


def test_theaters_without_code_or_name_are_left_out() -> None:
    rows = [
        {"regnGrpCd": "01", "siteList": [{"siteNo": "0056", "siteNm": ""}, {"siteNm": "강변"}, "0001", None]},
        {"regnGrpCd": "02", "siteList": "none"},
        {"siteList": [{"siteNo": "0211", "siteNm": "안산"}]},
        {},
    ]
    assert _normalize(RouteKey.CGV_THEATERS, rows) == {
        "theaters": [{"theaterCode": "0211", "theaterName": "안산", "regionCode": None}]
    }


def test_movies_without_code_or_name_are_left_out() -> None:
    rows = [{"movNo": "1"}, {"movNm": "하얼빈"}, {"movNo": 30000985, "movNm": "하얼빈"}, {}]
    assert _normalize(RouteKey.CGV_MOVIES, rows) == {"movies": []}


def test_the_site_timetable_needs_theater_and_date_and_the_movie_timetable_the_movie_too() -> None:
    rows = [
        {"siteNo": "0056", "scnYmd": "20260304"},
        {"siteNo": "0056"},
        {"scnYmd": "20260304", "movNo": "1"},
    ]
    [site_row] = _normalize(RouteKey.CGV_TIMETABLE, rows)["timetable"]
    assert site_row == {
        "scheduleId": "202603040056",
        "movieCode": "",
        "movieName": "",
        "theaterCode": "0056",
        "theaterName": "",
        "playDate": "20260304",
        "startTime": "",
        "endTime": "",
        "totalSeats": None,
        "remainingSeats": None,
    }
    assert _normalize(RouteKey.CGV_TIMETABLE_MOVIE, rows) == {"timetable": []}


def test_only_the_site_timetable_names_a_screening_by_its_product() -> None:
    row = {"siteNo": "0056", "scnYmd": "20260304", "movNo": "1", "prodNm": "무대인사"}
    assert _normalize(RouteKey.CGV_TIMETABLE, [row])["timetable"][0]["movieName"] == "무대인사"
    assert _normalize(RouteKey.CGV_TIMETABLE_MOVIE, [row])["timetable"][0]["movieName"] == ""


@pytest.mark.parametrize(
    ("sequence", "suffix"), [(2, "2"), ("2", "2"), (0, ""), ("", ""), (None, ""), (True, "")]
)
def test_the_schedule_id_ends_with_the_sequence_when_there_is_one(sequence: object, suffix: str) -> None:
    row = {"siteNo": "0056", "scnYmd": "20260304", "scnSseq": sequence}
    assert _normalize(RouteKey.CGV_TIMETABLE, [row])["timetable"][0]["scheduleId"] == "202603040056" + suffix


@pytest.mark.parametrize(
    ("counts", "remaining"),
    [
        ({"frSeatCnt": "0", "frtmpSeatCnt": "17"}, 0),  # a real sell-out stays 0
        ({"frtmpSeatCnt": "17"}, 17),
        ({"frSeatCnt": None, "frtmpSeatCnt": 17}, 17),
        ({"frSeatCnt": "", "frtmpSeatCnt": "17"}, None),  # set but unreadable: unknown, not the other count
        ({}, None),
    ],
)
def test_remaining_seats_fall_back_to_the_temporary_count_only_when_missing(
    counts: dict[str, object], remaining: int | None
) -> None:
    row = {"siteNo": "0056", "scnYmd": "20260304", "movNo": "1", **counts}
    assert _normalize(RouteKey.CGV_TIMETABLE_MOVIE, [row])["timetable"][0]["remainingSeats"] == remaining


@pytest.mark.parametrize("status", [0, 0.0])
def test_any_object_rows_and_a_zero_status_pass(status: float) -> None:
    spec_for(RouteKey.CGV_THEATERS).validate({"statusCode": status, "statusMessage": "조회", "data": [{}]})


@pytest.mark.parametrize("body", [[1], [[]], [], None, 1, "ok"])
def test_an_answer_that_is_not_an_object_is_an_invalid_response(body: object) -> None:
    with pytest.raises(RouteFailure) as failed:
        spec_for(RouteKey.CGV_MOVIES).validate(body)
    assert failed.value.reason is Reason.INVALID_RESPONSE


@pytest.mark.parametrize("year", [0, 1, 4, 100, 400, 1900, 2000, 2023, 2024, 2100, 9996, 9999])
def test_the_date_pattern_takes_exactly_the_real_dates(year: int) -> None:
    # One pattern (which the API document shows) instead of a pattern and a date check it cannot show.
    pattern = re.compile(cgv.REAL_COMPACT_DATE)
    for month in range(14):
        for day in range(33):
            text = f"{year:04d}{month:02d}{day:02d}"
            try:
                datetime.strptime(text, "%Y%m%d")
            except ValueError:
                real = False
            else:
                real = True
            assert bool(pattern.fullmatch(text)) is real, text
