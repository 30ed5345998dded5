"""The health payload every service adds to its ``GET /health``: version, uptime, last error.

``/health`` is unauthenticated, so what it says about a failure is short and redacted: an
error code, a one-line message with token-like strings, ``Bearer`` values, ``token=``-style
pairs and paths of secrets removed, and when it happened. Only server-side failures are
recorded (``SERVER_SIDE``: internal, unavailable, camera_unavailable; a deadline is reported
as ``unavailable``), never the caller's bad input. Each service records at its one error
boundary: the gRPC ``abort_with`` / ``abort_internal`` (mcb_rpc.errors) and the HTTP boundaries
of the world host, the bridge and the dashboard.

One state per process (``PROCESS``): each service runs in its own process.
"""

from __future__ import annotations

import re
import threading
import time
from datetime import UTC, datetime
from typing import Any

from mcb_common.errors import ErrorCode, McbError

SERVER_SIDE = frozenset({ErrorCode.INTERNAL, ErrorCode.UNAVAILABLE, ErrorCode.CAMERA_UNAVAILABLE})
MAX_MESSAGE = 200
REDACTED = "<redacted>"

_BEARER = re.compile(r"(?i)\bbearer\s+\S+")
_PAIR = re.compile(r"(?i)\b([\w-]*(?:token|secret|password|passwd|api[_-]?key|authorization)[\w-]*)(\s*[=:]\s*)(\S+)")
_SECRET_PATH = re.compile(r"(?i)(?:[A-Za-z]:)?[\w.~-]*(?:[/\\][\w.~@+-]+)+")
_SECRET_WORD = re.compile(r"(?i)secret|token|password|\.key\b|credential")
# A run of 20+ URL-safe characters with a digit and a letter: a token, a key, a digest.
_TOKENISH = re.compile(r"[A-Za-z0-9_+/=-]{20,}")


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def redact(text: str, limit: int = MAX_MESSAGE) -> str:
    """One short line without secrets: what ``/health`` may show about a failure."""
    s = " ".join(str(text).split())
    s = _BEARER.sub(f"Bearer {REDACTED}", s)
    s = _PAIR.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", s)
    s = _SECRET_PATH.sub(lambda m: REDACTED if _SECRET_WORD.search(m.group(0)) else m.group(0), s)
    s = _TOKENISH.sub(
        lambda m: REDACTED if (re.search(r"\d", m.group(0)) and re.search(r"[A-Za-z]", m.group(0))) else m.group(0), s
    )
    return s if len(s) <= limit else s[: limit - 1] + "…"


class HealthState:
    """Start time and the last server-side error of one process."""

    def __init__(self, clock=time.monotonic, wall=time.time):
        self._clock, self._wall = clock, wall
        self._lock = threading.Lock()
        self._last: dict[str, Any] | None = None
        self.mark_started()

    def mark_started(self) -> None:
        self._t0 = self._clock()
        self.started_at = _iso(self._wall())

    def record(self, err: McbError) -> bool:
        """Remember ``err`` if it is a server-side failure; True if it was recorded."""
        if err.code not in SERVER_SIDE:
            return False
        self._set(str(err.code), err.message)
        return True

    def record_exception(self, exc: BaseException, code: ErrorCode = ErrorCode.INTERNAL) -> None:
        """An unexpected exception at a boundary: its class and (redacted) text."""
        self._set(str(code), f"{exc.__class__.__name__}: {exc}")

    def _set(self, code: str, message: str) -> None:
        with self._lock:
            self._last = {"code": code, "message": redact(message), "at": _iso(self._wall())}

    @property
    def last_error(self) -> dict[str, Any] | None:
        with self._lock:
            return dict(self._last) if self._last else None

    def payload(self, version: str) -> dict[str, Any]:
        """The shared fields: ``version``, ``uptime_s``, ``started_at``, ``last_error`` (or null)."""
        return {
            "version": version,
            "uptime_s": round(self._clock() - self._t0, 1),
            "started_at": self.started_at,
            "last_error": self.last_error,
        }


PROCESS = HealthState()


def health_fields(version: str) -> dict[str, Any]:
    """``PROCESS.payload(version)``: merge into a service's ``/health`` body."""
    return PROCESS.payload(version)


def record_error(err: McbError) -> bool:
    return PROCESS.record(err)


def record_exception(exc: BaseException, code: ErrorCode = ErrorCode.INTERNAL) -> None:
    PROCESS.record_exception(exc, code)
