"""Files the relay keeps in its state directory, written so that a crash never leaves half of one."""

from __future__ import annotations

import os
import uuid
from pathlib import Path


def write_private_file(path: Path, content: bytes) -> None:
    """Replaces `path` atomically with `content`: a new mode-0600 file beside it (exclusive create), fsynced,
    then renamed over `path`. Readers see the old content or the new, never a mix."""
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
