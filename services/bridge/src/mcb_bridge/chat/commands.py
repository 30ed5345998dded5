"""In-game commands (`/ai status`, `project create|use`, `area set`, `undo`, `protect`, `camera save`, `who`,
`rollback`),
answered by the bridge without the model. The host decided that the line is exactly a command
(``mcb_common.chatcommands``, the same rule as the Java core) and, on Paper, checked the player's
permission; here the bridge checks what the world's trusted state says: a player changes only
projects they own.

- ``project create NAME``: a new project owned by the player, its area 2*DEFAULT_RADIUS+1 blocks wide
  around the player over the world's whole height; the player's requests now go to it.
- ``project use NAME``: the player's requests go to NAME (a project they own). Per player, kept in
  ``<chat state>/players.json``; without a choice, the project the host stamps on the message.
- ``area set R`` (1..MAX_RADIUS blocks around the player, whole height) or ``area set X1 Y1 Z1 X2 Y2 Z2``
  (``~``/``~N`` relative to the player; each horizontal side at most MAX_SIDE blocks; y inside the
  world): the area of the player's project. The journal checks every write against it.
- ``undo [OP]``: OP, else the project's latest finished operation of the current world that wrote
  blocks (project_context lists only the current world's; an operation of a world replaced since,
  named as OP, is refused with world_changed as build_prepare refuses it); prepared with the
  journal's operation_undo_prepare and applied like any plan (queued behind the project's running
  request); blocks changed since by someone else are left as they are and reported.
- ``protect PT [off]``: admin part protection (``mcb part protect``) of a part of the player's project.
- ``camera save NAME``: a saved camera of the project at the player's eyes, looking where they look.
- ``who`` (the block the player looks at) or ``who X1 Y1 Z1 X2 Y2 Z2`` (``~``/``~N`` relative; at most
  MAX_WHO_SIDE blocks a side): who or what changed it and when, newest first (the journal's
  region_history: a player's name, an environment cause, or an operation and who asked), WHO_LINES
  changes at most, then how to see the rest.
- ``rollback WHO [since T] [R | X1 Y1 Z1 X2 Y2 Z2]``: the journal's rollback_prepare for the player's
  project — WHO is an environment cause when it is one of mcb_common.causes.CAUSES, else a player (name or
  id); T is ``N s|m|h|d`` (default ROLLBACK_DEFAULT_SINCE, at most ROLLBACK_MAX_SINCE); the box is the
  project's area, R blocks around the player (x and z; the area's y) within the area, or two corners. The
  answer says what it would restore and the later changes by others it leaves (and who made them); the
  plan becomes the player's pending plan (plans.py: previewed where the host can; ``apply`` is the
  player's consent to replacing the players' blocks it names, ``reject`` drops it).
- ``apply`` / ``reject`` / ``preview``: the player's pending plan (plans.py); ``apply`` is applied and
  followed like an undo.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
from mcb.camera.v1 import camera_pb2, camera_pb2_grpc
from mcb.journal.v1 import journal_pb2, journal_pb2_grpc
from mcb_common.causes import CAUSES
from mcb_common.chatcommands import Command
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box as WorldBox
from mcb_rpc.auth import call_metadata
from mcb_rpc.errors import from_rpc_error

from ..journal_client import JournalClient
from ..render import to_dict
from .plans import PendingPlan, pending_from
from .projects import Box, ProjectError, ProjectRegistry, box_of, describe

DEFAULT_RADIUS = 32
MAX_RADIUS = 128
MAX_SIDE = 512
EYE_HEIGHT = 1.62
FINISHED = ("applied", "conflict", "cancelled", "failed")
UNDO_WAIT_S = 600.0
MAX_WHO_SIDE = 64
WHO_LINES = 6
ROLLBACK_DEFAULT_SINCE = "24h"
ROLLBACK_MAX_SINCE_S = 30 * 86400
ROLLBACK_NAMED = 3  # conflicts whose author is looked up (region_history) and named

Reply = Callable[[str], Awaitable[object]]  # (its result is not read)


class Services:
    """The journal and camera worker as the commands use them (the unit tests pass a fake)."""

    def __init__(self, journal_addr: str, camera_addr: str, agent_token: str, admin_token: str):
        self.journal_addr, self.camera_addr = journal_addr, camera_addr
        self.agent_token, self.admin_token = agent_token, admin_token

    def journal(self, project: str, player: str) -> JournalClient:
        return JournalClient(self.journal_addr, self.agent_token, project, player)

    async def _with_journal(self, project: str, player: str, fn: Callable[[JournalClient], Awaitable[Any]]) -> Any:
        jc = self.journal(project, player)
        try:
            return await fn(jc)
        finally:
            await jc.close()

    async def recent_operations(self, project: str, player: str) -> list[journal_pb2.OperationBrief]:
        """The project's recent operations of the current world (project_context's default)."""
        ctx = await self._with_journal(project, player, lambda jc: jc.project_context())
        return list(ctx.recent_operations)

    async def undo_prepare(self, project: str, player: str, op: str) -> journal_pb2.PlanSummary:
        return await self._with_journal(project, player, lambda jc: jc.operation_undo_prepare(op))

    async def apply(
        self,
        project: str,
        player: str,
        plan: journal_pb2.PlanSummary | Any,
        key: str,
        replace_player_blocks: bool = False,
    ) -> journal_pb2.OperationReport:
        return await self._with_journal(
            project, player, lambda jc: jc.build_apply(plan.plan_id, plan.plan_hash, key, replace_player_blocks)
        )

    async def plan_entries(self, project: str, player: str, plan_id: str) -> journal_pb2.PlanEntriesResponse:
        return await self._with_journal(project, player, lambda jc: jc.plan_entries(plan_id))

    async def rollback_prepare(
        self,
        project: str,
        player: str,
        lo: tuple[int, int, int],
        hi: tuple[int, int, int],
        target: str,
        cause: str,
        since_ms: int,
    ) -> journal_pb2.PlanSummary:
        mn, mx = dict(zip("xyz", lo, strict=True)), dict(zip("xyz", hi, strict=True))
        return await self._with_journal(
            project, player, lambda jc: jc.rollback_prepare(mn, mx, target, cause, since_ms)
        )

    async def status(self, project: str, player: str, op: str) -> journal_pb2.OperationReport:
        return await self._with_journal(project, player, lambda jc: jc.operation_status(op))

    async def cancel(self, project: str, player: str, op: str) -> journal_pb2.OperationReport:
        return await self._with_journal(project, player, lambda jc: jc.operation_cancel(op))

    async def note_prompt(self, project: str, player: str, ops: list[str], prompt: str) -> int:
        """The player's request beside the operations their turn started (the journal keeps it
        for their own operations only; block history shows it)."""
        return await self._with_journal(project, player, lambda jc: jc.operation_prompt(ops, prompt))

    async def part_get(self, project: str, player: str, part: str) -> str:
        return (await self._with_journal(project, player, lambda jc: jc.part_get(part))).json

    async def part_protect(self, project: str, part: str, protected: bool) -> None:
        async with grpc.aio.insecure_channel(self.journal_addr) as ch:
            try:
                await journal_pb2_grpc.JournalAdminStub(ch).PartProtect(
                    journal_pb2.PartProtectRequest(part_id=part, protected=protected),
                    metadata=call_metadata(self.admin_token, project),
                    timeout=30,
                )
            except grpc.RpcError as exc:
                raise from_rpc_error(exc, "journal", 30) from None

    async def region_history(
        self, project: str, player: str, lo: tuple[int, int, int], hi: tuple[int, int, int]
    ) -> journal_pb2.RegionHistoryResponse:
        mn, mx = dict(zip("xyz", lo, strict=True)), dict(zip("xyz", hi, strict=True))
        return await self._with_journal(project, player, lambda jc: jc.region_history(mn, mx, limit=WHO_LINES))

    async def camera_save(self, project: str, player: str, cam: camera_pb2.CameraInfo) -> camera_pb2.CameraInfo:
        async with grpc.aio.insecure_channel(self.camera_addr) as ch:
            try:
                return await camera_pb2_grpc.CameraStub(ch).SaveCamera(
                    camera_pb2.SaveCameraRequest(project_id=project, camera=cam),
                    metadata=call_metadata(self.agent_token, project, player),
                    timeout=30,
                )
            except grpc.RpcError as exc:
                raise from_rpc_error(exc, "camera worker", 30) from None


def _position(item: dict[str, Any]) -> dict[str, float] | None:
    pos = item.get("position")
    if not pos:
        return None
    return {k: float(pos.get(k, 0)) for k in ("x", "y", "z", "yaw", "pitch")}


def _need_position(item: dict[str, Any], what: str) -> dict[str, float]:
    pos = _position(item)
    if pos is None:
        raise ProjectError(f"{what} needs your position, and the server did not send it (are you in the game?)")
    return pos


def _coord(token: str, base: float) -> int:
    if token.startswith("~"):
        return math.floor(base) + (int(token[1:]) if len(token) > 1 else 0)
    return int(token)


def area_from_args(args: tuple[str, ...], item: dict[str, Any], min_y: int, max_y: int) -> Box:
    """The box `area set` asks for (see the module doc), validated."""
    if len(args) == 1:
        r = int(args[0])
        if not 1 <= r <= MAX_RADIUS:
            raise ProjectError(f"the radius must be 1..{MAX_RADIUS} blocks, got {r}")
        at = _need_position(item, "`area set <radius>`")
        cx, cz = math.floor(at["x"]), math.floor(at["z"])
        return _inside_world((cx - r, min_y, cz - r), (cx + r, max_y, cz + r))
    pos = _position(item) if any(a.startswith("~") for a in args) else {"x": 0.0, "y": 0.0, "z": 0.0}
    if pos is None:
        raise ProjectError("`~` coordinates need your position, and the server did not send it")
    bases = (pos["x"], pos["y"], pos["z"]) * 2
    v = [_coord(a, b) for a, b in zip(args, bases, strict=True)]
    lo = (min(v[0], v[3]), min(v[1], v[4]), min(v[2], v[5]))
    hi = (max(v[0], v[3]), max(v[1], v[4]), max(v[2], v[5]))
    if lo[1] < min_y or hi[1] > max_y:
        raise ProjectError(f"y must stay inside the world ({min_y}..{max_y}), got {lo[1]}..{hi[1]}")
    if hi[0] - lo[0] + 1 > MAX_SIDE or hi[2] - lo[2] + 1 > MAX_SIDE:
        raise ProjectError(
            f"an area is at most {MAX_SIDE} blocks wide in x and z, got {hi[0] - lo[0] + 1} x {hi[2] - lo[2] + 1}"
        )
    return _inside_world(lo, hi)


def _inside_world(lo: tuple[int, int, int], hi: tuple[int, int, int]) -> Box:
    """The journal's own rule for a project area (mcb_common.geometry.Box.parse), checked before the
    area is written to config.json: one bad area there would stop every project from loading."""
    try:
        WorldBox.parse(dict(zip("xyz", lo, strict=True)), dict(zip("xyz", hi, strict=True)), "area")
    except McbError as exc:
        raise ProjectError(exc.message) from None
    return lo, hi


def corners(args: tuple[str, ...], item: dict[str, Any]) -> Box:
    """The box two corners name (integers, or ``~``/``~N`` relative to the player's block), lowest first."""
    pos = _position(item) if any(a.startswith("~") for a in args) else {"x": 0.0, "y": 0.0, "z": 0.0}
    if pos is None:
        raise ProjectError("`~` coordinates need your position, and the server did not send it")
    v = [_coord(a, b) for a, b in zip(args, (pos["x"], pos["y"], pos["z"]) * 2, strict=True)]
    return (min(v[0], v[3]), min(v[1], v[4]), min(v[2], v[5])), (max(v[0], v[3]), max(v[1], v[4]), max(v[2], v[5]))


def who_box(args: tuple[str, ...], item: dict[str, Any]) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """The box `/ai who` asks about: the six coordinates, else the block the player looks at."""
    if not args:
        tb = item.get("target_block")
        if not tb:
            raise ProjectError(
                "look at a block (within reach) and say `/ai who` again, or give a box: "
                "`/ai who X1 Y1 Z1 X2 Y2 Z2` (~ for your position)"
            )
        p = (int(tb.get("x", 0)), int(tb.get("y", 0)), int(tb.get("z", 0)))
        return p, p
    lo, hi = corners(args, item)
    if max(h - lo_ + 1 for lo_, h in zip(lo, hi, strict=True)) > MAX_WHO_SIDE:
        raise ProjectError(f"`/ai who` looks at boxes of at most {MAX_WHO_SIDE} blocks a side; ask about a smaller one")
    return lo, hi


def who_line(e: journal_pb2.HistoryEntry, now_ms: int) -> str:
    """'Griefer broke minecraft:stone at 1 64 2, 5 min ago' and the like."""
    ago = max(0, (now_ms - int(e.at_millis)) // 1000)
    when = f"{ago} s ago" if ago < 120 else f"{ago // 60} min ago" if ago < 7200 else f"{ago // 3600} h ago"
    who = author(e)
    air = ("minecraft:air", "minecraft:cave_air", "minecraft:void_air")
    short = [s.split("[")[0].split("{")[0].removeprefix("minecraft:") for s in (e.before, e.after)]
    what = (
        f"broke {short[0]}"
        if e.after in air
        else f"placed {short[1]}"
        if e.before in air
        else f"changed {short[0]} to {short[1]}"
    )
    return f"{who} {what} at {e.pos.x} {e.pos.y} {e.pos.z}, {when}"


def author(e: journal_pb2.HistoryEntry) -> str:
    """Who made a change, as a player reads it: a name, an environment cause, or the AI and its operation."""
    if e.source == "player":
        return e.player_name or e.player_id or "a player"
    if e.source == "environment":
        return {"other": "the game"}.get(e.cause or "other", e.cause)
    return f"the AI ({e.operation_id})" if e.operation_id else "another project's AI"


def since_seconds(token: str) -> int:
    """``90s``, ``30m``, ``2h``, ``7d`` in seconds, 1 s .. ROLLBACK_MAX_SINCE_S."""
    n = int(token[:-1]) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[token[-1].lower()]
    if not 1 <= n <= ROLLBACK_MAX_SINCE_S:
        raise ProjectError(f"since is 1s .. {ROLLBACK_MAX_SINCE_S // 86400}d, got {token}")
    return n


def rollback_box(args: tuple[str, ...], item: dict[str, Any], area: Box) -> Box:
    """The box of `/ai rollback` (see the module doc): the area, R around the player inside it, or two corners
    (the journal refuses corners outside the area)."""
    if not args:
        return area
    if len(args) == 6:
        return corners(args, item)
    r = int(args[0])
    if not 1 <= r <= MAX_RADIUS:
        raise ProjectError(f"the radius must be 1..{MAX_RADIUS} blocks, got {r}")
    at = _need_position(item, "`rollback ... <radius>`")
    cx, cz = math.floor(at["x"]), math.floor(at["z"])
    lo = (max(cx - r, area[0][0]), area[0][1], max(cz - r, area[0][2]))
    hi = (min(cx + r, area[1][0]), area[1][1], min(cz + r, area[1][2]))
    if lo[0] > hi[0] or lo[2] > hi[2]:
        raise ProjectError(f"no part of your project's area ({describe(area)}) is within {r} blocks of you")
    return lo, hi


def conflict_summary(conflicts: list[journal_pb2.Conflict], n: int) -> str:
    """'3 block(s) changed since were left as they are (player at 1 64 2, ...)'."""
    if not n:
        return ""
    samples = ", ".join(f"{c.source or 'unknown'} at {c.pos.x} {c.pos.y} {c.pos.z}" for c in conflicts[:2])
    return f"{n} block(s) changed since were left as they are" + (f" ({samples})" if samples else "")


class CommandRunner:
    """Runs one command for the chat loop; ``reply`` shows a line to the player (interim), the
    return value is the final answer. Raises ProjectError / McbError with what to show."""

    def __init__(
        self,
        registry: ProjectRegistry,
        services: Any,
        world_range: Callable[[], Awaitable[tuple[int, int]]],
        world_uuid: Callable[[], Awaitable[str]],
    ):
        self.registry, self.services = registry, services
        self.world_range, self.world_uuid = world_range, world_uuid

    def _own(self, project: str, player: str) -> None:
        owner = self.registry.owner(project)
        if owner != player:
            raise ProjectError(
                f"project {project!r} belongs to another player; `/ai project use <name>` one of yours "
                "or `/ai project create <name>`"
            )

    async def project_create(self, item: dict[str, Any], cmd: Command) -> str:
        name, player = cmd.args[0], item["player_id"]
        pos = _need_position(item, "`project create`")
        min_y, max_y = await self.world_range()
        cx, cz = math.floor(pos["x"]), math.floor(pos["z"])
        box = (cx - DEFAULT_RADIUS, min_y, cz - DEFAULT_RADIUS), (cx + DEFAULT_RADIUS, max_y, cz + DEFAULT_RADIUS)
        self.registry.create(name, player, box)
        self.registry.use(player, name)
        return f"project {name} created, area {describe(box)}; your requests now go to it (/ai area set to change it)"

    async def project_use(self, item: dict[str, Any], cmd: Command) -> str:
        name, player = cmd.args[0], item["player_id"]
        if self.registry.owner(name) is None:
            raise ProjectError(f"there is no project {name!r}")
        self._own(name, player)
        self.registry.use(player, name)
        return f"your requests now go to project {name}"

    async def area_set(self, item: dict[str, Any], cmd: Command) -> str:
        project, player = item["project_id"], item["player_id"]
        self._own(project, player)
        min_y, max_y = await self.world_range()
        box = area_from_args(cmd.args, item, min_y, max_y)
        self.registry.set_area(project, player, box)
        return f"area of project {project} is now {describe(box)}"

    async def protect(self, item: dict[str, Any], cmd: Command) -> str:
        project, player = item["project_id"], item["player_id"]
        self._own(project, player)
        part, on = cmd.args[0], len(cmd.args) == 1
        await self.services.part_get(project, player, part)  # not_found unless it is this project's part
        await self.services.part_protect(project, part, on)
        return (
            f"part {part} is protected: the AI can no longer change it" if on else f"part {part} is no longer protected"
        )

    async def camera_save(self, item: dict[str, Any], cmd: Command) -> str:
        project, player, name = item["project_id"], item["player_id"], cmd.args[0]
        self._own(project, player)
        pos = _need_position(item, "`camera save`")
        pose = camera_pb2.Pose(
            x=pos["x"], y=pos["y"] + EYE_HEIGHT, z=pos["z"], yaw=pos["yaw"], pitch=max(-90.0, min(90.0, pos["pitch"]))
        )
        cam = await self.services.camera_save(
            project,
            player,
            camera_pb2.CameraInfo(camera_id=name, name=name, pose=pose, world_uuid=await self.world_uuid()),
        )
        p = cam.pose
        return (
            f"camera {cam.camera_id} saved at {p.x:.1f} {p.y:.1f} {p.z:.1f} (yaw {p.yaw:.0f}, pitch {p.pitch:.0f}); "
            "the AI can capture from it"
        )

    async def who(self, item: dict[str, Any], cmd: Command) -> str:
        """Who or what changed the block looked at (or a box), newest first (see the module doc)."""
        project, player = item["project_id"], item["player_id"]
        self._own(project, player)
        lo, hi = who_box(cmd.args, item)
        resp = await self.services.region_history(project, player, lo, hi)
        where = f"{lo[0]} {lo[1]} {lo[2]}" + ("" if lo == hi else f" .. {hi[0]} {hi[1]} {hi[2]}")
        if not resp.entries:
            return f"no recorded changes at {where}" + (f" ({resp.note})" if resp.note else "")
        now = int(time.time() * 1000)
        lines = [f"changes at {where}, newest first:"] + [who_line(e, now) for e in resp.entries[:WHO_LINES]]
        if not resp.complete:
            lines.append("more: ask about a smaller box, or see `mcb history` / the AI's region_history")
        if resp.note:
            lines.append(f"note: {resp.note}")
        return "\n".join(lines)

    async def undo(
        self,
        item: dict[str, Any],
        cmd: Command,
        reply: Reply,
        *,
        cancelled: Callable[[], bool] = lambda: False,
        started: Callable[[str], None] = lambda op: None,
    ) -> str:
        """Undo an operation (see the module doc). `cancelled`: asks the journal to cancel the undo
        (an own `/ai stop`); `started` learns the undo's operation id."""
        project, player = item["project_id"], item["player_id"]
        self._own(project, player)
        if cmd.args:
            op = cmd.args[0]
        else:
            recent = await self.services.recent_operations(project, player)
            last = next((o for o in recent if o.state in FINISHED and o.written > 0 and not o.old_world), None)
            if last is None:
                return f"nothing to undo: no recent operation of project {project} in this world wrote blocks"
            op = last.operation_id
        plan = await self.services.undo_prepare(project, player, op)
        skipped = conflict_summary(list(plan.conflicts), len(plan.conflicts))
        if plan.changed_blocks == 0:
            return f"nothing to undo for {op}: its blocks are already as before" + (f"; {skipped}" if skipped else "")
        await reply(f"undoing {op}: {plan.changed_blocks} blocks to restore")
        rep = await self.services.apply(project, player, plan, f"chat-undo-{item['id']}")
        started(rep.operation_id)
        rep = await self.follow(project, player, rep, cancelled)
        if rep.state not in FINISHED and rep.state != "recovery_required":
            return f"the undo {rep.operation_id} is still {rep.state}; see it with /ai status later"
        if rep.state == "applied":
            text = f"undone {op}: {rep.written} blocks restored"
        elif rep.state == "conflict":
            text = f"undo of {op} stopped on a conflict after {rep.written} blocks: " + conflict_summary(
                list(rep.conflict_samples), rep.conflicts
            )
        else:
            text = f"undo of {op} ended {rep.state.replace('_', ' ')} after {rep.written} blocks" + (
                f": {rep.error.message}" if rep.error.message else ""
            )
        return text + (f"; {skipped}" if skipped else "")

    async def follow(
        self, project: str, player: str, rep: journal_pb2.OperationReport, cancelled: Callable[[], bool] = lambda: False
    ) -> journal_pb2.OperationReport:
        """The operation's report once it ended (or when UNDO_WAIT_S passed); `cancelled` asks the
        journal to cancel it (an own `/ai stop`)."""
        deadline = asyncio.get_running_loop().time() + UNDO_WAIT_S
        cancel_sent = False
        while rep.state not in FINISHED and rep.state != "recovery_required":
            if asyncio.get_running_loop().time() > deadline:
                return rep
            if cancelled() and not cancel_sent:
                cancel_sent = True
                await self.services.cancel(project, player, rep.operation_id)
            await asyncio.sleep(0.25)
            rep = await self.services.status(project, player, rep.operation_id)
        return rep

    async def _named_conflicts(self, project: str, player: str, conflicts: list[journal_pb2.Conflict]) -> str:
        """'Alice at 1 64 2, explosion at 3 64 2, ...': who changed the first conflicts after the target."""
        named = []
        for c in conflicts[:ROLLBACK_NAMED]:
            p = (c.pos.x, c.pos.y, c.pos.z)
            hist = await self.services.region_history(project, player, p, p)
            who = (
                author(hist.entries[0])
                if hist.entries and c.source != "external"
                else ("an unrecorded change" if c.source == "external" else c.source)
            )
            named.append(f"{who} at {p[0]} {p[1]} {p[2]}")
        return ", ".join(named) + (", ..." if len(conflicts) > ROLLBACK_NAMED else "")

    async def rollback(self, item: dict[str, Any], cmd: Command) -> tuple[str, PendingPlan | None]:
        """Prepare a rollback (see the module doc): what to tell the player, and the plan to offer them as their
        pending plan (None when nothing would change); nothing is written here."""
        project, player = item["project_id"], item["player_id"]
        self._own(project, player)
        target, since, box_args = cmd.args[0], cmd.args[1] or ROLLBACK_DEFAULT_SINCE, cmd.args[2:]
        cause = target.lower() if target.lower() in CAUSES else ""
        whose, who = ("", f"cause {cause}") if cause else (target, f"player {target}")
        proj = self.registry.get(project)
        if proj is None:
            raise ProjectError(f"there is no project {project!r}")
        lo, hi = rollback_box(box_args, item, box_of(proj["area"]))
        since_ms = int(time.time() * 1000) - since_seconds(since) * 1000
        plan = await self.services.rollback_prepare(project, player, lo, hi, whose, cause, since_ms)
        head = f"rollback of {who} since {since} ago in {describe((lo, hi))}"
        left = ""
        if plan.conflicts:
            left = (
                f"{len(plan.conflicts)} block(s) changed since by others stay as they are: "
                + await self._named_conflicts(project, player, list(plan.conflicts))
            )
        pending = pending_from(project, player, to_dict(plan))
        text = f"{head}: " + (f"{plan.changed_blocks} block(s) to restore" if pending else "nothing to restore")
        return "\n".join([text, *([left] if left else [])]), pending

    async def apply_plan(
        self,
        plan: Any,
        key: str,
        reply: Reply,
        *,
        cancelled: Callable[[], bool] = lambda: False,
        started: Callable[[str], object] = lambda op: None,
    ) -> str:
        """`/ai apply`: the player's pending plan (plans.PendingPlan), applied with their consent, also
        to replacing the players' blocks the offer named; followed until it ends."""
        rep = await self.services.apply(plan.project, plan.player, plan, key, replace_player_blocks=True)
        started(rep.operation_id)
        await reply(f"applying plan {plan.plan_id} as {rep.operation_id}...")
        rep = await self.follow(plan.project, plan.player, rep, cancelled)
        if rep.state == "applied":
            return f"done: {rep.written} blocks placed" + (f", {rep.already} already in place" if rep.already else "")
        if rep.state == "conflict":
            return f"stopped on a conflict after {rep.written} blocks: " + conflict_summary(
                list(rep.conflict_samples), rep.conflicts
            )
        if rep.state not in FINISHED:
            return f"{rep.operation_id} is still {rep.state}; see it with /ai status later"
        return f"{rep.operation_id} ended {rep.state.replace('_', ' ')} after {rep.written} blocks" + (
            f": {rep.error.message}" if rep.error.message else ""
        )


def error_text(exc: Exception) -> str:
    """What the player sees for a refused command."""
    if isinstance(exc, McbError):
        if exc.code == ErrorCode.UNAVAILABLE:
            return f"a service is unavailable ({exc.message}); try again later"
        return exc.message
    return str(exc)
