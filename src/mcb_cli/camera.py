"""``mcb camera save`` — save a camera of the project (the same as the agent's ``camera_save``).

    mcb camera save ID --pose X,Y,Z,YAW,PITCH[,FOV] [--name N] [--width W --height H]
    mcb camera save ID --region X0,Y0,Z0,X1,Y1,Z1 [--view entrance|opposite|diagonal] [...]

``--region`` resolves the automatic viewpoint of that box now (the camera worker's
``AutoViewpoints``: ``entrance`` stands outside the side with a door) and stores its pose. The
project is ``MCB_PROJECT_ID`` or ``projects[0]`` of the runtime config; the call uses the admin
token. Prints the saved camera as JSON; errors print the structured error and exit 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from mcb_common.errors import ErrorCode, McbError


def add_parser(sub: Any) -> None:
    cam = sub.add_parser("camera", help="saved cameras of the project")
    csub = cam.add_subparsers(dest="action", required=True)
    sv = csub.add_parser("save", help="save (create or replace) a camera: a pose, or a region's automatic view")
    sv.add_argument("camera_id", help="1-64 characters [A-Za-z0-9_-]")
    where = sv.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--pose", help="x,y,z,yaw,pitch[,fov] (feet position, Minecraft yaw/pitch; fov 30-110, default 70)"
    )
    where.add_argument("--region", help="x0,y0,z0,x1,y1,z1: use the automatic viewpoint of this box")
    sv.add_argument(
        "--view",
        choices=["entrance", "opposite", "diagonal"],
        default="entrance",
        help="which automatic viewpoint of --region (default entrance)",
    )
    sv.add_argument("--name", default="")
    sv.add_argument("--width", type=int, default=0)
    sv.add_argument("--height", type=int, default=0)


def _numbers(text: str, counts: tuple[int, ...], what: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        values = []
    if len(values) not in counts:
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"{what} needs {' or '.join(map(str, counts))} comma-separated numbers, got {text!r}",
        )
    return values


def _project(settings: Any) -> str:
    import os

    project = os.environ.get("MCB_PROJECT_ID") or ""
    if not project:
        projects = settings.load_config().get("projects") or []
        project = str((projects[0] if projects and isinstance(projects[0], dict) else {}).get("project_id") or "")
    if not project:
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"no project: set MCB_PROJECT_ID or run `mcb up` ({settings.config_file} has no projects[0])",
        )
    return project


async def _save(args: argparse.Namespace) -> Any:
    import grpc
    from mcb.camera.v1 import camera_pb2, camera_pb2_grpc
    from mcb.common.v1 import common_pb2
    from mcb_rpc.auth import call_metadata
    from mcb_rpc.errors import from_rpc_error
    from mcb_rpc.settings import Settings
    from mcb_rpc.tokens import read_token

    s = Settings.from_env()
    token = read_token(s.secrets_dir, "admin")
    if not token:
        raise McbError(ErrorCode.UNAUTHENTICATED, f"no admin token in {s.secrets_dir} (or MCB_ADMIN_TOKEN)")
    project = _project(s)
    md = call_metadata(token)
    async with grpc.aio.insecure_channel(s.camera_addr) as ch:
        stub = camera_pb2_grpc.CameraStub(ch)
        try:
            if args.region:
                v = [int(n) for n in _numbers(args.region, (6,), "--region")]
                box = common_pb2.Box(
                    min=common_pb2.Vec3(x=min(v[0], v[3]), y=min(v[1], v[4]), z=min(v[2], v[5])),
                    max=common_pb2.Vec3(x=max(v[0], v[3]), y=max(v[1], v[4]), z=max(v[2], v[5])),
                )
                vps = await stub.AutoViewpoints(
                    camera_pb2.AutoViewpointsRequest(project_id=project, region=box), metadata=md, timeout=30
                )
                pose = next(vp.pose for vp in vps.viewpoints if vp.name == args.view)
            else:
                p = _numbers(args.pose, (5, 6), "--pose")
                pose = camera_pb2.Pose(x=p[0], y=p[1], z=p[2], yaw=p[3], pitch=p[4], fov=p[5] if len(p) > 5 else 0)
            if args.width:
                pose.width = args.width
            if args.height:
                pose.height = args.height
            return await stub.SaveCamera(
                camera_pb2.SaveCameraRequest(
                    project_id=project,
                    camera=camera_pb2.CameraInfo(camera_id=args.camera_id, name=args.name, pose=pose),
                ),
                metadata=md,
                timeout=10,
            )
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "camera-worker", 30) from None


def run(args: argparse.Namespace) -> int:
    try:
        cam = asyncio.run(_save(args))
    except McbError as err:
        print(json.dumps({"error": err.to_dict()}, indent=2), file=sys.stderr)
        return 1
    p = cam.pose
    print(
        json.dumps(
            {
                "camera_id": cam.camera_id,
                "name": cam.name,
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
            },
            indent=2,
        )
    )
    return 0
