"""Furniture in recipes (mcb_planner.furniture, mcb_common.blockentity): box.block_entity becomes the
full state state{data} in canonical form, bad data is refused naming the path, refused kinds name the
reason, the data survives rotation and pasting a part, leaves are made persistent."""

from __future__ import annotations

import numpy as np
import pytest
from mcb_common.errors import McbError
from mcb_planner.compile import compile_recipe
from mcb_planner.sources import PartBlocks

CHEST = "minecraft:chest[facing=north,type=single,waterlogged=false]"


def box(block, data=None, x=0):
    op = {"type": "box", "min": {"x": x, "y": 64, "z": 0}, "max": {"x": x, "y": 64, "z": 0}, "block": block}
    if data is not None:
        op["block_entity"] = data
    return op


def states(ops, **kw) -> list[str]:
    return list(compile_recipe({"version": 1, "operations": ops}, **kw).palette)


def test_canonical_full_states():
    got = states(
        [
            box(
                "chest[facing=north]",
                {"items": [{"slot": 5, "id": "minecraft:diamond_sword"}, {"id": "bread", "count": 3}]},
            ),
            box("oak_sign", {"text": {"front": ["Hi"], "back": {"lines": [], "color": "red"}, "waxed": False}}, 1),
            box("player_head", {"profile": "Notch"}, 2),
            box("red_banner", {"patterns": [{"pattern": "minecraft:cross", "color": "blue"}]}, 3),
            box("barrel", {}, 4),
        ]
    )
    assert sorted(got) == sorted(
        [
            CHEST
            + '{"items":[{"count":3,"id":"minecraft:bread","slot":0},{"count":1,"id":"minecraft:diamond_sword","slot":5}]}',
            'minecraft:oak_sign[rotation=0,waterlogged=false]{"text":{"back":{"color":"red","lines":["","","",""]},'
            '"front":{"lines":["Hi","","",""]}}}',
            'minecraft:player_head[powered=false,rotation=0]{"profile":"Notch"}',
            'minecraft:red_banner[rotation=0]{"patterns":[{"color":"blue","pattern":"minecraft:cross"}]}',
            "minecraft:barrel[facing=north,open=false]",  # empty data: no braces
        ]
    )


@pytest.mark.parametrize(
    "block, data, path, reason",
    [
        ("chest", {"items": [{"id": "bread", "count": 65}]}, "block_entity.items[0].count", "out_of_range"),
        ("chest", {"items": [{"id": "egg", "count": 17}]}, "block_entity.items[0].count", "out_of_range"),
        ("chest", {"items": [{"id": "breadd"}]}, "block_entity.items[0].id", "unknown_item"),
        (
            "chest",
            {"items": [{"id": "bread", "slot": 1}, {"id": "coal", "slot": 1}]},
            "block_entity.items[1].slot",
            "duplicate_slot",
        ),
        ("furnace", {"items": [{"id": "coal", "slot": 3}]}, "block_entity.items[0].slot", "out_of_range"),
        ("chest", {"text": {"front": ["x"]}}, "block_entity", "unknown_key"),
        ("oak_sign", {"text": {"front": ["1", "2", "3", "4", "5"]}}, "block_entity.text.front.lines", "out_of_range"),
        ("oak_sign", {"text": {"front": ["x" * 91]}}, "block_entity.text.front.lines[0]", "out_of_range"),
        (
            "oak_sign",
            {"text": {"front": {"lines": ["a"], "color": "rainbow"}}},
            "block_entity.text.front.color",
            "unknown_value",
        ),
        (
            "white_banner",
            {"patterns": [{"pattern": "stripe_topp", "color": "red"}]},
            "block_entity.patterns[0].pattern",
            "unknown_value",
        ),
        ("skeleton_skull", {"profile": "Notch"}, "block_entity", "unknown_key"),
    ],
)
def test_bad_data_is_an_invalid_request_naming_the_path(block, data, path, reason):
    with pytest.raises(McbError) as ei:
        states([box(block, data)])
    assert ei.value.code == "invalid_request" and f"operations[0].{path}" in ei.value.message, ei.value.message
    assert ei.value.details.get("reason") == reason, ei.value.details
    # the path is said once, first, and is the one in details (issue 31 item 13: it was repeated,
    # "operations[0].block: operations[0].block_entity.items[0].count: …", details naming .block)
    assert ei.value.message.startswith(f"operations[0].{path}: ") and ei.value.message.count("operations[") == 1
    assert ei.value.details["path"] == f"operations[0].{path}"


def test_refused_kinds_and_data_on_plain_blocks():
    for block, text in (
        ("spawner", "spawner"),
        ("command_block", "command"),
        ("structure_block", "structure"),
        ("jigsaw", "jigsaw"),
    ):
        with pytest.raises(McbError) as ei:
            states([box(block)])
        assert ei.value.code == "unsupported_block" and text in ei.value.message
        assert ei.value.details["reason"] == "unsupported_block_entity"
    with pytest.raises(McbError) as ei:
        states([box("stone", {"items": []})])
    assert ei.value.code == "invalid_request" and "has no block entity" in ei.value.message
    with pytest.raises(McbError) as ei:
        compile_recipe({"version": 1, "palette": {"c": "chest"}, "operations": [box("$c", {"items": []})]})
    assert ei.value.code == "invalid_request" and "palette reference" in ei.value.message


def test_data_survives_rotation_and_pasting_a_part_and_leaves_persist():
    data = {"items": [{"id": "bread"}]}
    got = states(
        [
            {
                "type": "transform",
                "rotate": 90,
                "anchor": {"x": 0, "y": 0, "z": 0},
                "operations": [box("chest[facing=north]", data)],
            }
        ]
    )
    assert got == [
        "minecraft:chest[facing=east,type=single,waterlogged=false]"
        '{"items":[{"count":1,"id":"minecraft:bread","slot":0}]}'
    ]
    full = CHEST + '{"items":[{"count":1,"id":"minecraft:bread","slot":0}]}'
    part = PartBlocks(
        xyz=np.array([[5, 64, 5]], dtype=np.int64), palette=(full,), states=np.array([0], dtype=np.uint32)
    )
    got = states(
        [{"type": "paste", "part": "pt_0123abcd4567", "at": {"x": 0, "y": 70, "z": 0}}], parts={"pt_0123abcd4567": part}
    )
    assert got == [full]
    assert states([box("oak_leaves"), box("birch_leaves[persistent=false,distance=1]", x=1)]) == [
        "minecraft:birch_leaves[distance=1,persistent=true,waterlogged=false]",
        "minecraft:oak_leaves[distance=7,persistent=true,waterlogged=false]",
    ]


def test_inline_data_that_is_not_json_is_an_invalid_request():
    with pytest.raises(McbError) as ei:
        states([box("chest{not json")])
    assert ei.value.code == "invalid_request" and "not JSON" in ei.value.message
    assert states([box("chest", {"items": [{"id": "bread", "count": 2.0, "slot": 1.0}]})]) == [
        CHEST + '{"items":[{"count":2,"id":"minecraft:bread","slot":1}]}'
    ]
