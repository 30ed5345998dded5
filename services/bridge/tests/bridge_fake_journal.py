"""FakeJournal: a FAKE of the journal's gRPC API, for the bridge's tests only.

It is not the journal. It keeps a tiny in-memory world (stone below y=63, grass at y=63, air
above, plus whatever fake "box" plans were applied), answers the six RPCs of
``journal.proto`` with plausible messages, and lets tests inject every error code. It *asserts*
the caller's metadata: the agent bearer token and the project/player the bridge must take from
its trusted configuration; a mismatch is answered with ``unauthenticated`` /
``permission_denied``, and every call is recorded in ``calls`` for the tests to inspect.

Runs as a synchronous ``grpc.server`` on a thread pool, so it serves bridges in the test
process (whatever event loop they use) and in subprocesses alike.
"""

from __future__ import annotations

import hashlib
import json
import threading
from concurrent import futures
from typing import Any

import grpc
from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2, journal_pb2_grpc
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_rpc.errors import GRPC_STATUS, TRAILER

PAGE = 4096
AREA = ((-64, -64, -64), (63, 319, 63))
WIDE_X = 1_000_000  # regions with x >= WIDE_X hold a distinct long state at every position


def state_at(world: dict[tuple[int, int, int], str], x: int, y: int, z: int) -> str:
    if (x, y, z) in world:
        return world[(x, y, z)]
    if x >= WIDE_X:
        return f"minecraft:fake_block_{x}_{y}_{z}[facing=east,half=bottom,shape=straight,waterlogged=false]"
    if y < 63:
        return "minecraft:stone"
    if y == 63:
        return "minecraft:grass_block[snowy=false]"
    return "minecraft:air"


class FakeJournal(journal_pb2_grpc.JournalServicer):
    def __init__(self, token: str, project_id: str, player_id: str) -> None:
        self.token = token
        self.project_id = project_id
        self.player_id = player_id
        self.calls: list[tuple[str, dict[str, str], Any]] = []
        self.world: dict[tuple[int, int, int], str] = {}
        self.plans: dict[str, tuple[str, dict[tuple[int, int, int], str]]] = {}
        self.keys: dict[str, tuple[str, str]] = {}  # idempotency key -> (plan_id, operation_id)
        self.ops: dict[str, journal_pb2.OperationReport] = {}
        self.lock = threading.Lock()

    # ---- helpers ----

    def _fail(self, context: grpc.ServicerContext, err: McbError) -> None:
        context.set_trailing_metadata(((TRAILER, json.dumps(err.to_dict())),))
        context.abort(GRPC_STATUS[err.code], err.message)

    def _check(self, method: str, request: Any, context: grpc.ServicerContext) -> None:
        md = {k: v for k, v in context.invocation_metadata() if isinstance(v, str)}
        with self.lock:
            self.calls.append((method, md, request))
        if md.get("authorization") != f"Bearer {self.token}":
            self._fail(context, McbError(ErrorCode.UNAUTHENTICATED, "fake journal: wrong bearer token"))
        if md.get("x-mcb-project-id") != self.project_id or md.get("x-mcb-player-id") != self.player_id:
            self._fail(
                context,
                McbError(
                    ErrorCode.PERMISSION_DENIED, "fake journal: project/player metadata do not match the configuration"
                ),
            )

    # ---- RPCs ----

    def ProjectContext(self, request, context):  # noqa: N802
        self._check("ProjectContext", request, context)
        (ax, ay, az), (bx, by, bz) = AREA
        return journal_pb2.ProjectContextResponse(
            project=journal_pb2.Project(
                project_id=self.project_id,
                name="Fake project",
                owner_player_id=self.player_id,
                area=common_pb2.Box(min=common_pb2.Vec3(x=ax, y=ay, z=az), max=common_pb2.Vec3(x=bx, y=by, z=bz)),
                world_uuid="00000000-0000-0000-0000-00000000f00d",
            ),
            world=world_pb2.WorldInfo(
                world_uuid="00000000-0000-0000-0000-00000000f00d",
                world_name="fake",
                epoch=1,
                data_version=4671,
                minecraft_version="1.21.11",
                min_y=-64,
                max_y=319,
                host_instance="fake-instance",
            ),
            limits=journal_pb2.PlanLimits(
                max_changed_blocks=100_000,
                max_examined_positions=2_000_000,
                batch_blocks=512,
                inspect_blocks_page=PAGE,
                inspect_summary_positions=1_000_000,
                plan_ttl_seconds=600,
            ),
            capabilities=["region_inspect.summary", "region_inspect.blocks"],
            recipe_operations=["box", "line", "cylinder", "repeat"],
            block_states_help="minecraft:name[prop=value,...]",
            recent_operations=[
                journal_pb2.OperationBrief(
                    operation_id=o.operation_id, state=o.state, plan_id=o.plan_id, written=o.written
                )
                for o in self.ops.values()
            ],
        )

    def RegionInspect(self, request, context):  # noqa: N802
        self._check("RegionInspect", request, context)
        mn, mx = request.min, request.max
        dx, dy, dz = mx.x - mn.x + 1, mx.y - mn.y + 1, mx.z - mn.z + 1
        if min(dx, dy, dz) <= 0:
            self._fail(context, McbError(ErrorCode.INVALID_REQUEST, "min > max"))
        total = dx * dy * dz
        if total > 1_000_000:
            self._fail(context, McbError(ErrorCode.BUDGET_EXCEEDED, f"{total} positions > 1000000"))
        if request.detail not in ("summary", "blocks", "heightmap"):
            self._fail(context, McbError(ErrorCode.INVALID_REQUEST, f"detail {request.detail!r}"))
        if request.detail == "heightmap":
            step = max(1, request.step)
            cols, rows = (dx - 1) // step + 1, (dz - 1) // step + 1
            heights = []
            for r in range(rows):
                for c in range(cols):
                    x, z = mn.x + c * step, mn.z + r * step
                    top = [y for y in range(mn.y, mx.y + 1) if state_at(self.world, x, y, z) != "minecraft:air"]
                    heights.append(max(top) if top else -32768)
            return journal_pb2.RegionInspectResponse(
                region=common_pb2.Box(min=mn, max=mx),
                detail="heightmap",
                positions=total,
                heightmap=journal_pb2.Heightmap(x0=mn.x, z0=mn.z, step=step, cols=cols, rows=rows, heights=heights),
            )

        def at(i: int) -> str:
            return state_at(self.world, mn.x + i % dx, mn.y + i // (dx * dz), mn.z + (i // dx) % dz)

        resp = journal_pb2.RegionInspectResponse(
            region=common_pb2.Box(min=mn, max=mx), detail=request.detail, positions=total
        )
        if request.detail == "summary" or total <= 100_000:
            counts: dict[str, int] = {}
            for i in range(total):
                s = at(i)
                counts[s] = counts.get(s, 0) + 1
            for s, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
                resp.palette.add(state=s, count=c)
            resp.non_air = total - counts.get("minecraft:air", 0)
        if request.detail == "blocks":
            # as the journal's blocks pages (services/journal/src/mcb_journal/views.py): a cursor
            # names its offset and its region, another region's is refused, max_positions cuts the page
            region = f"{mn.x}.{mn.y}.{mn.z}.{mx.x}.{mx.y}.{mx.z}"
            offset = 0
            if request.cursor:
                head, _, rest = request.cursor.partition(":")
                at_s, _, of_region = rest.partition(":")
                if head != "fake-page" or not at_s.isdigit():
                    self._fail(context, McbError(ErrorCode.INVALID_REQUEST, "cursor is not one this server issued"))
                if of_region != region or not 0 <= int(at_s) < total:
                    self._fail(
                        context,
                        McbError(
                            ErrorCode.INVALID_REQUEST,
                            "cursor belongs to another region; repeat the call with the same min/max",
                        ),
                    )
                offset = int(at_s)
            page = min(PAGE, request.max_positions) if request.max_positions else PAGE
            end = min(total, offset + page)
            index: dict[str, int] = {}
            for i in range(offset, end):
                s = at(i)
                if s not in index:
                    index[s] = len(index)
                    resp.page_palette.append(s)
                resp.page_states.append(index[s])
            resp.offset = offset
            if end < total:
                resp.next_cursor = f"fake-page:{end}:{region}"
                resp.truncated = True
        return resp

    def BuildPrepare(self, request, context):  # noqa: N802
        self._check("BuildPrepare", request, context)
        recipe = json.loads(request.recipe_json)
        writes: dict[tuple[int, int, int], str] = {}
        for op in recipe.get("operations", []):
            if op.get("block") == "minecraft:lava":
                self._fail(
                    context,
                    McbError(
                        ErrorCode.UNSUPPORTED_BLOCK,
                        "fluids are not in the guaranteed building set",
                        details={"block": "minecraft:lava"},
                    ),
                )
            if op.get("type") != "box":
                continue  # the fake only draws boxes
            a, b = op["min"], op["max"]
            for x in range(a["x"], b["x"] + 1):
                for y in range(a["y"], b["y"] + 1):
                    for z in range(a["z"], b["z"] + 1):
                        writes[(x, y, z)] = op["block"]
        digest = hashlib.sha256(request.recipe_json.encode()).hexdigest()
        plan_id = "plan-" + digest[:12]
        with self.lock:
            self.plans[plan_id] = ("sha256:" + digest, writes)
        xs = [p[0] for p in writes] or [0]
        ys = [p[1] for p in writes] or [0]
        zs = [p[2] for p in writes] or [0]
        mats: dict[str, int] = {}
        for s in writes.values():
            mats[s] = mats.get(s, 0) + 1
        return journal_pb2.PlanSummary(
            plan_id=plan_id,
            plan_hash="sha256:" + digest,
            changed_blocks=len(writes),
            region=common_pb2.Box(
                min=common_pb2.Vec3(x=min(xs), y=min(ys), z=min(zs)),
                max=common_pb2.Vec3(x=max(xs), y=max(ys), z=max(zs)),
            ),
            expires_at="2099-01-01T00:00:00Z",
            materials=[common_pb2.StateCount(state=s, count=c) for s, c in mats.items()],
            warnings=[f"dependencies: {len(request.dependencies)}"] if request.dependencies else [],
            total_positions=len(writes),
            batches=max(1, (len(writes) + 511) // 512),
            world_epoch=1,
        )

    def BuildApply(self, request, context):  # noqa: N802
        self._check("BuildApply", request, context)
        with self.lock:
            plan = self.plans.get(request.plan_id)
            if plan is None:
                self._fail(context, McbError(ErrorCode.NOT_FOUND, f"no plan {request.plan_id}"))
            if plan[0] != request.plan_hash:
                self._fail(context, McbError(ErrorCode.INVALID_REQUEST, "plan_hash does not match the plan"))
            if request.idempotency_key in self.keys:
                pid, oid = self.keys[request.idempotency_key]
                if pid != request.plan_id:
                    self._fail(
                        context, McbError(ErrorCode.INVALID_REQUEST, "idempotency_key was used for another plan")
                    )
                rep = journal_pb2.OperationReport()
                rep.CopyFrom(self.ops[oid])
                rep.replayed = True
                return rep
            oid = f"op-{len(self.ops) + 1}"
            written = already = 0
            for pos, s in plan[1].items():
                if state_at(self.world, *pos) == s:
                    already += 1
                else:
                    self.world[pos] = s
                    written += 1
            rep = journal_pb2.OperationReport(
                operation_id=oid,
                plan_id=request.plan_id,
                state="applied",
                planned=len(plan[1]),
                written=written,
                already=already,
                batches_total=1,
                batches_done=1,
                written_samples=[common_pb2.Vec3(x=p[0], y=p[1], z=p[2]) for p in list(plan[1])[:3]],
            )
            self.ops[oid] = rep
            self.keys[request.idempotency_key] = (request.plan_id, oid)
            return rep

    def OperationStatus(self, request, context):  # noqa: N802
        self._check("OperationStatus", request, context)
        oid = request.operation_id
        if oid.startswith("fail:"):
            code = ErrorCode(oid.split(":", 1)[1])
            self._fail(context, McbError(code, f"injected {code}", details={"injected": str(code)}))
        if oid == "crash":
            raise RuntimeError("fake journal crashed on purpose")
        if oid == "many-conflicts":
            rep = journal_pb2.OperationReport(operation_id=oid, state="conflict", planned=500, conflicts=500)
            for i in range(500):
                rep.conflict_samples.add(
                    pos=common_pb2.Vec3(x=i, y=64, z=0),
                    expected="minecraft:air",
                    current="minecraft:dirt",
                    desired="minecraft:stone",
                    source="player",
                )
            return rep
        with self.lock:
            rep = self.ops.get(oid)
        if rep is None:
            self._fail(context, McbError(ErrorCode.NOT_FOUND, f"no operation {oid}"))
        return rep

    def OperationCancel(self, request, context):  # noqa: N802
        self._check("OperationCancel", request, context)
        self._fail(context, McbError(ErrorCode.NOT_FOUND, "fake: cancel is not used by the bridge yet"))


def serve(fake: FakeJournal, host: str = "127.0.0.1") -> tuple[grpc.Server, int]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    journal_pb2_grpc.add_JournalServicer_to_server(fake, server)
    port = server.add_insecure_port(f"{host}:0")
    server.start()
    return server, port
