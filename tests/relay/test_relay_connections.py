"""The relay's connections on real sockets: request heads that never complete, idle and dribbling keep-alive
connections, the cap below the descriptor limit (the longest idle connection making room for a new one) and
its log, accept() out of descriptors, slow bodies."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from functions.core import RelayGroup, RouteKey
from relay.config import DESCRIPTOR_RESERVE, ConnectionSettings
from relay.server import BackgroundRelay, bound_socket
from tests.relay.conftest import RelayFactory, RelayUnderTest, auth, path_of, probe_body
from tests.relay.relay_process import (
    RelayProcess,
    bearer,
    closed_by_relay,
    read_until_closed,
    running_relay,
    status_of,
)
from tests.support.waiting import eventually

OY = RelayGroup.OLIVEYOUNG
DTRYX = RelayGroup.DTRYX
SHORT_TIMEOUT = {"RELAY_HEADER_TIMEOUT_S": "0.5"}


def _dribble_until_closed(sockets: list[socket.socket], within_s: float) -> bool:
    """Sends one byte of a never-ending header on each socket every 50 ms; whether the relay closed them all."""
    open_ones = list(sockets)
    end = time.monotonic() + within_s
    while open_ones and time.monotonic() < end:
        for sock in list(open_ones):
            try:
                sock.sendall(b"a")
            except OSError:
                open_ones.remove(sock)
                continue
            if closed_by_relay(sock):
                open_ones.remove(sock)
        time.sleep(0.05)
    return not open_ones


def _kept_alive(relay: RelayProcess) -> socket.socket:
    """A connection on which the Olive Young relay answered one health check and keeps it open."""
    connection = relay.connect(OY)
    connection.sendall(f"GET /health HTTP/1.1\r\nHost: relay\r\n{bearer(OY)}\r\n".encode())
    answer = http.client.HTTPResponse(connection)
    answer.begin()
    answer.read()
    assert (answer.status, answer.getheader("connection")) == (200, None)  # keep-alive
    return connection


def test_a_connection_without_a_complete_request_head_is_closed(tmp_path: Path) -> None:
    with running_relay(tmp_path, (OY,), environment=SHORT_TIMEOUT) as relay:
        silent = relay.connect(OY)
        half = relay.connect(OY)
        half.sendall(b"GET /health HTTP/1.1\r\nHost: relay\r\n")
        idle_after_an_answer = _kept_alive(relay)
        assert eventually(
            lambda: all(closed_by_relay(sock) for sock in (silent, half, idle_after_an_answer)), within_s=5
        )
        dribbling = relay.connect(OY)
        dribbling.sendall(b"GET /health HTTP/1.1\r\nX-Slow: ")
        next_head_dribbling = _kept_alive(relay)
        next_head_dribbling.sendall(b"GET /health HTTP/1.1\r\nX-Slow: ")
        assert _dribble_until_closed([dribbling, next_head_dribbling], within_s=5)  # bytes never extend it
        assert relay.health(OY) == 200
        assert relay.log_lines()  # every stderr line is JSON


def test_at_the_cap_the_longest_idle_connection_makes_room_for_a_health_check(tmp_path: Path) -> None:
    """Issue 31: a flood of idle sockets up to the cap no longer keeps the operator's health check out."""
    with running_relay(tmp_path, open_files=128) as relay:
        (starting,) = relay.events("process-starting")
        cap = 128 - DESCRIPTOR_RESERVE
        assert starting["limit"] == cap
        flood = [relay.connect(DTRYX) for _ in range(cap)]  # idle: not a byte sent
        assert relay.health(DTRYX) == 200
        # It took the place of the oldest alone: the others still wait out their 10 s head deadline, so the
        # answer did not wait for them.
        assert eventually(lambda: closed_by_relay(flood[0]), within_s=10)
        assert not any(closed_by_relay(sock) for sock in flood[1:])
        # The first takes the health check's place (it has closed); each of the others the longest idle's.
        more = [relay.connect(DTRYX) for _ in range(40)]
        assert eventually(lambda: all(closed_by_relay(sock) for sock in flood[1:40]), within_s=10)
        assert not any(closed_by_relay(sock) for sock in flood[40:] + more)
        assert relay.health(DTRYX) == 200
        assert eventually(lambda: closed_by_relay(flood[40]), within_s=10)
        (closed,) = relay.events("connections-closed")  # one line for 41 (the interval is 60 s)
        assert (closed["outcome"], closed["closed"], closed["limit"]) == ("idle-longest", 1, cap)
        assert not relay.events("connections-refused")
        assert relay.process.poll() is None
    assert not relay.events("library-log")  # no accept() tracebacks, nothing but the relay's own lines


@pytest.fixture
def served(make_relay: RelayFactory) -> Iterator[tuple[RelayUnderTest, BackgroundRelay]]:
    running: list[BackgroundRelay] = []

    def serve(relay: RelayUnderTest, settings: ConnectionSettings | None = None) -> BackgroundRelay:
        running.append(BackgroundRelay(relay.app, bound_socket(), settings).start())
        return running[-1]

    relay = make_relay((DTRYX, OY))
    yield relay, serve(relay, ConnectionSettings(max_connections=2, overload_log_interval_s=0.3))
    for background in running:
        background.stop()


def _connect(background: BackgroundRelay, opened: ExitStack) -> socket.socket:
    """A new connection to the relay, closed when `opened` unwinds."""
    return opened.enter_context(socket.create_connection(("127.0.0.1", background.port), timeout=5))


def _in_progress(background: BackgroundRelay, relay: RelayUnderTest, opened: ExitStack) -> socket.socket:
    """A connection whose request is in progress: its head sent, its body still to come."""
    sock = _connect(background, opened)
    head = f"POST {path_of(RouteKey.DTRYX_MOVIES)} HTTP/1.1\r\nHost: relay\r\n{bearer_for(DTRYX)}"
    before = relay.app.relays[DTRYX].outstanding
    sock.sendall(f"{head}Content-Length: 100\r\n\r\n{{".encode())
    assert eventually(lambda: relay.app.relays[DTRYX].outstanding == before + 1)
    return sock


def test_with_every_connection_busy_a_new_one_is_closed_and_logged_once_per_interval(
    served: tuple[RelayUnderTest, BackgroundRelay],
) -> None:
    relay, background = served
    with ExitStack() as opened:
        busy = [_in_progress(background, relay, opened) for _ in range(2)]
        beyond = [_connect(background, opened) for _ in range(10)]
        assert eventually(lambda: all(closed_by_relay(sock) for sock in beyond))
        assert eventually(lambda: len(_refusals(relay)) == 2)
        assert [(line["refused"], line["limit"]) for line in _refusals(relay)] == [(1, 2), (9, 2)]
        assert not any(closed_by_relay(sock) for sock in busy)


def test_the_connection_idle_the_longest_goes_first_and_an_answer_makes_one_idle_anew(
    served: tuple[RelayUnderTest, BackgroundRelay],
) -> None:
    relay, background = served
    with ExitStack() as opened:
        first, second = (_connect(background, opened) for _ in "12")
        assert eventually(lambda: background.open_connections == 2)  # both idle, `first` the longer
        first.sendall(f"GET /health HTTP/1.1\r\nHost: relay\r\n{bearer_for(OY)}\r\n".encode())
        answer = http.client.HTTPResponse(first)
        answer.begin()
        answer.read()
        assert (answer.status, answer.getheader("connection")) == (200, None)  # kept alive, idle again
        newcomer = _connect(background, opened)
        assert eventually(lambda: closed_by_relay(second))  # idle since it opened: longer than `first`
        assert not closed_by_relay(first)
        assert not closed_by_relay(newcomer)
        assert eventually(lambda: _lines(relay, "connections-closed") != [])
        busy = _in_progress(background, relay, opened)  # `first` is now the longest idle
        assert eventually(lambda: closed_by_relay(first))
        assert not closed_by_relay(busy)
    assert not _refusals(relay)


def _lines(relay: RelayUnderTest, event: str) -> list[dict[str, object]]:
    return [line for line in relay.log_lines() if line["event"] == event]


def _refusals(relay: RelayUnderTest) -> list[dict[str, object]]:
    return _lines(relay, "connections-refused")


STARVED_RELAY = """
import json, os, resource, sys, tempfile
from pathlib import Path
from functions.core import RelayGroup
from relay.config import ConnectionSettings, GroupConfig, RelayConfig
from relay.logs import RelayLog
from relay.server import BackgroundRelay, bound_socket, build_apps

state = Path(tempfile.mkdtemp())
token = "d" * 40  # STARVED_AUTH
config = RelayConfig((GroupConfig(RelayGroup.DTRYX, token, state, 0),))
(app,) = build_apps(config, log=RelayLog()).values()
relay = BackgroundRelay(app, bound_socket(), ConnectionSettings(max_connections=500)).start()
resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
hoard = []
try:
    while True:
        hoard.append(os.open(os.devnull, os.O_RDONLY))
except OSError:
    pass
print(relay.port, flush=True)
sys.stdin.readline()
for descriptor in hoard:
    os.close(descriptor)
sys.stdin.readline()
relay.stop()
"""

STARVED_AUTH = "Bearer " + "d" * 40


def test_accept_out_of_descriptors_pauses_and_logs_once_instead_of_spinning(tmp_path: Path) -> None:
    """The process's descriptors all taken elsewhere (the cap set above the limit): accept() fails, the relay
    says so once and tries again later; once descriptors are free, the waiting caller is served."""
    stderr = tmp_path / "stderr"
    answers: list[int] = []
    with (
        stderr.open("wb") as errors,
        subprocess.Popen(  # noqa: S603 - this interpreter
            [sys.executable, "-c", STARVED_RELAY],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errors,
            cwd=Path(__file__).parents[2],
        ) as child,
        httpx.Client(timeout=20) as client,
    ):
        assert child.stdin is not None
        assert child.stdout is not None
        url = f"http://127.0.0.1:{int(child.stdout.readline())}/v1/dtryx/health"
        caller = threading.Thread(
            target=lambda: answers.append(
                client.get(url, headers={"Authorization": STARVED_AUTH}).status_code
            )
        )
        caller.start()
        assert eventually(lambda: bool(_events(stderr, "connections-refused")), within_s=10)
        time.sleep(1)  # two more failed tries meanwhile
        child.stdin.write(b"free\n")
        child.stdin.flush()
        caller.join(20)
        child.stdin.write(b"stop\n")
        child.stdin.flush()
        assert child.wait(30) == 0
    assert answers == [200]
    assert [line["outcome"] for line in _events(stderr, "connections-refused")] == ["descriptors"]


def _events(stderr: Path, name: str) -> list[dict[str, object]]:
    lines = [json.loads(text) for text in stderr.read_text().splitlines()]
    return [line for line in lines if line["event"] == name]


@pytest.mark.parametrize(
    ("group", "status", "body"), [(OY, 408, {"error": "Request timeout"}), (DTRYX, 504, None)]
)
def test_a_body_that_does_not_arrive_in_time_frees_its_slot(
    make_relay: RelayFactory, group: RelayGroup, status: int, body: dict[str, str] | None
) -> None:
    relay = make_relay((OY, DTRYX), body_deadline_ms=300)
    background = BackgroundRelay(relay.app, bound_socket()).start()
    key = RouteKey.OY_GOODS_INFO if group is OY else RouteKey.DTRYX_MOVIES
    with ExitStack() as opened:
        opened.callback(background.stop)
        address = ("127.0.0.1", background.port)
        uploads = [opened.enter_context(socket.create_connection(address, timeout=10)) for _ in range(8)]
        head = f"POST {path_of(key)} HTTP/1.1\r\nHost: relay\r\n{bearer_for(group)}Content-Length: 16000\r\n"
        for number, upload in enumerate(uploads):  # 8 consumers (Olive Young allows 2 requests each)
            upload.sendall(f"{head}x-relay-consumer: {number:064x}\r\n\r\n{{".encode())
        answers = [read_until_closed(upload) for upload in uploads]  # the relay answers and closes each
        assert [status_of(answer) for answer in answers] == [status] * 8
        if body is not None:
            assert all(json.loads(answer.split(b"\r\n\r\n", 1)[1]) == body for answer in answers)
        fresh = httpx.post(
            f"{background.url}{path_of(key)}", json=probe_body(key), headers=auth(group), timeout=10
        )
        assert fresh.status_code == 200  # the 8 outstanding slots are free again


def bearer_for(group: RelayGroup) -> str:
    return "".join(f"{name}: {value}\r\n" for name, value in auth(group).items())
