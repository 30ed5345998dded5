"""mcb_rpc.boundary: the one gRPC boundary, over a real grpc.aio server on a TCP port.

The scope table must name every RPC (a method left out fails at import); a denied principal, an
McbError and a bug each come back with the status, message and ``mcb-error`` trailer the
services have always answered."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest
from mcb.planner.v1 import planner_pb2, planner_pb2_grpc
from mcb_common.errors import ErrorCode, McbError
from mcb_rpc.auth import Caller, call_metadata
from mcb_rpc.boundary import grpc_boundary
from mcb_rpc.errors import TRAILER, from_rpc_error
from mcb_rpc.tokens import TokenTable

SCOPES = {"Compile": ("service",), "ImportSchematic": ("service", "admin"), "ExportSchematic": ("admin",)}
TOKENS = {"service": "svc-token", "admin": "adm-token", "agent": "agt-token"}


@grpc_boundary("planner", SCOPES)
class Fake(planner_pb2_grpc.PlannerServicer):
    def __init__(self) -> None:
        self.tokens = TokenTable(dict(TOKENS))
        self.callers: list[Caller] = []

    async def Compile(self, request, caller):  # noqa: N802
        self.callers.append(caller)
        raise McbError(ErrorCode.BUDGET_EXCEEDED, "too many blocks", details={"limit": 3})

    def ImportSchematic(self, request, caller):  # noqa: N802 - a plain function works too
        raise KeyError("a bug with a secret svc-token inside")

    async def ExportSchematic(self, request, caller):  # noqa: N802
        self.callers.append(caller)
        return planner_pb2.ExportSchematicResponse(data=b"ok")


def test_the_scope_table_must_name_every_rpc_exactly():
    with pytest.raises(TypeError, match="missing \\['ExportSchematic'\\]"):

        @grpc_boundary("planner", {"Compile": ("service",), "ImportSchematic": ("service",)})
        class Partial(planner_pb2_grpc.PlannerServicer):
            pass

    with pytest.raises(TypeError, match="unknown \\['Nope'\\]"):
        grpc_boundary("planner", {**SCOPES, "Nope": ("admin",)})(type("X", (planner_pb2_grpc.PlannerServicer,), {}))
    with pytest.raises(TypeError, match="does not implement ExportSchematic"):
        grpc_boundary("planner", SCOPES)(
            type(
                "Y",
                (planner_pb2_grpc.PlannerServicer,),
                {"Compile": lambda s, r, c: None, "ImportSchematic": lambda s, r, c: None},
            )
        )


def test_auth_errors_and_bugs_over_grpc():
    async def scenario() -> None:
        server = grpc.aio.server()
        fake = Fake()
        planner_pb2_grpc.add_PlannerServicer_to_server(fake, server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
                stub = planner_pb2_grpc.PlannerStub(ch)

                async def call(method: str, token: str | None, project: str = "") -> grpc.aio.AioRpcError:
                    md = call_metadata(token, project, "player-1") if token else ()
                    req = {
                        "Compile": planner_pb2.CompileRequest,
                        "ImportSchematic": planner_pb2.ImportSchematicRequest,
                        "ExportSchematic": planner_pb2.ExportSchematicRequest,
                    }[method]()
                    with pytest.raises(grpc.aio.AioRpcError) as ei:
                        await getattr(stub, method)(req, metadata=md, timeout=10)
                    return ei.value

                err = await call("Compile", None)
                assert err.code() == grpc.StatusCode.UNAUTHENTICATED
                assert err.details() == "missing or unknown bearer token"
                err = await call("Compile", TOKENS["agent"])
                assert err.code() == grpc.StatusCode.PERMISSION_DENIED
                assert err.details() == "the agent token may not call this method (allowed: service)"
                assert from_rpc_error(err, "planner").code == ErrorCode.PERMISSION_DENIED

                err = await call("Compile", TOKENS["service"], "p1")
                assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and err.details() == "too many blocks"
                trailer = dict(err.trailing_metadata())[TRAILER]
                assert json.loads(trailer)["details"] == {"limit": 3}
                assert fake.callers[-1] == Caller("service", "p1", "player-1")

                err = await call("ImportSchematic", TOKENS["admin"])
                assert err.code() == grpc.StatusCode.INTERNAL
                assert err.details() == "planner internal error in ImportSchematic; see the planner log"
                assert "svc-token" not in str(err.trailing_metadata())

                ok = await stub.ExportSchematic(
                    planner_pb2.ExportSchematicRequest(), metadata=call_metadata(TOKENS["admin"]), timeout=10
                )
                assert ok.data == b"ok" and fake.callers[-1].principal == "admin"
        finally:
            await server.stop(None)

    asyncio.run(scenario())
