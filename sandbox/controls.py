"""The `/_sandbox/` controls (docs/design.md#sandbox): faults, clock, probe, calls, relays. Sandbox only,
never deployed."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from functions.core.model import RelayGroup, RouteKey
from sandbox.clock import SandboxClock
from sandbox.embedded_aws import StoreFault
from sandbox.gateway import ControlResponse
from sandbox.scheduler import iso_z
from sandbox.simulator.faults import (
    HTTP_FAULTS,
    MAX_SLOW_MS,
    PLAIN_FAULTS,
    RESPOND,
    ROUTE_TARGETS,
    Fault,
    parse_fault,
    parse_target,
)

STORE_TARGET = "store"
STORE_FAULTS = ("ok", *(f.value for f in StoreFault))
MAX_ADVANCE_MS = 7 * 24 * 60 * 60 * 1000
_FAULT_NAMES = ", ".join(
    [
        *sorted(PLAIN_FAULTS),
        *(f"http-{status}" for status in sorted(HTTP_FAULTS)),
        f"slow-<ms <= {MAX_SLOW_MS}>",
        f'{RESPOND} (with "status", "body", "contentType")',
    ]
)
_TARGETS = ", ".join(
    [
        *(f"{kind}:{k.value}" for kind in ROUTE_TARGETS for k in RouteKey),
        *(f"relay:{g.value}" for g in RelayGroup),
        STORE_TARGET,
    ]
)


M = TypeVar("M", bound=BaseModel)


class SimulatorControl(Protocol):
    """What the controls need from the simulated retailers and relays."""

    def set_fault(self, target: str, fault: Fault) -> None: ...

    def clear_faults(self) -> None: ...

    def calls(self) -> Mapping[str, int]: ...


class RelayControl(Protocol):
    """What the controls need from the sandbox's reference relays."""

    def urls(self) -> Mapping[RelayGroup, str]: ...

    def restart(self, group: RelayGroup) -> str: ...


class StoreFaultSwitch(Protocol):
    def set_store_fault(self, fault: StoreFault | None) -> None: ...


class ControlError(Exception):
    """Bad control input: answered 400 with this message."""


class FaultRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    target: str
    fault: str
    status: int | None = Field(None, strict=True)
    body: str | None = None
    content_type: str | None = Field(None, alias="contentType")

    @model_validator(mode="after")
    def _known_target_and_fault(self) -> FaultRequest:
        """The simulator's own parsing decides for retailers and relays; the store takes `ok` and its faults."""
        if self.target == STORE_TARGET:
            if self.fault not in STORE_FAULTS or self.status is not None:
                raise ValueError(
                    f"fault {self.fault!r} does not apply to the store; use one of: {', '.join(STORE_FAULTS)}"
                )
            return self
        try:
            parse_target(self.target)
        except ValueError as error:
            raise ValueError(f"{error}; expected one of: {_TARGETS}") from None
        try:
            self.parsed()
        except ValueError as error:
            raise ValueError(f"{error}; expected one of: {_FAULT_NAMES}") from None
        return self

    def parsed(self) -> Fault:
        return parse_fault(self.fault, status=self.status, body=self.body, content_type=self.content_type)


class RestartRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    group: RelayGroup


class ClockRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    advance_ms: int = Field(alias="advanceMs", ge=0, le=MAX_ADVANCE_MS, strict=True)


ProbeFirer = Callable[[], Mapping[str, Any]]
"""Fires the scheduled probe now and returns `{"ran": bool, ...summary}`."""
ClockMover = Callable[[int], Mapping[str, Any] | None]
"""Moves the clock forward by N ms and runs the scheduled probe if that crossed a slot boundary; returns the
probe's summary, or None."""


@dataclass(kw_only=True)
class SandboxControls:
    """Answers `(method, path, body)` for `/_sandbox/...`."""

    clock: SandboxClock
    store: StoreFaultSwitch
    simulator: SimulatorControl | None
    fire_probe: ProbeFirer
    advance_clock: ClockMover
    relays: RelayControl | None = None
    _routes: dict[str, dict[str, Callable[[bytes], ControlResponse]]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._routes = {
            "/_sandbox/faults": {"POST": self._set_fault, "DELETE": self._clear_faults},
            "/_sandbox/clock": {"POST": self._move_clock, "GET": self._read_clock},
            "/_sandbox/probe": {"POST": self._probe},
            "/_sandbox/calls": {"GET": self._calls},
            "/_sandbox/relays": {"GET": self._relay_urls},
            "/_sandbox/relays/restart": {"POST": self._restart_relay},
        }

    def __call__(self, method: str, path: str, body: bytes) -> ControlResponse:
        methods = self._routes.get(path.rstrip("/") or path)
        if methods is None:
            return _error(404, f"no sandbox control at {path}; try {', '.join(self._routes)}")
        action = methods.get(method)
        if action is None:
            allowed = ", ".join(methods)
            return ControlResponse(
                405, {"error": f"{method} not allowed on {path}; use {allowed}"}, {"allow": allowed}
            )
        try:
            return action(body)
        except ControlError as error:
            return _error(400, str(error))

    def _set_fault(self, body: bytes) -> ControlResponse:
        request = _parse(FaultRequest, body)
        if request.target == STORE_TARGET:
            self.store.set_store_fault(None if request.fault == "ok" else StoreFault(request.fault))
        else:
            self._require_simulator().set_fault(request.target, request.parsed())
        return ControlResponse(200, {"target": request.target, "fault": request.fault})

    def _clear_faults(self, body: bytes) -> ControlResponse:
        self.store.set_store_fault(None)
        if self.simulator is not None:
            self.simulator.clear_faults()
        return ControlResponse(200, {"cleared": True})

    def _move_clock(self, body: bytes) -> ControlResponse:
        request = _parse(ClockRequest, body)
        probe = self.advance_clock(request.advance_ms)  # returns after the probe the move made due
        return ControlResponse(200, {**self._clock_state(), "probe": probe})

    def _read_clock(self, body: bytes) -> ControlResponse:
        return ControlResponse(200, self._clock_state())

    def _probe(self, body: bytes) -> ControlResponse:
        if body.strip():
            raise ControlError("POST /_sandbox/probe takes no body")
        return ControlResponse(200, dict(self.fire_probe()))

    def _calls(self, body: bytes) -> ControlResponse:
        return ControlResponse(200, dict(self._require_simulator().calls()))

    def _relay_urls(self, body: bytes) -> ControlResponse:
        return ControlResponse(
            200, {group.value: url for group, url in self._require_relays().urls().items()}
        )

    def _restart_relay(self, body: bytes) -> ControlResponse:
        request = _parse(RestartRequest, body)
        relays = self._require_relays()
        if request.group not in relays.urls():
            raise ControlError(f"this sandbox runs no {request.group} relay")
        return ControlResponse(200, {"group": request.group.value, "url": relays.restart(request.group)})

    def _clock_state(self) -> dict[str, Any]:
        now = self.clock()
        return {"now": now, "nowIso": iso_z(now), "offsetMs": self.clock.offset_ms}

    def _require_relays(self) -> RelayControl:
        if self.relays is None:
            raise ControlError("this sandbox runs with --upstream real: its relays are not the sandbox's")
        return self.relays

    def _require_simulator(self) -> SimulatorControl:
        if self.simulator is None:
            raise ControlError("this sandbox runs with --upstream real: there are no simulated upstreams")
        return self.simulator


def _parse(model: type[M], body: bytes) -> M:
    try:
        payload = json.loads(body or b"null")
    except ValueError:
        raise ControlError("the body must be JSON") from None
    if not isinstance(payload, dict):
        raise ControlError("the body must be a JSON object")
    try:
        return model.model_validate(payload)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in issue['loc']) or 'body'}: {issue['msg']}" for issue in error.errors()
        )
        raise ControlError(problems) from None


def _error(status: int, message: str) -> ControlResponse:
    return ControlResponse(status, {"error": message})
