"""The Fabric camera client link: the worker side of docs/camera-link.md.

The worker listens on a WebSocket (``MCB_CAMERA_LINK_HOST``:``MCB_CAMERA_LINK_PORT``, default
127.0.0.1:8766). The camera client (the Fabric mod) connects with
``Authorization: Bearer <camera-link key>`` (``<secrets>/camera-link.token``, created by the
worker at start if missing, mode 0600) and says ``hello``. One client at a time; a second one
is refused (close code 4409) while the first is connected.

A capture: the worker sends ``capture`` (pose, size, readiness rules); the client moves,
waits for chunks and stable frames, hides the HUD, and answers ``captured`` (metadata) followed
by exactly one binary frame (the PNG), or ``failed`` with a code. No client, or the link
dropping before the answer -> ``camera_unavailable``; the client's readiness timeout ->
``capture_not_ready``. ``serverRevisionVerified`` stays false: the client cannot yet prove
which server revision it drew.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from pathlib import Path
from typing import Any

from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_rpc.tokens import ensure_token
from mcb_rpc.worldclient import WorldClient

from . import png
from .capture import CaptureJob, Rendered, scene_box_for_pose
from .scene import NotReady, SceneReader
from .settings import CameraSettings

log = logging.getLogger("mcb.camera.link")

PROTOCOL = "mcb.camera-link.v1"
KEY_NAME = "camera-link"
HELLO_TIMEOUT_S = 5.0
MAX_PNG_BYTES = 32 * 1024 * 1024
# the codes a client's ``failed`` may carry; anything else is camera_unavailable
CLIENT_CODES = {
    "capture_not_ready": ErrorCode.CAPTURE_NOT_READY,
    "out_of_bounds": ErrorCode.OUT_OF_BOUNDS,
    "invalid_request": ErrorCode.INVALID_REQUEST,
    "camera_unavailable": ErrorCode.CAMERA_UNAVAILABLE,
}


class FabricLinkDriver:
    name = "fabric"

    def __init__(self, world: WorldClient, key: str, host: str = "127.0.0.1", port: int = 8766):
        self.world = world
        self.key = key
        self.host = host
        self.port = port
        self.scene = SceneReader(world)
        self._server: Any = None
        self._conn: Any = None
        self._client: dict[str, Any] = {}
        self._waiters: dict[str, asyncio.Future] = {}
        self._pending_meta: dict[str, Any] | None = None
        self._lock = asyncio.Lock()
        self._ever_connected = False

    @classmethod
    def from_settings(cls, world: WorldClient, settings: CameraSettings, secrets_dir: Path | None) -> FabricLinkDriver:
        key = settings.link_key or ensure_token(Path(secrets_dir or "."), KEY_NAME)
        return cls(world, key, settings.link_host, settings.link_port)

    def state(self) -> str:
        if self._conn is None:
            return "link_lost" if self._ever_connected else "no_driver"
        return "busy" if self._lock.locked() else "ready"

    def health(self) -> dict[str, Any]:
        return {"connected": self._conn is not None, "client": self._client, "port": self.port}

    # ---- the WebSocket server ----------------------------------------------------------------

    async def start(self) -> None:
        from websockets.asyncio.server import serve

        self._server = await serve(
            self._handle,
            self.host,
            self.port,
            process_request=self._auth,
            max_size=MAX_PNG_BYTES,
            ping_interval=5,
            ping_timeout=10,
        )
        log.info("camera link listening on ws://%s:%d (protocol %s)", self.host, self.port, PROTOCOL)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        await self.world.aclose()

    def _auth(self, connection: Any, request: Any) -> Any:
        import hmac

        header = request.headers.get("Authorization", "")
        presented = header[7:].strip() if header.lower().startswith("bearer ") else ""
        if not presented or not hmac.compare_digest(presented.encode(), self.key.encode()):
            return connection.respond(401, "camera link: missing or wrong key\n")
        return None

    async def _handle(self, ws: Any) -> None:
        if self._conn is not None:
            await ws.close(4409, "another camera client is connected")
            return
        try:
            hello = json.loads(await asyncio.wait_for(ws.recv(), HELLO_TIMEOUT_S))
        except (TimeoutError, ValueError, Exception):  # noqa: BLE001
            await ws.close(4400, "expected a hello message")
            return
        if not isinstance(hello, dict) or hello.get("type") != "hello" or hello.get("protocol") != PROTOCOL:
            await ws.close(4400, f"expected hello with protocol {PROTOCOL}")
            return
        self._conn = ws
        self._ever_connected = True
        self._client = {k: hello.get(k) for k in ("client", "minecraftVersion", "modVersion") if hello.get(k)}
        await ws.send(json.dumps({"type": "welcome", "protocol": PROTOCOL}))
        log.info("camera client connected: %s", self._client)
        try:
            async for msg in ws:
                self._on_message(msg)
        except Exception as exc:  # noqa: BLE001 - a dropped link is a normal event
            log.info("camera link closed: %s", exc.__class__.__name__)
        finally:
            self._conn = None
            for fut in self._waiters.values():
                if not fut.done():
                    fut.set_exception(
                        McbError(
                            ErrorCode.CAMERA_UNAVAILABLE,
                            "the camera client's link dropped before the picture arrived; no picture "
                            "was taken. Retry when the client is back (camera_list shows its state)",
                            details={"worker_state": "link_lost"},
                        )
                    )
            self._waiters.clear()
            log.info("camera client disconnected")

    def _on_message(self, msg: Any) -> None:
        if isinstance(msg, bytes):
            meta, self._pending_meta = self._pending_meta, None
            if meta is None:
                return
            fut = self._waiters.get(meta.get("id", ""))
            if fut is not None and not fut.done():
                fut.set_result((meta, msg))
            return
        try:
            m = json.loads(msg)
        except ValueError:
            return
        kind, cid = m.get("type"), m.get("id", "")
        if kind == "captured":
            self._pending_meta = m  # the PNG follows as the next binary frame
        elif kind == "failed":
            fut = self._waiters.get(cid)
            if fut is not None and not fut.done():
                code = CLIENT_CODES.get(m.get("code"), ErrorCode.CAMERA_UNAVAILABLE)
                fut.set_exception(
                    McbError(
                        code,
                        f"the camera client could not take the picture: {m.get('message') or 'no reason given'}",
                        details={"client": m.get("details") or {}},
                    )
                )
        elif kind == "progress":
            cb = getattr(self, "_progress", None)
            if cb is not None and cid in self._waiters:
                asyncio.get_running_loop().create_task(cb(f"client:{m.get('stage', '')}"))

    # ---- a capture -----------------------------------------------------------------------

    async def render(self, job: CaptureJob, progress: Any) -> Rendered:
        if self._conn is None:
            raise McbError(
                ErrorCode.CAMERA_UNAVAILABLE,
                "no camera client is connected to the camera worker's link "
                f"(ws://{self.host}:{self.port}); start the Minecraft camera client, or "
                "run the worker with MCB_CAMERA_DRIVER=builtin",
                details={"worker_state": self.state()},
            )
        async with self._lock:
            return await self._capture(job, progress)

    async def _capture(self, job: CaptureJob, progress: Any) -> Rendered:
        t0 = time.monotonic()
        info = await self.world.world_info()
        box = job.region or scene_box_for_pose(job.pose, info, 64.0)
        before = None
        if box is not None:
            try:
                before = await self.scene.revisions(box)
            except NotReady:
                before = None
        if "camera_account_pose" in info.capabilities:
            await progress("moving_account")
            await self.world.call(
                "camera_account_pose",
                {k: job.pose[k] for k in ("x", "y", "z", "yaw", "pitch")},
                world_pb2.CameraAccountPoseResult,
            )
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        self._waiters[job.capture_id] = fut
        self._progress = progress
        await progress("client")
        try:
            await self._conn.send(
                json.dumps(
                    {
                        "type": "capture",
                        "id": job.capture_id,
                        "pose": job.pose,
                        "readiness": {"timeoutMs": int(job.readiness_timeout_s * 1000), "stableFrames": 3},
                        "hideHud": True,
                        "world": info.world_name,
                        # the render-readiness rule: the client draws only once it holds these sections
                        # at these revisions (or later); otherwise capture_not_ready, never an old frame
                        "sections": [
                            {"cx": k[0], "sy": k[1], "cz": k[2], "revision": v}
                            for k, v in sorted((before or {}).items())
                        ],
                    }
                )
            )
            meta, data = await asyncio.wait_for(fut, job.readiness_timeout_s + 5)
        except TimeoutError:
            raise McbError(
                ErrorCode.CAPTURE_NOT_READY,
                f"the camera client did not answer within {job.readiness_timeout_s + 5:g} s; no picture was taken",
                details={"reason": "client_timeout"},
            ) from None
        except McbError:
            raise
        except Exception as exc:  # noqa: BLE001 - send on a closed link
            raise McbError(
                ErrorCode.CAMERA_UNAVAILABLE,
                f"the camera link failed ({exc.__class__.__name__})",
                details={"worker_state": "link_lost"},
            ) from exc
        finally:
            self._waiters.pop(job.capture_id, None)
        try:
            w, h = png.size(data)
        except ValueError:
            raise McbError(ErrorCode.CAMERA_UNAVAILABLE, "the camera client sent something that is not a PNG") from None
        if meta.get("sha256") and meta["sha256"] != hashlib.sha256(data).hexdigest():
            raise McbError(ErrorCode.CAMERA_UNAVAILABLE, "the camera client's PNG does not match its sha256")
        stale = False
        changed: list = []
        if before is not None and box is not None:
            try:
                after = await self.scene.revisions(box)
                changed = sorted(k for k in after if after[k] != before.get(k))
                stale = bool(changed)
            except NotReady:
                pass
        client_meta = meta.get("metadata") if isinstance(meta.get("metadata"), dict) else {}
        out = {
            "driver": "fabric",
            "client": self._client,
            "clientReport": client_meta,
            "stale": stale,
            "ready": True,
            "serverRevisionVerified": False,  # the client cannot prove what it drew (yet)
            "timingsMs": {"total": round((time.monotonic() - t0) * 1000, 1)},
        }
        if box is not None:
            out["region"] = {
                "min": {"x": box[0], "y": box[1], "z": box[2]},
                "max": {"x": box[3], "y": box[4], "z": box[5]},
            }
        if stale:
            out["changedSectionCount"] = len(changed)
            out["hint"] = "the region changed during the capture; capture again for a current picture"
        return Rendered(data, w, h, out)
