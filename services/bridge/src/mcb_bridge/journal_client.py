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
}

_CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", 16 * 1024 * 1024),
    ("grpc.max_send_message_length", 16 * 1024 * 1024),
]


def vec3(d: dict[str, Any]) -> common_pb2.Vec3:
    return common_pb2.Vec3(x=int(d["x"]), y=int(d["y"]), z=int(d["z"]))


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
        try:
            return await rpc(request, metadata=self._metadata, timeout=DEADLINES[method] * self._scale)
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "journal") from None

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

    async def project_context(self) -> journal_pb2.ProjectContextResponse:
        return await self._call("ProjectContext", journal_pb2.ProjectContextRequest())

    async def region_inspect(
        self, min_: dict[str, Any], max_: dict[str, Any], detail: str, cursor: str = ""
    ) -> journal_pb2.RegionInspectResponse:
        req = journal_pb2.RegionInspectRequest(
            min=vec3(min_), max=vec3(max_), detail=detail, cursor=cursor
        )
        return await self._call("RegionInspect", req)

    async def build_prepare(
        self, recipe_json: str, dependencies: list[tuple[dict[str, Any], str]], part_id: str
    ) -> journal_pb2.PlanSummary:
        req = journal_pb2.BuildPrepareRequest(
            recipe_json=recipe_json,
            dependencies=[journal_pb2.Dependency(pos=vec3(p), state=s) for p, s in dependencies],
            part_id=part_id,
        )
        return await self._call("BuildPrepare", req)

    async def build_apply(
        self, plan_id: str, plan_hash: str, idempotency_key: str
    ) -> journal_pb2.OperationReport:
        req = journal_pb2.BuildApplyRequest(
            plan_id=plan_id, plan_hash=plan_hash, idempotency_key=idempotency_key
        )
        return await self._call("BuildApply", req)

    async def operation_status(self, operation_id: str) -> journal_pb2.OperationReport:
        return await self._call("OperationStatus", journal_pb2.OperationRef(operation_id=operation_id))
