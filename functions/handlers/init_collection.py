"""The cyclic garbage collector stays off while a function's INIT imports its modules and builds its container.

INIT creates some 60,000 objects (modules, classes, pydantic's field and schema objects, botocore's service
models) and every one of them lives as long as the execution environment. With the collector on, CPython walks
them again and again while they are being created: about a tenth of the lookup function's INIT CPU, none of it
freeing anything (bench/profile_notes.md). Each handler module calls `pause_for_init()` before its imports,
and `prepare_container_at_init` (the last statement of each handler module) calls `resume_after_init()`,
which first freezes what INIT built (`gc.freeze()`): resumed without it, the collector's first full pass would
walk all of it once more, in the first request. The price is that a reference cycle INIT dropped is never
freed. Only the standard library is imported here, so the pause starts before anything heavy loads.
"""

from __future__ import annotations

import gc

_paused = False


def pause_for_init() -> None:
    """Turns the collector off, if it is on, until `resume_after_init()`."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume_after_init() -> None:
    """Turns the collector back on, past what exists now, if `pause_for_init()` turned it off; otherwise
    changes nothing."""
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
