"""Recipe v1 parsing: what is accepted, what is refused, and that refusals name the path."""

from __future__ import annotations

import json

import pytest
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Vec3
from mcb_planner.recipe import (
    MAX_RECIPE_BYTES,
    BoxOp,
    CylinderOp,
    LineOp,
    RepeatOp,
    expanded_count,
    parse_recipe,
)
from planner_cases import BAD, PARSER_ONLY, SEED_TEXT, seed


def test_seed_example_parses_into_the_tree():
    r = parse_recipe(SEED_TEXT)
    box, line, cyl, rep = r.operations
    assert box == BoxOp("operations[0]", Vec3(0, 64, 0), Vec3(4, 70, 4), "minecraft:stone_bricks", True)
    assert line == LineOp("operations[1]", Vec3(0, 64, 0), Vec3(8, 64, 8), "minecraft:stone")
    assert cyl == CylinderOp("operations[2]", Vec3(12, 64, 12), 3, 8, "minecraft:stone_bricks", True)
    assert isinstance(rep, RepeatOp) and rep.count == 3 and rep.offset == Vec3(6, 0, 0)
    assert rep.operations[0].path == "operations[3].operations[0]"
    assert expanded_count(r.operations) == 6


def test_text_and_object_parse_alike_and_defaults_are_filled():
    r1, r2 = parse_recipe(SEED_TEXT), parse_recipe(seed())
    assert r1 == r2
    doc = {
        "version": 1,
        "operations": [
            {"type": "box", "min": {"x": 0, "y": 0, "z": 0}, "max": {"x": 1, "y": 1, "z": 1}, "block": "stone"}
        ],
    }
    norm = parse_recipe(doc).normalised()
    assert norm["operations"][0]["hollow"] is False


def test_integral_floats_are_integers():
    doc = seed()
    doc["operations"][0]["min"]["y"] = 64.0
    doc["operations"][3]["count"] = 3.0
    assert parse_recipe(doc) == parse_recipe(seed())


def test_optional_params_palette_seed_are_kept_in_the_normal_form():
    doc = seed() | {"params": {"floors": 3, "h": 2.5}, "palette": {"wall": "stone"}, "seed": 42}
    norm = parse_recipe(doc).normalised()
    assert norm["params"] == {"floors": 3, "h": "5/2"}  # exact rationals
    assert norm["palette"] == {"wall": "stone"}
    assert norm["seed"] == 42


@pytest.mark.parametrize(("case", "recipe", "path"), BAD + PARSER_ONLY, ids=[c[0] for c in BAD + PARSER_ONLY])
def test_bad_recipes_are_invalid_requests_naming_the_path(case, recipe, path):
    with pytest.raises(McbError) as ei:
        parse_recipe(recipe)
    err = ei.value
    assert err.code == ErrorCode.INVALID_REQUEST, err
    assert err.details["path"] == path
    assert err.message.startswith(path), err.message
    assert err.retryable is False


def test_unknown_key_suggests_the_near_one():
    doc = seed()
    doc["operations"][0]["hollw"] = True
    with pytest.raises(McbError, match="did you mean 'hollow'"):
        parse_recipe(doc)


def test_box_corners_out_of_order_are_refused_with_the_axis():
    doc = seed()
    doc["operations"][3]["operations"][0]["max"]["y"] = 60
    with pytest.raises(McbError) as ei:
        parse_recipe(doc)
    assert ei.value.details["path"] == "operations[3].operations[0].max.y"
    assert ei.value.details["reason"] == "corner_order"
    assert "60" in ei.value.message and "64" in ei.value.message


@pytest.mark.parametrize(
    "text",
    [
        '{"version": 1, "operations": [',
        "NaN",
        '{"version": 1, "version": 1, "operations": []}',
        '{"version": 1, "operations": [{"type":"box","min":{"x":NaN,"y":0,"z":0}}]}',
        "[" * 100_000,
    ],
)
def test_malformed_json_text_is_an_invalid_request(text):
    with pytest.raises(McbError) as ei:
        parse_recipe(text)
    assert ei.value.code == ErrorCode.INVALID_REQUEST


def test_oversized_recipe_text_is_refused_with_its_size():
    text = json.dumps(seed() | {"params": {"x": 1}}) + " " * MAX_RECIPE_BYTES
    with pytest.raises(McbError) as ei:
        parse_recipe(text)
    assert ei.value.code == ErrorCode.BUDGET_EXCEEDED
    assert str(MAX_RECIPE_BYTES) in ei.value.message
    assert ei.value.details["value"] == len(text)


def _nested(depth: int) -> dict:
    op: dict = {"type": "box", "min": {"x": 0, "y": 0, "z": 0}, "max": {"x": 0, "y": 0, "z": 0}, "block": "stone"}
    for _ in range(depth):
        op = {"type": "repeat", "count": 2, "offset": {"x": 1, "y": 0, "z": 0}, "operations": [op]}
    return {"version": 1, "operations": [op]}


def test_repeat_depth_at_the_limit_is_fine_and_one_more_is_a_budget_error():
    assert expanded_count(parse_recipe(_nested(4)).operations) == 16
    with pytest.raises(McbError) as ei:
        parse_recipe(_nested(5))
    err = ei.value
    assert err.code == ErrorCode.BUDGET_EXCEEDED
    assert err.details == {"path": err.details["path"], "limit": "max_depth", "value": 5, "max": 4}
    assert "5" in err.message and "4" in err.message
    # the configured limit is honoured both ways
    parse_recipe(_nested(6), max_depth=6)
    with pytest.raises(McbError):
        parse_recipe(_nested(2), max_depth=1)


def test_expanded_count_multiplies_without_expanding():
    doc = _nested(4)
    for op in [doc["operations"][0]]:
        node = op
        while node["type"] == "repeat":
            node["count"] = 1024
            node = node["operations"][0]
    assert expanded_count(parse_recipe(doc).operations) == 1024**4
