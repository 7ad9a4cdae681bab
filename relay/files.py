"""Files the relay keeps in its state directory, written so that a crash never leaves half of one."""

from __future__ import annotations

import os
import re
import uuid
from pathlib import Path

_TEMPORARY_SUFFIX = re.compile(r"\.[0-9a-f]{32}\.tmp")


def write_private_file(path: Path, content: bytes) -> None:
    """Replaces `path` atomically with `content`: a new mode-0600 file beside it (exclusive create), fsynced,
    renamed over `path`, then the directory fsynced (so the rename itself survives a power cut). Readers see
    the old content or the new, never a mix."""
    temporary = path.with_name(f"{path.name}.{uuid.uuid4().hex}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(content)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    _sync_directory(path.parent)


def remove_stray_temporaries(path: Path) -> int:
    """Removes the temporary files a killed process left beside `path` (`<name>.<32 hex>.tmp`); how many.
    Only for a file no other process writes (the caller holds the state directory's lock)."""
    removed = 0
    for candidate in path.parent.iterdir():
        name = candidate.name
        if name.startswith(path.name) and _TEMPORARY_SUFFIX.fullmatch(name[len(path.name) :]):
            candidate.unlink(missing_ok=True)
            removed += 1
    return removed


def _sync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
