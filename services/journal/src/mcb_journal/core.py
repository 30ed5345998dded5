"""The journal core: the facade the gRPC servicer (servicer.py) and app.py call — what the model
asks of one project (its context and inspection, prepare, apply, status and cancel, undo, parts,
the change feed) and the admin's recovery decisions — each handed to the job that does it.

The jobs live below it, one module each, and depend only on the context beneath them
(context.py: storage, ports, the observer, limits, projects and the shared lookups), never on
this module: views.py (context, inspect), prepare.py and planstore.py (plans), apply.py (apply,
status, cancel), parts.py, undo.py, recovery.py, changes.py (the feed), schematics.py,
overview.py, preview.py; executor.py (the batch pipeline) is built by app.py on the same context.
The core builds every job at construction, so no check that needs a job (protected parts,
conflict sources) can find it missing. Transport-free: it receives its ports (ports.py) from
app.py and speaks McbError.
"""

from __future__ import annotations

from mcb.journal.v1 import journal_pb2 as jpb
from mcb_common.assets import AssetLibrary

from .apply import Apply
from .blobs import BlobStore
from .changes import Changes
from .context import JournalContext, Limits
from .db import Database
from .executor import Executor
from .observer import Observer
from .packer import Packer
from .parts import Parts
from .plans import Plan
from .ports import CameraPort, PlannerPort, ProgressPort, WorldPort
from .prepare import Prepare
from .projects import Caller, Projects
from .reads import Reads
from .recovery import Recovery
from .settings import JournalSettings
from .undo import Undo
from .views import Views

__all__ = ["JournalCore", "Limits"]


class JournalCore:
    def __init__(
        self,
        db: Database,
        blobs: BlobStore,
        world: WorldPort,
        planner: PlannerPort,
        queue: ProgressPort,
        *,
        observer: Observer | None = None,
        limits: Limits | None = None,
        settings: JournalSettings | None = None,
        camera: CameraPort | None = None,
        assets: AssetLibrary | None = None,
        max_waiting_operations: int = 32,
    ):
        """``observer``: the world host's block events (app.py passes the one its task runs);
        without one the core observes ``world`` itself — there is always one."""
        self.ctx = JournalContext(
            db=db,
            blobs=blobs,
            world=world,
            planner=planner,
            queue=queue,
            observer=observer if observer is not None else Observer(db, world),
            limits=limits or Limits(),
            settings=settings or JournalSettings(),
            camera=camera,
            assets=assets,
            max_waiting_operations=max_waiting_operations,
        )
        ctx = self.ctx
        self.parts = Parts(ctx)
        self.prepare = Prepare(ctx, self.parts)
        self.applies = Apply(ctx, self.parts)
        self.views = Views(ctx)
        self.undo = Undo(ctx)
        self.recovery = Recovery(ctx)
        self.changes = Changes(ctx, self.parts.part_mask)

    def executor(self) -> Executor:
        """The batch executor over this core's context (app.py runs one per journal)."""
        return Executor(self.ctx, self.parts)

    # ---------------------------------------------------------------- the context, as the callers read it
    @property
    def db(self) -> Database:
        return self.ctx.db

    @property
    def blobs(self) -> BlobStore:
        return self.ctx.blobs

    @property
    def world(self) -> WorldPort:
        return self.ctx.world

    @world.setter
    def world(self, world: WorldPort) -> None:  # tests swap the host; its observer follows
        self.ctx.world = world
        self.ctx.observer.world = world

    @property
    def planner(self) -> PlannerPort:
        return self.ctx.planner

    @property
    def observer(self) -> Observer:
        return self.ctx.observer

    @property
    def limits(self) -> Limits:
        return self.ctx.limits

    @property
    def settings(self) -> JournalSettings:
        return self.ctx.settings

    @property
    def projects(self) -> Projects:
        return self.ctx.projects

    @property
    def reads(self) -> Reads:
        return self.ctx.reads

    @property
    def packer(self) -> Packer:
        return self.ctx.packer

    # ---------------------------------------------------------------- what the servicer and app.py call
    def recover_at_start(self) -> list[str]:
        return self.recovery.recover_at_start()

    def pending_recovery(self) -> list[str]:
        return self.ctx.pending_recovery()

    def report(self, op_id: str, replayed: bool = False) -> jpb.OperationReport:
        return self.ctx.report(op_id, replayed)

    def load_plan(self, plan_id: str) -> Plan:
        return self.ctx.load_plan(plan_id)

    async def project_context(self, caller: Caller, include_old_worlds: bool = False) -> jpb.ProjectContextResponse:
        return await self.views.project_context(caller, include_old_worlds)

    async def region_inspect(self, caller: Caller, req: jpb.RegionInspectRequest) -> jpb.RegionInspectResponse:
        return await self.views.region_inspect(caller, req)

    async def build_apply(self, caller: Caller, req: jpb.BuildApplyRequest) -> jpb.OperationReport:
        return await self.applies.build_apply(caller, req)

    def operation_status(self, caller: Caller, op_id: str) -> jpb.OperationReport:
        return self.applies.operation_status(caller, op_id)

    async def operation_cancel(self, caller: Caller, op_id: str) -> jpb.OperationReport:
        return await self.applies.operation_cancel(caller, op_id)
