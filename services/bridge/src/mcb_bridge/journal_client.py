"""The bridge's only way to the world: the journal's gRPC API.

Every call carries the agent token and the trusted project/player ids as metadata
(``mcb_rpc.auth.call_metadata``) and a deadline; a failed call is translated exactly once,
here, into an ``McbError`` (``mcb_rpc.errors.from_rpc_error``).

The aio channel is created lazily inside the running event loop (grpc.aio binds a channel to
the loop that created it) and closed with ``close()``.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2, journal_pb2_grpc
from mcb_rpc import pbjson
from mcb_rpc.auth import call_metadata
from mcb_rpc.errors import from_rpc_error

# Seconds per call. build_prepare compiles and reads up to the plan budget; build_apply only
# has to record the operation and queue it (the work continues after the answer).
DEADLINES: dict[str, float] = {
    "ProjectContext": 10.0,
    "RegionInspect": 30.0,
    "BuildPrepare": 60.0,
    "BuildApply": 30.0,
    "OperationStatus": 10.0,
    "OperationCancel": 10.0,
    "OperationUndoPrepare": 60.0,
    "PartDefine": 30.0,
    "PartGet": 30.0,
    "RegionChanges": 30.0,
    "RegionHistory": 30.0,
    "RollbackPrepare": 60.0,
    "AssetList": 30.0,
    "SchematicExport": 60.0,
    "SchematicImportPrepare": 60.0,
    "ProjectIndex": 10.0,
}

_CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", 16 * 1024 * 1024),
    ("grpc.max_send_message_length", 16 * 1024 * 1024),
]


vec3 = pbjson.vec3_pb  # {x, y, z} -> mcb.common.v1.Vec3 (the project's one converter)


class JournalClient:
    def __init__(
        self,
        addr: str,
        token: str,
        project_id: str,
        player_id: str,
        deadline_scale: float = 1.0,
    ) -> None:
        self.addr = addr
        self._metadata = call_metadata(token, project_id, player_id)
        self._scale = deadline_scale
        self._channel: grpc.aio.Channel | None = None
        self._stub: journal_pb2_grpc.JournalStub | None = None

    def __repr__(self) -> str:  # never show the metadata (it holds the token)
        return f"JournalClient({self.addr!r})"

    def _get_stub(self) -> journal_pb2_grpc.JournalStub:
        if self._stub is None:
            self._channel = grpc.aio.insecure_channel(self.addr, options=_CHANNEL_OPTIONS)
            self._stub = journal_pb2_grpc.JournalStub(self._channel)
        return self._stub

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()
        self._channel = None
        self._stub = None

    async def _call(self, method: str, request: Any) -> Any:
        rpc = getattr(self._get_stub(), method)
        timeout = DEADLINES.get(method, 30.0) * self._scale
        try:
            return await rpc(request, metadata=self._metadata, timeout=timeout)
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "journal", timeout) from None

    async def reachable(self, timeout: float = 1.0) -> bool:
        """Whether the journal's gRPC endpoint completes a connection within ``timeout``."""
        self._get_stub()
        assert self._channel is not None
        try:
            await asyncio.wait_for(self._channel.channel_ready(), timeout)
            return True
        except (TimeoutError, grpc.RpcError):
            return False

    # ---- the journal's API, one method per RPC ----

    async def project_context(self, include_old_worlds: bool = False) -> journal_pb2.ProjectContextResponse:
        return await self._call(
            "ProjectContext", journal_pb2.ProjectContextRequest(include_old_worlds=include_old_worlds)
        )

    async def project_index(self, limit: int = 0) -> journal_pb2.ProjectIndexResponse:
        return await self._call("ProjectIndex", journal_pb2.ProjectIndexRequest(limit=limit))

    async def region_inspect(
        self,
        min_: dict[str, Any],
        max_: dict[str, Any],
        detail: str,
        cursor: str = "",
        step: int = 0,
        max_positions: int = 0,
    ) -> journal_pb2.RegionInspectResponse:
        req = journal_pb2.RegionInspectRequest(
            min=vec3(min_), max=vec3(max_), detail=detail, cursor=cursor, step=step, max_positions=max_positions
        )
        return await self._call("RegionInspect", req)

    async def build_prepare(
        self,
        recipe_json: str,
        dependencies: list[tuple[dict[str, Any], str]],
        part_id: str,
        regenerate_part_id: str = "",
    ) -> journal_pb2.PlanSummary:
        req = journal_pb2.BuildPrepareRequest(
            recipe_json=recipe_json,
            dependencies=[journal_pb2.Dependency(pos=vec3(p), state=s) for p, s in dependencies],
            part_id=part_id,
            regenerate_part_id=regenerate_part_id,
        )
        return await self._call("BuildPrepare", req)

    async def build_apply(
        self, plan_id: str, plan_hash: str, idempotency_key: str, replace_player_blocks: bool = False
    ) -> journal_pb2.OperationReport:
        req = journal_pb2.BuildApplyRequest(
            plan_id=plan_id,
            plan_hash=plan_hash,
            idempotency_key=idempotency_key,
            replace_player_blocks=replace_player_blocks,
        )
        return await self._call("BuildApply", req)

    async def plan_entries(self, plan_id: str) -> journal_pb2.PlanEntriesResponse:
        """A prepared plan's positions and desired states (the caller's project only)."""
        return await self._call("PlanEntries", journal_pb2.PlanEntriesRequest(plan_id=plan_id))

    async def operation_status(self, operation_id: str) -> journal_pb2.OperationReport:
        return await self._call("OperationStatus", journal_pb2.OperationRef(operation_id=operation_id))

    async def operation_cancel(self, operation_id: str) -> journal_pb2.OperationReport:
        return await self._call("OperationCancel", journal_pb2.OperationRef(operation_id=operation_id))

    async def operation_prompt(self, operation_ids: list[str], prompt: str) -> int:
        req = journal_pb2.OperationPromptRequest(operation_ids=operation_ids, prompt=prompt)
        return int((await self._call("OperationPrompt", req)).noted)

    async def operation_undo_prepare(self, operation_id: str) -> journal_pb2.PlanSummary:
        return await self._call("OperationUndoPrepare", journal_pb2.OperationRef(operation_id=operation_id))

    async def part_define(self, name: str, operation_id: str) -> journal_pb2.PartDetail:
        return await self._call("PartDefine", journal_pb2.PartDefineRequest(name=name, operation_id=operation_id))

    async def part_get(self, part_id: str) -> journal_pb2.PartDetail:
        return await self._call("PartGet", journal_pb2.PartRef(part_id=part_id))

    async def region_changes(
        self,
        mn: dict[str, Any],
        mx: dict[str, Any],
        since_cursor: str,
        limit: int,
        source: str = "",
        max_bytes: int = 0,
    ) -> journal_pb2.RegionChangesResponse:
        req = journal_pb2.RegionChangesRequest(
            region=common_pb2.Box(min=vec3(mn), max=vec3(mx)),
            since_cursor=since_cursor,
            limit=limit,
            source=source,
            max_bytes=max_bytes,
        )
        return await self._call("RegionChanges", req)

    async def region_history(
        self,
        mn: dict[str, Any],
        mx: dict[str, Any],
        cursor: str = "",
        player: str = "",
        cause: str = "",
        since_millis: int = 0,
        limit: int = 0,
        max_bytes: int = 0,
    ) -> journal_pb2.RegionHistoryResponse:
        req = journal_pb2.RegionHistoryRequest(
            region=common_pb2.Box(min=vec3(mn), max=vec3(mx)),
            cursor=cursor,
            player=player,
            cause=cause,
            since_millis=since_millis,
            limit=limit,
            max_bytes=max_bytes,
        )
        return await self._call("RegionHistory", req)

    async def rollback_prepare(
        self, mn: dict[str, Any], mx: dict[str, Any], player: str, cause: str, since_millis: int
    ) -> journal_pb2.PlanSummary:
        req = journal_pb2.RollbackPrepareRequest(
            region=common_pb2.Box(min=vec3(mn), max=vec3(mx)), player=player, cause=cause, since_millis=since_millis
        )
        return await self._call("RollbackPrepare", req)

    async def asset_list(self, query: str, cursor: str) -> journal_pb2.AssetListResponse:
        return await self._call("AssetList", journal_pb2.AssetListRequest(query=query, cursor=cursor))

    async def schematic_export(
        self, name: str, mn: dict[str, Any], mx: dict[str, Any], origin: dict[str, Any] | None
    ) -> journal_pb2.SchematicExportResponse:
        req = journal_pb2.SchematicExportRequest(name=name, min=vec3(mn), max=vec3(mx))
        if origin is not None:
            req.origin.CopyFrom(vec3(origin))
        return await self._call("SchematicExport", req)

    async def schematic_import_prepare(
        self, asset_id: str, target: dict[str, Any], rotation: int, allow_drop_block_entities: bool = False
    ) -> journal_pb2.PlanSummary:
        req = journal_pb2.SchematicImportPrepareRequest(
            asset_id=asset_id,
            target=vec3(target),
            rotation=rotation,
            allow_drop_block_entities=allow_drop_block_entities,
        )
        return await self._call("SchematicImportPrepare", req)
