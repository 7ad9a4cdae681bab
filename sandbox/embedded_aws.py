"""Embedded DynamoDB and Secrets Manager: moto's server on 127.0.0.1, with a fault proxy in front of DynamoDB.

The handlers find these through the standard `AWS_ENDPOINT_URL_<SERVICE>` variables, so they run exactly the
code that talks to AWS in production.
"""

from __future__ import annotations

import contextlib
import json
import logging
import selectors
import socket
import struct
import threading
from collections.abc import Mapping
from enum import StrEnum
from types import TracebackType
from typing import TYPE_CHECKING, Any

import boto3
from moto.server import ThreadedMotoServer

from functions.adapters.dynamo_store import table_definition, time_to_live_definition

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_secretsmanager import SecretsManagerClient

REGION = "ap-northeast-2"
TABLE_NAME = "route-health-sandbox"
SECRET_ID = "route-health/sandbox"  # noqa: S105 - a name, not a value
# moto accepts any credentials; these only keep boto3 from looking for real ones.
FAKE_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "sandbox", "AWS_SECRET_ACCESS_KEY": "sandbox"}


class StoreFault(StrEnum):
    """How the embedded DynamoDB can be made unreachable (`POST /_sandbox/faults {"target": "store"}`)."""

    REFUSE = "refuse"
    """Every connection is reset at once."""
    TIMEOUT = "timeout"
    """Connections are accepted and never answered."""


class FaultProxy:
    """A small TCP proxy on 127.0.0.1 that forwards to `upstream_port`, or refuses/hangs connections on demand."""

    def __init__(self, upstream_port: int) -> None:
        self._upstream = ("127.0.0.1", upstream_port)
        self._fault: StoreFault | None = None
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._held: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port: int = self._listener.getsockname()[1]
        self._threads: list[threading.Thread] = []
        self._acceptor = threading.Thread(target=self._accept_loop, name="store-proxy", daemon=True)

    def start(self) -> None:
        self._acceptor.start()

    def set_fault(self, fault: StoreFault | None) -> None:
        """Applies a fault (None clears it). Open connections are dropped so pooled clients feel it at once."""
        with self._lock:
            self._fault = fault
            self._drop_all_locked()

    def stop(self) -> None:
        self._stopping.set()
        self._acceptor.join()
        with self._lock:
            self._drop_all_locked()
        for thread in self._threads:
            thread.join()
        self._listener.close()

    def _drop_all_locked(self) -> None:
        for sock in self._open:
            _shutdown_quietly(sock)  # its pump thread sees EOF, closes both ends and exits
        for sock in self._held:
            sock.close()
        self._held.clear()

    def _accept_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                fault = self._fault
                if fault is StoreFault.TIMEOUT:
                    self._held.add(client)
                    continue
            if fault is StoreFault.REFUSE:
                _reset(client)
                continue
            self._threads = [t for t in self._threads if t.is_alive()]
            thread = threading.Thread(
                target=self._forward, args=(client,), name="store-proxy-pipe", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def _forward(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self._upstream, timeout=2)
        except OSError:
            _reset(client)
            return
        with self._lock:
            self._open.update((client, upstream))
        peer = {client: upstream, upstream: client}
        try:
            with selectors.DefaultSelector() as selector:
                for sock in peer:
                    sock.setblocking(True)
                    selector.register(sock, selectors.EVENT_READ)
                while not self._stopping.is_set():
                    for key, _ in selector.select(timeout=0.2):
                        source: socket.socket = key.fileobj  # type: ignore[assignment]
                        data = source.recv(65536)
                        if not data:
                            return
                        peer[source].sendall(data)
        except OSError:
            return
        finally:
            with self._lock:
                self._open.difference_update((client, upstream))
            client.close()
            upstream.close()


def _shutdown_quietly(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _reset(sock: socket.socket) -> None:
    """Closes with an RST (linger 0): the client sees 'connection reset', like a refused store."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()


class EmbeddedAws:
    """moto's server (DynamoDB table + the function secret) and the DynamoDB fault proxy, on 127.0.0.1."""

    def __init__(
        self, secret_values: Mapping[str, str], *, table_name: str = TABLE_NAME, secret_id: str = SECRET_ID
    ) -> None:
        # moto's servers in one process share their accounts: two at once need their own table and secret.
        self.table_name = table_name
        self.secret_id = secret_id
        self._secret_values = dict(secret_values)
        self._moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self._proxy: FaultProxy | None = None
        self._moto_url = ""

    def __enter__(self) -> EmbeddedAws:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> None:
        # moto's werkzeug server logs every request; the sandbox's output is for the operator.
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self._moto.start()
        _, moto_port = self._moto.get_host_and_port()
        self._moto_url = f"http://127.0.0.1:{moto_port}"
        self._proxy = FaultProxy(moto_port)
        self._proxy.start()
        self._create_resources()

    def stop(self) -> None:
        if self._proxy is not None:
            self._proxy.stop()
            self._proxy = None
        if self._moto_url:
            self._moto.stop()
            self._moto_url = ""

    @property
    def dynamodb_url(self) -> str:
        """Where the handlers reach DynamoDB: through the fault proxy."""
        assert self._proxy is not None, "start() first"
        return f"http://127.0.0.1:{self._proxy.port}"

    @property
    def secretsmanager_url(self) -> str:
        assert self._moto_url, "start() first"
        return self._moto_url

    def environment(self) -> dict[str, str]:
        """The variables that point the real handlers at the embedded services."""
        return {
            **FAKE_CREDENTIALS,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_REGION": REGION,
            "AWS_ENDPOINT_URL_DYNAMODB": self.dynamodb_url,
            # botocore derives the name from the service id "Secrets Manager": ..._SECRETS_MANAGER. The
            # spelling without the underscore is set too, for anything reading that.
            "AWS_ENDPOINT_URL_SECRETS_MANAGER": self.secretsmanager_url,
            "AWS_ENDPOINT_URL_SECRETSMANAGER": self.secretsmanager_url,
            "ROUTE_HEALTH_TABLE": self.table_name,
            "ROUTE_HEALTH_SECRET_ID": self.secret_id,
        }

    def set_store_fault(self, fault: StoreFault | None) -> None:
        assert self._proxy is not None, "start() first"
        self._proxy.set_fault(fault)

    def dynamodb_client(self) -> DynamoDBClient:
        """A client straight to moto (bypassing the fault proxy), for setup and tests."""
        return boto3.client("dynamodb", endpoint_url=self._moto_url, **_client_options())

    def secretsmanager_client(self) -> SecretsManagerClient:
        return boto3.client("secretsmanager", endpoint_url=self._moto_url, **_client_options())

    def _create_resources(self) -> None:
        dynamodb = self.dynamodb_client()
        dynamodb.create_table(**table_definition(self.table_name))
        dynamodb.update_time_to_live(**time_to_live_definition(self.table_name))
        self.secretsmanager_client().create_secret(
            Name=self.secret_id, SecretString=json.dumps(self._secret_values)
        )


def _client_options() -> dict[str, Any]:
    return {
        "region_name": REGION,
        "aws_access_key_id": FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    }
