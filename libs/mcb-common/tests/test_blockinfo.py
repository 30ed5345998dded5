from mcb_common.blockinfo import BLOCK_ENTITY, FLUID, GRAVITY, REDSTONE, BlockInfo
from mcb_common.registry import Registry

REG = Registry.load()
INFO = BlockInfo.load()


def test_every_listed_block_exists_in_the_registry():
    listed = set(INFO.block_entity_of) | INFO.fluids | INFO.gravity | INFO.redstone
    missing = sorted(n for n in listed if n not in REG)
    assert not missing


def test_categories():
    assert INFO.category("chest[facing=north]") == BLOCK_ENTITY
    assert INFO.block_entity("minecraft:oak_wall_sign") == "sign"
    assert INFO.block_entity("creeper_head") == "skull"
    assert INFO.block_entity("minecraft:piston_head") is None
    assert INFO.block_entity("waxed_oxidized_copper_chest") == "chest"
    assert INFO.category("minecraft:water[level=0]") == FLUID
    assert INFO.category("minecraft:oak_stairs[facing=east,half=bottom,shape=straight,waterlogged=true]") == FLUID
    assert INFO.category("kelp") == FLUID
    assert INFO.category("red_concrete_powder") == GRAVITY
    assert INFO.category("sandstone") is None
    assert INFO.category("redstone_wire") == REDSTONE
    assert INFO.category("hopper") == BLOCK_ENTITY  # block entity wins
    assert INFO.category("stone") is None
    assert not INFO.supports("minecraft:air") and not INFO.supports("water") and INFO.supports("stone")


def test_the_wiki_block_entity_ids_are_all_present():
    ids = set(INFO.block_entity_of.values())
    for be in (
        "banner",
        "barrel",
        "beacon",
        "beehive",
        "bell",
        "blast_furnace",
        "brewing_stand",
        "brushable_block",
        "calibrated_sculk_sensor",
        "campfire",
        "chest",
        "chiseled_bookshelf",
        "comparator",
        "command_block",
        "conduit",
        "copper_golem_statue",
        "crafter",
        "creaking_heart",
        "daylight_detector",
        "decorated_pot",
        "dispenser",
        "dropper",
        "enchanting_table",
        "ender_chest",
        "end_gateway",
        "end_portal",
        "furnace",
        "hanging_sign",
        "hopper",
        "jigsaw",
        "jukebox",
        "lectern",
        "mob_spawner",
        "piston",
        "shelf",
        "shulker_box",
        "sign",
        "skull",
        "sculk_catalyst",
        "sculk_sensor",
        "sculk_shrieker",
        "smoker",
        "soul_campfire",
        "structure_block",
        "test_block",
        "test_instance_block",
        "trapped_chest",
        "trial_spawner",
        "vault",
        "bed",
    ):
        assert be in ids, be
