import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcb_common.errors import McbError
from mcb_common.geometry import Box, Vec3

ints = st.integers(-1000, 1000)
vecs = st.builds(Vec3, ints, st.integers(-64, 319), ints)


@given(vecs, vecs)
def test_box_of_sorts_and_contains_corners(a, b):
    box = Box.of(a, b)
    assert box.contains(a) and box.contains(b)
    assert box.volume == box.size.x * box.size.y * box.size.z > 0


@given(vecs, vecs, vecs, vecs)
def test_intersection_is_symmetric(a, b, c, d):
    x, y = Box.of(a, b), Box.of(c, d)
    assert x.intersects(y) == y.intersects(x)
    assert x.union(y).contains_box(x) and x.union(y).contains_box(y)


def test_positions_are_yzx_ordered():
    pos = list(Box.of(Vec3(0, 0, 0), Vec3(1, 1, 1)).positions())
    assert pos[:3] == [Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 0, 1)]
    assert len(pos) == 8


@pytest.mark.parametrize(
    "value",
    [
        {"x": 1, "y": 2},
        {"x": 1.5, "y": 2, "z": 3},
        {"x": True, "y": 0, "z": 0},
        "1,2,3",
        {"x": 1, "y": 2, "z": 3, "w": 4},
        {"x": 10**9, "y": 0, "z": 0},
    ],
)
def test_bad_vectors_are_invalid_request(value):
    with pytest.raises(McbError) as exc:
        Vec3.parse(value)
    assert exc.value.code == "invalid_request"
