from hypothesis import given
from hypothesis import strategies as st
from mcb_journal.merge import merge_rule, three_way

S = st.sampled_from(["a", "b", "c", "d"])


@given(S, S, S)
def test_rule_table(g0, c, g1):
    v = merge_rule(g0, c, g1)
    if g1 == g0:
        assert v == "keep"  # manual edits in unchanged design survive
    elif c == g0:
        assert v == "write"
    elif c == g1:
        assert v == "nothing"
    else:
        assert v == "conflict"
    # never overwrite a block that differs from what we generated
    if v == "write":
        assert c == g0


@given(
    st.dictionaries(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)), S, max_size=20),
    st.dictionaries(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3)), S, max_size=20),
    st.data(),
)
def test_three_way_partitions_every_position(g0, g1, data):
    positions = set(g0) | set(g1)
    current = {p: data.draw(S) for p in positions}
    before = {p: data.draw(S) for p in g0}
    r = three_way(g0, before, current, g1)
    parts = [set(r.writes), set(r.kept), set(r.already), set(r.conflicts)]
    assert sum(len(p) for p in parts) == len(positions)
    assert set().union(*parts) == positions
    for p, (base, desired) in r.writes.items():
        assert base == current[p] and desired != current[p]
        assert p not in g0 or current[p] == g0[p]


def test_tower_windows_survive_and_roof_is_redone():
    wall, glass, roof, air = "stone_bricks", "glass", "oak_planks", "air"
    g0 = {(0, 0, 0): wall, (0, 1, 0): wall, (0, 2, 0): roof}
    before = {p: air for p in g0}
    current = {(0, 0, 0): glass, (0, 1, 0): wall, (0, 2, 0): roof, (0, 3, 0): air, (0, 4, 0): air}
    g1 = {(0, 0, 0): wall, (0, 1, 0): wall, (0, 2, 0): wall, (0, 3, 0): wall, (0, 4, 0): "spruce_planks"}
    r = three_way(g0, before, current, g1)
    assert (0, 0, 0) in r.kept  # the hand-made window stays
    assert r.writes[(0, 2, 0)] == (roof, wall)  # old roof becomes a wall floor
    assert r.writes[(0, 4, 0)] == (air, "spruce_planks")  # the new roof
    assert not r.conflicts
