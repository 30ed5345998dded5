"""Resumable SSE streams over streamable HTTP (MCP 2025-11-25, "Resumability and Redelivery").

The SDK does the protocol: with an ``EventStore`` it gives every SSE event an ``id``, opens each
POST's SSE stream with a priming event (an id and empty ``data``, plus ``retry: <ms>``) for clients
of 2025-11-25 or later, and answers a GET carrying ``Last-Event-ID`` by replaying what the store
returns (``mcp/server/streamable_http.py``: ``_mint_priming_event``, ``_replay_events``). The SDK
ships only the ``EventStore`` interface; this is the store.

One store per MCP session: the SDK shares the one ``event_store`` it is given among all sessions and
names a stream by the JSON-RPC request id (``"1"``, ``"2"``, … in every session) or ``_GET_stream``,
so a single shared store would replay one session's events into another's resumed stream. Event
ids carry a random per-session prefix; an id of another session (or an evicted one) replays
nothing. Bounded: ``SESSION_BYTES`` of events per session (oldest streams dropped first; the newest stays whole), at
most ``MAX_SESSIONS`` sessions (least recently used dropped): about 64 MiB at the worst.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict, deque
from typing import Any

from mcp.server.streamable_http import EventCallback, EventMessage, EventStore

RETRY_MS = 1000  # the priming event's `retry:` — how long a client waits before reconnecting
SESSION_BYTES = 1024 * 1024
EVENT_OVERHEAD = 64  # bytes counted per event besides its JSON (priming events have none)
MAX_SESSIONS = 64


class SessionEvents(EventStore):
    """The events of one session's streams, for ``Last-Event-ID`` replay."""

    def __init__(self, max_bytes: int = SESSION_BYTES) -> None:
        self.prefix = secrets.token_hex(6) + "-"
        self.max_bytes = max_bytes
        self.bytes = 0
        self._seq = 0
        self._streams: OrderedDict[str, deque[tuple[int, Any, int]]] = OrderedDict()  # oldest first
        self._stream_of: dict[int, str] = {}

    async def store_event(self, stream_id: str, message: Any) -> str:
        self._seq += 1
        size = EVENT_OVERHEAD + (
            0 if message is None else len(message.model_dump_json(by_alias=True, exclude_none=True))
        )
        self._streams.setdefault(stream_id, deque()).append((self._seq, message, size))
        self._streams.move_to_end(stream_id)
        self._stream_of[self._seq] = stream_id
        self.bytes += size
        while self.bytes > self.max_bytes and len(self._streams) > 1:  # keep the newest stream whole
            _, events = self._streams.popitem(last=False)
            for seq, _, n in events:
                self._stream_of.pop(seq, None)
                self.bytes -= n
        return f"{self.prefix}{self._seq}"

    async def replay_events_after(self, last_event_id: str, send_callback: EventCallback) -> str | None:
        if not last_event_id.startswith(self.prefix) or not last_event_id[len(self.prefix) :].isdigit():
            return None
        after = int(last_event_id[len(self.prefix) :])
        stream_id = self._stream_of.get(after)
        if stream_id is None:
            return None
        for seq, message, _ in list(self._streams.get(stream_id, ())):
            if seq > after and message is not None:  # priming events have no message
                await send_callback(EventMessage(message, f"{self.prefix}{seq}"))
        return stream_id


class EventLog:
    """The sessions' stores: one per MCP session id, at most ``MAX_SESSIONS``."""

    def __init__(self, max_sessions: int = MAX_SESSIONS, session_bytes: int = SESSION_BYTES) -> None:
        self.max_sessions = max_sessions
        self.session_bytes = session_bytes
        self._sessions: OrderedDict[str, SessionEvents] = OrderedDict()

    def session(self, session_id: str) -> SessionEvents:
        store = self._sessions.get(session_id)
        if store is None:
            store = self._sessions[session_id] = SessionEvents(self.session_bytes)
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)
        self._sessions.move_to_end(session_id)
        return store

    def scope_sessions(self, manager: Any) -> None:
        """Give every new session of ``manager`` (the SDK's ``StreamableHTTPSessionManager``) its own
        store. The manager hands its one ``event_store`` to each session's transport when it admits
        the session (mcp 2.3.0, ``streamable_http_manager.py``: ``_admit_session``), so the hook wraps
        that step and replaces the transport's store (``StreamableHTTPServerTransport._event_store``).
        Pinned in uv.lock; ``test_mcp_live.py`` fails if two sessions ever share a store."""
        admit = manager._admit_session  # noqa: SLF001

        def admit_with_own_store(requestor: Any) -> Any:
            transport = admit(requestor)
            if transport is not None:
                transport._event_store = self.session(transport.mcp_session_id)  # noqa: SLF001
            return transport

        manager._admit_session = admit_with_own_store  # noqa: SLF001
