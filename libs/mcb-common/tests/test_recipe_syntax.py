"""The recipe's syntax read from its schema (recipe_syntax): the tables, and the lenient walk the
journal lists pasted parts with (the planner's parser finds types and children the same way:
services/planner/tests/test_syntax_walk.py)."""

from __future__ import annotations

from mcb_common.recipe_schema import OPERATION_TYPES
from mcb_common.recipe_syntax import CHILD_KEYS, KEYS, RECIPE_CHILD_KEYS, SOURCE_KEYS, children, operation_type, walk


def op(kind: str, **keys):
    return {"type": kind, **keys}


def test_the_tables_come_from_the_schema():
    assert set(KEYS) == set(CHILD_KEYS) == set(SOURCE_KEYS) == set(OPERATION_TYPES)
    assert KEYS["box"] == (("type", "min", "max", "block"), ("hollow", "block_entity"))
    assert KEYS["paste"] == (("type", "at"), ("asset", "part", "rotation"))
    assert {t: k for t, k in CHILD_KEYS.items() if k} == {
        "repeat": ("operations",),
        "transform": ("operations",),
        "foundation": ("operations",),
    }
    assert {t: k for t, k in SOURCE_KEYS.items() if k} == {"paste": {"asset": "asset", "part": "part"}}
    assert RECIPE_CHILD_KEYS == ("operations",)


def test_operation_type_knows_only_the_schemas_operations():
    assert operation_type(op("box")) == "box"
    assert operation_type(op("boks")) is None
    assert operation_type({"min": {}}) is None
    assert operation_type({"type": 3}) is None
    assert operation_type(["box"]) is None and operation_type("box") is None


def test_children_are_the_schemas_keys_with_their_paths():
    rep = op("repeat", count=2, operations=[op("box")])
    assert list(children("repeat", rep, "operations[4]")) == [("operations[4].operations", [op("box")])]
    assert list(children("box", op("box", operations=[op("line")]), "operations[0]")) == []  # a shape has none


def test_walk_visits_each_operation_before_its_children_in_document_order():
    doc = {
        "version": 1,
        "operations": [
            op("box"),
            op(
                "repeat",
                operations=[
                    op("paste", part="pt_a"),
                    op("transform", operations=[op("paste", asset="hut"), op("foundation", operations=[op("line")])]),
                ],
            ),
            op("paste", part="pt_b"),
        ],
    }
    got = [(n.type, n.path, n.depth, n.sources()) for n in walk(doc)]
    assert got == [
        ("box", "operations[0]", 0, {}),
        ("repeat", "operations[1]", 0, {}),
        ("paste", "operations[1].operations[0]", 1, {"part": "pt_a"}),
        ("transform", "operations[1].operations[1]", 1, {}),
        ("paste", "operations[1].operations[1].operations[0]", 2, {"asset": "hut"}),
        ("foundation", "operations[1].operations[1].operations[1]", 2, {}),
        ("line", "operations[1].operations[1].operations[1].operations[0]", 3, {}),
        ("paste", "operations[2]", 0, {"part": "pt_b"}),
    ]


def test_walk_is_lenient_and_finds_only_operations():
    assert list(walk("not a recipe")) == [] and list(walk([op("box")])) == []
    assert list(walk({"operations": op("box")})) == []  # not an array
    doc = {
        "params": {"p": op("paste", part="in_params")},  # not an operation: params are not operations
        "operations": [
            7,
            {"part": "no_type"},
            op("repaet", operations=[op("paste", part="under_a_typo")]),  # unknown type: not walked into
            op("box", operations=[op("paste", part="under_a_shape")]),  # a shape holds no operations
            op("repeat", operations="not an array"),
            op("paste", part=5, extra="kept as given"),
        ],
    }
    got = [(n.type, n.path, n.sources()) for n in walk(doc)]
    assert got == [
        ("box", "operations[3]", {}),
        ("repeat", "operations[4]", {}),
        ("paste", "operations[5]", {"part": 5}),
    ]


def test_walk_handles_any_depth_without_recursion():
    inner: dict = op("paste", part="deep")
    for _ in range(5000):
        inner = op("transform", operations=[inner])
    nodes = list(walk({"operations": [inner]}))
    assert len(nodes) == 5001 and nodes[-1].sources() == {"part": "deep"} and nodes[-1].depth == 5000
