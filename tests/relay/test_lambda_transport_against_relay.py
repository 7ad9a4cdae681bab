"""End to end: the Lambda's relay transport against the real relay server (uvicorn on 127.0.0.1), the relay
in front of simulated retailers. A body the relay refuses would fail here: the Lambda's bodies must pass the
relay's input rules for every operation."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel

from functions.adapters.http import new_http_client
from functions.adapters.relay import RelayCredentials, RelayEndpoint, RelayTransport
from functions.catalog import spec_for
from functions.core import Reason, RelayGroup, RouteKey, group_of
from relay.config import GroupConfig, RelayConfig
from relay.logs import RelayLog
from relay.server import BackgroundRelay, bound_socket, build_apps
from tests.relay.conftest import CGV_SIGNING_KEY, PROCESS_GROUPS, START_MS, TOKENS, Retailers
from tests.support.clock import ManualClock
from tests.support.core_fakes import RecordingRelayEvents

ACCESS = {"access_client_id": "client.access", "access_client_secret": "access-secret-value"}
GS25_KEY = "lambda-gs25-key"


@pytest.fixture
def served(tmp_path: Path, retailers: Retailers) -> Iterator[tuple[RelayTransport, io.StringIO]]:
    config = RelayConfig(
        tuple(GroupConfig(group, TOKENS[group], tmp_path / group.value, 0) for group in PROCESS_GROUPS),
        cgv_signing_key=CGV_SIGNING_KEY,
    )
    for group_config in config.groups:
        group_config.state_dir.mkdir(mode=0o700)
    log = io.StringIO()
    (app,) = build_apps(
        config,
        log=RelayLog(log),
        clock=ManualClock(START_MS),
        transport=httpx.MockTransport(retailers.handle),
    ).values()
    relay = BackgroundRelay(app, bound_socket()).start()
    endpoints = {
        group: RelayEndpoint.parse(
            group,
            relay.url,
            RelayCredentials(
                TOKENS[group], **ACCESS, api_key=GS25_KEY if group is RelayGroup.CONVENIENCE else None
            ),
        )
        for group in RelayGroup
    }
    with new_http_client() as client:
        yield RelayTransport(client, endpoints, events=RecordingRelayEvents()), log
    relay.stop()


@pytest.mark.parametrize("key", list(RouteKey))
def test_every_operation_through_the_real_relay(
    served: tuple[RelayTransport, io.StringIO], retailers: Retailers, key: RouteKey
) -> None:
    transport, log = served
    spec = spec_for(key)
    body = transport.fetch(spec, spec.probe_params(START_MS), timeout_ms=5_000)
    assert isinstance(body, BaseModel)  # the spec's validated answer
    assert retailers.calls(key) == 1
    (sent,) = retailers.requests
    credentials = [*TOKENS.values(), *ACCESS.values(), CGV_SIGNING_KEY]
    seen = str(sent.url) + sent.content.decode() + json.dumps(dict(sent.headers))
    assert not any(value in seen for value in credentials)
    if key is RouteKey.GS25_STOCK:
        assert sent.headers["Api-Key"] == GS25_KEY
    deadline = time.monotonic() + 5  # the relay logs a request once it has answered it
    while '"event":"request"' not in log.getvalue():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    (line,) = [json.loads(text) for text in log.getvalue().splitlines() if '"event":"request"' in text]
    assert (line["group"], line["status"]) == (group_of(key).value, 200)


def test_every_group_is_healthy_for_the_probe(served: tuple[RelayTransport, io.StringIO]) -> None:
    transport, _ = served
    for group in RelayGroup:
        check = transport.check_health(group, timeout_ms=3_000, now=START_MS)
        assert (check.healthy, check.reason) == (True, Reason.OK), group
