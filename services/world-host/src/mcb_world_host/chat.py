"""In-game chat for the AI bridge: a FIFO of ChatMessages leased per bridge ``client_id``.

The same rules as the Java core's ``ChatQueue`` (paper-plugin/core); the conformance suite
(tests/contract/test_world_chat.py) checks both hosts against each other:

- ``submit``: a line that is exactly a command (``mcb_common.chatcommands``, the same rule as the
  Java ``ChatCommands``) is a ``command`` message, except ``stop``/``cancel`` from someone who may
  stop everything (here: always): that is a ``cancel`` message and pauses writes at once
  (``on_cancel``). Anything else is a ``prompt`` ("stop the tower at y=80" is a prompt).
- ``poll``: leases up to ``max`` pending messages (FIFO) to the caller until a ``done`` reply.
  A poll by a different ``client_id`` than the last one takes over: writes pause
  (``on_takeover``) and every message leased to the old client fails with a notice to its
  player; nothing is replayed.
- ``reply``: only the lease holder (``permission_denied``), only to the initiator
  (``permission_denied``); unknown/finished id → ``not_found``. Lines are capped at
  ``MAX_LINE`` characters (longer ones end in "…"), at most ``MAX_LINES_PER_REPLY`` lines,
  and at most ``RATE_LINES`` lines per player in any ``RATE_WINDOW_MS`` window — excess is
  refused with ``busy`` (``details.retryAfterMillis``), nothing shown, the lease unchanged.
- every line shown to a player goes through ``tell`` and into a bounded per-player outbox
  (read by ``automation_chat_outbox``).
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from mcb_common.chatcommands import message_type
from mcb_common.errors import ErrorCode, McbError, invalid

MAX_TEXT = 4096
MAX_PENDING = 1000
MAX_POLL = 100
DEFAULT_POLL = 16
MAX_LINE = 256
MAX_LINES_PER_REPLY = 4
RATE_LINES = 4
RATE_WINDOW_MS = 1000
OUTBOX_LINES = 200
OUTBOX_PLAYERS = 1000
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f\u00a7]")  # control characters and § (formatting codes)
_LINE_BREAK = re.compile("\r\n|[\n\r\x0b\x0c\x85\u2028\u2029]")  # as Java's \\R


def _now_ms() -> int:
    return int(time.time() * 1000)


def abbreviate(s: str) -> str:
    return s if len(s) <= 60 else s[:57] + "..."


def clean_line(line: str) -> str:
    line = _UNPRINTABLE.sub("", line)
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"


def takeover_notice(text: str) -> str:
    return (
        f'[ai] Your request "{abbreviate(text)}" was stopped: the AI bridge restarted. '
        "Writes are paused; check the world, then send it again (/ai resume allows writes)."
    )


@dataclass
class Message:
    id: str
    player_id: str
    project_id: str
    text: str
    type: str  # "prompt" | "cancel" | "command"
    at_millis: int
    position: dict | None = None  # PlayerPosition fields, when known
    target_block: dict | None = None  # TargetBlock fields, when known


@dataclass
class _Lease:
    msg: Message
    client_id: str


@dataclass
class ChatQueue:
    project_id: str
    on_cancel: Callable[[Message], None]
    on_takeover: Callable[[str], None]
    clock: Callable[[], int] = _now_ms
    pending: deque[Message] = field(default_factory=deque)
    leased: dict[str, _Lease] = field(default_factory=dict)
    active_client: str | None = None
    outbox: dict[str, deque[str]] = field(default_factory=dict)
    shown: dict[str, deque[int]] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def submit(
        self,
        player_id: str,
        text: str,
        position: dict | None = None,
        target_block: dict | None = None,
        may_stop_all: bool = True,
    ) -> Message:
        if not player_id or not text or not text.strip():
            raise invalid("a chat message needs a player and text")
        if len(text) > MAX_TEXT:
            raise McbError(ErrorCode.BUDGET_EXCEEDED, f"a chat line holds at most {MAX_TEXT} characters")
        t = text.strip()
        kind = message_type(t, may_stop_all)
        m = Message(
            f"msg-{secrets.token_hex(8)}", player_id, self.project_id, t, kind, self.clock(), position, target_block
        )
        with self.lock:
            self.pending.append(m)
            while len(self.pending) > MAX_PENDING:
                self.pending.popleft()
        if kind == "cancel":
            self.on_cancel(m)  # pause at once, even when no bridge is polling
        return m

    def poll(self, client_id: str, max_messages: int) -> tuple[list[Message], bool]:
        if not client_id or len(client_id) > 200:
            raise invalid("chat_poll needs a clientId (1..200 characters) naming the bridge process")
        n = max(1, min(max_messages or DEFAULT_POLL, MAX_POLL))
        with self.lock:
            took_over = self.active_client is not None and self.active_client != client_id
            if took_over:
                self.on_takeover(client_id)
                failed = list(self.leased.values())
                self.leased.clear()
                for lease in failed:
                    self._tell(lease.msg.player_id, takeover_notice(lease.msg.text))
            self.active_client = client_id
            out: list[Message] = []
            while self.pending and len(out) < n:
                m = self.pending.popleft()
                self.leased[m.id] = _Lease(m, client_id)
                out.append(m)
            return out, took_over

    def reply(self, client_id: str, message_id: str, player_id: str, text: str, done: bool, error: str) -> bool:
        if not message_id or not client_id:
            raise invalid("chat_reply needs id and clientId")
        if len(text) > MAX_TEXT or len(error) > MAX_TEXT:
            raise McbError(ErrorCode.BUDGET_EXCEEDED, f"a reply holds at most {MAX_TEXT} characters")
        with self.lock:
            lease = self.leased.get(message_id)
            if lease is None:
                raise McbError(
                    ErrorCode.NOT_FOUND,
                    f"message {abbreviate(message_id)!r} is not leased "
                    "(unknown, not polled yet, finished, or failed when another bridge took over)",
                )
            if lease.client_id != client_id:
                raise McbError(
                    ErrorCode.PERMISSION_DENIED,
                    f"message {message_id} is leased to another client; only the lease holder may reply",
                )
            if player_id != lease.msg.player_id:
                raise McbError(
                    ErrorCode.PERMISSION_DENIED,
                    f"message {message_id} came from another player; replies go only to its initiator",
                )
            lines = [c for c in (clean_line(x) for x in _LINE_BREAK.split(text)) if c.strip()]
            if error.strip():
                lines.append(clean_line("[ai] error: " + " ".join(error.split())))
            if len(lines) > MAX_LINES_PER_REPLY:
                raise McbError(
                    ErrorCode.BUDGET_EXCEEDED, f"a reply shows at most {MAX_LINES_PER_REPLY} lines, got {len(lines)}"
                )
            if lines:
                now = self.clock()
                window = self.shown.setdefault(player_id, deque())
                while window and window[0] <= now - RATE_WINDOW_MS:
                    window.popleft()
                if len(window) + len(lines) > RATE_LINES:
                    first_free = window[len(window) + len(lines) - RATE_LINES - 1]
                    wait = max(1, first_free + RATE_WINDOW_MS - now)
                    raise McbError(
                        ErrorCode.BUSY,
                        f"at most {RATE_LINES} lines per second per player; retry in {wait} ms (nothing was shown)",
                        details={"retryAfterMillis": wait},
                    )
                for line in lines:
                    window.append(now)
                    self._tell(player_id, line)
                if len(self.shown) > OUTBOX_PLAYERS:
                    self.shown.pop(next(iter(self.shown)))
            if done:
                del self.leased[message_id]
            return bool(lines)

    def _tell(self, player_id: str, line: str) -> None:
        box = self.outbox.get(player_id)
        if box is None:
            if len(self.outbox) >= OUTBOX_PLAYERS:
                self.outbox.pop(next(iter(self.outbox)))
            box = self.outbox[player_id] = deque(maxlen=OUTBOX_LINES)
        box.append(line)

    def lines_for(self, player_id: str) -> list[str]:
        with self.lock:
            return list(self.outbox.get(player_id, ()))
