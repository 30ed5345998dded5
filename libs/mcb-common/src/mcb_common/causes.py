"""What caused an environment change: the closed vocabulary of the world protocol's
``BlockEvent.cause`` (docs/world-protocol.md, "Causes"; issue 32).

Chosen from the events Paper actually fires for changes no person makes directly (the Paper
adapter's ``BlockListener`` maps each one; the Java core's ``Cause`` enum holds the same words):

- ``explosion``: BlockExplodeEvent, EntityExplodeEvent (TNT, creepers, beds, respawn anchors)
- ``fire``: BlockBurnEvent, BlockIgniteEvent without a player (fire spreading, lightning, lava)
- ``fade``: BlockFadeEvent (ice and snow melting, coral dying, fire burning out, farmland drying)
- ``decay``: LeavesDecayEvent
- ``flow``: BlockFromToEvent, FluidLevelChangeEvent, SpongeAbsorbEvent (water and lava)
- ``growth``: BlockGrowEvent, StructureGrowEvent, BlockSpreadEvent (crops, trees, grass, vines)
- ``form``: BlockFormEvent (snow and ice forming, concrete hardening, cobblestone/obsidian from fluids)
- ``piston``: BlockPistonExtendEvent, BlockPistonRetractEvent
- ``other``: everything else the game does by itself (falling blocks, mobs, dispensers, hoppers,
  furnaces, blocks that pop off)

An event of another source has no cause (``""``); so do the environment events of hosts older than
the field (readers show them as ``other``).
"""

from __future__ import annotations

import re

from .errors import invalid

CAUSES = ("explosion", "fire", "fade", "decay", "flow", "growth", "form", "piston", "other")


def check_cause(cause: str) -> str:
    """``cause`` if it is one of CAUSES (``""`` reads as ``other``), else an invalid_request naming them."""
    if cause == "":
        return "other"
    if cause not in CAUSES:
        raise invalid(f"cause {cause[:40]!r} is unknown; use one of {', '.join(CAUSES)}")
    return cause


PLAYER_NAME = re.compile(r"[A-Za-z0-9_]{1,16}")  # a Java Edition name (the game allows no other)


def check_player_name(name: str) -> str:
    """``name`` if empty or a Java Edition player name (1..16 of A-Z a-z 0-9 _), else invalid_request."""
    if name and not PLAYER_NAME.fullmatch(name):
        raise invalid(f"player_name {name[:40]!r} is not a player name (1 to 16 letters, digits or _)")
    return name
