"""Saved camera poses, one JSON file per worker under ``<runtime>/camera/cameras.json``.

Shape of the file (written by ``SaveCamera``, atomically)::

    {"version": 1, "cameras": [{"camera_id", "project_id", "name", "world_uuid",
      "render_profile", "pose": {"x","y","z","yaw","pitch","fov","width","height"}}]}

A missing file means "no cameras". A damaged file is an error a person can act on, never an
empty list in disguise.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from mcb.camera.v1 import camera_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_common.files import atomic_write


class CameraStore:
    def __init__(self, root: Path):
        self.root = root
        self.path = root / "cameras.json"

    def _load(self) -> list[dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text())
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise McbError(
                ErrorCode.INTERNAL,
                f"the saved-camera file {self.path} cannot be read ({exc.__class__.__name__}); "
                "fix or move it aside and restart the camera worker",
            ) from exc
        cams = data.get("cameras") if isinstance(data, dict) else None
        if not isinstance(cams, list):
            raise McbError(
                ErrorCode.INTERNAL,
                f"the saved-camera file {self.path} has no 'cameras' list; fix or move it aside",
            )
        return [c for c in cams if isinstance(c, dict)]

    def list(self, project_id: str) -> list[camera_pb2.CameraInfo]:
        out = []
        for c in self._load():
            if project_id and c.get("project_id") not in (None, "", project_id):
                continue
            pose = c.get("pose") or {}
            out.append(
                camera_pb2.CameraInfo(
                    camera_id=str(c.get("camera_id", "")),
                    name=str(c.get("name", "")),
                    world_uuid=str(c.get("world_uuid", "")),
                    render_profile=str(c.get("render_profile", "")),
                    pose=camera_pb2.Pose(
                        **{k: pose[k] for k in ("x", "y", "z", "yaw", "pitch", "fov", "width", "height") if k in pose}
                    ),
                )
            )
        out.sort(key=lambda c: c.camera_id)
        return out

    def get(self, project_id: str, camera_id: str) -> camera_pb2.CameraInfo | None:
        for c in self.list(project_id):
            if c.camera_id == camera_id:
                return c
        return None

    def save(self, project_id: str, cam: camera_pb2.CameraInfo) -> camera_pb2.CameraInfo:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}", cam.camera_id or ""):
            raise McbError(
                ErrorCode.INVALID_REQUEST,
                "camera_id must be 1-64 characters [A-Za-z0-9_-], starting with a letter or digit",
            )
        cams = [
            c
            for c in self._load()
            if not (c.get("camera_id") == cam.camera_id and c.get("project_id") in (None, "", project_id))
        ]
        p = cam.pose
        cams.append(
            {
                "camera_id": cam.camera_id,
                "project_id": project_id,
                "name": cam.name or cam.camera_id,
                "world_uuid": cam.world_uuid,
                "render_profile": cam.render_profile or "builtin",
                "pose": {
                    "x": p.x,
                    "y": p.y,
                    "z": p.z,
                    "yaw": p.yaw,
                    "pitch": p.pitch,
                    "fov": p.fov,
                    "width": p.width,
                    "height": p.height,
                },
            }
        )
        # whole or not at all; a full disk is `unavailable` and keeps the previous file
        atomic_write(
            self.path, (json.dumps({"version": 1, "cameras": cams}, indent=1) + "\n").encode(), who="the camera worker"
        )
        got = self.get(project_id, cam.camera_id)
        assert got is not None
        return got
