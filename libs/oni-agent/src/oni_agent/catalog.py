"""What the toolchain knows about ONI's buildings and techs (game ids, footprints, power).

The game is the authority (the mod answers ``unknown_building`` / ``unknown_tech``); this table
is what the blueprint planner needs to check footprints before queueing, and what the colony
simulator (oni-sim) plays with. Footprints are width x height in cells, anchored at the
bottom-left cell (x, y), y growing upward as in the game.

Where each entry was checked (issue 28, Deliver 3): in the decompile of the game's Assembly-CSharp
at build U56-674504 (GitHub 2373370715/NOISourceCode, commit ba7aec3), the footprint is the
``width``/``height`` that ``<Id>Config.CreateBuildingDef`` passes to ``BuildingTemplates.CreateBuildingDef``
(file ``Assembly-CSharp/<Id>Config.cs``) and the unlocking tech is the ``new Tech("<tech>", [...])``
whose list names the building (``Assembly-CSharp/Database/Techs.cs``); no tech there means the
building is available from the start. Tech names are ``STRINGS.RESEARCH.TECHS.<TECH>.NAME``
(``Assembly-CSharp/STRINGS/RESEARCH.cs``). Power, consumption, production, heat, research points and
the prerequisites are the simulator's simplifications, not checked against the game: the research
tree's edges are game data, not code.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BuildingDef:
    id: str
    name: str
    width: int
    height: int
    power: float = 0.0  # W: > 0 generates, < 0 consumes
    tech: str | None = None  # tech that unlocks it (None: available from the start)
    battery: float = 0.0  # J of storage
    consumes: tuple[tuple[str, float], ...] = ()  # (resource tag, kg per second)
    produces: tuple[tuple[str, float], ...] = ()  # (resource tag, kg per second)
    heat: float = 0.0  # kDTU/s it adds to the base while working
    floor: bool = True  # needs a solid cell (or a Tile) under its bottom row
    # its power port, (x, y) from the bottom-left cell, unrotated: the game's PowerInputOffset /
    # PowerOutputOffset (<Id>Config.cs; default (0, 0)) from the anchor cell, (width - 1) // 2 from
    # the left; a wire must pass through it
    port: tuple[int, int] | None = None
    utility: str | None = None  # a utility laid along a path ("wire", "gas", "liquid", "logic")
    # its conduit ports, (kind, x, y) from the bottom-left cell, unrotated: the game's InputConduitType /
    # UtilityInputOffset and OutputConduitType / UtilityOutputOffset (<Id>Config.cs; BuildingDef.cs
    # defaults: input (0, 1), output (1, 0)) from the anchor cell; a pipe of that kind must pass through it
    conduit_in: tuple[str, int, int] | None = None
    conduit_out: tuple[str, int, int] | None = None
    # the orientations the game allows (BuildingDef.PermittedRotations, <Id>Config.cs; default Unrotatable)
    rotations: str = "Unrotatable"
    plot: bool = False  # a PlantablePlot: takes a seed (POST /api/action/plant)


def _b(*args, **kw) -> BuildingDef:  # noqa: ANN002, ANN003
    return BuildingDef(*args, **kw)


BUILDINGS: dict[str, BuildingDef] = {
    b.id: b
    for b in [
        _b("Headquarters", "Printing Pod", 4, 4, heat=0.0),  # HeadquartersConfig.cs: 4 x 4
        _b("Tile", "Tile", 1, 1, floor=False),
        _b("Ladder", "Ladder", 1, 1, floor=False),
        _b("Door", "Pneumatic Door", 1, 2, rotations="R90"),  # DoorConfig.cs: PermittedRotations.R90
        # ports: ManualGeneratorConfig.cs PowerOutputOffset (0, 0); GeneratorConfig.cs (0, 0) from the anchor (1)
        _b("ManualGenerator", "Manual Generator", 2, 2, power=400, heat=1.0, port=(0, 0)),
        _b(
            "Generator",
            "Coal Generator",
            3,
            3,
            power=600,
            tech="Combustion",
            consumes=(("Carbon", 1.0),),
            heat=4.0,
            port=(1, 0),
        ),
        # Techs.cs: HydrogenGenerator is in AdvancedPowerRegulation
        _b(
            "HydrogenGenerator",
            "Hydrogen Generator",
            4,
            3,
            power=800,
            tech="AdvancedPowerRegulation",
            consumes=(("Hydrogen", 0.1),),
            heat=2.0,
            port=(2, 0),  # HydrogenGeneratorConfig.cs: (1, 0) from the anchor (1)
            conduit_in=("gas", 0, 0),
        ),  # HydrogenGeneratorConfig.cs: Gas in at (-1, 0) from the anchor
        _b(
            "Battery", "Battery", 1, 2, battery=10000, port=(0, 0)
        ),  # BaseBatteryConfig.cs: power output, default offset
        _b(
            "Electrolyzer",
            "Electrolyzer",
            2,
            2,
            power=-120,
            tech="ImprovedOxygen",
            consumes=(("Water", 1.0),),
            produces=(("Oxygen", 0.888), ("Hydrogen", 0.112)),
            heat=1.25,
            port=(1, 0),
            conduit_in=("liquid", 0, 0),
        ),  # ElectrolyzerConfig.cs: PowerInputOffset (1, 0); Liquid in (0, 0)
        _b(
            "MineralDeoxidizer",
            "Oxygen Diffuser",
            1,
            2,
            power=-120,
            consumes=(("Algae", 0.55),),
            produces=(("Oxygen", 0.5),),
            heat=1.5,
            port=(0, 0),
        ),
        _b(
            "AlgaeHabitat",
            "Algae Terrarium",
            1,
            2,
            tech="FarmingTech",  # Techs.cs: FarmingTech
            consumes=(("Algae", 0.03), ("Water", 0.3)),
            produces=(("Oxygen", 0.04),),
        ),
        # GasPumpConfig.cs / LiquidPumpConfig.cs: PowerInputOffset (0, 1), Gas / Liquid out at (1, 1)
        _b("GasPump", "Gas Pump", 2, 2, power=-240, tech="GasPiping", heat=0.5, port=(0, 1), conduit_out=("gas", 1, 1)),
        _b(
            "LiquidPump",
            "Liquid Pump",
            2,
            2,
            power=-240,
            tech="LiquidPiping",
            heat=2.0,
            port=(0, 1),
            conduit_out=("liquid", 1, 1),
        ),
        # GasVentConfig.cs: 1 x 1, BuildLocationRule.Anywhere (no floor), Gas in at UtilityInputOffset (0, 0);
        # Techs.cs: GasVent is in GasPiping ("Ventilation")
        _b("GasVent", "Gas Vent", 1, 1, tech="GasPiping", floor=False, conduit_in=("gas", 0, 0)),
        _b(
            "WaterPurifier",
            "Water Sieve",
            4,
            3,
            power=-120,
            tech="Distillation",  # Techs.cs: Distillation
            consumes=(("DirtyWater", 5.0),),
            produces=(("Water", 5.0),),
            heat=4.0,
            port=(3, 0),  # (2, 0) from anchor 1
            # WaterPurifierConfig.cs: Liquid in (-1, 2), out (2, 2) from the anchor; FlipH
            conduit_in=("liquid", 0, 2),
            conduit_out=("liquid", 3, 2),
            rotations="FlipH",
        ),
        _b("Outhouse", "Outhouse", 2, 3),
        _b(
            "FlushToilet",
            "Lavatory",
            2,
            3,
            tech="SanitationSciences",  # FlushToiletConfig.cs: in (0, 0), out (1, 1), FlipH
            consumes=(("Water", 0.01),),
            produces=(("DirtyWater", 0.0115),),
            conduit_in=("liquid", 0, 0),
            conduit_out=("liquid", 1, 1),
            rotations="FlipH",
        ),
        _b("WashBasin", "Wash Basin", 2, 3),
        _b(
            "MicrobeMusher",
            "Microbe Musher",
            2,
            3,
            power=-240,  # MicrobeMusherConfig.cs: 2 x 3
            consumes=(("Dirt", 0.05), ("Water", 0.05)),
            produces=(("Food", 0.6),),
            heat=0.5,
            port=(0, 0),
        ),
        # PlanterBoxConfig.cs / FarmTileConfig.cs: a PlantablePlot taking GameTags.CropSeed; food only from a
        # planted seed (SEEDS); FarmTile FlipV (a ceiling farm)
        _b("PlanterBox", "Planter Box", 1, 1, tech="FarmingTech", plot=True),  # Techs.cs: FarmingTech
        # Techs.cs: FarmTile is in FineDining ("Meal Preparation")
        _b("FarmTile", "Farm Tile", 1, 1, tech="FineDining", floor=False, plot=True, rotations="FlipV"),
        _b("RationBox", "Ration Box", 2, 2, tech="FarmingTech"),  # Techs.cs: FarmingTech
        _b("Bed", "Cot", 2, 2),
        _b("LuxuryBed", "Comfy Bed", 4, 2, tech="Luxury"),  # Techs.cs: Luxury ("Home Luxuries")
        _b("ResearchCenter", "Research Station", 2, 2, power=-60, heat=1.1, port=(0, 0)),
        _b("CreatureFeeder", "Critter Feeder", 1, 2, tech="Ranching"),
        _b("RanchStation", "Grooming Station", 2, 3, tech="Ranching"),  # RanchStationConfig.cs: 2 x 3
        _b("CreatureDeliveryPoint", "Critter Drop-Off", 1, 3, tech="Ranching"),
        _b(
            "AirConditioner",
            "Thermo Regulator",
            2,
            2,
            power=-240,
            tech="HVAC",
            heat=-14.0,  # Techs.cs: HVAC
            port=(
                1,
                0,
            ),  # AirConditionerConfig.cs: PowerInputOffset (1, 0); Gas in/out at BuildingDef's defaults; FlipH
            conduit_in=("gas", 0, 1),
            conduit_out=("gas", 1, 0),
            rotations="FlipH",
        ),
        _b(
            "SpaceHeater",
            "Space Heater",
            2,
            2,
            power=-120,
            tech="TemperatureModulation",
            heat=18.0,  # Techs.cs
            port=(0, 0),
        ),
        # utilities, laid along a path of cells (POST /api/action/utility); 1 x 1 each, on their own layer
        # (a building and a wire share a cell). Techs.cs: GasConduit in GasPiping, LiquidConduit in
        # LiquidPiping, LogicWire in LogicControl ("Smart Home"); Wire from the start.
        _b("Wire", "Wire", 1, 1, floor=False, utility="wire"),
        _b("GasConduit", "Gas Pipe", 1, 1, tech="GasPiping", floor=False, utility="gas"),
        _b("LiquidConduit", "Liquid Pipe", 1, 1, tech="LiquidPiping", floor=False, utility="liquid"),
        _b("LogicWire", "Automation Wire", 1, 1, tech="LogicControl", floor=False, utility="logic"),
    ]
}

# tech id -> (name, research points, prerequisite tech ids)
TECHS: dict[str, tuple[str, int, tuple[str, ...]]] = {
    "FarmingTech": ("Basic Farming", 15, ()),
    "PowerRegulation": ("Power Regulation", 15, ()),
    "Combustion": ("Internal Combustion", 30, ("PowerRegulation",)),
    "ImprovedOxygen": ("Improved Oxygen", 30, ("PowerRegulation",)),
    "GasPiping": ("Ventilation", 20, ()),
    "LiquidPiping": ("Plumbing", 20, ()),
    "SanitationSciences": ("Sanitation", 40, ("LiquidPiping",)),
    "Ranching": ("Ranching", 40, ("FarmingTech",)),
    "InteriorDecor": ("Interior Decor", 20, ()),
    "TemperatureModulation": ("Temperature Modulation", 60, ("GasPiping", "Combustion")),
    # names from STRINGS/RESEARCH.cs; points and prerequisites are the simulator's (see the module doc)
    "AdvancedPowerRegulation": ("Advanced Power Regulation", 45, ("PowerRegulation",)),
    "Distillation": ("Distillation", 45, ("LiquidPiping",)),
    "FineDining": ("Meal Preparation", 30, ("FarmingTech",)),
    "Luxury": ("Home Luxuries", 40, ("InteriorDecor",)),
    "HVAC": ("HVAC", 80, ("TemperatureModulation",)),
    "LogicControl": ("Smart Home", 40, ("PowerRegulation",)),
}

# utility kind -> building id (the game's WireConfig, GasConduitConfig, LiquidConduitConfig, LogicWireConfig)
UTILITIES: dict[str, str] = {b.utility: b.id for b in BUILDINGS.values() if b.utility}


# Orientation (the game's Orientation.cs) for the API's rotation (0, 90, 180, 270) and flip; which of
# them a building allows (BuildingDef.PermittedRotations; Rotatable.Rotate toggles R90 and flips)
PERMITTED: dict[str, tuple[str, ...]] = {
    "Unrotatable": ("Neutral",),
    "R90": ("Neutral", "R90"),
    "R360": ("Neutral", "R90", "R180", "R270"),
    "FlipH": ("Neutral", "FlipH"),
    "FlipV": ("Neutral", "FlipV"),
}


def orientation(building_id: str, rotation: int | None, flip: bool = False) -> str | None:
    """The game's Orientation for a rotation and flip, or None when the building does not allow it."""
    b = BUILDINGS[building_id]
    if flip:
        o = {"FlipH": "FlipH", "FlipV": "FlipV"}.get(b.rotations, "")
        if rotation:
            return None  # the game has no orientation that both turns and mirrors
    else:
        o = {None: "Neutral", 0: "Neutral", 90: "R90", 180: "R180", 270: "R270"}[rotation]
    return o if o in PERMITTED[b.rotations] else None


def rotate(dx: int, dy: int, o: str) -> tuple[int, int]:
    """Rotatable.GetRotatedCellOffset(offset, orientation) (Rotatable.cs): an offset from the anchor."""
    return {
        "Neutral": (dx, dy),
        "R90": (dy, -dx),
        "R180": (-dx, -dy),
        "R270": (-dy, dx),
        "FlipH": (-dx, dy),
        "FlipV": (dx, -dy),
    }[o]


def _placed(building_id: str, o: str) -> list[tuple[int, int]]:
    """The building's cells as offsets from its anchor, turned (BuildingDef.PlacementOffsets: x from
    -(width-1)/2, y from 0, each through GetRotatedCellOffset, as BuildingDef.MarkArea places them)."""
    b = BUILDINGS[building_id]
    ax = (b.width - 1) // 2
    return [rotate(i - ax, j, o) for j in range(b.height) for i in range(b.width)]


def footprint(building_id: str, x: int, y: int, o: str = "Neutral") -> list[tuple[int, int]]:
    """The cells a building covers with (x, y) the bottom-left cell of its turned footprint."""
    cells = _placed(building_id, o)
    mx, my = min(c[0] for c in cells), min(c[1] for c in cells)
    return [(x + cx - mx, y + cy - my) for cx, cy in cells]


def port_cell(building_id: str, x: int, y: int, port: tuple[int, int], o: str = "Neutral") -> tuple[int, int]:
    """The cell of a port given unrotated from the bottom-left cell: turned about the anchor as the
    game turns UtilityInputOffset / PowerInputOffset (BuildingDef.MarkArea, Rotatable.GetRotatedCellOffset)."""
    b = BUILDINGS[building_id]
    ax = (b.width - 1) // 2
    cells = _placed(building_id, o)
    mx, my = min(c[0] for c in cells), min(c[1] for c in cells)
    px, py = rotate(port[0] - ax, port[1], o)
    return x + px - mx, y + py - my


# seeds a PlantablePlot takes (the game's seed prefab ids, <Plant>Config.cs SEED_ID; tag CropSeed) ->
# (plant, kcal per harvest, growing seconds): the simulator's crops (yields and times simplified)
SEEDS: dict[str, tuple[str, float, int]] = {
    "BasicSingleHarvestPlantSeed": ("BasicSingleHarvestPlant", 600.0, 1800),  # Mealwood
    "MushroomSeed": ("MushroomPlant", 2400.0, 4500),  # Dusk Cap
    "PrickleFlowerSeed": ("PrickleFlower", 1600.0, 3600),  # Bristle Blossom
    "SeaLettuceSeed": ("SeaLettuce", 400.0, 4500),  # Waterweed
}
