"""The protocol's rules (host.py) reach a save only through World's public methods (issue 30: it
called World._chunks_for), and the names say the same jobs as the Java core's."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_world_host import host as hostmod
from mcb_world_host.hoststate import HostState
from mcb_world_host.world import World


@pytest.fixture
def world(tmp_path, registry):
    w = World.create_flat(tmp_path / "w", registry, pregen=(-16, -16, 31, 15))
    yield w
    w.close()


def test_host_calls_no_private_method_of_the_world():
    tree = ast.parse(Path(hostmod.__file__).read_text())
    private = sorted(
        {
            n.attr
            for n in ast.walk(tree)
            if isinstance(n, ast.Attribute)
            and n.attr.startswith("_")
            and not n.attr.startswith("__")
            and not (isinstance(n.value, ast.Name) and n.value.id == "self")
        }
    )
    assert private == [], f"host.py reaches into other objects' private members: {private}"


def test_require_chunks_names_the_missing_ones(world):
    with world.lock:
        world.require_chunks([(0, 64, 0), (31, 64, 15)], for_write=True)  # generated: fine
        with pytest.raises(McbError) as err:
            world.require_chunks([(0, 64, 0), (5000, 64, 5000)], for_write=False)
    assert err.value.code == ErrorCode.NOT_FOUND and err.value.details["missingChunks"] == [[312, 312]]


def test_block_entities_in_a_box(world):
    hostmod.Host(world, allow_automation=True).automation_set_blocks(
        world_pb2.AutomationSetBlocksParams(
            actor="external", blocks=[world_pb2.AutomationBlock(x=1, y=64, z=2, state="minecraft:chest")]
        )
    )
    assert [(x, y, z, i) for x, y, z, i in world.block_entities_in((0, 60, 0), (4, 70, 4))] == [
        (1, 64, 2, "minecraft:chest")
    ]
    assert world.block_entities_in((5, 60, 5), (8, 70, 8)) == []


def test_host_state_names_the_durable_state_as_in_the_java_core(world):
    """HostState is the durable state on both hosts (Java: dev.mcb.world.core.HostState; here
    hoststate.HostState, held by the World); the in-memory one is host.LiveState."""
    assert isinstance(world.host_state, HostState)
    assert not hasattr(hostmod, "HostState") and hasattr(hostmod, "LiveState")
    assert importlib.util.find_spec("mcb_world_host.hostlog") is None  # one name, not two
    java = Path(__file__).parents[3] / "paper-plugin/core/src/main/java/dev/mcb/world/core/HostState.java"
    if java.exists():  # the name is the Java core's class
        assert "public final class HostState" in java.read_text()
