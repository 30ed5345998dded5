"""The batch executor: runs queued operations against the world host, one batch at a time.

Queued operations come from SQLite only (``state='queued'``, oldest first): build_apply commits
``queued`` and sets ``ctx.wake``; at start whatever SQLite says is queued runs (``applying``
ones were already turned into ``recovery_required`` by ``recover_at_start``).

For each batch of ≤ 512 entries (ARCHITECTURE §3):
  1. persist the intent — batch id, (pos, expected, desired) for every entry, checksum — and
     commit with fsync BEFORE the world is touched;
  2. stop if the operation was cancelled (the flag is read before every batch is sent; an
     intent written ahead for it is then recorded ``aborted``);
  3. send ``batch_apply`` (compare-and-set per entry, all-or-nothing, idempotent by batch id;
     the host re-checks pause and epoch);
  4. persist the outcome: ``done`` (with the exact positions written), ``conflict`` (nothing
     of this batch written; the operation stops) or ``aborted`` (paused/refused);
  5. publish progress.
Groups (issue 29): to a host that lists ``batch_apply_many`` the batches go in groups of
``settings.batches_per_request`` (8) a request — the intents of a group committed together, one
answer per batch; the host starts no batch after one that was not applied, nor after a pause or a
``batch_cancel`` (apply.py sends it on ``operation_cancel``), so a stop still lets at most the batch
in progress finish. Below, "batch k" reads "group k" then; with an older host a group is one batch.
Pipeline and group commit: step 1 of batch k+1 runs in the writer thread (its own SQLite
connection) while the world host writes batch k, and batch k-1's ``done`` (step 4) is in that
same fsync'd transaction — one journal fsync per batch, off the event loop, so batch k+1 is sent
as soon as batch k is answered. Still: no batch is sent before its intent is durable, and
the operation stops within one batch. At every fault point the batches with an intent are
those sent, in flight or written ahead, and a batch answered but not yet recorded is an open
intent (recovery reviews them all); an intent written ahead and never sent is ``aborted`` when
the operation stops.
A lost link is retried with the SAME batch id for a short while (safe: idempotent); if the
answer never comes, the operation becomes ``recovery_required`` — never a blind replay.
When the world host went away during the operation (a lost link, or a restart the observer saw
as a gap), the batches already done are sent again with their same ids before the operation
goes on or ends: a game server that crashed rolled its world back to its last save, and a host
that keeps its records (the Java host) re-runs compare-and-set for such batches — blocks still
there are answered from the record, rolled-back ones are written again, changed ones conflict.

Paused writes (an owner's /ai stop, the dashboard): an operation whose turn comes while the host
says its writes are paused writes no intent and waits, ``waiting_for_resume``; while any waits,
the idle dispatcher asks the host once a second and queues them again (oldest first) when writes
resume. Cancelling one ends it at once. A pause that lands after that check, before the first
batch arrives, makes the operation wait the same way (the host refused that batch whole, so
nothing of it is written). A pause that lands while an operation is
applying stops it before its next batch (``cancelled``, the host's ``paused``), as a stop means.

Operations run one at a time per journal (a single dispatcher serialises all writes).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import logging
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from operator import itemgetter

from mcb.world.v1 import world_pb2
from mcb_common.diskfull import disk_full_error, is_disk_full
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box
from mcb_common.jsontext import JsonText

from . import before, changes, history, policy, worldid
from .context import JournalContext
from .db import now_ms
from .faults import fault_point
from .operations import set_state
from .parts import Parts
from .plans import PlanMeta
from .ports import M
from .states import OpState, is_terminal

log = logging.getLogger("mcb.journal.executor")

WAITING_MESSAGE = (
    "waiting for writes to resume: the world host's writes are paused (an owner's /ai stop or the "
    "dashboard); nothing was written. It runs when they resume, unless it is cancelled "
    "(operation_cancel)"
)
PAUSE_CHECK_S = 1.0  # how often the idle dispatcher asks the host whether paused writes resumed

# Answers with which the host refuses a batch as a whole before writing anything.
REFUSALS = (
    ErrorCode.PAUSED,
    ErrorCode.STALE_SNAPSHOT,
    ErrorCode.PERMISSION_DENIED,
    ErrorCode.OUT_OF_BOUNDS,
    ErrorCode.VERSION_MISMATCH,
    ErrorCode.INVALID_REQUEST,
    ErrorCode.UNSUPPORTED_BLOCK,
    ErrorCode.NOT_FOUND,
)

# A batch's JSON is formatted from its entries in one step each (issue 29): a BatchEntry in the world
# protocol's JSON form, and an intent row as json.dumps writes (x, y, z, expected, desired) compactly.
_ENTRY = '{"x":%d,"y":%d,"z":%d,"expected":%s,"desired":%s}'
_ROW = "[%d,%d,%d,%s,%s]"


@functools.lru_cache(maxsize=8)
def _formats(n: int) -> tuple[str, str]:
    """The format strings of ``n`` entries: (BatchEntry objects, intent rows), comma-separated."""
    return ",".join([_ENTRY] * n), ",".join([_ROW] * n)


def _flat(entries: list[tuple[int, int, int, str, str]]) -> tuple:
    """x, y, z and the JSON strings of expected and desired of every entry, one entry after the other."""
    quoted = {s: json.dumps(s) for s in {*map(itemgetter(3), entries), *map(itemgetter(4), entries)}}
    flat: list = [None] * (5 * len(entries))
    for i in range(3):
        flat[i::5] = map(itemgetter(i), entries)
    flat[3::5] = map(quoted.__getitem__, map(itemgetter(3), entries))
    flat[4::5] = map(quoted.__getitem__, map(itemgetter(4), entries))
    return tuple(flat)


class Executor:
    def __init__(self, ctx: JournalContext, parts: Parts):
        self.ctx = ctx
        self.parts = parts  # required: a conflict names the part it hit (and its source, ctx.observer)
        self.db = ctx.db
        self.stopping = asyncio.Event()
        self.link_lost = False  # set by _send when it had to retry: the host went away meanwhile
        self._next_pack = 0.0
        # Answered batches whose completion is not committed yet: (seq, result, written rows,
        # operation counters). The writer thread commits them with a later batch's intent (one
        # fsync for both: group commit), or ``_flush`` on its own before the operation stops or ends.
        self._pending: list[tuple] = []
        # Batches whose intents are committed but which were not sent (yet): aborted if the operation stops.
        self._unsent: list[int] = []
        # The writer: one thread with its own connection, so that a batch's intent is committed
        # while the world host writes the batch before it. Its job in flight: (future, operation,
        # its first seq, the answered batches handed to it).
        self.wdb = self.db.sibling()
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="journal-writer")
        self._job: tuple[asyncio.Future, str, list[int], list[tuple]] | None = None
        self._in_flight: asyncio.Future | None = None  # the batch_apply request of the batch being sent
        self._host_paused = False  # what the world_info read just before an operation's first batch said
        self._host_many = False  # ... and whether the host lists batch_apply_many
        self._next_pause_check = 0.0
        self._packing: asyncio.Task | None = None  # the packing pass in flight (packer.py)

    def close(self) -> None:
        """Let the writer's transaction in flight (if any) finish, then close its connection."""
        self.ctx.packer.stop()
        self._writer.shutdown(wait=True)
        self.wdb.close()

    def pack_pass(self) -> None:
        """Start a pass that packs finished operations' rows (history.py), a few at a time, at most
        every 5 s and one pass at a time, in the packer's child process (packer.py), started only
        when a read on a worker thread finds something due: neither the event loop nor the
        dispatcher waits for it. The first pass, at start, packs a migrated journal."""
        if time.monotonic() < self._next_pack or (self._packing is not None and not self._packing.done()):
            return
        self._next_pack = time.monotonic() + 5.0
        self._packing = asyncio.create_task(self._pack())

    async def _pack(self) -> None:
        try:
            await self.ctx.packer.pack_due(self.ctx.settings.pack_after_s)
        except McbError as err:  # packing is housekeeping: it must not stop the dispatcher
            log.error("packing finished operations failed; their rows stay live: %s", err.message)
        except Exception:  # noqa: BLE001 - e.g. the child process could not start
            log.exception("packing finished operations failed; their rows stay live")

    async def run_forever(self) -> None:
        """Take queued operations from SQLite, oldest first, one at a time; idle until
        ``ctx.wake`` (set by build_apply right after it commits ``queued``) or 1 s passes.
        SQLite is the only queue: what it says is queued at start runs, nothing else does."""
        wake = self.ctx.wake
        stuck: set[str] = set()  # left queued by a run that could not settle them: not retried in a loop
        while not self.stopping.is_set():
            self.ctx.flush_unrecorded()  # verdicts reached on a full disk, once there is room
            self.pack_pass()
            wake.clear()  # cleared before looking: a wake-up set after this look is not lost
            op_id = next((o for o in self.ctx.runnable() if o not in stuck and o not in self.ctx.unrecorded), None)
            if op_id is None and await self.resume_waiting():
                continue
            if op_id is None:
                try:
                    await asyncio.wait_for(wake.wait(), timeout=1.0)
                except TimeoutError:
                    pass
                continue
            try:
                await self.run_operation(op_id)
            except asyncio.CancelledError:
                # The journal is stopping (app.py on_stop): a batch not sent yet is not sent, the
                # answered ones are recorded, an intent written ahead is aborted; a batch already at
                # the host stays an open intent (at the next start: recovery_required, reviewed).
                if self._in_flight is not None and not self._in_flight.done():
                    self._in_flight.cancel()
                await self._join(raise_error=False)
                self._flush(op_id)
                raise
            except Exception as exc:  # noqa: BLE001 - a bug must not stop the dispatcher
                log.exception("operation %s failed inside the executor", op_id)
                try:
                    await self._join(raise_error=False)
                    self._flush(op_id)  # an answered batch is recorded: the verdict is failed, not unknown
                except Exception:  # noqa: BLE001
                    log.exception("operation %s: its last answered batch could not be recorded", op_id)
                try:
                    self._fail_bug(op_id, exc)
                except Exception:  # noqa: BLE001
                    log.exception("operation %s: its failure could not be recorded", op_id)
            row = self.db.one("SELECT state FROM operations WHERE op_id=?", op_id)
            if row is not None and row["state"] in (OpState.PREPARED, OpState.QUEUED):
                log.error("operation %s is still %s after a run; it waits for a restart", op_id, row["state"])
                stuck.add(op_id)

    async def resume_waiting(self) -> bool:
        """Queue the operations ``waiting_for_resume`` again, oldest first, once the host's writes
        are no longer paused (asked at most every PAUSE_CHECK_S). True when some were queued."""
        waiting = self.ctx.waiting_for_resume()
        if not waiting or time.monotonic() < self._next_pause_check:
            return False
        self._next_pause_check = time.monotonic() + PAUSE_CHECK_S
        try:
            info = await self.ctx.world.world_info()
        except McbError:
            return False  # the host is away: they keep waiting
        if info.paused:
            return False
        queued = False
        for op_id in waiting:
            row = self.db.one("SELECT state FROM operations WHERE op_id=?", op_id)
            if row is None or row["state"] != OpState.WAITING_FOR_RESUME:
                continue  # cancelled meanwhile
            set_state(self.ctx.db, op_id, OpState.QUEUED, message="queued: writes resumed")
            await self._progress(op_id)
            queued = True
        return queued

    async def _sleep(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self.stopping.wait(), timeout=seconds)
        except TimeoutError:
            pass

    async def run_operation(self, op_id: str) -> None:
        core = self.ctx
        row = self.db.one("SELECT * FROM operations WHERE op_id=?", op_id)
        if row is None:
            log.warning("operation %s is unknown; nothing to run", op_id)
            return
        if row["state"] not in (OpState.PREPARED, OpState.QUEUED):
            # Already begun or settled: an operation is never run twice.
            return
        if row["cancel_requested"]:
            set_state(core.db, op_id, OpState.CANCELLED, message="cancelled before any block was written")
            await self._progress(op_id)
            return
        pending = core.pending_recovery()
        if pending:
            set_state(
                core.db,
                op_id,
                OpState.FAILED,
                message="refused: an operation needs recovery first",
                error=McbError(
                    ErrorCode.RECOVERY_REQUIRED, f"operation(s) {', '.join(pending)} need an admin decision"
                ),
            )
            await self._progress(op_id)
            return
        if row["state"] == OpState.PREPARED:
            # Left `prepared` by a journal that still handed work to Redis: it is queued now.
            set_state(core.db, op_id, OpState.QUEUED, message="queued")
        plan = core.load_plan(row["plan_id"])
        if await self._other_world(op_id, plan):
            return
        if self._host_paused:  # before any intent: nothing to recover, it simply runs later
            set_state(core.db, op_id, OpState.WAITING_FOR_RESUME, message=WAITING_MESSAGE)
            self._next_pause_check = 0.0
            await self._progress(op_id)
            return
        # the operation's Before picture, taken before any intent (before.py; best effort, bounded)
        await before.take(core, op_id, row["project_id"], plan)
        size = core.limits.batch_blocks
        total = -(-len(plan) // size)
        set_state(core.db, op_id, OpState.APPLYING, message="applying", batches_total=total)
        await self._progress(op_id)
        written = already = 0
        samples: list[list[int]] = []
        self.link_lost = False
        gaps = self._gap_mark()
        restored = 0
        self._pending = []
        self._unsent = []
        self._in_flight = None
        per_request = self._batches_per_request()
        bounds = plan.bounds  # when the area holds them, its batches' positions are not checked one by one
        groups = [list(range(s, min(total, s + per_request))) for s in range(0, total, per_request)]
        staged: list[tuple[list, JsonText]] | None = None  # the group's (entries, request) per batch; intents committed
        for g, seqs in enumerate(groups):
            seq = seqs[0]
            cur = self.db.one("SELECT cancel_requested FROM operations WHERE op_id=?", op_id)
            if cur is not None and cur["cancel_requested"]:
                self._flush(op_id)
                await self._cancelled(op_id, seq, total, written)
                return
            if staged is None:  # the first group; later ones were written ahead by the writer thread
                built = [self._prepare(plan, op_id, s, size) for s in seqs]
                fault_point("before_intent")
                with self.db.tx() as c:
                    for s, (_, blob, digest, _) in zip(seqs, built, strict=True):
                        self._insert_intent(c, op_id, s, blob, digest)
                self._unsent = list(seqs)
                fault_point("after_intent")
                staged = [(b[0], b[3]) for b in built]
            group = staged
            refusal = self._rights_refusal(
                row["project_id"], op_id, [e for entries, _ in group for e in entries], bounds
            )
            if refusal is not None:
                self._flush(op_id)
                set_state(
                    core.db,
                    op_id,
                    OpState.FAILED,
                    error=refusal,
                    message=f"stopped before batch {seq + 1} of {total}: {refusal.message}; "
                    f"{written} blocks written stay",
                    written=written,
                    already=already,
                    batches_done=seq,
                )
                await self._progress(op_id)
                return
            send = self._in_flight = asyncio.ensure_future(
                self._send_group([params for _, params in group], [f"{op_id}.{s}" for s in seqs])
            )
            self._unsent = []
            staged = None
            if g + 1 < len(groups):
                # Pipeline: while the world host writes this group, the writer thread commits the
                # answered batches' completions and the next group's intents (one fsync'd transaction).
                self._write_ahead(plan, op_id, groups[g + 1], size)
            if g:
                await self._progress(op_id)
            try:
                answers: list[world_pb2.BatchApplyResult | McbError | str] = await send
            except McbError as err:  # no answer for the request: what happened to its batches is unknown
                await self._join(raise_error=False)  # intents written ahead are aborted by _flush: never sent
                self._flush(op_id)
                if err.code in REFUSALS:  # refused as a whole before anything was written
                    answers = [err] + ["after_error"] * (len(seqs) - 1)
                else:
                    set_state(
                        core.db,
                        op_id,
                        OpState.RECOVERY_REQUIRED,
                        error=err,
                        message=f"no answer from the world host for batch {seq + 1}"
                        + (f" (and the {len(seqs) - 1} sent with it)" if len(seqs) > 1 else "")
                        + "; its writes are unknown — an admin must review (mcb recovery review)",
                    )
                    await self._progress(op_id)
                    return
            stop: tuple[int, list, world_pb2.BatchApplyResult | McbError | str] | None = None
            for s, (entries, _), answer in zip(seqs, group, answers, strict=True):
                if not isinstance(answer, world_pb2.BatchApplyResult) or answer.status != "applied":
                    stop = (s, entries, answer)
                    break
                already_set = {(p.x, p.y, p.z) for p in answer.already_positions}
                batch_written = (
                    [e for e in entries if (e[0], e[1], e[2]) not in already_set] if already_set else entries
                )
                written += len(batch_written)
                already += len(already_set)
                for e in batch_written[: max(0, core.limits.sample_limit - len(samples))]:
                    samples.append([e[0], e[1], e[2]])
                # Recorded by the next group's writer job (group commit), or by _flush at the end.
                self._pending.append(
                    (
                        s,
                        {"written": len(batch_written), "already": sorted(already_set), "replayed": answer.replayed},
                        batch_written,
                        {
                            "written": written,
                            "already": already,
                            "batches_done": s + 1,
                            "written_samples_json": json.dumps(samples),
                        },
                    )
                )
            if stop is None:
                staged = await self._join()
                fault_point("before_completion")
                last = g + 1 == len(groups)
                if last:
                    self._flush(op_id)
                    await self._progress(op_id)
                    try:  # a restart right before the last answer: let the observer see its gap
                        await core.observer.sync()
                    except McbError:
                        pass
                if self.link_lost or self._gap_mark() > gaps:
                    self._flush(op_id, keep_unsent=True)
                    n, halt = await self._reverify(op_id, plan, seqs[-1] + 1, size)
                    restored += n
                    if halt is not None:
                        self._flush(op_id)
                        state, message, stop_err = halt
                        set_state(
                            core.db,
                            op_id,
                            state,
                            error=stop_err,
                            message=f"{message}; {written} blocks written stay",
                            written=written,
                            already=already,
                            batches_done=seqs[-1] + 1,
                        )
                        await self._progress(op_id)
                        return
                    self.link_lost = False
                    gaps = self._gap_mark()
                continue
            await self._join(raise_error=False)
            self._flush(op_id)
            seq, entries, answer = stop
            for rest in seqs[seqs.index(seq) + 1 :]:  # sent, never started by the host: nothing written
                self._settle_batch(op_id, rest, "aborted", {"not_started": "an earlier batch of its request stopped"})
            await self._stopped_at(op_id, row, seq, total, entries, answer, written, already)
            return
        note = f"; {restored} blocks rolled back by a world-host restart were written again" if restored else ""
        set_state(
            core.db,
            op_id,
            OpState.APPLIED,
            message=f"applied: {written} blocks written, {already} already in place{note}",
            written=written,
            already=already,
            batches_done=total,
        )
        await self._progress(op_id)

    async def _stopped_at(  # noqa: PLR0913 - the operation's running totals
        self,
        op_id: str,
        row,  # noqa: ANN001 - the operation's row
        seq: int,
        total: int,
        entries: list,
        answer: world_pb2.BatchApplyResult | McbError | str,
        written: int,
        already: int,
    ) -> None:
        """Batch ``seq`` was not applied (its answered predecessors are recorded): settle it and the
        operation, which stops."""
        core = self.ctx
        refused = False  # refused as a whole although its code is not one of REFUSALS
        if isinstance(answer, str):  # not started by the host (batch_apply_many): nothing of it written
            if answer == "cancelled":
                self._settle_batch(op_id, seq, "aborted", {"not_started": answer})
                await self._cancelled(op_id, seq, total, written)
                return
            if answer == "paused":
                answer = McbError(ErrorCode.PAUSED, "writes were paused before this batch began")
            else:  # "after_conflict"/"after_error" with no such batch before it: the host broke the protocol
                answer = McbError(ErrorCode.INTERNAL, f"the world host did not start this batch ({answer})")
                refused = True
        if isinstance(answer, McbError):
            err = answer
            if err.code == ErrorCode.PAUSED and seq == 0:
                # Paused after the world_info check, before the first batch arrived: the host
                # refused it whole, nothing of the operation is written. It waits like one
                # whose turn came while paused; its batch rows go (none was applied), so the
                # run after the resume starts from batch 1 with the same ids.
                with self.db.tx() as c:
                    c.execute("DELETE FROM batches WHERE op_id=?", (op_id,))
                    set_state(
                        core.db, op_id, OpState.WAITING_FOR_RESUME, message=WAITING_MESSAGE, conn=c, batches_total=0
                    )
                self._next_pause_check = 0.0
                await self._progress(op_id)
                return
            if err.code in REFUSALS or refused:
                # The host refused the batch as a whole before writing anything.
                self._settle_batch(op_id, seq, "aborted", {"error": err.to_dict()})
                new = OpState.CANCELLED if err.code == ErrorCode.PAUSED else OpState.FAILED
                set_state(
                    core.db,
                    op_id,
                    new,
                    error=err,
                    message=f"stopped before batch {seq + 1} of {total}: {err.message}; {written} blocks written stay",
                    written=written,
                    already=already,
                    batches_done=seq,
                )
            else:
                set_state(
                    core.db,
                    op_id,
                    OpState.RECOVERY_REQUIRED,
                    error=err,
                    message=f"no answer from the world host for batch {seq + 1}; its writes are "
                    "unknown — an admin must review (mcb recovery review)",
                )
            await self._progress(op_id)
            return
        # conflict: nothing of this batch was written; stop before it.
        conflicts = [p for p in answer.problems if p.result in ("conflict", "dependency_changed")]
        want = {(e[0], e[1], e[2]): e for e in entries}
        cs = []
        for p in conflicts[: core.limits.sample_limit]:
            e = want.get((p.x, p.y, p.z))
            cs.append(
                {
                    "pos": [p.x, p.y, p.z],
                    "expected": e[3] if e else "",
                    "current": p.current,
                    "desired": e[4] if e else "",
                    "source": "unknown",
                    "kind": p.result,
                }
            )
        if cs:
            prow = self.db.one("SELECT summary_json FROM plans WHERE plan_id=?", row["plan_id"])
            prepared_oid = PlanMeta.from_json(prow["summary_json"]).observed_oid if prow else 0
            sources = await changes.classify(self.db, core.observer, [tuple(c["pos"]) for c in cs], prepared_oid)
            parts = self.parts.parts_at(row["project_id"], [tuple(c["pos"]) for c in cs])
            for sample in cs:
                sample["source"] = sources.get(tuple(sample["pos"]), "external")
                sample["part_id"] = parts.get(tuple(sample["pos"]), "")
        self._settle_batch(op_id, seq, "conflict", {"problems": cs, "conflicts": len(conflicts)})
        with self.db.tx() as c:
            c.execute("UPDATE operations SET conflict_samples_json=? WHERE op_id=?", (json.dumps(cs), op_id))
        set_state(
            core.db,
            op_id,
            OpState.CONFLICT,
            message=(
                f"stopped at batch {seq + 1} of {total}: {len(conflicts)} block(s) are not as planned "
                f"(changed since prepare); nothing of that batch was written; {written} blocks written "
                "earlier stay. Inspect the region and prepare again."
            ),
            written=written,
            already=already,
            conflicts=len(conflicts),
            batches_done=seq,
        )
        await self._progress(op_id)

    async def _cancelled(self, op_id: str, seq: int, total: int, written: int) -> None:
        """The operation ends ``cancelled`` before batch ``seq`` (its answered batches are recorded)."""
        set_state(
            self.ctx.db,
            op_id,
            OpState.CANCELLED,
            message=f"cancelled after {seq} of {total} batches; {written} blocks written stay",
        )
        await self._progress(op_id)

    def _batches_per_request(self) -> int:
        """Batches sent in one request: the journal's setting with a host listing ``batch_apply_many``
        (read by ``_other_world`` just before), else one ``batch_apply`` per batch."""
        return self.ctx.settings.batches_per_request if self._host_many else 1

    async def _send_group(
        self, group: list[JsonText], ids: list[str]
    ) -> list[world_pb2.BatchApplyResult | McbError | str]:
        """Send a group of batches (their params, their batch ids): one ``batch_apply`` (a group of
        one) or one ``batch_apply_many``. -> per batch its result, the McbError it was refused with,
        or why it was not started. Raises McbError when the request itself got no answer or was
        refused whole."""
        if not self._host_many:  # groups of one batch
            return [await self._send(group[0], ids[0])]
        many = JsonText(b'{"batches":[' + b",".join(p.text for p in group) + b"]}")
        res = await self._call_retrying("batch_apply_many", many, world_pb2.BatchApplyManyResult, f"{ids[0]}..")
        if [a.batch_id for a in res.answers] != ids:
            raise McbError(
                ErrorCode.INTERNAL,
                f"the world host answered batches {[a.batch_id for a in res.answers][:4]}... for "
                f"{ids[:4]}...: not one answer per batch in order",
            )
        return [self._answer(a) for a in res.answers]

    @staticmethod
    def _answer(a: world_pb2.BatchAnswer) -> world_pb2.BatchApplyResult | McbError | str:
        if a.outcome == "answered":
            return a.result
        if a.outcome == "error":
            try:
                code = ErrorCode(a.error.code)
            except ValueError:
                code = ErrorCode.INTERNAL
            try:
                details = json.loads(a.error.details_json) if a.error.details_json else {}
            except ValueError:
                details = {}
            return McbError(code, a.error.message, details=details if isinstance(details, dict) else {})
        return a.reason or "not_started"

    async def _other_world(self, op_id: str, plan) -> bool:  # noqa: ANN001
        """An operation planned for another world (the save was replaced since) fails with
        world_changed before any batch; the host's epoch check alone misses a new world that
        starts at the same epoch. Also notes whether writes are paused and whether the host takes
        several batches a request."""
        self._host_paused = False
        self._host_many = False
        try:
            info = await self.ctx.world.world_info()
        except McbError:
            return False  # the batches meet the outage and handle it
        self._host_paused = bool(info.paused)
        self._host_many = "batch_apply_many" in info.capabilities and self.ctx.settings.batches_per_request > 1
        worldid.note_world(self.db, info.world_uuid, info.epoch)
        if not plan.world_uuid or plan.world_uuid == info.world_uuid:
            return False
        err = worldid.changed(f"operation {op_id}", plan.world_uuid, info.world_uuid)
        set_state(
            self.ctx.db,
            op_id,
            OpState.FAILED,
            error=err,
            message=f"refused before any block was written: {err.message}",
        )
        await self._progress(op_id)
        return True

    def _fail_bug(self, op_id: str, exc: Exception) -> None:
        row = self.db.one("SELECT state FROM operations WHERE op_id=?", op_id)
        if row is None or is_terminal(row["state"]) or row["state"] == OpState.RECOVERY_REQUIRED:
            return
        if is_disk_full(exc):
            self._fail_disk_full(op_id, row["state"])
            return
        open_intent = self.db.one("SELECT seq FROM batches WHERE op_id=? AND state='intent'", op_id)
        new = OpState.RECOVERY_REQUIRED if open_intent is not None else OpState.FAILED
        err = McbError(ErrorCode.INTERNAL, f"journal internal error ({exc.__class__.__name__}); see the journal log")
        if row["state"] in (OpState.PREPARED, OpState.QUEUED) and new == OpState.RECOVERY_REQUIRED:
            new = OpState.FAILED
        set_state(self.ctx.db, op_id, new, error=err, message=err.message)

    def _fail_disk_full(self, op_id: str, state: str) -> None:
        """The journal's disk filled up: the write that failed was rolled back whole (SQLite), so
        the journal is consistent; an apply that had begun may have one batch in the world that is
        not recorded, so it needs an admin's review, as after a crash."""
        if state == OpState.APPLYING:
            new, outcome = (
                OpState.RECOVERY_REQUIRED,
                (
                    "the apply stopped; once there is space an admin reviews it (mcb recovery review), "
                    "new writes are refused until then"
                ),
            )
        else:
            new, outcome = OpState.FAILED, "nothing was written; apply again once there is space"
        err = disk_full_error("the journal", outcome)
        err.retryable = False
        message = err.message
        log.error("operation %s: %s", op_id, message)
        self.ctx.record_verdict(op_id, new, message, err)

    @classmethod
    def _prepare(cls, plan, op_id: str, seq: int, size: int) -> tuple[list, bytes, str, JsonText]:  # noqa: ANN001
        """Batch ``seq``: (entries, compressed intent payload, its sha256, the batch_apply request).
        The payload is ``json.dumps(entries, separators=(",", ":"))`` byte for byte (tested)."""
        entries = plan.entries(seq * size, (seq + 1) * size)
        flat = _flat(entries)
        payload = ("[" + _formats(len(entries))[1] % flat + "]").encode()
        return (
            entries,
            zlib.compress(payload, 1),
            hashlib.sha256(payload).hexdigest(),
            cls._params(plan, op_id, seq, entries, flat),
        )

    @staticmethod
    def _params(plan, op_id: str, seq: int, entries: list, flat: tuple | None = None) -> JsonText:  # noqa: ANN001
        """The ``batch_apply`` params in the world protocol's JSON form, encoded directly: the same
        object ``MessageToDict`` gives for the ``BatchApplyParams`` message (tested), without
        building 512 messages (~10 ms a batch) or 512 dicts for httpx to encode (~0.4 ms a batch).
        ``flat``: ``_flat(entries)`` when the caller has it."""
        head = json.dumps({"batchId": f"{op_id}.{seq}", "worldEpoch": plan.world_epoch}, separators=(",", ":"))
        dependencies = json.dumps(
            [{"x": x, "y": y, "z": z, "expected": s, "desired": ""} for x, y, z, s in plan.dependencies],
            separators=(",", ":"),
        )
        body = _formats(len(entries))[0] % (_flat(entries) if flat is None else flat)
        text = f'{head[:-1]},"entries":[{body}],"dependencies":{dependencies},"operationId":{json.dumps(op_id)}}}'
        return JsonText(text.encode())

    def _gap_mark(self) -> int:
        row = self.db.one("SELECT MAX(oid) AS m FROM observed WHERE kind='gap'")
        return int(row["m"] or 0) if row is not None else 0

    async def _reverify(self, op_id: str, plan, done: int, size: int):
        """Send batches 0..done-1 again (same ids): the host answers from its records, or re-runs
        compare-and-set for batches a crash may have rolled back. -> (blocks written again, None) or
        (0, (state, message, error)) when a batch can no longer be completed."""
        restored = 0
        for seq in range(done):
            try:
                entries = plan.entries(seq * size, (seq + 1) * size)
                res = await self._send(self._params(plan, op_id, seq, entries), f"{op_id}.{seq}")
            except McbError as err:
                if err.code in REFUSALS:  # e.g. a host that came back paused: it wrote nothing
                    return 0, (
                        OpState.CANCELLED if err.code == ErrorCode.PAUSED else OpState.FAILED,
                        f"the world host restarted during the apply and refused to re-check batch {seq + 1} "
                        f"({err.message}): blocks of earlier batches that its crash rolled back were not "
                        "written again; apply the same plan again to restore them",
                        err,
                    )
                return 0, (
                    OpState.RECOVERY_REQUIRED,
                    "the world host restarted during the apply and re-checking "
                    f"batch {seq + 1} got no answer ({err.message}); an admin must review "
                    "(mcb recovery review)",
                    err,
                )
            if res.status != "applied":
                changed = McbError(
                    ErrorCode.CONFLICT,
                    f"batch {seq + 1} was rolled back with the world and cannot be "
                    "written again: a block there changed since",
                )
                return 0, (
                    OpState.CONFLICT,
                    f"the world host restarted during the apply: {changed.message} "
                    "(nothing of that batch was rewritten)",
                    changed,
                )
            restored += res.rewritten_after_restart
        if restored:
            log.warning(
                "operation %s: %d blocks rolled back by a world-host restart were written again", op_id, restored
            )
        return restored, None

    async def _send(self, params: JsonText, batch_id: str) -> world_pb2.BatchApplyResult:
        return await self._call_retrying("batch_apply", params, world_pb2.BatchApplyResult, batch_id)

    async def _call_retrying(self, method: str, params: JsonText, result: type[M], what: str) -> M:
        """A batch request, retried with the same batch ids while the link is lost (idempotent), up to
        ``link_retry_s``; ``link_lost`` tells the run a restart may have rolled batches back."""
        deadline = time.monotonic() + self.ctx.settings.link_retry_s
        delay = 0.1
        while True:
            try:
                return await self.ctx.world.call(method, params, result)
            except McbError as err:
                if err.code != ErrorCode.UNAVAILABLE or time.monotonic() > deadline or self.stopping.is_set():
                    raise
                self.link_lost = True
                log.warning("batch %s: %s; retrying the same batch ids", what, err.message)
                await self._sleep(delay)
                delay = min(delay * 2, 1.0)

    def _write_ahead(self, plan, op_id: str, seqs: list[int], size: int) -> None:  # noqa: ANN001
        """Start the writer's job for the group of batches ``seqs`` (the group before it is being
        sent): it takes the answered batches not yet recorded and commits them with the group's intents."""
        answered, self._pending = self._pending, []
        fut = asyncio.get_running_loop().run_in_executor(
            self._writer, self._commit_ahead, plan, op_id, seqs, size, answered
        )
        self._job = (fut, op_id, seqs, answered)

    def _commit_ahead(
        self,
        plan,  # noqa: ANN001
        op_id: str,
        seqs: list[int],
        size: int,
        answered: list[tuple],
    ) -> list[tuple[list, JsonText]]:
        """In the writer thread, while the host writes the group before: build the batches ``seqs``,
        then in ONE fsync'd transaction record the answered batches and their intents. -> (entries,
        request) per batch."""
        fault_point("during_write")  # a crash while the group before is in flight
        built = [self._prepare(plan, op_id, seq, size) for seq in seqs]
        fault_point("before_intent")
        with self.wdb.tx() as c:
            self._settle_answered(c, op_id, answered)
            for seq, (_, blob, digest, _) in zip(seqs, built, strict=True):
                self._insert_intent(c, op_id, seq, blob, digest)
        fault_point("after_intent")
        return [(b[0], b[3]) for b in built]

    async def _join(self, raise_error: bool = True) -> list[tuple[list, JsonText]] | None:
        """Wait for the writer's job: -> the next group's (entries, request) per batch, their intents
        committed and not sent (``_unsent``). When the job failed nothing of it is on disk: its answered
        batches are pending again (``_flush`` records them) and its error is raised."""
        if self._job is None:
            return None
        fut, op_id, seqs, answered = self._job
        try:
            staged = await asyncio.shield(fut)  # a cancelled caller leaves the job to a later join
        except asyncio.CancelledError:
            raise
        except Exception:
            self._job = None
            self._pending[:0] = answered
            if raise_error:
                raise
            log.exception(
                "operation %s: the journal writer failed on batch %d (its answered batches are recorded on their own)",
                op_id,
                seqs[0] + 1,
            )
            return None
        self._job = None
        self._unsent = list(seqs)
        return staged

    @staticmethod
    def _insert_intent(c, op_id: str, seq: int, blob: bytes, digest: str) -> None:  # noqa: ANN001
        c.execute(
            "INSERT INTO batches(op_id, seq, batch_id, state, entries, entries_sha256, intent_ms)"
            " VALUES (?,?,?,?,?,?,?)",
            (op_id, seq, f"{op_id}.{seq}", "intent", blob, digest, now_ms()),
        )

    def _settle_answered(self, c, op_id: str, answered: list[tuple]) -> None:  # noqa: ANN001 - an open transaction
        """Record answered batches (state ``done``, their ``written`` rows, the operation's counters)
        inside the caller's transaction."""
        for seq, result, rows, _ in answered:
            self._settle_rows(c, op_id, seq, "done", result, rows)
        if answered:
            set_state(self.ctx.db, op_id, OpState.APPLYING, conn=c, **answered[-1][3])

    def _flush(self, op_id: str, keep_unsent: bool = False) -> None:
        """Before the operation stops, ends or re-checks (its own transaction): record the answered
        batches, and abort the intents of batches that were written ahead but never sent."""
        unsent = [] if keep_unsent else self._unsent
        if not self._pending and not unsent:
            return
        with self.db.tx() as c:
            self._settle_answered(c, op_id, self._pending)
            c.executemany(
                "UPDATE batches SET state='aborted', result_json=?, done_ms=? WHERE op_id=? AND seq=?"
                " AND state='intent'",
                [
                    (json.dumps({"not_sent": "the operation stopped before this batch"}), now_ms(), op_id, seq)
                    for seq in unsent
                ],
            )
        self._pending = []
        if unsent:
            self._unsent = []

    def _settle_batch(self, op_id: str, seq: int, state: str, result: dict) -> None:
        with self.db.tx() as c:
            self._settle_rows(c, op_id, seq, state, result)

    @staticmethod
    def _settle_rows(
        c,
        op_id: str,
        seq: int,
        state: str,
        result: dict,  # noqa: ANN001
        written_rows: list[tuple[int, int, int, str, str]] | None = None,
    ) -> None:
        t = now_ms()
        c.execute(
            "UPDATE batches SET state=?, result_json=?, done_ms=? WHERE op_id=? AND seq=?",
            (state, json.dumps(result), t, op_id, seq),
        )
        # What we actually wrote, each with the state it replaced (undo, parts, recovery): one
        # packed record for the batch (history.record_batch_writes), not a row per block.
        history.record_batch_writes(c, op_id, seq, written_rows or [], t)

    def _rights_refusal(self, project_id: str, op_id: str, entries: list, bounds: Box | None) -> McbError | None:
        """Permissions and the area are checked again before every batch, not only at prepare
        (``bounds``: the plan's, around every entry)."""
        project = self.ctx.projects.get(project_id)
        if project is None:
            return McbError(ErrorCode.PERMISSION_DENIED, f"project {project_id!r} no longer exists")
        extra = self.db.one("SELECT player_id FROM op_extra WHERE op_id=?", op_id)
        return policy.batch_refusal(
            project.owner_player_id, project.area, extra["player_id"] if extra is not None else "", entries, bounds
        )

    async def _progress(self, op_id: str) -> None:
        r = self.db.one("SELECT * FROM operations WHERE op_id=?", op_id)
        if r is None:
            return
        await self.ctx.queue.progress(
            {
                "operation_id": op_id,
                "project_id": r["project_id"],
                "state": r["state"],
                "written": r["written"],
                "already": r["already"],
                "conflicts": r["conflicts"],
                "batches_done": r["batches_done"],
                "batches_total": r["batches_total"],
                "at_ms": now_ms(),
            }
        )
