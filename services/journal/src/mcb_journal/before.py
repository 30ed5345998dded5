"""An operation's Before picture (issue 31 item 7).

When the executor starts an operation (queued -> applying, before the first batch's intent), it
asks the camera worker for one small capture of the plan's region (the automatic ``diagonal``
view, BEFORE_WIDTH x BEFORE_HEIGHT, ``before_operation_id`` set) and waits for it at most
``JournalSettings.before_capture_s`` seconds. Only a capture that *completed* in that time — its
render read the world before any block of this operation was written — is linked to the
operation (table ``op_captures``; ``OperationReport.before_capture_id``), and only that one is the
dashboard's "Before". Otherwise nothing is linked and no "Before" is shown: never an earlier
capture of the project that may show another place.

Best effort: switched off (``MCB_JOURNAL_BEFORE_CAPTURE_S=0``), no camera worker, a region larger
than a capture may draw, a camera error or a capture not done in time cost the apply nothing but
the wait, and are logged.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from mcb.camera.v1 import camera_pb2
from mcb.common.v1 import common_pb2
from mcb_common.errors import McbError

from .db import now_ms

if TYPE_CHECKING:
    from .context import JournalContext
    from .plans import Plan

log = logging.getLogger("mcb.journal.before")

BEFORE_WIDTH, BEFORE_HEIGHT = 256, 144
# The camera worker refuses a larger capture region (mcb_camera.poses.MAX_REGION_POSITIONS).
MAX_REGION_POSITIONS = 2_097_152
POLL_S = 0.2


def plan_region(plan: Plan) -> common_pb2.Box | None:
    """The bounding box of the plan's positions (None for an empty plan)."""
    b = plan.bounds
    if b is None:
        return None
    return common_pb2.Box(
        min=common_pb2.Vec3(x=b.min.x, y=b.min.y, z=b.min.z), max=common_pb2.Vec3(x=b.max.x, y=b.max.y, z=b.max.z)
    )


async def take(core: JournalContext, op_id: str, project_id: str, plan: Plan) -> str:
    """Take and link the operation's Before picture; its capture id, or '' when none was linked."""
    seconds = core.settings.before_capture_s
    region = plan_region(plan)
    if seconds <= 0 or core.camera is None or region is None:
        return ""
    size = [(region.max.x - region.min.x + 1), (region.max.y - region.min.y + 1), (region.max.z - region.min.z + 1)]
    if size[0] * size[1] * size[2] > MAX_REGION_POSITIONS:
        log.info("operation %s: no Before picture (its region %s is larger than a capture draws)", op_id, size)
        return ""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    try:
        async with asyncio.timeout_at(deadline):
            resp = await core.camera.capture(
                camera_pb2.CaptureRequest(
                    project_id=project_id,
                    region=region,
                    view="diagonal",
                    width=BEFORE_WIDTH,
                    height=BEFORE_HEIGHT,
                    format="png",
                    before_operation_id=op_id,
                )
            )
            while resp.status != "completed":
                await asyncio.sleep(POLL_S)
                resp = await core.camera.capture(
                    camera_pb2.CaptureRequest(project_id=project_id, capture_id=resp.capture_id)
                )
    except TimeoutError:
        log.info("operation %s: the Before picture was not ready within %.1f s; none is linked", op_id, seconds)
        return ""
    except McbError as err:
        log.info("operation %s: no Before picture (%s: %s)", op_id, err.code, err.message)
        return ""
    with core.db.tx() as c:
        c.execute(
            "INSERT OR REPLACE INTO op_captures(op_id, before_capture_id, at_ms) VALUES (?,?,?)",
            (op_id, resp.capture_id, now_ms()),
        )
    return resp.capture_id
