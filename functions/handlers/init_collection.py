"""The cyclic garbage collector stays off while a function's INIT imports its modules and builds its container.

INIT creates some 60,000 objects (modules, classes, pydantic's field and schema objects, botocore's service
models) and every one of them lives as long as the execution environment. With the collector on, CPython walks
them again and again while they are being created: about a tenth of the lookup function's INIT CPU, none of it
freeing anything (bench/profile_notes.md). Each handler module calls `pause_for_init()` before its imports,
and `composition.prepare_at_init` (the last statement of each handler module) calls `resume_after_init()`,
which first freezes what INIT built (`gc.freeze()`): resumed without it, the collector's first full pass would
walk all of it once more, in the first request. The price is that a reference cycle INIT dropped is never
freed. Only the standard library is imported here, so the pause starts before anything heavy loads.
"""

from __future__ import annotations

import gc

_pauses = 0
"""Pauses not yet resumed: a handler module that imports another (the MCP function imports the lookup
function's) pauses around the other's own pause, and only the outermost resume ends INIT."""
_resume = False
"""Whether the outermost pause turned the collector off, so its resume turns it back on."""


def pause_for_init() -> None:
    """Turns the collector off, if it is on, until the matching `resume_after_init()`."""
    global _pauses, _resume
    if _pauses == 0:
        _resume = gc.isenabled()
        gc.disable()
    _pauses += 1


def resume_after_init() -> None:
    """Ends a pause; the outermost one turns the collector back on, past what exists now, if its pause turned it
    off. Without a pause it changes nothing."""
    global _pauses
    if _pauses == 0:
        return
    _pauses -= 1
    if _pauses == 0 and _resume:
        gc.freeze()
        gc.enable()
