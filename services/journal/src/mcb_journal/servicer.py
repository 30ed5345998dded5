"""gRPC face of the journal: authenticate, validate, call the core, translate errors.

Nothing else lives here (STYLE habit 2). Scopes: the agent and admin tokens may call every
method below; project and player come from metadata set by the bridge's configuration and
are re-checked against the project table by the core.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.journal.v1 import journal_pb2_grpc
from mcb_common.errors import ErrorCode, McbError
from mcb_rpc.auth import caller_from_context
from mcb_rpc.errors import abort_internal, abort_with
from mcb_rpc.tokens import TokenTable

from .core import Caller, JournalCore, box_from_pb
from .history import compact, journal_stats

log = logging.getLogger("mcb.journal.rpc")
T = TypeVar("T")

AGENT_METHODS = ("agent", "admin")
STATUS_READERS = ("agent", "admin", "service")


async def guarded(context: grpc.aio.ServicerContext, tokens: TokenTable, allowed: tuple[str, ...],
                  fn: Callable[[Caller], Awaitable[T] | T]) -> T:
    """The one boundary of every journal RPC: authenticate, run, translate errors."""
    try:
        c = caller_from_context(context, tokens, allowed)
        out: Any = fn(Caller(c.principal, c.project_id, c.player_id))
        if hasattr(out, "__await__"):
            out = await out
        return out
    except McbError as err:
        await abort_with(context, err)
    except Exception as exc:  # noqa: BLE001 - a bug: log it here, answer without internals
        log.exception("journal internal error")
        await abort_internal(context, exc, "journal internal error; see the journal log")
    raise AssertionError("unreachable")  # abort raises


class JournalServicer(journal_pb2_grpc.JournalServicer):
    def __init__(self, core: JournalCore, tokens: TokenTable):
        self.core = core
        self.tokens = tokens

    async def _call(self, context: grpc.aio.ServicerContext, fn: Callable[[Caller], Awaitable[T] | T],
                    allowed: tuple[str, ...] = AGENT_METHODS) -> T:
        return await guarded(context, self.tokens, allowed, fn)

    async def ProjectContext(self, request, context):  # noqa: N802
        return await self._call(context, lambda c: self.core.project_context(c))

    async def RegionInspect(self, request, context):  # noqa: N802
        return await self._call(context, lambda c: self.core.region_inspect(c, request))

    async def BuildPrepare(self, request, context):  # noqa: N802
        return await self._call(context, lambda c: self.core.build_prepare(c, request))

    async def BuildApply(self, request, context):  # noqa: N802
        return await self._call(context, lambda c: self.core.build_apply(c, request))

    async def OperationStatus(self, request: jpb.OperationRef, context):  # noqa: N802
        # The camera worker (service token) waits for an operation before a capture
        # (camera_capture after_operation_id): read-only, within the project in its metadata.
        return await self._call(context, lambda c: self.core.operation_status(c, request.operation_id),
                                STATUS_READERS)

    async def OperationCancel(self, request: jpb.OperationRef, context):  # noqa: N802
        return await self._call(context, lambda c: self.core.operation_cancel(c, request.operation_id))

    async def OperationUndoPrepare(self, request: jpb.OperationRef, context):  # noqa: N802
        return await self._call(context, lambda c: self.safety.undo_prepare(c, request.operation_id))

    async def PartDefine(self, request: jpb.PartDefineRequest, context):  # noqa: N802
        async def run(c: Caller) -> jpb.JsonResult:
            return _json(await self.safety.part_define(c, request.name, request.operation_id))

        return await self._call(context, run)

    async def PartGet(self, request: jpb.PartRef, context):  # noqa: N802
        async def run(c: Caller) -> jpb.JsonResult:
            return _json(await self.safety.part_get(c, request.part_id))

        return await self._call(context, run)

    async def RegionChanges(self, request: jpb.RegionChangesRequest, context):  # noqa: N802
        async def run(c: Caller) -> jpb.JsonResult:
            if not request.HasField("region"):
                raise McbError(ErrorCode.INVALID_REQUEST, "region_changes needs a region {min, max}")
            box = box_from_pb(request.region.min, request.region.max)
            return _json(await self.safety.region_changes(c, box, request.since_cursor, request.limit,
                                                          request.source, request.max_bytes))

        return await self._call(context, run)

    async def AssetList(self, request: jpb.AssetListRequest, context):  # noqa: N802
        from . import schematics

        async def run(c: Caller) -> jpb.JsonResult:
            return _json(await schematics.asset_list(self.core, c, request))

        return await self._call(context, run)

    async def SchematicExport(self, request: jpb.SchematicExportRequest, context):  # noqa: N802
        from . import schematics

        async def run(c: Caller) -> jpb.JsonResult:
            return _json(await schematics.schematic_export(self.core, c, request))

        return await self._call(context, run)

    async def SchematicImportPrepare(self, request: jpb.SchematicImportPrepareRequest, context):  # noqa: N802
        from . import schematics

        return await self._call(context, lambda c: schematics.schematic_import_prepare(self.core, c, request))

    @property
    def safety(self) -> Any:
        return self.core.safety


def _json(doc: Any) -> jpb.JsonResult:
    return jpb.JsonResult(json=json.dumps(doc, separators=(",", ":")))


class JournalAdminServicer(journal_pb2_grpc.JournalAdminServicer):
    """Admin-only: recovery decisions and part protection. The agent token is refused."""

    def __init__(self, core: JournalCore, tokens: TokenTable):
        self.core = core
        self.tokens = tokens

    async def _call(self, context: grpc.aio.ServicerContext, fn: Callable[[Caller], Awaitable[T] | T]) -> T:
        return await guarded(context, self.tokens, ("admin",), fn)

    async def RecoveryReview(self, request: jpb.OperationRef, context):  # noqa: N802
        async def run(c: Caller) -> jpb.JsonResult:
            return _json(await self.core.safety.recovery_review(request.operation_id))

        return await self._call(context, run)

    async def RecoveryAbandon(self, request: jpb.RecoveryAbandonRequest, context):  # noqa: N802
        return await self._call(context, lambda c: self.core.safety.recovery_abandon(
            request.operation_id, request.expected_digest, c.principal))

    async def PartProtect(self, request: jpb.PartProtectRequest, context):  # noqa: N802
        def run(c: Caller) -> jpb.JsonResult:
            self.core.safety.part_protect(request.part_id, request.protected)
            return _json({"part_id": request.part_id, "protected": request.protected})

        return await self._call(context, run)

    async def JournalStats(self, request: jpb.JournalStatsRequest, context):  # noqa: N802
        return await self._call(context, lambda c: _json(journal_stats(self.core.db, self.core.blobs.root)))

    async def JournalCompact(self, request: jpb.JournalCompactRequest, context):  # noqa: N802
        return await self._call(context, lambda c: _json(compact(self.core.db, self.core.blobs.root)))

    async def OperationList(self, request: jpb.OperationListRequest, context):  # noqa: N802
        from .overview import operation_list

        return await self._call(context, lambda c: operation_list(self.core, request))

    async def ProjectList(self, request: jpb.ProjectListRequest, context):  # noqa: N802
        from .overview import project_list

        return await self._call(context, lambda c: project_list(self.core))
