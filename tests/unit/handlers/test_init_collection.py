"""The collector pause around INIT: it resumes only what it paused."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from functions.handlers.init_collection import pause_for_init, resume_after_init


@pytest.fixture(autouse=True)
def _collector_as_it_was() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    (gc.enable if enabled else gc.disable)()


def test_init_pauses_the_collector_and_resumes_it() -> None:
    gc.enable()

    pause_for_init()
    paused = gc.isenabled()
    resume_after_init()

    assert (paused, gc.isenabled()) == (False, True)


def test_a_collector_that_was_off_before_init_stays_off() -> None:
    gc.disable()

    pause_for_init()
    resume_after_init()

    assert not gc.isenabled()


def test_resuming_without_a_pause_changes_nothing() -> None:
    gc.disable()

    resume_after_init()

    assert not gc.isenabled()


def test_nested_pauses_resume_with_the_outermost() -> None:
    gc.enable()

    pause_for_init()  # the MCP function's module
    pause_for_init()  # the lookup function's, which it imports
    resume_after_init()
    inner = gc.isenabled()
    resume_after_init()

    assert (inner, gc.isenabled()) == (False, True)
