"""Issue 32 item 1 with the whole stack (`mcb up`, built-in renderer, real journal and camera
worker): ``camera_capture`` with a ``plan_id`` draws the world as it would be after that prepared
plan, writes nothing, and matches — pixel for pixel — the picture of the same view taken after the
plan is applied on a quiet world. ``compare: true`` puts before and after side by side.
"""

from __future__ import annotations

import uuid

import anyio
import numpy as np
from e2e.mcpclient import call, http_client, payload
from e2e.test_camera import capture
from mcb_camera import png

POSE = {"x": -9.5, "y": 67, "z": -11.5, "yaw": -35, "pitch": 18}
SIZE = {"width": 480, "height": 270}
REGION = {"min": {"x": -12, "y": 60, "z": -12}, "max": {"x": 12, "y": 76, "z": 12}}
# Over the ground (the grass layer at y 63 is replaced: the overlay must hide what stands there)
# and into the air: a floor, walls with a window and a roof of other blocks.
HOUSE = {
    "version": 1,
    "operations": [
        {
            "type": "box",
            "min": {"x": 0, "y": 63, "z": 0},
            "max": {"x": 6, "y": 63, "z": 6},
            "block": "minecraft:stone_bricks",
        },
        {
            "type": "box",
            "min": {"x": 0, "y": 64, "z": 0},
            "max": {"x": 6, "y": 67, "z": 0},
            "block": "minecraft:oak_planks",
        },
        {
            "type": "box",
            "min": {"x": 0, "y": 64, "z": 0},
            "max": {"x": 0, "y": 67, "z": 6},
            "block": "minecraft:bricks",
        },
        {"type": "box", "min": {"x": 2, "y": 65, "z": 0}, "max": {"x": 4, "y": 66, "z": 0}, "block": "minecraft:glass"},
        {
            "type": "box",
            "min": {"x": 0, "y": 68, "z": 0},
            "max": {"x": 6, "y": 68, "z": 6},
            "block": "minecraft:red_wool",
        },
    ],
}
TOP = {"region": {"min": {"x": -2, "y": 60, "z": -2}, "max": {"x": 8, "y": 70, "z": 8}}, "view": "top", **SIZE}


def test_preview_matches_the_applied_plan_pixel_for_pixel(stack):
    async def scenario():
        async with http_client(stack.mcp_url, stack.token("agent")) as client:
            view = {"pose": POSE, "region": REGION, **SIZE}
            now_meta, now_png, _ = await capture(client, view)
            top_now_meta, top_now_png, _ = await capture(client, TOP)
            plan = await call(client, "build_prepare", {"recipe": HOUSE})

            pre_meta, pre_png, _ = await capture(client, {**view, "plan_id": plan["plan_id"]})
            assert pre_meta["preview"]["plan_id"] == plan["plan_id"], pre_meta
            assert pre_meta["preview"]["written"] is False
            assert pre_meta["preview"]["entries_drawn"] == pre_meta["preview"]["entries_total"] > 0
            assert pre_png != now_png, "the preview shows nothing of the plan"
            top_pre_meta, top_pre_png, _ = await capture(client, {**TOP, "plan_id": plan["plan_id"]})
            assert top_pre_png != top_now_png

            # one image: the world now (left) and after the plan (right), each 480 x 270
            cmp_meta, cmp_png, _ = await capture(client, {**view, "plan_id": plan["plan_id"], "compare": True})
            both = png.decode(cmp_png)
            assert both.shape == (270, 960, 3) and cmp_meta["width"] == 960
            assert np.array_equal(both[:, :480], png.decode(now_png))
            assert np.array_equal(both[:, 480:], png.decode(pre_png))

            # nothing was written: the same revisions, the same picture of the world
            again_meta, again_png, _ = await capture(client, view)
            assert again_meta["revision_digest"] == now_meta["revision_digest"] == pre_meta["revision_digest"]
            assert again_png == now_png

            op = await call(
                client,
                "build_apply",
                {
                    "plan_id": plan["plan_id"],
                    "plan_hash": plan["plan_hash"],
                    "idempotency_key": f"pre-{uuid.uuid4().hex[:8]}",
                },
            )
            after_meta, after_png, _ = await capture(client, {**view, "after_operation_id": op["operation_id"]})
            assert after_meta["operation"]["state"] == "applied"
            assert after_meta["revision_digest"] != now_meta["revision_digest"]
            a, p = png.decode(after_png), png.decode(pre_png)
            diff = np.abs(a.astype(int) - p.astype(int)).max(axis=2)
            assert not diff.any(), f"{int((diff > 0).sum())} pixels differ between the preview and the applied plan"
            _, top_after_png, _ = await capture(client, TOP)
            assert np.array_equal(png.decode(top_after_png), png.decode(top_pre_png))

    anyio.run(scenario)


def test_preview_refusals_are_structured(stack):
    async def scenario():
        async with http_client(stack.mcp_url, stack.token("agent")) as client:
            r = await client.call_tool("camera_capture", {"region": REGION, "plan_id": "plan-nope"})
            err = payload(r)["error"]
            assert r.is_error and err["code"] == "not_found" and "plan-nope" in err["message"], err
            r = await client.call_tool("camera_capture", {"region": REGION, "compare": True})
            err = payload(r)["error"]
            assert r.is_error and err["code"] == "invalid_request" and err["details"]["field"] == "compare", err

    anyio.run(scenario)
