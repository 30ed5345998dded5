import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcb_common.errors import McbError
from mcb_common.registry import Registry

REG = Registry.load()


def test_canonical_fills_and_sorts():
    assert REG.canonical("oak_stairs[facing=east]") == (
        "minecraft:oak_stairs[facing=east,half=bottom,shape=straight,waterlogged=false]"
    )
    assert REG.canonical(" Minecraft:Stone ") == "minecraft:stone"
    assert REG.canonical("minecraft:oak_log[]") == "minecraft:oak_log[axis=y]"
    assert REG.canonical("oak_stairs[waterlogged=false, facing=east]") == REG.canonical("oak_stairs[facing=east]")


def test_registry_metadata():
    assert REG.data_version == 4671
    assert len(REG.blocks) > 1000
    assert REG.summary()["minecraftVersion"] == "1.21.11"


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("oak_stars", "oak_stairs"),
        ("oak_stairs[facing=up]", "north"),
        ("oak_stairs[colour=red]", "facing"),
        ("oak_stairs[facing=east", "]"),
        ("stone[=x]", "not a valid property"),
        ("stone[x]", "name=value"),
        ("oak_stairs[facing=east,facing=west]", "twice"),
        ("not a block", "block id"),
    ],
)
def test_errors_are_actionable(text, fragment):
    with pytest.raises(McbError) as exc:
        REG.canonical(text)
    assert exc.value.code == "unsupported_block"
    assert fragment in exc.value.message


def test_defaults_match_known_vanilla_defaults():
    assert REG.canonical("minecraft:grass_block") == "minecraft:grass_block[snowy=false]"
    assert REG.canonical("minecraft:oak_fence").endswith(
        "[east=false,north=false,south=false,waterlogged=false,west=false]"
    )
    assert REG.canonical("minecraft:redstone_wire").startswith("minecraft:redstone_wire[east=none,north=none,power=0")


@settings(max_examples=300)
@given(st.sampled_from(sorted(REG.blocks)))
def test_canonical_is_a_fixed_point(name):
    c = REG.canonical(name)
    assert REG.canonical(c) == c
    assert REG.is_valid_canonical(c)
