"""The world protocol's methods over one ``World``: protobuf messages in, messages out.

server.py owns HTTP (envelope, tokens, scopes, limits); this module owns the rules:
compare-and-set batches, idempotency by batch id, pause, events, local automation.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format
from mcb.common.v1 import common_pb2
from mcb.world.v1 import world_pb2
from mcb_common.causes import check_cause, check_player_name
from mcb_common.diskfull import disk_full_error, is_disk_full
from mcb_common.errors import ErrorCode, McbError, invalid
from mcb_common.geometry import WORLD_XZ_LIMIT
from mcb_rpc import pbjson
from mcb_rpc.health import record_error, record_exception

from . import __version__
from .batchparams import Batch, Entry
from .chat import ChatQueue, Message
from .events import MAX_PAGE, EventLog, page_json
from .hoststate import Ticket, Undo
from .world import Change, World

PROTOCOL = "mcb.world.v1"
MAX_REGION_POSITIONS = 2_097_152
MAX_CHUNKS_EXIST = 65_536
MAX_REGION_ENTITIES = 1000  # listed in a region_read result; entities_total counts them all
MAX_BATCH_ENTRIES = 512
MAX_BATCH_DEPENDENCIES = 4096
MAX_BLOCKS_GET = 100_000
MAX_AUTOMATION_BLOCKS = 32_768
MAX_MANY_BATCHES = 16  # batches in one batch_apply_many request
MAX_CANCELLED_OPERATIONS = 4096  # operations batch_cancel remembers (in memory)

log = logging.getLogger("mcb.world.host")


@dataclass
class LiveState:
    """What the host keeps in memory only: the pause flag as the write path reads it (the Java
    core's BatchExecutor.paused) and the players automation_chat set (the Java core asks its Players
    port). The durable state (the Java core's HostState: the pause that survives restarts, the
    batches' records) is ``hoststate.HostState`` here, as there."""

    paused: bool = False
    pause_reason: str = ""
    # player_id -> (position, target_block) as set by automation_chat (this host knows no players)
    players: dict[str, tuple[dict | None, dict | None]] = field(default_factory=dict)


def _xz_ok(x: int, z: int) -> bool:
    return abs(x) <= WORLD_XZ_LIMIT and abs(z) <= WORLD_XZ_LIMIT


def _now_ms() -> int:
    return int(time.time() * 1000)


def _as_mcb_error(exc: Exception) -> McbError:
    """The McbError ``server.py``'s boundary would answer for ``exc`` (batch_apply's refusal)."""
    if isinstance(exc, McbError):
        err = exc
    elif is_disk_full(exc):
        err = disk_full_error("the world host", "the batch was not completed")
    else:
        log.exception("internal error in a batch of batch_apply_many")
        record_exception(exc)
        return McbError(ErrorCode.INTERNAL, f"internal error ({exc.__class__.__name__}); see the world host log")
    record_error(err)  # server-side failures only, for /health (as the boundary does)
    return err


def _error_message(err: McbError) -> common_pb2.Error:
    """``err`` as the ``mcb.common.v1.Error`` of a per-batch answer: the same code, message,
    retryable and details as batch_apply's error envelope (``McbError.to_dict``)."""
    d = err.to_dict()
    return common_pb2.Error(
        code=d["code"],
        message=d["message"],
        retryable=d["retryable"],
        details_json=json.dumps(d["details"], separators=(",", ":")) if d.get("details") else "",
    )


class Host:
    def __init__(self, world: World, allow_automation: bool = False, project_id: str = "default"):
        self.world = world
        self.allow_automation = allow_automation
        self.instance = secrets.token_hex(8)
        self.events = EventLog(self.instance)
        reason = world.host_state.pause_reason()  # a pause survives restarts and crashes
        self.state = LiveState(paused=reason is not None, pause_reason=reason or "")
        world.on_undone = lambda changes, op: self.events.record_many(changes, "ours", operation_id=op)
        self.chat = ChatQueue(project_id or "default", on_cancel=self._on_cancel, on_takeover=self._on_takeover)
        # operations named by batch_cancel, oldest first (changed under the world lock)
        self._cancelled: OrderedDict[str, None] = OrderedDict()

    # -- health / info ---------------------------------------------------------------------------
    def health(self) -> world_pb2.Health:
        return world_pb2.Health(
            status="ok", service="world-host", version=__version__, protocol_version=PROTOCOL, paused=self.state.paused
        )

    def world_info(self, _: world_pb2.Empty) -> world_pb2.WorldInfo:
        w = self.world
        reg = w.registry
        caps = [
            "region_read",
            "chunks_exist",
            "blocks_get",
            "batch_apply",
            "batch_apply_many",
            "events_since",
            "events_since.runs",
            "pause",
            "embedded_world",
            "region_read.block_entities",
            "region_read.entities",
            "chat",
        ]
        if self.allow_automation:
            caps.append("local_automation")
        info = world_pb2.WorldInfo(
            world_uuid=w.meta.world_uuid,
            world_name=w.name,
            epoch=w.meta.epoch,
            data_version=w.data_version,
            minecraft_version=w.minecraft_version,
            min_y=w.min_y,
            max_y=w.max_y,
            registry=world_pb2.RegistryInfo(
                minecraft_version=reg.version,
                data_version=reg.data_version,
                block_count=len(reg.blocks),
                sha256=reg.sha256,
            ),
            host_instance=self.instance,
            paused=self.state.paused,
            capabilities=caps,
            host_kind="world-host",
            host_version=__version__,
            protocol_version=PROTOCOL,
        )
        chunks = w.existing_chunks()
        if chunks:
            xs = [c[0] for c in chunks]
            zs = [c[1] for c in chunks]
            info.loaded_area.CopyFrom(
                common_pb2.Box(
                    min=common_pb2.Vec3(x=min(xs), y=w.min_section, z=min(zs)),
                    max=common_pb2.Vec3(x=max(xs), y=w.max_section, z=max(zs)),
                )
            )
        return info

    # -- reads -----------------------------------------------------------------------------------
    def region_read(self, p: world_pb2.RegionReadParams) -> world_pb2.RegionReadResult:
        if not p.HasField("min") or not p.HasField("max"):
            raise invalid("region_read needs min and max {x,y,z}")
        lo = (min(p.min.x, p.max.x), min(p.min.y, p.max.y), min(p.min.z, p.max.z))
        hi = (max(p.min.x, p.max.x), max(p.min.y, p.max.y), max(p.min.z, p.max.z))
        if not (_xz_ok(lo[0], lo[2]) and _xz_ok(hi[0], hi[2])):
            raise McbError(ErrorCode.OUT_OF_BOUNDS, f"x/z beyond the world border (±{WORLD_XZ_LIMIT})")
        size = (hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1)
        if size > MAX_REGION_POSITIONS:
            raise McbError(
                ErrorCode.BUDGET_EXCEEDED,
                f"region_read of {size} positions exceeds the limit of {MAX_REGION_POSITIONS}; split the box",
                details={"positions": size, "limit": MAX_REGION_POSITIONS},
            )
        palette, arr, revs = self.world.region_read(lo, hi)
        ents = self.world.entities_in(lo, hi)
        return world_pb2.RegionReadResult(
            min=common_pb2.Vec3(x=lo[0], y=lo[1], z=lo[2]),
            max=common_pb2.Vec3(x=hi[0], y=hi[1], z=hi[2]),
            palette=palette,
            indices=arr.astype("<u2").tobytes(),
            revisions=[world_pb2.SectionRevision(cx=a, sy=b, cz=c, revision=r) for a, b, c, r in revs],
            block_entities=self._block_entities(lo, hi),
            entities=[
                world_pb2.EntityInfo(id=e.id, x=e.x, y=e.y, z=e.z, uuid=e.uuid) for e in ents[:MAX_REGION_ENTITIES]
            ],
            entities_total=len(ents),
        )

    def chunks_exist(self, p: world_pb2.ChunksExistParams) -> world_pb2.ChunksExistResult:
        cx0, cx1 = sorted((p.min_cx, p.max_cx))
        cz0, cz1 = sorted((p.min_cz, p.max_cz))
        if not (_xz_ok(cx0 * 16, cz0 * 16) and _xz_ok(cx1 * 16 + 15, cz1 * 16 + 15)):
            raise McbError(ErrorCode.OUT_OF_BOUNDS, f"chunks beyond the world border (±{WORLD_XZ_LIMIT} blocks)")
        n = (cx1 - cx0 + 1) * (cz1 - cz0 + 1)
        if n > MAX_CHUNKS_EXIST:
            raise McbError(
                ErrorCode.BUDGET_EXCEEDED,
                f"chunks_exist of {n} chunks exceeds the limit of {MAX_CHUNKS_EXIST}; split the range",
                details={"chunks": n, "limit": MAX_CHUNKS_EXIST},
            )
        bitmap, count = self.world.chunks_exist(cx0, cz0, cx1, cz1)
        return world_pb2.ChunksExistResult(min_cx=cx0, min_cz=cz0, max_cx=cx1, max_cz=cz1, bitmap=bitmap, count=count)

    def _block_entities(self, lo: tuple[int, int, int], hi: tuple[int, int, int]) -> list[world_pb2.BlockEntityRef]:
        """Block entities (chests, signs, ...) inside the box, in (y, z, x) order."""
        return [world_pb2.BlockEntityRef(x=x, y=y, z=z, id=i) for x, y, z, i in self.world.block_entities_in(lo, hi)]

    def blocks_get(self, p: world_pb2.BlocksGetParams) -> world_pb2.BlocksGetResult:
        xyz = list(p.xyz)
        if len(xyz) % 3:
            raise invalid(f"xyz must hold 3 integers per position; got {len(xyz)} integers")
        if len(xyz) // 3 > MAX_BLOCKS_GET:
            raise McbError(
                ErrorCode.BUDGET_EXCEEDED, f"blocks_get of {len(xyz) // 3} positions exceeds {MAX_BLOCKS_GET}"
            )
        positions = [(xyz[i], xyz[i + 1], xyz[i + 2]) for i in range(0, len(xyz), 3)]
        states = self.world.get_blocks(positions)
        palette: list[str] = []
        index: dict[str, int] = {}
        out = []
        for s in states:
            i = index.get(s)
            if i is None:
                i = index[s] = len(palette)
                palette.append(s)
            out.append(i)
        return world_pb2.BlocksGetResult(palette=palette, state=out)

    # -- batch_apply -----------------------------------------------------------------------------
    @staticmethod
    def _content_hash(p: world_pb2.BatchApplyParams) -> str:
        """The hash host logs written before ``Batch.content_hash`` hold ("pb:": the deterministic
        protobuf encoding of the batch without its id); their batches replay too."""
        q = world_pb2.BatchApplyParams()
        q.CopyFrom(p)
        q.batch_id = ""
        return "pb:" + hashlib.sha256(q.SerializeToString(deterministic=True)).hexdigest()

    @staticmethod
    def _legacy_content_hash(p: world_pb2.BatchApplyParams) -> str:
        """The hash host logs written before the protobuf form hold (their batches replay too)."""
        d = json_format.MessageToDict(p, always_print_fields_with_no_presence=True)
        d.pop("batchId", None)
        return hashlib.sha256(json.dumps(d, sort_keys=True, separators=(",", ":")).encode()).hexdigest()

    def _same_content(self, logged: str, b: Batch, digest: str) -> bool:
        """Whether the content hash logged for ``b``'s id (in any form a host ever logged) is ``b``'s."""
        if logged == digest:
            return True
        if logged.startswith("j1:"):
            return False
        p = b.message()
        return logged == (self._content_hash(p) if logged.startswith("pb:") else self._legacy_content_hash(p))

    def batch_apply(self, p: world_pb2.BatchApplyParams | Batch) -> world_pb2.BatchApplyResult:
        b = p if isinstance(p, Batch) else Batch.of(p)
        digest = self._check_batch(b)
        with self.world.lock:
            res, ticket = self._take_batch(b, digest)
        if ticket is not None:
            # outside the lock: batches arriving together share one fsync; the answer comes after it
            self.world.wait_durable(ticket)
        return res

    def _check_batch(self, b: Batch) -> str:
        """What ``batch_apply`` refuses before reading anything (no lock): the batch's id and
        sizes. Returns the batch's content hash (its idempotency record compares it)."""
        if not b.batch_id or len(b.batch_id) > 200:
            raise invalid("batchId is required (1..200 characters): it is the batch's idempotency key")
        if len(b.entries) == 0:
            raise invalid("a batch needs at least one entry")
        if len(b.entries) > MAX_BATCH_ENTRIES:
            raise McbError(
                ErrorCode.BUDGET_EXCEEDED, f"a batch holds at most {MAX_BATCH_ENTRIES} entries, got {len(b.entries)}"
            )
        if len(b.dependencies) > MAX_BATCH_DEPENDENCIES:
            raise McbError(ErrorCode.BUDGET_EXCEEDED, f"a batch declares at most {MAX_BATCH_DEPENDENCIES} dependencies")
        return b.content_hash()

    def _checked_entries(self, entries: list[Entry]) -> list[Entry]:
        """The entries with canonical expected and desired states, or the refusal of the first
        entry (in the batch's order) that is refused: a position named twice, beyond the world
        border, without expected or desired, or a desired state the host does not write."""
        w = self.world
        positions = {(x, y, z) for x, y, z, _, _ in entries}
        xs = [e[0] for e in entries]
        zs = [e[2] for e in entries]
        canon: dict[str, str] = {}
        if (
            len(positions) == len(entries)
            and -WORLD_XZ_LIMIT <= min(xs)
            and max(xs) <= WORLD_XZ_LIMIT
            and -WORLD_XZ_LIMIT <= min(zs)
            and max(zs) <= WORLD_XZ_LIMIT
            and all(e[3] and e[4] for e in entries)
        ):
            # a batch names few states: each canonical form once, in the order the entries name
            # them. An expected state is never refused, so the first desired state refused here is
            # the one of the first entry refused below.
            expected = {s: w.canonical_expected(s) for s in dict.fromkeys([e[3] for e in entries])}
            desired = {s: w.canonical_desired(s) for s in dict.fromkeys([e[4] for e in entries])}
            return [(x, y, z, expected[ex], desired[de]) for x, y, z, ex, de in entries]
        seen: set[tuple[int, int, int]] = set()
        out = []
        for x, y, z, ex, de in entries:
            pos = (x, y, z)
            if pos in seen:
                raise invalid(f"position ({x},{y},{z}) appears twice in the batch")
            seen.add(pos)
            if not _xz_ok(x, z):
                raise McbError(ErrorCode.OUT_OF_BOUNDS, f"({x},{y},{z}) is beyond the world border")
            if not ex or not de:
                raise invalid(f"entry ({x},{y},{z}) needs both expected and desired states")
            canon[ex] = w.canonical_expected(ex)
            canon[de] = w.canonical_desired(de)
            out.append((x, y, z, canon[ex], canon[de]))
        return out

    def _take_batch(self, b: Batch, digest: str) -> tuple[world_pb2.BatchApplyResult, Ticket | None]:
        """Take one batch (``_check_batch`` passed; the caller holds the world lock): its replay
        by id, or compare-and-set and all-or-nothing in memory, its record queued for the log.
        Returns the answer and the log ticket to wait for (without the lock) before giving it:
        None for a replay of a committed answer. Raises the McbError ``batch_apply`` refuses the batch with (nothing
        written). Shared by ``batch_apply`` and ``batch_apply_many``."""
        w = self.world
        w.settle_failed()  # no batch validates against writes the log could not take
        row = w.host_state.get(b.batch_id)
        if row is not None and row.state == "complete":
            if not self._same_content(row.content_hash, b, digest):
                raise invalid(
                    f"batch id {b.batch_id!r} was already used for a different batch; "
                    "a new batch needs a new id (same id + same content replays the answer)"
                )
            res = pbjson.parse(row.result or {}, world_pb2.BatchApplyResult)
            res.replayed = True
            # an answer still on its way to the log is given, replayed too, once it is durable
            return res, w.host_state.in_flight_ticket(b.batch_id)
        if self.state.paused:
            raise McbError(
                ErrorCode.PAUSED,
                f"writes are paused ({self.state.pause_reason or 'no reason given'}); call resume first",
            )
        if b.world_epoch != w.meta.epoch:
            raise McbError(
                ErrorCode.STALE_SNAPSHOT,
                f"batch is for world epoch {b.world_epoch} but the world is at epoch {w.meta.epoch}; "
                "re-read world_info and re-plan",
                details={"worldEpoch": w.meta.epoch},
            )
        # validate and read
        entries = self._checked_entries(b.entries)
        deps = []
        for x, y, z, ex, _ in b.dependencies:
            if not ex:
                raise invalid(f"dependency ({x},{y},{z}) needs an expected state")
            deps.append((x, y, z, w.canonical_expected(ex)))
        all_pos = [(x, y, z) for x, y, z, _, _ in entries] + [(x, y, z) for x, y, z, _ in deps]
        ys = [y for _, y, _ in all_pos]
        w.check_height(min(ys), max(ys))
        w.require_chunks(all_pos[: len(entries)], for_write=True)
        w.require_chunks(all_pos[len(entries) :], for_write=False)
        problems: list[world_pb2.EntryResult] = []
        already: list[common_pb2.Vec3] = []
        writes: Undo = []  # (x, y, z, before, after)
        currents = w.get_blocks(all_pos)  # one lookup of the batch's chunks, not one per entry
        for (x, y, z, expected, desired), current in zip(entries, currents[: len(entries)], strict=True):
            if current == desired:
                already.append(common_pb2.Vec3(x=x, y=y, z=z))
            elif current == expected:
                if '{"unsupported":' in current:  # data the model cannot carry would be lost
                    raise McbError(
                        ErrorCode.UNSUPPORTED_BLOCK,
                        f"({x},{y},{z}) holds a block entity with data this host cannot carry "
                        f"({current[current.index('{') :][:120]}); it does not overwrite it",
                        details={"pos": [x, y, z]},
                    )
                writes.append((x, y, z, current, desired))
            else:
                problems.append(world_pb2.EntryResult(x=x, y=y, z=z, result="conflict", current=current))
        for (x, y, z, expected), current in zip(deps, currents[len(entries) :], strict=True):
            if current != expected:
                problems.append(world_pb2.EntryResult(x=x, y=y, z=z, result="dependency_changed", current=current))
        res = world_pb2.BatchApplyResult(batch_id=b.batch_id, already=len(already), already_positions=already)
        if problems:
            res.status = "conflict"
            res.conflicts = len(problems)
            res.problems.extend(problems)
            res.applied_at_millis = _now_ms()
            writes = []  # nothing written; the answer is logged for replay by id
        else:
            revs = w.apply(writes) if writes else []
            res.status = "applied"
            res.written = len(writes)
            res.revisions.extend(world_pb2.SectionRevision(cx=cx, sy=sy, cz=cz, revision=r) for cx, sy, cz, r in revs)
            res.applied_at_millis = _now_ms()
        ticket = w.log_batch(b.batch_id, digest, b.operation_id, writes, self._to_dict(res))
        self.events.record_many(writes, "ours", operation_id=b.operation_id)
        return res, ticket

    # -- batch_apply_many, batch_cancel ------------------------------------------------------------
    def batch_apply_many(self, p: world_pb2.BatchApplyManyParams | list[Batch]) -> world_pb2.BatchApplyManyResult:
        """Up to 16 batches, in order, each taken as ``batch_apply`` takes one (``_take_batch``).
        Each batch holds the world lock only while it is taken, so ``pause`` and ``batch_cancel``
        land between two batches (and answer once the batch in progress is taken); before every
        batch the operations ``batch_cancel`` named are checked, before every batch after the
        first the pause flag (the first answers ``paused`` as ``batch_apply`` would). A batch not
        applied ends the request. Durability: the batches' log records are queued one after the
        other and the answer waits for the last ticket only (group commit: one fsync for the
        request); the earlier tickets are committed with or before it. ``p``: the message, or
        its batches as ``Batch`` (``batchparams.parse_many``)."""
        w = self.world
        batches = p if isinstance(p, list) else [Batch.of(b) for b in p.batches]
        if not batches:
            raise invalid("batch_apply_many needs at least one batch (1..16)")
        if len(batches) > MAX_MANY_BATCHES:
            raise McbError(
                ErrorCode.BUDGET_EXCEEDED,
                f"batch_apply_many takes at most {MAX_MANY_BATCHES} batches, got {len(batches)}; split the request",
                details={"limit": "batches", "max": MAX_MANY_BATCHES},  # as the Java hosts
            )
        seen: set[str] = set()
        for b in batches:
            if b.batch_id in seen:  # two empty ids too, as the Java hosts count them
                raise invalid(
                    f"batch id {b.batch_id[:200]!r} appears twice in the request; every batch needs its own id",
                    batchId=b.batch_id[:200],
                )
            seen.add(b.batch_id)
        answers: list[world_pb2.BatchAnswer] = []
        tickets: list[tuple[int, Ticket]] = []
        stop = ""  # why the batches after this point are not started
        for i, b in enumerate(batches):
            if stop:
                answers.append(world_pb2.BatchAnswer(batch_id=b.batch_id, outcome="not_started", reason=stop))
                continue
            if i:
                time.sleep(0)  # let a pause/batch_cancel waiting for the lock take it between two batches
            answer = world_pb2.BatchAnswer(batch_id=b.batch_id)
            try:
                refused: McbError | None = None
                try:
                    digest = self._check_batch(b)  # no lock: ids and sizes, the content hash
                except McbError as err:
                    digest, refused = "", err
                with w.lock:
                    if b.operation_id and b.operation_id in self._cancelled:
                        answer.outcome, answer.reason = "not_started", "cancelled"
                    elif i and self.state.paused:
                        answer.outcome, answer.reason = "not_started", "paused"
                    elif refused is not None:
                        raise refused
                    else:
                        res, ticket = self._take_batch(b, digest)
                        answer.outcome = "answered"
                        answer.result.CopyFrom(res)
                        if ticket is not None:
                            tickets.append((i, ticket))
            except Exception as exc:  # noqa: BLE001 - one batch's refusal is its answer; the request goes on answering
                answer.outcome = "error"
                answer.error.CopyFrom(_error_message(_as_mcb_error(exc)))
            answers.append(answer)
            if answer.outcome == "not_started":
                stop = answer.reason
            elif answer.outcome == "error":
                stop = "after_error"
            elif answer.result.status != "applied":
                stop = "after_conflict"
        if tickets:
            with contextlib.suppress(McbError):
                # the one fsync: the newest row's commit holds (or follows) every older one's
                w.wait_durable(max((t for _, t in tickets), key=lambda t: t.lsn))
            for i, t in tickets:
                try:
                    w.wait_durable(t)  # committed with (or before) the last: returns at once
                except McbError as err:  # the log could not take it: undone in memory, nothing written
                    record_error(err)
                    answers[i].ClearField("result")
                    answers[i].outcome = "error"
                    answers[i].error.CopyFrom(_error_message(err))
        return world_pb2.BatchApplyManyResult(answers=answers)

    def batch_cancel(self, p: world_pb2.BatchCancelParams) -> world_pb2.BatchCancelResult:
        """No batch of the operation starts in a ``batch_apply_many`` request after this answers
        (under the world lock: a batch being taken finishes first). In memory, the last 4,096."""
        if not p.operation_id:
            raise invalid("batch_cancel needs operationId (the operation whose batches must not start)")
        with self.world.lock:
            self._cancelled.pop(p.operation_id, None)
            self._cancelled[p.operation_id] = None
            while len(self._cancelled) > MAX_CANCELLED_OPERATIONS:
                self._cancelled.popitem(last=False)
        return world_pb2.BatchCancelResult(operation_id=p.operation_id, cancelled=True)

    @staticmethod
    def _to_dict(msg) -> dict:
        return pbjson.to_json(msg)

    # -- events ----------------------------------------------------------------------------------
    def events_since(self, p: world_pb2.EventsSinceParams) -> dict[str, Any]:
        """An ``EventsSinceResult`` in its JSON form (``events.page_json``: no message per event),
        as ``runs`` when asked for them."""
        if p.limit > MAX_PAGE:
            raise McbError(ErrorCode.BUDGET_EXCEEDED, f"limit {p.limit} exceeds the page size of {MAX_PAGE}")
        region = None
        if p.HasField("region"):
            b = p.region
            region = (
                (min(b.min.x, b.max.x), min(b.min.y, b.max.y), min(b.min.z, b.max.z)),
                (max(b.min.x, b.max.x), max(b.min.y, b.max.y), max(b.min.z, b.max.z)),
            )
        return page_json(self.events.since(p.cursor, p.limit or MAX_PAGE, region, runs=p.runs))

    # -- pause -----------------------------------------------------------------------------------
    def pause(self, p: world_pb2.PauseParams) -> world_pb2.PauseResult:
        self._pause(p.reason)
        return world_pb2.PauseResult(paused=True, reason=self.state.pause_reason)

    def _pause(self, reason: str) -> None:
        """Set the flag under the world lock: a batch in progress finishes first, so once this
        returns nothing is being written (every later batch answers ``paused``). The flag holds
        in memory at once and is committed to the batch log before this returns, so a restart
        keeps writes paused; if that commit fails, writes stay paused here and the error says
        so."""
        with self.world.lock:
            self.state.paused = True
            self.state.pause_reason = reason[:500]
            self.world.host_state.set_paused(self.state.pause_reason)
        self.world.request_checkpoint()  # the region files catch up off the answer path

    def resume(self, p: world_pb2.PauseParams) -> world_pb2.PauseResult:
        with self.world.lock:
            self.world.host_state.set_paused(None)  # on disk first: a failure leaves writes paused
            self.state.paused = False
            self.state.pause_reason = ""
        return world_pb2.PauseResult(paused=False, reason=p.reason[:500])

    # -- local automation --------------------------------------------------------------------------
    def automation_set_blocks(self, p: world_pb2.AutomationSetBlocksParams) -> world_pb2.AutomationSetBlocksResult:
        if p.actor not in ("player", "environment", "external"):
            raise invalid(f'actor must be "player", "environment" or "external", got {p.actor!r}')
        if not p.blocks:
            raise invalid("blocks is empty")
        if len(p.blocks) > MAX_AUTOMATION_BLOCKS:
            raise McbError(ErrorCode.BUDGET_EXCEEDED, f"at most {MAX_AUTOMATION_BLOCKS} blocks per call")
        items = []
        for b in p.blocks:
            if not _xz_ok(b.x, b.z):
                raise McbError(ErrorCode.OUT_OF_BOUNDS, f"({b.x},{b.y},{b.z}) is beyond the world border")
            items.append((b.x, b.y, b.z, self.world.canonical_desired(b.state)))
        player = p.player_id or "console"
        if p.actor != "player" and p.player_name:
            raise invalid('player_name is for actor "player" only')
        check_player_name(p.player_name)
        if p.actor != "environment" and p.cause:
            raise invalid('cause is for actor "environment" only')
        cause = check_cause(p.cause) if p.actor == "environment" else ""

        def observed(changes: list[Change]) -> None:
            if p.actor in ("player", "environment"):
                # environment = fluids, fire, gravity, growth, explosions: observed, but no person.
                self.events.record_many(
                    ((c.x, c.y, c.z, c.before, c.after) for c in changes),
                    p.actor,
                    player_id=player if p.actor == "player" else "",
                    player_name=(p.player_name or player) if p.actor == "player" else "",
                    cause=cause,
                )

        changes = self.world.set_blocks_direct(items, f"automation-{secrets.token_hex(12)}", observed)
        return world_pb2.AutomationSetBlocksResult(changed=len(changes))

    def automation_chat(self, p: world_pb2.AutomationChatParams) -> world_pb2.AutomationChatResult:
        if not p.player_id or not p.text:
            raise invalid("automation_chat needs player_id and text")
        pos = self._to_dict(p.position) if p.HasField("position") else None
        target = self._to_dict(p.target_block) if p.HasField("target_block") else None
        if pos is None and target is None and p.player_id in self.state.players:
            pos, target = self.state.players[p.player_id]
        m = self.chat.submit(p.player_id, p.text, pos, target)
        if p.HasField("position") or p.HasField("target_block"):
            self.state.players[p.player_id] = (pos, target)
            while len(self.state.players) > 1000:
                self.state.players.pop(next(iter(self.state.players)))
        return world_pb2.AutomationChatResult(message_id=m.id)

    def automation_chat_outbox(self, p: world_pb2.AutomationChatOutboxParams) -> world_pb2.AutomationChatOutboxResult:
        if not p.player_id:
            raise invalid("automation_chat_outbox needs player_id")
        return world_pb2.AutomationChatOutboxResult(lines=self.chat.lines_for(p.player_id))

    # -- chat for the AI bridge (scope: admin) ------------------------------------------------------
    def _on_cancel(self, m: Message) -> None:
        self._pause(f"/ai stop by {m.player_id}")

    def _on_takeover(self, client_id: str) -> None:
        self._pause(f"a new AI bridge connected (client {client_id[:60]})")

    def chat_poll(self, p: world_pb2.ChatPollParams) -> world_pb2.ChatPollResult:
        msgs, took_over = self.chat.poll(p.client_id, p.max_messages)
        out = world_pb2.ChatPollResult(took_over=took_over)
        for m in msgs:
            cm = out.messages.add(
                id=m.id, player_id=m.player_id, project_id=m.project_id, text=m.text, type=m.type, at_millis=m.at_millis
            )
            if m.position is not None:
                json_format.ParseDict(m.position, cm.position)
            if m.target_block is not None:
                json_format.ParseDict(m.target_block, cm.target_block)
        return out

    def chat_reply(self, p: world_pb2.ChatReplyParams) -> world_pb2.ChatReplyResult:
        delivered = self.chat.reply(p.client_id, p.id, p.player_id, p.text, p.done, p.error)
        return world_pb2.ChatReplyResult(delivered=delivered)

    def player_context(self, p: world_pb2.PlayerContextParams) -> world_pb2.PlayerContextResult:
        if not p.player_id:
            raise invalid("player_context needs player_id")
        res = world_pb2.PlayerContextResult(player_id=p.player_id)
        known = self.state.players.get(p.player_id)
        if known is not None:  # set by automation_chat; the embedded world has no real players
            res.online = True
            if known[0] is not None:
                json_format.ParseDict(known[0], res.position)
            if known[1] is not None:
                json_format.ParseDict(known[1], res.target_block)
        return res
