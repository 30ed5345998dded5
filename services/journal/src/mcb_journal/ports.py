"""The journal core's ports: what it needs of the world host, the planner and the progress
stream, as types.

app.py plugs in the transports (``mcb_rpc.worldclient.WorldClient`` over HTTP, the planner's and
the camera worker's gRPC stub wrappers, queue.py's Redis stream); tests plug in fakes. The core never imports a transport (pyproject.toml's import
contract).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

from google.protobuf.message import Message
from mcb.camera.v1 import camera_pb2
from mcb.planner.v1 import planner_pb2
from mcb.world.v1 import world_pb2

M = TypeVar("M", bound=Message)


class WorldPort(Protocol):
    """The world protocol (docs/world-protocol.md): one call per method, results as messages,
    errors as McbError. ``params`` may be a message or its JSON form: a dict, or the JSON already
    encoded (``mcb_common.jsontext.JsonText``, a read-only mapping: the executor encodes its
    ``batch_apply`` / ``batch_apply_many`` requests directly, and a transport sends those bytes)."""

    async def call(self, method: str, params: Message | Mapping[str, Any], result: type[M]) -> M: ...

    async def call_json(self, method: str, params: Message | Mapping[str, Any]) -> dict[str, Any]:
        """The result's JSON form, unparsed (the observer reads its large pages directly)."""
        ...

    async def world_info(self) -> world_pb2.WorldInfo: ...


class PlannerPort(Protocol):
    async def compile(self, req: planner_pb2.CompileRequest) -> planner_pb2.CompileResponse: ...

    async def export_schematic(
        self, req: planner_pb2.ExportSchematicRequest
    ) -> planner_pb2.ExportSchematicResponse: ...

    async def import_schematic(
        self, req: planner_pb2.ImportSchematicRequest
    ) -> planner_pb2.ImportSchematicResponse: ...


class CameraPort(Protocol):
    """The camera worker's Capture (camera.proto), called for a project with the stack's service
    token: a new capture, or the state of one (``capture_id``). Errors as McbError."""

    async def capture(self, req: camera_pb2.CaptureRequest) -> camera_pb2.CaptureResponse: ...


class ProgressPort(Protocol):
    """Where operation progress events go (queue.py: the Redis stream ``mcb:progress``);
    best-effort: never raises, never blocks a write."""

    async def progress(self, event: dict[str, Any]) -> None: ...
