"""gRPC face of the journal: call the core, answer typed messages (messages.py).

Nothing else lives here (STYLE habit 2). Authentication by the scope tables below and the error
translation are mcb_rpc.boundary's, the same for every service; project and player come from
metadata set by the bridge's configuration and are re-checked against the project table by the core.
"""

from __future__ import annotations

from mcb.journal.v1 import journal_pb2 as jpb
from mcb.journal.v1 import journal_pb2_grpc
from mcb_common.errors import ErrorCode, McbError
from mcb_rpc.auth import Caller as RpcCaller
from mcb_rpc.boundary import grpc_boundary
from mcb_rpc.tokens import TokenTable

from . import messages
from .core import JournalCore
from .history import journal_stats
from .pbconv import box_from_pb
from .projects import Caller

AGENT = ("agent", "admin")
# The camera worker (service token) waits for an operation before a capture
# (camera_capture after_operation_id): read-only, within the project in its metadata.
STATUS_READERS = ("agent", "admin", "service")
# Who may call what (docs/architecture.md, "Who may call what"; tests/hardening/test_auth_matrix.py).
SCOPES: dict[str, tuple[str, ...]] = {
    "ProjectContext": AGENT,
    "RegionInspect": AGENT,
    "BuildPrepare": AGENT,
    "BuildApply": AGENT,
    "OperationStatus": STATUS_READERS,
    "OperationCancel": AGENT,
    "OperationUndoPrepare": AGENT,
    "PartDefine": AGENT,
    "PartGet": AGENT,
    "RegionChanges": AGENT,
    "AssetList": AGENT,
    "SchematicExport": AGENT,
    "SchematicImportPrepare": AGENT,
    "ProjectIndex": AGENT,
    # the camera worker draws a prepared plan (camera_capture plan_id), within the metadata's project
    "PlanEntries": STATUS_READERS,
    "RegionHistory": AGENT,
    "RollbackPrepare": AGENT,
    "HistoryMap": AGENT,
    # the chat bridge names the request behind its player's operations (agent token, player set)
    "OperationPrompt": AGENT,
}
ADMIN_SCOPES: dict[str, tuple[str, ...]] = {
    m: ("admin",)
    for m in (
        "RecoveryReview",
        "RecoveryAbandon",
        "PartProtect",
        "JournalStats",
        "JournalCompact",
        "OperationList",
        "ProjectList",
    )
}
INTERNAL = "journal internal error; see the journal log"


def _caller(c: RpcCaller) -> Caller:
    return Caller(c.principal, c.project_id, c.player_id)


@grpc_boundary("journal", SCOPES, INTERNAL)
class JournalServicer(journal_pb2_grpc.JournalServicer):
    def __init__(self, core: JournalCore, tokens: TokenTable):
        self.core = core
        self.tokens = tokens

    async def ProjectContext(self, request, c):  # noqa: N802
        return await self.core.project_context(_caller(c), request.include_old_worlds)

    async def RegionInspect(self, request, c):  # noqa: N802
        return await self.core.region_inspect(_caller(c), request)

    async def BuildPrepare(self, request, c):  # noqa: N802
        return await self.core.prepare.build_prepare(_caller(c), request)

    async def BuildApply(self, request, c):  # noqa: N802
        return await self.core.build_apply(_caller(c), request)

    def OperationStatus(self, request: jpb.OperationRef, c):  # noqa: N802 - sync or async in the core: the boundary awaits
        return self.core.operation_status(_caller(c), request.operation_id)

    def OperationCancel(self, request: jpb.OperationRef, c):  # noqa: N802 - sync or async in the core: the boundary awaits
        return self.core.operation_cancel(_caller(c), request.operation_id)

    async def OperationUndoPrepare(self, request: jpb.OperationRef, c):  # noqa: N802
        return await self.core.undo.undo_prepare(_caller(c), request.operation_id)

    async def PartDefine(self, request: jpb.PartDefineRequest, c) -> jpb.PartDetail:  # noqa: N802
        parts = self.core.parts
        return messages.part_detail(await parts.part_define(_caller(c), request.name, request.operation_id))

    async def PartGet(self, request: jpb.PartRef, c) -> jpb.PartDetail:  # noqa: N802
        return messages.part_detail(await self.core.parts.part_get(_caller(c), request.part_id))

    async def RegionChanges(self, request: jpb.RegionChangesRequest, c) -> jpb.RegionChangesResponse:  # noqa: N802
        if not request.HasField("region"):
            raise McbError(ErrorCode.INVALID_REQUEST, "region_changes needs a region {min, max}")
        box = box_from_pb(request.region.min, request.region.max)
        return messages.region_changes(
            await self.core.changes.region_changes(
                _caller(c), box, request.since_cursor, request.limit, request.source, request.max_bytes
            )
        )

    async def AssetList(self, request: jpb.AssetListRequest, c) -> jpb.AssetListResponse:  # noqa: N802
        from . import schematics

        return messages.asset_list(await schematics.asset_list(self.core.ctx, _caller(c), request))

    async def SchematicExport(self, request: jpb.SchematicExportRequest, c) -> jpb.SchematicExportResponse:  # noqa: N802
        from . import schematics

        return messages.schematic_export(await schematics.schematic_export(self.core.ctx, _caller(c), request))

    async def SchematicImportPrepare(self, request: jpb.SchematicImportPrepareRequest, c):  # noqa: N802
        from . import schematics

        return await schematics.schematic_import_prepare(self.core.prepare, _caller(c), request)

    def ProjectIndex(self, request: jpb.ProjectIndexRequest, c) -> jpb.ProjectIndexResponse:  # noqa: N802
        from .overview import project_index

        return project_index(self.core.ctx, self.core.projects.project_for(_caller(c)).project_id, request)

    async def RegionHistory(self, request: jpb.RegionHistoryRequest, c) -> jpb.RegionHistoryResponse:  # noqa: N802
        from . import blame

        if not request.HasField("region"):
            raise McbError(ErrorCode.INVALID_REQUEST, "region_history needs a region {min, max}")
        q = blame.Query(
            box_from_pb(request.region.min, request.region.max),
            request.cursor,
            request.limit,
            request.max_bytes,
            request.since_millis,
            request.player,
            request.cause,
        )
        return messages.region_history(await blame.region_history(self.core.ctx, _caller(c), q))

    async def RollbackPrepare(self, request: jpb.RollbackPrepareRequest, c) -> jpb.PlanSummary:  # noqa: N802
        from . import rollback

        if not request.HasField("region"):
            raise McbError(ErrorCode.INVALID_REQUEST, "rollback_prepare needs a region {min, max}")
        box = box_from_pb(request.region.min, request.region.max)
        return await rollback.rollback_prepare(
            self.core.ctx, _caller(c), box, request.player, request.cause, request.since_millis
        )

    async def HistoryMap(self, request: jpb.HistoryMapRequest, c) -> jpb.HistoryMapResponse:  # noqa: N802
        from .histmap import history_map

        if not request.HasField("region"):
            raise McbError(ErrorCode.INVALID_REQUEST, "the history map needs a region {min, max}")
        box = box_from_pb(request.region.min, request.region.max)
        return messages.history_map(await history_map(self.core.ctx, _caller(c), box, request.until_millis))

    async def OperationPrompt(self, request: jpb.OperationPromptRequest, c) -> jpb.OperationPromptResponse:  # noqa: N802
        from .prompts import operation_prompt

        noted = await operation_prompt(self.core.ctx, _caller(c), list(request.operation_ids), request.prompt)
        return jpb.OperationPromptResponse(noted=noted)

    async def PlanEntries(self, request: jpb.PlanEntriesRequest, c) -> jpb.PlanEntriesResponse:  # noqa: N802
        from .preview import plan_entries

        return await plan_entries(self.core.ctx, _caller(c), request)


@grpc_boundary("journal", ADMIN_SCOPES, INTERNAL)
class JournalAdminServicer(journal_pb2_grpc.JournalAdminServicer):
    """Admin-only: recovery decisions and part protection. The agent token is refused."""

    def __init__(self, core: JournalCore, tokens: TokenTable):
        self.core = core
        self.tokens = tokens

    async def RecoveryReview(self, request: jpb.OperationRef, c) -> jpb.RecoveryReviewResponse:  # noqa: N802
        return await self.core.recovery.recovery_review(request.operation_id)

    async def RecoveryAbandon(self, request: jpb.RecoveryAbandonRequest, c):  # noqa: N802
        recovery = self.core.recovery
        return await recovery.recovery_abandon(request.operation_id, request.expected_digest, c.principal)

    def PartProtect(self, request: jpb.PartProtectRequest, c) -> jpb.PartProtectResponse:  # noqa: N802
        self.core.parts.part_protect(request.part_id, request.protected)
        return jpb.PartProtectResponse(part_id=request.part_id, protected=request.protected)

    def JournalStats(self, request: jpb.JournalStatsRequest, c) -> jpb.JournalStatsResponse:  # noqa: N802
        return messages.journal_stats(
            journal_stats(self.core.db, self.core.blobs.root, self.core.settings.pack_after_s)
        )

    async def JournalCompact(self, request: jpb.JournalCompactRequest, c) -> jpb.JournalCompactResponse:  # noqa: N802
        return messages.journal_compact(await self.core.packer.compact())

    def OperationList(self, request: jpb.OperationListRequest, c):  # noqa: N802
        from .overview import operation_list

        return operation_list(self.core.ctx, request)

    def ProjectList(self, request: jpb.ProjectListRequest, c):  # noqa: N802
        from .overview import project_list

        return project_list(self.core.ctx, request)
