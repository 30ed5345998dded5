"""Structural limits come first and name themselves; validation stops at its deadline (issue 12 item 1)."""

from __future__ import annotations

import pytest
from hardening.hostile import recipe_of
from mcb_bridge.tools import build_specs, validate_arguments
from mcb_common.errors import ErrorCode, McbError
from mcb_common.recipe_schema import MAX_JSON_DEPTH, MAX_RECIPE_OPERATIONS, check_shape
from mcb_planner.recipe import parse_recipe


def refused(fn, *args, **kw) -> McbError:
    with pytest.raises(McbError) as ei:
        fn(*args, **kw)
    assert ei.value.code == ErrorCode.BUDGET_EXCEEDED, ei.value
    return ei.value


def nested_list(levels: int):
    doc: list = []
    for _ in range(levels):
        doc = [doc]
    return doc


@pytest.mark.parametrize(
    ("doc", "limit"),
    [
        (recipe_of(MAX_RECIPE_OPERATIONS + 1), "recipe_operations"),
        ({"version": 1, "operations": [{"x": nested_list(100_000)}]}, "json_depth"),  # no RecursionError
        ({"version": 1, "operations": [{"x": [0] * 300_000}]}, "json_values"),
        ({"version": 1, "operations": [{"x": "a" * (2 * 1024 * 1024)}]}, "recipe_bytes"),
    ],
)
def test_structural_limits_name_the_limit(doc, limit):
    err = refused(check_shape, doc)
    assert err.details["limit"] == limit and err.details["value"] > err.details["max"], err.details
    err = refused(parse_recipe, doc)  # the planner checks them before parsing
    assert err.details["limit"] == limit


def test_at_the_limits_is_allowed():
    check_shape(recipe_of(MAX_RECIPE_OPERATIONS))
    check_shape({"version": 1, "operations": [{"x": nested_list(MAX_JSON_DEPTH - 4)}]})


def test_the_bridge_checks_limits_before_the_schema():
    spec = build_specs()["build_prepare"]
    args = {"recipe": recipe_of(MAX_RECIPE_OPERATIONS + 1), "unknown": "key"}  # schema-invalid too
    assert refused(validate_arguments, spec, args).details["limit"] == "recipe_operations"
    deep = {"name": "x", "min": nested_list(200), "max": {}}
    assert refused(validate_arguments, build_specs()["schematic_export"], deep).details["limit"] == "json_depth"


def test_validation_stops_at_its_deadline():
    spec = build_specs()["build_prepare"]
    err = refused(validate_arguments, spec, {"recipe": recipe_of(MAX_RECIPE_OPERATIONS)}, seconds=0.001)
    assert err.details == {"limit": "validation_seconds", "max": 0.001}
