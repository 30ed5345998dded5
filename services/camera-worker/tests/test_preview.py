"""Issue 32 item 1: the plan overlay of a preview (preview.py) — the plan's desired states over a
copy of the scene, only inside the drawn box, block-entity data stripped — and the side-by-side
image of ``compare``. The pixel-for-pixel check against an applied plan is
tests/e2e/test_camera_preview.py."""

from __future__ import annotations

import numpy as np
import pytest
from mcb.journal.v1 import journal_pb2
from mcb_camera.preview import PlanOverlay, overlay, side_by_side

BOX = (10, 60, 20, 13, 62, 22)  # x 10..13, y 60..62, z 20..22


def scene() -> tuple[list[str], np.ndarray]:
    palette = ["minecraft:air", "minecraft:grass_block[snowy=false]"]
    idx = np.zeros((3, 3, 4), np.uint16)  # (y, z, x)
    idx[0] = 1  # ground at y 60
    return palette, idx


def plan(entries: list[tuple[int, int, int, str]], total: int | None = None) -> PlanOverlay:
    pal: list[str] = []
    for *_, s in entries:
        if s not in pal:
            pal.append(s)
    resp = journal_pb2.PlanEntriesResponse(
        plan_id="plan-1",
        plan_hash="h",
        palette=pal,
        xyz=[c for e in entries for c in e[:3]],
        desired=[pal.index(e[3]) for e in entries],
        total=total if total is not None else len(entries),
    )
    return PlanOverlay.from_pb(resp)


def test_desired_states_replace_the_scene_in_a_copy():
    palette, idx = scene()
    before = idx.copy()
    p = plan(
        [
            (10, 60, 20, "minecraft:stone"),
            (13, 62, 22, "minecraft:oak_planks"),
            (11, 61, 21, "minecraft:air"),
            (12, 60, 20, "minecraft:stone"),
        ]
    )
    out_pal, out, drawn = overlay(palette, idx, BOX, p)
    assert drawn == 4
    assert np.array_equal(idx, before), "the snapshot (the world as read) must not change"
    assert out_pal[:2] == palette  # the scene's own indices keep their meaning
    state = lambda x, y, z: out_pal[out[y - 60, z - 20, x - 10]]  # noqa: E731
    assert state(10, 60, 20) == state(12, 60, 20) == "minecraft:stone"
    assert state(13, 62, 22) == "minecraft:oak_planks"
    assert state(11, 61, 21) == "minecraft:air"
    assert state(11, 60, 21) == "minecraft:grass_block[snowy=false]"  # untouched position
    changed = np.argwhere(out != idx)
    assert len(changed) == 3  # (11, 61, 21) was air already


def test_entries_outside_the_box_are_not_drawn_and_not_counted():
    palette, idx = scene()
    p = plan(
        [
            (9, 60, 20, "minecraft:stone"),
            (10, 63, 20, "minecraft:stone"),
            (10, 60, 23, "minecraft:stone"),
            (10, 60, 20, "minecraft:glass"),
        ],
        total=10,
    )
    out_pal, out, drawn = overlay(palette, idx, BOX, p)
    assert drawn == 1 and p.total == 10
    assert out_pal[out[0, 0, 0]] == "minecraft:glass"
    assert int((out != idx).sum()) == 1


def test_block_entity_data_is_stripped_to_the_block_state():
    palette, idx = scene()
    full = 'minecraft:chest[facing=north,type=single,waterlogged=false]{"items":[]}'
    out_pal, out, _ = overlay(palette, idx, BOX, plan([(10, 61, 20, full)]))
    assert out_pal[out[1, 0, 0]] == "minecraft:chest[facing=north,type=single,waterlogged=false]"


def test_an_empty_plan_changes_nothing():
    palette, idx = scene()
    out_pal, out, drawn = overlay(palette, idx, BOX, plan([]))
    assert drawn == 0 and np.array_equal(out, idx) and out_pal == palette


def test_mismatched_entries_are_refused():
    resp = journal_pb2.PlanEntriesResponse(
        plan_id="p", palette=["minecraft:stone"], xyz=[1, 2, 3, 4, 5, 6], desired=[0]
    )
    with pytest.raises(ValueError, match="disagree"):
        PlanOverlay.from_pb(resp)


def test_side_by_side_puts_before_left_and_after_right():
    before = np.full((4, 5, 3), 10, np.uint8)
    after = np.full((4, 5, 3), 200, np.uint8)
    both = side_by_side(before, after)
    assert both.shape == (4, 10, 3)
    assert (both[:, :5] == 10).all() and (both[:, 5:] == 200).all()
    with pytest.raises(ValueError):
        side_by_side(before, after[:, :4])
