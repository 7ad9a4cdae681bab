"""A raw HTTP/1.1 server on 127.0.0.1 that misbehaves on purpose, one chosen behaviour per request path.

Each connection is served on its own thread: the request (line, headers, `Content-Length` body) is read, then
the behaviour the request's path selects writes whatever bytes it likes. A behaviour sees when the client
closes the connection (`Peer.wait_closed`), so a test can tell that a client gave up and *closed* the socket,
and when.
"""

from __future__ import annotations

import contextlib
import gzip
import select
import socket
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

HOLD_S = 20.0
"""The longest any behaviour keeps a connection (the server's close ends it sooner)."""


@dataclass
class Peer:
    """One accepted connection, from the server's side."""

    sock: socket.socket
    path: str
    stopping: threading.Event
    opened_at: float = field(default_factory=time.monotonic)
    closed_by_client_at: float | None = None

    def send(self, data: bytes) -> bool:
        """False once the client has gone away."""
        try:
            self.sock.sendall(data)
        except OSError:
            self._client_closed()
            return False
        return True

    def wait_closed(self, timeout: float) -> bool:
        """Waits up to `timeout` for the client to close the connection; True when it did."""
        end = time.monotonic() + timeout
        while not self.stopping.is_set() and self.closed_by_client_at is None:
            left = end - time.monotonic()
            if left <= 0:
                return False
            try:
                readable, _, _ = select.select([self.sock], [], [], min(left, 0.05))
            except (OSError, ValueError):  # the serving thread saw the close first and closed the socket
                break
            if readable:
                try:
                    if self.sock.recv(65_536):
                        continue  # a pipelined request or stray bytes: still open
                except OSError:
                    pass
                self._client_closed()
        return self.closed_by_client_at is not None or self.stopping.is_set()

    def drip(self, data: bytes, interval: float) -> None:
        """Sends `data` one byte every `interval` seconds until done or the client closes."""
        for index in range(len(data)):
            if not self.send(data[index : index + 1]) or self.wait_closed(interval):
                return

    def stream(self, chunks: Iterator[bytes]) -> None:
        for chunk in chunks:
            if self.stopping.is_set() or not self.send(chunk):
                return

    def hold(self) -> None:
        self.wait_closed(HOLD_S)

    def reset(self) -> None:
        """Closes with a TCP reset instead of a FIN."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        self.sock.close()

    def _client_closed(self) -> None:
        if self.closed_by_client_at is None:
            self.closed_by_client_at = time.monotonic()


Behaviour = Callable[[Peer], None]


class HostileServer:
    """Serves `behaviour_for(path)` to each request until closed. `peers` lists every connection served."""

    def __init__(self, behaviour_for: Callable[[str], Behaviour]) -> None:
        self._behaviour_for = behaviour_for
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self.peers: list[Peer] = []
        threading.Thread(target=self._accept, name="hostile-accept", daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def close(self) -> None:
        self._stopping.set()
        self._listener.close()
        with self._lock:
            peers = list(self.peers)
        for peer in peers:
            peer.sock.close()

    def __enter__(self) -> HostileServer:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):  # the listener closed: the server is done
            while not self._stopping.is_set():
                sock, _ = self._listener.accept()
                threading.Thread(target=self._serve, args=(sock,), name="hostile-peer", daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        with sock:
            path = _read_request_path(sock)
            if path is None:
                return
            peer = Peer(sock, path, self._stopping)
            with self._lock:
                self.peers.append(peer)
            # OSError, ValueError: the client, or the server's close, ended the connection under the behaviour
            with contextlib.suppress(OSError, ValueError):
                self._behaviour_for(path)(peer)


def _read_request_path(sock: socket.socket) -> str | None:
    received = b""
    while b"\r\n\r\n" not in received:
        chunk = sock.recv(65_536)
        if not chunk:
            return None
        received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next(
        (int(line.split(":", 1)[1]) for line in lines[1:] if line.lower().startswith("content-length:")), 0
    )
    while len(body) < length:
        chunk = sock.recv(65_536)
        if not chunk:
            return None
        body += chunk
    return lines[0].split(" ")[1]


# --- behaviours ------------------------------------------------------------------------------------------

JSON_OK = b'{"status":"ok","state":"ready","RetCode":"success"}'
"""A body every test spec, relay envelope and relay health check here accepts (the Olive Young relay's health
says `state: ready`, the others' `status: ok`), whichever target a test deals it to."""


def respond(head: bytes, body: bytes = b"") -> Behaviour:
    """Sends `head` (status line and headers, without the blank line) and `body`, then closes."""

    def behaviour(peer: Peer) -> None:
        peer.send(head + b"\r\nConnection: close\r\n\r\n" + body)

    return behaviour


def ok_json(body: bytes, *headers: bytes) -> Behaviour:
    extra = b"".join(b"\r\n" + header for header in headers)
    return respond(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d" % len(body) + extra, body
    )


def header_drip(interval: float = 0.05) -> Behaviour:
    """Response headers one byte at a time, each well within any per-read timeout; they never end."""

    def behaviour(peer: Peer) -> None:
        peer.drip(b"HTTP/1.1 200 OK\r\n" + b"X-Drip: " + b"a" * 100_000, interval)

    return behaviour


def body_drip(interval: float = 0.05) -> Behaviour:
    def behaviour(peer: Peer) -> None:
        if peer.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"):
            peer.drip(b'{"status":"ok","padding":"' + b"a" * 99_000, interval)

    return behaviour


def hang(peer: Peer) -> None:
    """Accepts the request and never answers."""
    peer.hold()


def hang_after_headers(peer: Peer) -> None:
    if peer.send(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n"):
        peer.hold()


def endless_informational(peer: Peer) -> None:
    """`100 Continue` after `100 Continue`, quickly, forever: never a final response."""
    while peer.send(b"HTTP/1.1 100 Continue\r\n\r\n") and not peer.wait_closed(0.01):
        pass


def gzipped_zeros(mib: int) -> Iterator[bytes]:
    """`mib` MiB of zero bytes, gzip-compressed (about 1 KiB per MiB), in writes of about 64 KiB.

    After a full flush deflate starts afresh, so every MiB after the first compresses to the same bytes: the
    stream is one block repeated, then the end and the trailer (CRC and size) for the whole. Produced as it is
    sent, so a client that stops reading stops the work.
    """
    zeros = bytes(1 << 20)
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    first = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    repeated = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    end = compressor.flush()[:-8]  # the final block, without the trailer of the 2 MiB compressed so far
    crc = zlib.crc32(zeros)
    yield first
    for done in range(1, mib, 64):
        batch = min(64, mib - done)
        for _ in range(batch):
            crc = zlib.crc32(zeros, crc)
        yield repeated * batch
    yield end + struct.pack("<II", crc, (mib << 20) & 0xFFFFFFFF)


def gzipped(chunks: Iterator[bytes]) -> Iterator[bytes]:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    for chunk in chunks:
        if compressed := compressor.compress(chunk):
            yield compressed
    yield compressor.flush()


def gzip_bomb(mib: int, *, coding: bytes = b"gzip", layers: int = 1) -> Behaviour:
    """A 200 whose body inflates to `mib` MiB of zeros through `layers` gzip layers, sent until it ends."""

    def behaviour(peer: Peer) -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: %s\r\n\r\n" % coding
        if peer.send(head):
            body = gzipped_zeros(mib)
            for _ in range(layers - 1):
                body = gzipped(body)
            peer.stream(body)

    return behaviour


def chunked(*chunks: bytes, end: bytes = b"0\r\n\r\n") -> Behaviour:
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for chunk in chunks) + end
    return respond(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked", body)


def reset_after_request(peer: Peer) -> None:
    peer.reset()


def reset_mid_body(peer: Peer) -> None:
    if peer.send(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + b'{"status":'):
        time.sleep(0.02)
        peer.reset()


def close_without_answer(peer: Peer) -> None:
    peer.sock.shutdown(socket.SHUT_RDWR)


def deep_json(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


GZIPPED_OK = gzip.compress(JSON_OK)
