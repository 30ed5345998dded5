"""MCP beyond tools (issue 31 item 12): logging, resource subscriptions, and the watcher behind them.

Two protocol eras meet here (the SDK serves both; the client's first request decides):

* Handshake era (``initialize``; 2025-06-18 / 2025-11-25 — the MCP Inspector, the conformance
  suite, most agents): ``logging/setLevel`` sets the connection's level, ``resources/subscribe`` /
  ``resources/unsubscribe`` its subscriptions. ``notifications/message`` and
  ``notifications/resources/updated`` go on the connection's standalone channel (the GET SSE
  stream over HTTP; the pipe over stdio) or, for what a call itself causes (a plan's warnings, an
  apply that ended while the call followed it), on that call's own stream. Nothing is logged to a
  connection that never sent ``logging/setLevel``.
* 2026-07-28 (no handshake): ``subscriptions/listen`` streams (the SDK's ``ListenHandler`` over an
  ``InMemorySubscriptionBus``) carry ``notifications/resources/updated``; log messages ride only the
  request that opted in with ``_meta["io.modelcontextprotocol/logLevel"]`` (the SDK's rule).

What is watched: the resources someone subscribed to — ``mcb://project/context`` (the journal's
project context: project, world, recent operations and those needing attention) and
``mcb://operations/{operation_id}`` (an operation's status: state, batches, blocks) — and the
operations a logging connection started with ``build_apply``, until they end. One task polls the
journal every ``POLL_SECONDS`` while there is something to watch (nothing otherwise) and tells
subscribers when what they watch changed; an operation that ends is logged to the connection that
started it: ``applied`` info, ``cancelled`` notice, ``conflict`` and ``waiting_for_resume`` warning,
``failed`` and ``recovery_required`` error.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, cast, get_args

import anyio
import mcp_types as types
from mcb_common.errors import ErrorCode, McbError
from mcp.server.connection import allowed_log_levels
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from . import render

log = logging.getLogger("mcb.bridge.live")

POLL_SECONDS = 0.5
LEVELS: tuple[str, ...] = get_args(types.LoggingLevel)  # debug .. emergency, ascending (RFC 5424)
PROJECT_CONTEXT_URI = "mcb://project/context"
OPERATION_PREFIX = "mcb://operations/"
OUTCOME_LEVELS = {
    "applied": "info",
    "cancelled": "notice",
    "conflict": "warning",
    "waiting_for_resume": "warning",
    "failed": "error",
    "recovery_required": "error",
}
LOGGER_OPERATIONS = "mcb.operations"
LOGGER_PLANS = "mcb.plans"


def operation_uri(operation_id: str) -> str:
    return OPERATION_PREFIX + operation_id


def watchable(uri: str) -> bool:
    return uri == PROJECT_CONTEXT_URI or uri.startswith(OPERATION_PREFIX)


def modern(ctx: Any) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _connection(ctx: Any) -> Any:
    """The connection a request came on. The lowlevel ``ServerRequestContext`` hands out only the
    per-request ``ServerSession``; the SDK keeps the connection behind it (mcp 2.3.0,
    ``mcp/server/session.py``: ``ServerSession._connection``). Pinned in uv.lock; the bridge tests
    over HTTP and stdio fail if this moves."""
    return ctx.session._connection  # noqa: SLF001


def outcome(op: dict[str, Any]) -> dict[str, Any]:
    """The log entry of an ended operation (``notifications/message`` data)."""
    data = {
        "event": "operation_ended",
        "operation_id": op.get("operation_id", ""),
        "state": op.get("state", ""),
        "written": int(op.get("written") or 0),
        "planned": int(op.get("planned") or 0),
    }
    conflicts = op.get("conflicts") or []
    if conflicts or op.get("conflicts_omitted"):
        data["conflicts"] = len(conflicts) + int(op.get("conflicts_omitted") or 0)
    if op.get("message"):
        data["message"] = op["message"]
    return data


@dataclass
class Peer:
    """One handshake-era connection that asked for something: its level and subscriptions."""

    session: Any  # a ServerSession of the connection: its standalone channel (send_notification)
    level: str | None = None
    uris: set[str] = field(default_factory=set)
    started: set[str] = field(default_factory=set)  # operations it started, logged when they end

    def wants(self, level: str) -> bool:
        return self.level is not None and LEVELS.index(level) >= LEVELS.index(self.level)


class Live:
    """Per-connection levels and subscriptions, and the watcher that feeds them."""

    def __init__(
        self,
        operation_status: Callable[[str], Awaitable[dict[str, Any]]],
        project_context: Callable[[], Awaitable[Any]],
        static_uris: Callable[[], set[str]],
    ) -> None:
        self._operation_status = operation_status
        self._project_context = project_context
        self._static_uris = static_uris  # the guides: subscribable, never changing, never watched
        self.peers: dict[int, Peer] = {}
        self.bus = InMemorySubscriptionBus()
        self._listen = ListenHandler(self.bus)
        self._listened: Counter[str] = Counter()  # URIs open listen streams asked for
        self._seen: dict[str, str] = {}  # watched URI -> digest of what it showed last
        self._states: dict[str, str] = {}  # watched operation -> its last state
        self._wake = anyio.Event()

    # ---- connections ----

    def peer(self, ctx: Any) -> Peer:
        conn = _connection(ctx)
        key = id(conn)
        peer = self.peers.get(key)
        if peer is None:
            peer = self.peers[key] = Peer(ctx.session)
            conn.exit_stack.callback(self.peers.pop, key, None)  # forgotten when the connection closes
        return peer

    def _known(self, ctx: Any) -> Peer | None:
        return self.peers.get(id(_connection(ctx)))

    async def set_level(self, ctx: Any, level: str) -> None:
        self.peer(ctx).level = level

    def _static(self, uri: str) -> bool:
        return uri in self._static_uris() and not watchable(uri)

    async def subscribe(self, ctx: Any, uri: str) -> None:
        if not self._static(uri):
            await self._baseline(uri)
        self.peer(ctx).uris.add(uri)
        self._wake.set()

    async def unsubscribe(self, ctx: Any, uri: str) -> None:
        peer = self._known(ctx)
        if peer is not None:
            peer.uris.discard(uri)

    async def listen(self, ctx: Any, params: types.SubscriptionsListenRequestParams) -> types.SubscriptionsListenResult:
        """``subscriptions/listen`` (2026-07-28): the SDK's handler, with its resource URIs watched
        while the stream is open."""
        uris = list(params.notifications.resource_subscriptions or [])
        for uri in uris:
            if not self._static(uri):
                await self._baseline(uri)
        self._listened.update(uris)
        self._wake.set()
        try:
            return await self._listen(ctx, params)
        finally:
            self._listened.subtract(uris)
            self._listened += Counter()  # drop zero counts

    # ---- logging ----

    async def log(self, ctx: Any, level: str, logger: str, data: Any) -> None:
        """A log entry caused by this request, on the request's own stream: sent at the level the
        client set (handshake era) or opted in to on this request (2026-07-28)."""
        if modern(ctx):
            if level not in allowed_log_levels(ctx.protocol_version, ctx.meta):
                return
        else:
            peer = self._known(ctx)
            if peer is None or not peer.wants(level):
                return
        note = types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams(
                level=cast(types.LoggingLevel, level), logger=logger, data=data
            )
        )
        try:
            await ctx.session.send_notification(note, related_request_id=ctx.request_id)
        except Exception as exc:  # noqa: BLE001 - a log entry never fails the call
            log.info("log notification not sent (%s)", exc.__class__.__name__)

    async def after_call(self, ctx: Any, name: str, result: types.CallToolResult) -> None:
        """What a tool call has to say besides its answer: a plan's warnings (warning), an apply that
        ended (its outcome), or, for one still running, a log entry when it ends (handshake era)."""
        data = result.structured_content or {}
        if result.is_error or not isinstance(data, dict):
            return
        if data.get("warnings") and "plan_id" in data:
            await self.log(
                ctx,
                "warning",
                LOGGER_PLANS,
                {"event": "plan_warnings", "tool": name, "plan_id": data["plan_id"], "warnings": data["warnings"]},
            )
        if name != "build_apply" or not data.get("operation_id"):
            return
        state = str(data.get("state", ""))
        if state in OUTCOME_LEVELS:
            await self.log(ctx, OUTCOME_LEVELS[state], LOGGER_OPERATIONS, outcome(data))
            return
        peer = self._known(ctx)
        if not modern(ctx) and peer is not None and peer.level is not None:
            self._states[data["operation_id"]] = state
            peer.started.add(data["operation_id"])
            self._wake.set()

    # ---- the watcher ----

    def watched(self) -> set[str]:
        uris = set(self._listened)
        for peer in list(self.peers.values()):
            uris |= peer.uris
            uris |= {operation_uri(op) for op in peer.started}
        return {u for u in uris if watchable(u)}

    async def _digest(self, uri: str) -> tuple[str, dict[str, Any] | None]:
        if uri == PROJECT_CONTEXT_URI:
            resp = await self._project_context()
            return hashlib.sha256(resp.SerializeToString(deterministic=True)).hexdigest(), None
        if uri.startswith(OPERATION_PREFIX):
            op = await self._operation_status(uri[len(OPERATION_PREFIX) :])
            shown = {
                k: op.get(k)
                for k in (
                    "state",
                    "batches_done",
                    "batches_total",
                    "written",
                    "already",
                    "planned",
                    "conflicts",
                    "conflicts_omitted",
                    "message",
                )
            }
            return hashlib.sha256(render.dumps(shown).encode()).hexdigest(), op
        raise McbError(
            ErrorCode.NOT_FOUND,
            f"no resource {uri!r} to subscribe to; subscribe to {PROJECT_CONTEXT_URI}, "
            f"{OPERATION_PREFIX}{{operation_id}} or a guide (guides never change)",
            details={"uri": uri},
        )

    async def _baseline(self, uri: str) -> None:
        """What ``uri`` shows now (an unknown operation is ``not_found``), so the first notification
        is the first change after subscribing."""
        digest, op = await self._digest(uri)
        self._seen.setdefault(uri, digest)
        if op is not None:
            self._states.setdefault(op["operation_id"], str(op.get("state", "")))

    async def run(self) -> None:
        """The watcher: polls what someone watches, tells them when it changed. Runs until cancelled."""
        while True:
            try:
                await self.poll()
            except Exception:  # noqa: BLE001 - one bad round never ends the watcher
                log.exception("watching subscribed resources failed; trying again")
            with anyio.move_on_after(POLL_SECONDS if self.watched() else 3600):
                await self._wake.wait()
            self._wake = anyio.Event()
            await anyio.sleep(POLL_SECONDS / 5)  # coalesce bursts

    async def poll(self) -> None:
        uris = self.watched()
        for uri in list(self._seen):
            if uri not in uris:
                del self._seen[uri]
        for op_id in list(self._states):
            if operation_uri(op_id) not in uris:
                del self._states[op_id]
        for uri in sorted(uris):
            try:
                digest, op = await self._digest(uri)
            except McbError as err:
                log.info("watching %s: %s", uri, err.code)
                continue
            changed = self._seen.get(uri) not in (None, digest)
            self._seen[uri] = digest
            if op is not None:
                await self._ended(op)
            if changed:
                await self._updated(uri)

    async def _updated(self, uri: str) -> None:
        await self.bus.publish(ResourceUpdated(uri=uri))  # 2026-07-28 listen streams (filtered by the SDK)
        note = types.ResourceUpdatedNotification(params=types.ResourceUpdatedNotificationParams(uri=uri))
        for key, peer in list(self.peers.items()):
            if uri in peer.uris:
                await self._send(key, peer, note)

    async def _ended(self, op: dict[str, Any]) -> None:
        op_id, state = op["operation_id"], str(op.get("state", ""))
        before = self._states.get(op_id)
        self._states[op_id] = state
        if state not in OUTCOME_LEVELS or before == state:
            return
        level = OUTCOME_LEVELS[state]
        note = types.LoggingMessageNotification(
            params=types.LoggingMessageNotificationParams(
                level=cast(types.LoggingLevel, level), logger=LOGGER_OPERATIONS, data=outcome(op)
            )
        )
        for key, peer in list(self.peers.items()):
            if op_id in peer.started:
                if state != "waiting_for_resume":  # it goes on when writes resume: keep following it
                    peer.started.discard(op_id)
                if peer.wants(level):
                    await self._send(key, peer, note)

    async def _send(self, key: int, peer: Peer, note: Any) -> None:
        try:
            await peer.session.send_notification(note)  # no related request: the standalone channel
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            self.peers.pop(key, None)  # the client went away
        except Exception as exc:  # noqa: BLE001 - a notification never stops the watcher
            log.info("notification not sent (%s)", exc.__class__.__name__)
