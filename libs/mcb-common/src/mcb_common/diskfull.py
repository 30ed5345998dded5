"""Disk full, told truthfully (issue 12): a write refused for want of space is ``unavailable``
with "disk full" in the message — never ``internal`` — and leaves no half-written file.

Pure helpers, no transport: every service that writes files uses them (journal blobs and
database, the embedded world host's region files and batch log, the camera worker's store;
``mcb_common.files.atomic_write`` maps a full disk with them).
"""

from __future__ import annotations

import errno
import sqlite3
from typing import Any

from .errors import ErrorCode, McbError

_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


def is_disk_full(exc: BaseException | None) -> bool:
    """ENOSPC/EDQUOT, SQLite's "database or disk is full", or an McbError raised from either."""
    if exc is None:
        return False
    if isinstance(exc, OSError) and exc.errno in _NO_SPACE:
        return True
    if isinstance(exc, sqlite3.OperationalError) and "full" in str(exc).lower():
        return True
    if isinstance(exc, McbError):
        return exc.details.get("reason") == "disk_full" or is_disk_full(exc.__cause__)
    return False


def disk_full_error(who: str, outcome: str, **details: Any) -> McbError:
    """``unavailable``: ``who`` ran out of disk space; ``outcome`` says what that left behind."""
    return McbError(
        ErrorCode.UNAVAILABLE,
        f"{who}'s disk is full (disk full): {outcome}. Free space and retry.",
        details={"reason": "disk_full", **details},
    )
