"""Every budget refuses with its numbers, and refuses before allocating."""

from __future__ import annotations

import tracemalloc

import pytest
from mcb_common.errors import ErrorCode, McbError
from mcb_planner.compile import Limits, compile_recipe


def box(lo, hi, block="stone", hollow=False):
    return {
        "type": "box",
        "min": dict(zip("xyz", lo, strict=True)),
        "max": dict(zip("xyz", hi, strict=True)),
        "block": block,
        "hollow": hollow,
    }


def recipe(*ops):
    return {"version": 1, "operations": list(ops)}


def refused(doc, **kw) -> McbError:
    with pytest.raises(McbError) as ei:
        compile_recipe(doc, **kw)
    assert ei.value.code == ErrorCode.BUDGET_EXCEEDED, ei.value
    assert ei.value.retryable is False
    return ei.value


def test_changed_blocks_limit_at_and_over():
    # 100 × 100 × 10 = 100,000 exactly: allowed; one more layer is not.
    assert len(compile_recipe(recipe(box((0, 0, 0), (99, 9, 99))))) == 100_000
    err = refused(recipe(box((0, 0, 0), (99, 10, 99))))
    assert err.details == {"limit": "max_changed_blocks", "value": 110_000, "max": 100_000}
    assert "110000" in err.message and "100000" in err.message


def test_changed_limit_counts_distinct_positions_not_overlaps():
    # Ten copies of the same 20,000-block box: 200,000 examined, 20,000 changed — allowed.
    rep = {
        "type": "repeat",
        "count": 10,
        "offset": {"x": 0, "y": 0, "z": 0},
        "operations": [box((0, 0, 0), (99, 1, 99))],
    }
    r = compile_recipe(recipe(rep))
    assert len(r) == 20_000 and r.examined == 200_000


def test_examined_positions_limit_names_the_largest_shape():
    # Twenty overlapping 100,001-block boxes: 2,000,020 examined > 2,000,000, changed only 100,001.
    rep = {
        "type": "repeat",
        "count": 20,
        "offset": {"x": 0, "y": 0, "z": 0},
        "operations": [box((0, 0, 0), (99, 9, 99)), box((0, 10, 0), (0, 10, 0))],
    }
    err = refused(recipe(rep))
    assert err.details["limit"] == "max_examined_positions"
    assert err.details["value"] == 20 * 100_001 and err.details["max"] == 2_000_000
    assert err.details["largest"] == {"path": "operations[0].operations[0]", "positions": 100_000}
    assert "2000020" in err.message and "2000000" in err.message


def test_a_billion_block_box_is_refused_without_allocating_it():
    doc = recipe(box((0, -64, 0), (3_999, 318, 651)))  # 4000 × 383 × 652 ≈ 10^9
    tracemalloc.start()
    try:
        err = refused(doc)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert err.details["value"] == 4000 * 383 * 652
    assert peak < 5 * 1024 * 1024, f"peak {peak} bytes: the box was materialised"


def test_a_huge_cylinder_and_line_are_refused_without_allocating():
    cyl = {"type": "cylinder", "center": {"x": 0, "y": 0, "z": 0}, "radius": 65_535, "height": 300, "block": "stone"}
    line = {
        "type": "line",
        "from": {"x": -29_999_984, "y": 0, "z": 0},
        "to": {"x": 29_999_984, "y": 0, "z": 0},
        "block": "stone",
    }
    tracemalloc.start()
    try:
        e1 = refused(recipe(cyl))
        e2 = refused(recipe(line))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert e1.details["value"] > 10**12 and e2.details["value"] == 59_999_969
    assert peak < 20 * 1024 * 1024


def test_operations_after_expansion_limit():
    rep = {
        "type": "repeat",
        "count": 257,
        "offset": {"x": 1, "y": 0, "z": 0},
        "operations": [box((0, 0, 0), (0, 0, 0))],
    }
    err = refused(recipe(rep))
    assert err.details == {"limit": "max_operations", "value": 257, "max": 256}
    assert "257" in err.message and "256" in err.message
    rep["count"] = 256
    assert len(compile_recipe(recipe(rep))) == 256


def test_operations_limit_refuses_exponential_repeats_without_expanding():
    op = box((0, 0, 0), (0, 0, 0))
    for _ in range(4):
        op = {"type": "repeat", "count": 1024, "offset": {"x": 0, "y": 0, "z": 0}, "operations": [op]}
    err = refused(recipe(op))
    assert err.details["value"] == 1024**4


def test_depth_limit_through_compile():
    op = box((0, 0, 0), (0, 0, 0))
    for _ in range(3):
        op = {"type": "repeat", "count": 1, "offset": {"x": 0, "y": 0, "z": 0}, "operations": [op]}
    compile_recipe(recipe(op))
    err = refused(recipe(op), limits=Limits.of(max_depth=2))
    assert err.details["limit"] == "max_depth" and err.details["value"] == 3 and err.details["max"] == 2


def test_custom_limits_apply_and_zero_means_default():
    doc = recipe(box((0, 0, 0), (9, 9, 9)))
    err = refused(doc, limits=Limits.of(max_changed_blocks=999))
    assert err.details == {"limit": "max_changed_blocks", "value": 1000, "max": 999}
    assert Limits.of(max_changed_blocks=0, max_examined_positions=0, max_operations=0, max_depth=0) == Limits()


def test_limits_above_the_ceiling_are_invalid():
    with pytest.raises(McbError) as ei:
        Limits.of(max_examined_positions=10**12)
    assert ei.value.code == ErrorCode.INVALID_REQUEST
    assert "20000000" in ei.value.message
