"""Capture drivers: who actually makes an image.

The camera issue (issue 6) adds the built-in renderer (``builtin``) and the Fabric client link
(``fabric``). Each implements ``Driver``; the servicer only talks to this interface, so adding a
driver changes no RPC code. Until then ``NoDriver`` is the only driver, and it refuses every
capture with ``camera_unavailable`` — it never makes up a picture.
"""

from __future__ import annotations

from typing import Protocol

from mcb.camera.v1 import camera_pb2
from mcb_common.errors import ErrorCode, McbError


class Driver(Protocol):
    name: str  # "" | "builtin" | "fabric" (ListCamerasResponse.driver)

    def state(self) -> str:
        """``ready`` | ``no_driver`` | ``busy`` | ``link_lost`` (ListCamerasResponse.worker_state)."""
        ...

    async def capture(self, project_id: str, pose: camera_pb2.Pose,
                      after_operation_id: str) -> camera_pb2.CaptureResponse: ...

    async def poll(self, project_id: str, capture_id: str) -> camera_pb2.CaptureResponse: ...


NO_DRIVER_MESSAGE = (
    "no camera driver is configured on the camera worker, so no picture can be taken. "
    "The built-in renderer (which draws the world host's real blocks) and the Fabric camera "
    "client link arrive with the camera issue (issue 6); until then use region_inspect "
    "(summary, blocks or heightmap) to check the build"
)


class NoDriver:
    name = ""

    def state(self) -> str:
        return "no_driver"

    async def capture(self, project_id: str, pose: camera_pb2.Pose,
                      after_operation_id: str) -> camera_pb2.CaptureResponse:
        raise McbError(ErrorCode.CAMERA_UNAVAILABLE, NO_DRIVER_MESSAGE,
                       details={"worker_state": "no_driver"})

    async def poll(self, project_id: str, capture_id: str) -> camera_pb2.CaptureResponse:
        # No driver has ever run, so no capture with this id can exist.
        raise McbError(
            ErrorCode.NOT_FOUND,
            f"no capture {capture_id!r}: this camera worker has no driver and has never taken "
            "a picture",
            details={"worker_state": "no_driver"},
        )
