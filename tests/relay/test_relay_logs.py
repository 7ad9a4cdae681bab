"""The relay's logs: one JSON line per request with its id, operation, status and duration, and nothing a
caller sent (tokens, keys, search words, consumer ids) or a retailer answered."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from functions.core import RelayGroup, RouteKey
from relay.logs import RelayLog, template_code
from tests.relay.conftest import TOKENS, RelayUnderTest, auth, probe_body

CONSUMER = "c0ffee" * 10 + "c0ff"


def test_each_request_is_logged_without_anything_it_carried(relay: RelayUnderTest) -> None:
    secrets_sent = [*TOKENS.values(), "gs25-caller-key", "콜라검색어", CONSUMER, "wrong-token-value"]
    relay.post(RouteKey.GS25_STOCK, {**probe_body(RouteKey.GS25_STOCK), "apiKey": "gs25-caller-key"})
    relay.post(RouteKey.CU_STOCK, {**probe_body(RouteKey.CU_STOCK), "searchWord": "콜라검색어"})
    relay.post(RouteKey.OY_GOODS_INFO, headers={"x-relay-consumer": CONSUMER, "x-request-id": "req-42"})
    relay.client.get("/health", headers={"Authorization": "Bearer wrong-token-value"})
    relay.client.post("/v1/dtryx/movies", content=b"{bad json", headers=auth(RelayGroup.DTRYX))
    text = relay.log.getvalue()
    assert not any(secret in text for secret in secrets_sent)
    assert "store" not in text.lower()  # no retailer answer either
    requests = [line for line in relay.log_lines() if line["event"] == "request"]
    assert [(r["group"], r["operation"], r["status"]) for r in requests] == [
        ("convenience", "gs25-stock", 200),
        ("convenience", "cu-stock", 200),
        ("oliveyoung", "stock-goods-info-v3", 200),
        ("oliveyoung", "health", 401),
        ("dtryx", "movies", 400),
    ]
    assert requests[2]["requestId"] == "req-42"
    assert requests[1]["cache"] == "miss"
    assert all(set(r) >= {"time", "service", "requestId", "durationMs"} for r in requests)


def test_only_whitelisted_fields_in_their_shapes_are_written() -> None:
    stream = io.StringIO()
    log = RelayLog(stream)
    log.event(
        "request",
        requestId="ok-id",
        operation="has spaces and 비밀",
        status=-1,
        durationMs=float("nan"),
        token="secret",
        cache="hit",
    )
    (line,) = [json.loads(text) for text in stream.getvalue().splitlines()]
    assert set(line) == {"time", "service", "event", "requestId", "cache"}
    assert log.stats() == {"queued": 0, "written": 1, "dropped": 0, "errors": 0, "lowSpace": False}


def test_a_broken_log_stream_never_fails_a_request() -> None:
    stream = io.StringIO()
    stream.close()
    log = RelayLog(stream)
    log.event("request", status=200)
    assert log.stats()["errors"] == 1


@pytest.mark.parametrize(
    ("template", "code"),
    [
        ("Invalid HTTP request received.", "invalid-http-request-received"),
        ("Exception in ASGI application\n", "exception-in-asgi-application"),
        ("socket.accept() out of system resource", "socket-accept-out-of-system-resource"),
        ("Exception in callback <Handle _read_ready(('10.1.2.3', 443))>", "exception-in-callback"),
        ("Connection from 10.1.2.3 lost", "connection-from"),
        (
            "Task was destroyed but it is pending!\ntask: <Task secret>",
            "task-was-destroyed-but-it-is-pending",
        ),
        ("%s", None),
        (ValueError("secret text"), None),
    ],
)
def test_a_library_log_template_becomes_a_code_without_any_value(template: object, code: str | None) -> None:
    assert template_code(template) == code


PROCESS_OUTPUT = """
import asyncio, logging, sys, threading, warnings
from relay.logs import RelayLog, route_process_output

route_process_output(RelayLog())
logging.getLogger("uvicorn.error").warning("Invalid HTTP request received.")
logging.getLogger("uvicorn.error").info("Started server process [%d]", 42)  # below the level: nothing
try:
    raise OSError(24, "Too many open files at 10.1.2.3")
except OSError:
    logging.getLogger("asyncio").error("socket.accept() out of system resource\\nsocket: <10.1.2.3>", exc_info=True)
warnings.warn("unclosed <socket raddr=('10.1.2.3', 443)>", ResourceWarning, stacklevel=1)
thread = threading.Thread(target=lambda: 1 / 0)
thread.start()
thread.join()
raise KeyError("10.1.2.3 secret")
"""


def test_everything_the_process_would_write_to_stderr_becomes_a_json_line() -> None:
    finished = subprocess.run(  # noqa: S603 - this interpreter
        [sys.executable, "-W", "always", "-c", PROCESS_OUTPUT],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=Path(__file__).parents[2],
    )
    assert finished.returncode == 1
    lines = [json.loads(text) for text in finished.stderr.splitlines()]  # every line is JSON
    assert [(line["event"], line.get("template"), line.get("errorType")) for line in lines] == [
        ("library-log", "invalid-http-request-received", None),
        ("library-log", "socket-accept-out-of-system-resource", "OSError"),
        ("warning", None, "ResourceWarning"),
        ("thread-failed", None, "ZeroDivisionError"),
        ("process-failed", None, "KeyError"),
    ]
    assert "10.1.2.3" not in finished.stderr
    assert "secret" not in finished.stderr
