"""gRPC face of the journal: authenticate, validate, call the core, translate errors.

Nothing else lives here (STYLE habit 2). Scopes: the agent and admin tokens may call every
method below; project and player come from metadata set by the bridge's configuration and
are re-checked against the project table by the core.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.journal.v1 import journal_pb2_grpc
from mcb_common.errors import ErrorCode, McbError
from mcb_rpc.auth import caller_from_context
from mcb_rpc.errors import abort_with
from mcb_rpc.tokens import TokenTable

from .core import Caller, JournalCore

log = logging.getLogger("mcb.journal.rpc")
T = TypeVar("T")

AGENT_METHODS = ("agent", "admin")


class JournalServicer(journal_pb2_grpc.JournalServicer):
    def __init__(self, core: JournalCore, tokens: TokenTable):
        self.core = core
        self.tokens = tokens

    async def _call(self, context: grpc.aio.ServicerContext, fn: Callable[[Caller], Awaitable[T] | T]) -> T:
        try:
            c = caller_from_context(context, self.tokens, AGENT_METHODS)
            out: Any = fn(Caller(c.principal, c.project_id, c.player_id))
            if hasattr(out, "__await__"):
                out = await out
            return out
        except McbError as err:
            await abort_with(context, err)
        except Exception:  # noqa: BLE001 - a bug: log it here, answer without internals
            log.exception("journal internal error")
            await abort_with(context, McbError(ErrorCode.INTERNAL, "journal internal error; see the journal log"))
        raise AssertionError("unreachable")  # abort raises

    async def ProjectContext(self, request, context):  # noqa: N802
        return await self._call(context, lambda c: self.core.project_context(c))

    async def RegionInspect(self, request, context):  # noqa: N802
        return await self._call(context, lambda c: self.core.region_inspect(c, request))

    async def BuildPrepare(self, request, context):  # noqa: N802
        return await self._call(context, lambda c: self.core.build_prepare(c, request))

    async def BuildApply(self, request, context):  # noqa: N802
        return await self._call(context, lambda c: self.core.build_apply(c, request))

    async def OperationStatus(self, request: jpb.OperationRef, context):  # noqa: N802
        return await self._call(context, lambda c: self.core.operation_status(c, request.operation_id))

    async def OperationCancel(self, request: jpb.OperationRef, context):  # noqa: N802
        return await self._call(context, lambda c: self.core.operation_cancel(c, request.operation_id))
