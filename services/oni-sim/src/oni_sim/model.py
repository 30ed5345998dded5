"""A small, deterministic colony model: the game behind the simulator's API.

One tick is one game second; a cycle is 600 ticks. The map is a grid of cells ('#' diggable
solid, 'N' neutronium, '~' liquid, '.' gas/vacuum) generated from a seed by an own LCG (stable
across Python versions). Actions arrive on a queue (like the mod's) and are applied at the next
tick, never by the HTTP thread; a build that does not fit when it is applied is dropped with an
alert, as the game refuses it. Everything is a plain function of (seed, actions, ticks).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from oni_agent.catalog import BUILDINGS, SEEDS, TECHS, UTILITIES, footprint, port_cell

CYCLE_TICKS = 600
O2_PER_DUPE = 0.1  # kg/s
CAL_PER_TICK = 1000_000 / CYCLE_TICKS  # 1000 kcal per cycle, in cal
CONSTRUCTION_TICKS = 30
DIG_TICKS = 5  # per cell and duplicant
QUEUE_MAX = 256
OUTCOMES_KEPT = 1024  # as the mod core (ModCore.OutcomesKept)
REPORTS_KEPT = 11  # as the glue: the last 10 cycles and the one in progress
WIRE_MAX_W = 1000.0  # a Wire's rating (WireConfig.cs: Wire.WattageRating.Max1000; Wire.GetMaxWattageAsFloat)
MAX_ROOM_CELLS = 128  # a cavity of more cells is no room (RoomProber: numCells <= Tuning.maxRoomSize; 128 here)
MOP_MAX_KG = 150.0  # MopTool.maxMopAmt: a cell holding more liquid cannot be mopped
PUDDLE_KG = 100.0  # the simulator's liquid cells each hold this much (the game: Grid.Mass)
DEBRIS_KG = 50.0  # what one dug cell drops on the floor
WORLD_ID = 0  # the simulator has one world (ClusterManager's first WorldContainer)


class Lcg:
    def __init__(self, seed: int) -> None:
        self.state = (seed * 6364136223846793005 + 1442695040888963407) % 2**64

    def next(self, n: int) -> int:
        self.state = (self.state * 6364136223846793005 + 1442695040888963407) % 2**64
        return (self.state >> 33) % n


@dataclass
class Dupe:
    name: str
    stress: float = 5.0
    calories: float = 900_000.0
    stamina: float = 100.0
    oxygen: float = 100.0
    diseases: int = 0
    skillLevels: int = 0  # noqa: N815 - the API's name
    schedule: str = "Default Standard Schedule"  # the schedule it is assigned to (shared, as in the game)


@dataclass
class Building:
    id: str
    x: int
    y: int
    progress: int = 0  # construction ticks done
    priority: int = 5
    operational: bool = False
    stored: float = 0.0  # J, a battery's charge
    orientation: str = "Neutral"  # the game's Orientation (catalog.orientation)
    seed: str | None = None  # a plot's planted seed (PlantablePlot's occupant)
    growth: int = 0  # seconds the crop has grown
    harvest: bool = True  # HarvestDesignatable.harvestWhenReady (defaultHarvestStateWhenPlanted = true)
    powered: bool = False  # a consumer served by its circuit this tick

    def cells(self) -> list[tuple[int, int]]:
        return footprint(self.id, self.x, self.y, self.orientation)

    def size(self) -> tuple[int, int]:
        """Width and height of its turned footprint (a quarter turn lays it on its side)."""
        d = BUILDINGS[self.id]
        return (d.height, d.width) if self.orientation in ("R90", "R270") else (d.width, d.height)

    def port(self, offset: tuple[int, int]) -> tuple[int, int]:
        return port_cell(self.id, self.x, self.y, offset, self.orientation)

    @property
    def built(self) -> bool:
        return self.progress >= CONSTRUCTION_TICKS


def _flood(
    out: dict[tuple[int, int], Any],
    start: tuple[int, int],
    label: Any,
    joined: Callable[[tuple[int, int], tuple[int, int]], bool],
) -> None:
    """Give ``label`` to every cell reached from ``start`` through the four neighbours, a step
    from ``c`` to ``o`` taken where ``joined(c, o)`` (cells already in ``out`` are not entered)."""
    todo = [start]
    while todo:
        c = todo.pop()
        if c in out:
            continue
        out[c] = label
        x, y = c
        todo += [o for o in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)) if o not in out and joined(c, o)]


class Colony:
    def __init__(self, seed: int = 1, width: int = 64, height: int = 48, name: str = "Terra") -> None:
        self.lock = threading.Lock()  # held by the tick and by snapshot copies, never during I/O
        self.name, self.width, self.height, self.seed = name, width, height, seed
        self.tick_count = 0
        # SpeedControlScreen: paused, speed 1..3 (the game's slow/medium/fast); while paused the game
        # thread still applies queued actions (Game.Update runs every frame) but no time passes
        self.paused, self.speed = False, 1
        self.queue: deque[tuple[int, str, dict[str, Any]]] = deque()
        self.last_action_id = 0
        self.outcomes: dict[int, dict[str, Any]] = {}  # id -> {id, action, state, body, reason?}; newest OUTCOMES_KEPT
        rng = Lcg(seed)
        self.cells = [["#"] * width for _ in range(height)]
        for y in range(height):
            for x in range(width):
                if x == 0 or y == 0 or x == width - 1 or y == height - 1:
                    self.cells[y][x] = "N"
                elif rng.next(40) == 0:
                    self.cells[y][x] = "~"
        cx, cy = width // 2, height // 2
        for y in range(cy, cy + 6):  # the starting cavity: 16 x 6 above the floor row cy-1
            for x in range(cx - 8, cx + 8):
                self.cells[y][x] = "."
        self.buildings: list[Building] = [Building("Headquarters", cx - 2, cy, CONSTRUCTION_TICKS, 5, True)]
        self.dupes = [Dupe("Ada"), Dupe("Bram"), Dupe("Cleo")]
        # schedules by name, shared by the duplicants assigned to them (ScheduleManager; the first is
        # STRINGS.UI.SCHEDULESCREEN.SCHEDULE_NAME_DEFAULT)
        self.schedules: dict[str, list[str]] = {"Default Standard Schedule": ["work"] * 21 + ["sleep"] * 3}
        self.resources: dict[str, float] = {
            "Oxygen": 600.0,
            "Water": 2000.0,
            "Algae": 400.0,
            "Food": 6000.0,
            "Dirt": 500.0,
            "SandStone": 1000.0,
            "Carbon": 300.0,
            "Hydrogen": 0.0,
            "DirtyWater": 0.0,
            "BasicSingleHarvestPlantSeed": 4.0,
        }
        self.digs: deque[tuple[int, int]] = deque()
        # errands after the digs, each done by a worker: ("mop", cell), ("sweep", cell), ("plant", cell)
        self.errands: deque[tuple[str, tuple[int, int]]] = deque()
        self.debris: dict[tuple[int, int], float] = {}  # kg lying on a cell (dug material), until swept
        self.plant_orders: dict[tuple[int, int], str] = {}  # plot cell -> seed ordered (a FetchChore)
        # per-cavity temperature (°C) keyed by a cavity's first cell; recomputed when cells change
        self._cavities: dict[tuple[int, int], tuple[int, int]] | None = None
        self._cavities_old: dict[tuple[int, int], tuple[int, int]] = {}
        self.cavity_temp: dict[tuple[int, int], float] = {}
        self.circuit_stats: list[dict[str, Any]] = []
        self.unconnected = {"generators": 0, "consumers": 0, "batteries": 0}
        # utility kind -> the connections laid between neighbouring cells (as the game's utility
        # tools add them: WireBuildTool/UtilityBuildTool.ApplyPathToConduitSystem, consecutive cells)
        self.links: dict[str, set[frozenset[tuple[int, int]]]] = {k: set() for k in UTILITIES}
        self.research_current: str | None = None
        self.research_queue: list[str] = []  # after research_current, as the game's Research.queuedTech
        self.research_progress: dict[str, float] = {}  # points of techs started and left
        self.research_points = 0.0
        self.completed: list[str] = []
        self.stored_j = 0.0
        self.produced_w = self.consumed_w = 0.0
        # the daily reports (the game's ReportManager): per cycle, oxygen kg, kcal and J made and used;
        # the last REPORTS_KEPT, the newest is the cycle in progress
        self.reports: list[dict[str, Any]] = [self._new_report(0)]
        self.temperature = 24.0
        self.alerts: list[dict[str, str]] = []
        self.geysers = [
            {
                "id": "geyser-1",
                "name": "Cool Steam Vent",
                "x": 8,
                "y": 8,
                "state": "idle",
                "element": "Steam",
                "emitRate": 0.0,
            }
        ]
        self.critters = [{"name": "Hatch", "species": "Hatch", "x": cx + 5, "y": cy, "isWild": True}]

    # ---- queries (the API copies under the lock; nothing here writes) ----

    def cell(self, x: int, y: int) -> str:
        return self.cells[y][x] if 0 <= x < self.width and 0 <= y < self.height else "N"

    def occupied(self) -> dict[tuple[int, int], Building]:
        """The cells buildings stand in (utilities lie on layers of their own, as in the game)."""
        out = {}
        for b in self.buildings:
            if BUILDINGS[b.id].utility:
                continue
            for c in b.cells():
                out[c] = b
        return out

    def cavities(self) -> dict[tuple[int, int], tuple[int, int]]:
        """cell -> its cavity's key (the first cell in (y, x) order): connected open cells ('.', '~'),
        walled by solid cells and built Tiles and Doors (RoomProber.CavityFloodFiller.IsWall: solid,
        or a door's cell)."""
        if self._cavities is not None:
            return self._cavities
        walls = {c for b in self.buildings if b.built and b.id in ("Tile", "Door") for c in b.cells()}
        out: dict[tuple[int, int], tuple[int, int]] = {}
        for y in range(self.height):
            for x in range(self.width):
                if (x, y) in out or self.cells[y][x] in "#N" or (x, y) in walls:
                    continue
                _flood(out, (x, y), (x, y), lambda _c, o: self.cell(*o) not in "#N" and o not in walls)
        old = self.cavity_temp
        self.cavity_temp = {}
        for key in set(out.values()):
            # a new cavity takes the temperature of the old cavity its first cell was in
            prev = self._cavities_old.get(key, key)
            self.cavity_temp[key] = old.get(prev, self.temperature)
        self._cavities = out
        return out

    def _cells_changed(self) -> None:
        self._cavities_old = self._cavities or {}
        self._cavities = None

    def rooms(self) -> list[dict[str, Any]]:
        """The rooms (cavities of at most MAX_ROOM_CELLS cells, RoomProber) with a duplicant in them
        (the duplicants stand at the printing pod): cells, bounding box and mean temperature."""
        cav = self.cavities()
        hq = next((b for b in self.buildings if b.id == "Headquarters"), None)
        occupied = {cav.get((hq.x, hq.y))} if hq and self.dupes else set()
        members: dict[tuple[int, int], list[tuple[int, int]]] = {}
        for c, key in cav.items():
            members.setdefault(key, []).append(c)
        out = []
        for key in sorted(k for k in occupied if k is not None):
            cells = members[key]
            if len(cells) > MAX_ROOM_CELLS:
                continue
            xs, ys = [c[0] for c in cells], [c[1] for c in cells]
            out.append(
                {
                    "room": "Neutral",
                    "x": min(xs),
                    "y": min(ys),
                    "width": max(xs) - min(xs) + 1,
                    "height": max(ys) - min(ys) + 1,
                    "cells": len(cells),
                    "temperature": round(self.cavity_temp.get(key, self.temperature), 2),
                    "duplicants": len(self.dupes),
                }
            )
        return out

    def available_techs(self) -> list[str]:
        return [
            t for t, (_, _, pre) in TECHS.items() if t not in self.completed and all(p in self.completed for p in pre)
        ]

    # ---- the game thread ----

    def enqueue(self, kind: str, args: dict[str, Any], body: dict[str, Any] | None = None) -> int | None:
        """Queues an action for the game thread: its id (its outcome starts "queued"), None when full."""
        with self.lock:
            if len(self.queue) >= QUEUE_MAX:
                return None
            self.last_action_id += 1
            aid = self.last_action_id
            self.outcomes[aid] = {
                "id": aid,
                "action": kind,
                "state": "queued",
                "body": dict(body if body is not None else args),
            }
            for old in list(self.outcomes)[:-OUTCOMES_KEPT]:
                del self.outcomes[old]
            self.queue.append((aid, kind, args))
            return aid

    def step(self, ticks: int = 1) -> None:
        for _ in range(ticks):
            with self.lock:
                if self.paused:
                    self._drain()
                else:
                    self._tick()

    def _drain(self) -> None:
        """Applies the queued actions and records their outcomes."""
        while self.queue:
            aid, kind, args = self.queue.popleft()
            refused = self._apply(kind, args)
            if aid in self.outcomes:
                self.outcomes[aid] = {
                    **self.outcomes[aid],
                    "state": "refused" if refused else "applied",
                    **({"reason": refused} if refused else {}),
                }

    def _alert(self, kind: str, message: str, severity: str = "warning") -> None:
        self.alerts.append({"type": kind, "message": message, "severity": severity})
        del self.alerts[:-20]

    def _apply(self, kind: str, a: dict[str, Any]) -> str | None:
        """Applies one action: None when the game takes the order, else why it refuses ("reason: details"),
        as the glue's GameActions answers (oni-mod/glue/GameActions.cs)."""
        if kind == "dig":
            for y in range(a["y"], a["y"] + a["height"]):
                for x in range(a["x"], a["x"] + a["width"]):
                    if self.cell(x, y) == "#" and (x, y) not in self.digs:
                        self.digs.append((x, y))
            return None
        elif kind == "build":
            bid, x, y = a["buildingId"], a["x"], a["y"]
            o = a.get("orientation", "Neutral")
            cells = footprint(bid, x, y, o)
            occ = self.occupied()
            bad = [c for c in cells if self.cell(*c) in "#N" or c in occ]
            tech = BUILDINGS[bid].tech
            # the game's order: research (the build menu) before the placement check
            if tech and tech not in self.completed:
                return f"not_researched: research {tech} first"
            if bad:
                return f"invalid_location: cells {bad[:3]} are not clear"
            self.buildings.append(Building(bid, x, y, priority=a.get("priority", 5), orientation=o))
            self._cells_changed()
            return None
        elif kind in ("plant", "mop", "sweep", "harvest"):
            return self._order(kind, a)
        elif kind == "speed":
            if "paused" in a:
                self.paused = a["paused"]
            if "speed" in a:
                self.speed = a["speed"]
            return None
        elif kind == "utility":
            return self._lay(a["kind"], [tuple(c) for c in a["path"]], a.get("priority", 5))
        elif kind == "cancel":
            x0, y0, w, h = a["x"], a["y"], a.get("width", 1), a.get("height", 1)
            inside = lambda c: x0 <= c[0] < x0 + w and y0 <= c[1] < y0 + h  # noqa: E731
            digs = deque(c for c in self.digs if not inside(c))
            kept = [b for b in self.buildings if b.built or not inside((b.x, b.y))]
            errands = deque(e for e in self.errands if not inside(e[1]))
            plants = {c: v for c, v in self.plant_orders.items() if not inside(c)}
            if (len(digs), len(kept), len(errands), len(plants)) == (
                len(self.digs),
                len(self.buildings),
                len(self.errands),
                len(self.plant_orders),
            ):
                return "nothing_there: no order in the area"
            # digs, constructions, mop/sweep errands and seed orders not done yet
            self.digs, self.buildings, self.errands, self.plant_orders = digs, kept, errands, plants
            self._cells_changed()
            return None
        elif kind == "deconstruct":
            x0, y0, w, h = a["x"], a["y"], a.get("width", 1), a.get("height", 1)
            kept = [
                b
                for b in self.buildings
                if b.id == "Headquarters" or not any(x0 <= cx < x0 + w and y0 <= cy < y0 + h for cx, cy in b.cells())
            ]
            if len(kept) == len(self.buildings):
                return "nothing_there: no building to deconstruct in the area"
            self.buildings = kept
            self._cells_changed()
            return None
        elif kind == "prioritize":
            x0, y0, w, h = a["x"], a["y"], a.get("width", 1), a.get("height", 1)
            hit = [b for b in self.buildings if x0 <= b.x < x0 + w and y0 <= b.y < y0 + h]
            for b in hit:
                b.priority = a["priority"]
            return None if hit else "nothing_there: nothing with a priority in the area"
        elif kind == "research":
            tech = a["techId"]
            if tech in self.completed:
                return f"already_researched: {tech}"
            # as Research.SetActiveResearch(tech, clearQueue: true): the missing prerequisites first
            self.research_queue = self._with_prerequisites(tech)
            self._research(self.research_queue.pop(0))
            return None
        elif kind == "schedule":
            return self._schedule(a.get("duplicant"), a.get("schedule"), a.get("blocks"))
        return f"unknown_action: {kind}"

    def _area(self, a: dict[str, Any]) -> list[tuple[int, int]]:
        return [
            (x, y)
            for y in range(a["y"], a["y"] + a.get("height", 1))
            for x in range(a["x"], a["x"] + a.get("width", 1))
        ]

    def _plot(self, cell: tuple[int, int]) -> Building | None:
        return next((b for b in self.buildings if BUILDINGS[b.id].plot and b.built and (b.x, b.y) == cell), None)

    def _order(self, kind: str, a: dict[str, Any]) -> str | None:
        """plant, mop, sweep, harvest: as the game's orders (the glue's GameActions names the game code)."""
        if kind == "plant":
            # PlantablePlot.CreateOrder(seed): a built plot without a plant and with no order yet; the
            # seed is fetched from stock by a duplicant (the order waits while there is none)
            cell = (a["x"], a["y"])
            if a["seed"] not in SEEDS:  # Assets.GetPrefab(seed) is no CropSeed
                return f"unknown_seed: {a['seed']} is no seed a plot takes (e.g. {', '.join(sorted(SEEDS))})"
            plot = self._plot(cell)
            if plot is None:
                return "nothing_there: no built planter box or farm tile at the cell"
            if plot.seed is not None or cell in self.plant_orders:
                return f"occupied: the plot already has {plot.seed or self.plant_orders[cell]}"
            self.plant_orders[cell] = a["seed"]
            self.errands.append(("plant", cell))
            return None
        cells = self._area(a)
        if kind == "mop":
            # MopTool.OnDragTool: a liquid cell, not solid, with a solid cell under it, holding at most
            # MopTool.maxMopAmt kg; other cells of the area are skipped
            ok = [
                c
                for c in cells
                if self.cell(*c) == "~"
                and self.cell(c[0], c[1] - 1) in "#N"
                and PUDDLE_KG <= MOP_MAX_KG
                and ("mop", c) not in self.errands
            ]
            self.errands.extend(("mop", c) for c in ok)
            return None if ok else "nothing_there: no liquid on a floor to mop in the area"
        if kind == "sweep":
            # ClearTool.OnDragTool: the pickupable items lying on each cell are marked for storage
            ok = [c for c in cells if self.debris.get(c, 0.0) > 0 and ("sweep", c) not in self.errands]
            self.errands.extend(("sweep", c) for c in ok)
            return None if ok else "nothing_there: no debris to sweep in the area"
        # harvest: HarvestTool.OnDragTool sets harvest-when-ready on the plants in the area
        plots = [b for b in self.buildings if BUILDINGS[b.id].plot and b.seed and (b.x, b.y) in cells]
        for b in plots:
            b.harvest = True
        return None if plots else "nothing_there: no plant in the area"

    def _schedule(self, duplicant: str | None, schedule: str | None, blocks: list[str] | None) -> str | None:
        """As the glue: blocks for a named schedule (added when new) or for the schedule a duplicant
        is assigned to (every duplicant on it gets them); or a duplicant assigned to a schedule."""
        dupe = next((d for d in self.dupes if d.name == duplicant), None)
        if duplicant is not None and dupe is None:
            return f"unknown_duplicant: {duplicant} is no longer in the colony"
        if blocks is not None:
            target = schedule if schedule is not None else dupe.schedule if dupe else None
            if target is not None:
                self.schedules[target] = list(blocks)
            return None
        if schedule not in self.schedules or dupe is None:
            return f"unknown_schedule: no schedule named {schedule}"
        dupe.schedule = schedule
        return None

    @staticmethod
    def _new_report(cycle: int) -> dict[str, Any]:
        return {"cycle": cycle, **{k: {"produced": 0.0, "consumed": 0.0} for k in ("oxygenKg", "kcal", "energyJ")}}

    def _report(self, what: str, made: float = 0.0, used: float = 0.0) -> None:
        entry = self.reports[-1][what]
        entry["produced"] += made
        entry["consumed"] += used

    def _lay(self, kind: str, path: list[tuple[int, int]], priority: int = 5) -> str | None:
        """A utility along a path: one 1 x 1 utility building per cell without one (built by the
        duplicants like any building), and a connection between each pair of consecutive cells."""
        bid = UTILITIES[kind]
        tech = BUILDINGS[bid].tech
        if tech and tech not in self.completed:
            return f"not_researched: research {tech} first"
        solid = [c for c in path if self.cell(*c) in "#N"]
        if solid:
            return f"invalid_location: cells {solid[:3]} are solid"
        have = {(b.x, b.y) for b in self.buildings if b.id == bid}
        for x, y in path:
            if (x, y) not in have:
                self.buildings.append(Building(bid, x, y, priority=priority))
                have.add((x, y))
        for c1, c2 in zip(path, path[1:], strict=False):
            self.links[kind].add(frozenset((c1, c2)))
        return None

    def circuits(self, kind: str = "wire") -> dict[tuple[int, int], int]:
        """cell -> network number, over the built utility cells of a kind joined by their links."""
        bid = UTILITIES[kind]
        cells = {(b.x, b.y) for b in self.buildings if b.id == bid and b.built}
        net: dict[tuple[int, int], int] = {}
        for start in sorted(cells):
            if start in net:
                continue
            _flood(
                net, start, len(set(net.values())), lambda c, o: o in cells and frozenset((c, o)) in self.links[kind]
            )
        return net

    def _flowing(self, built: list[Building], nets: dict[str, dict[tuple[int, int], int]]) -> dict[str, set[int]]:
        """kind -> the pipe networks that carry something: a network flows when a building that was
        working last tick feeds it through its output port (the game's ConduitDispenser) and a building
        takes from it through its input port (ConduitConsumer). Contents take a tick to arrive."""
        out: dict[str, set[int]] = {}
        for kind in ("gas", "liquid"):
            net = nets[kind]
            sources = {
                net.get(b.port(d.conduit_out[1:]))
                for b in built
                if (d := BUILDINGS[b.id]).conduit_out and d.conduit_out[0] == kind and b.operational
            }
            sinks = {
                net.get(b.port(d.conduit_in[1:]))
                for b in built
                if (d := BUILDINGS[b.id]).conduit_in and d.conduit_in[0] == kind
            }
            out[kind] = {n for n in sources & sinks if n is not None}
        return out

    def _piped(self, b: Building, flowing: dict[str, set[int]], nets: dict[str, dict[tuple[int, int], int]]) -> bool:
        """A building with a conduit input runs only when a flowing pipe reaches its input port; one
        with an output only when a pipe from its output port reaches a building that takes it."""
        d = BUILDINGS[b.id]
        if d.conduit_in:
            net = nets[d.conduit_in[0]]
            if net.get(b.port(d.conduit_in[1:])) not in flowing[d.conduit_in[0]]:
                return False
        if d.conduit_out:
            kind = d.conduit_out[0]
            net = nets[kind]
            mine = net.get(b.port(d.conduit_out[1:]))
            sinks = {
                net.get(o.port(od.conduit_in[1:]))
                for o in self.buildings
                if o.built and (od := BUILDINGS[o.id]).conduit_in and od.conduit_in[0] == kind
            }
            if mine is None or mine not in sinks:
                return False
        return True

    def _power_and_production(self, built: list[Building], workers: list[Dupe]) -> float:
        """Power per circuit and every building's work for one tick; the heat added. A building that
        uses or makes power works only with a built wire on its power port (catalog ``port``, turned
        with the building); on each circuit the consumers that want to work are served one after the
        other from its generators, then its batteries, until the joules run out (the game's
        CircuitManager.Sim200msLast), the rest stay unpowered; what is left charges the batteries."""
        r = self.resources
        net = self.circuits("wire")
        nets = {k: self.circuits(k) for k in ("gas", "liquid")}
        flowing = self._flowing(built, nets)

        def circuit(b: Building) -> int | None:
            port = BUILDINGS[b.id].port
            return net.get(b.port(port)) if port else None

        def inputs(b: Building) -> bool:
            return all(r.get(t, 0) >= q for t, q in BUILDINGS[b.id].consumes) and self._piped(b, flowing, nets)

        circuits: dict[int, dict[str, Any]] = {}
        self.unconnected = {"generators": 0, "consumers": 0, "batteries": 0}

        def info(c: int) -> dict[str, Any]:
            return circuits.setdefault(
                c,
                {
                    "id": c,
                    "generatedW": 0.0,
                    "usedW": 0.0,
                    "neededW": 0.0,
                    "storedJ": 0.0,
                    "capacityJ": 0.0,
                    "maxSafeW": WIRE_MAX_W,
                    "generators": 0,
                    "consumers": 0,
                    "batteries": 0,
                    "unpowered": 0,
                    "_bat": [],
                    "_want": [],
                },
            )

        for b in built:
            d, c = BUILDINGS[b.id], circuit(b)
            b.powered = False
            role = "batteries" if d.battery else "generators" if d.power > 0 else "consumers" if d.power < 0 else None
            if role is None:
                continue
            if c is None:
                self.unconnected[role] += 1
                continue
            i = info(c)
            i[role] += 1
            if d.battery:
                i["_bat"].append(b)
                i["storedJ"] += b.stored
                i["capacityJ"] += d.battery
            elif d.power > 0 and inputs(b):
                i["generatedW"] += d.power
            elif d.power < 0:
                i["neededW"] += -d.power
                if inputs(b):
                    i["_want"].append(b)
        for i in circuits.values():
            joules = i["generatedW"] + i["storedJ"]  # one tick is one second: W -> J
            for b in i["_want"]:
                need = -BUILDINGS[b.id].power
                if joules >= need:
                    joules -= need
                    b.powered = True
                    i["usedW"] += need
            i["unpowered"] = i["consumers"] - sum(1 for b in i["_want"] if b.powered)
            left = min(i["capacityJ"], max(0.0, joules))
            for b in i["_bat"]:  # shared out by capacity
                b.stored = left * BUILDINGS[b.id].battery / i["capacityJ"]
            i["storedJ"] = left
        self.produced_w = sum(i["generatedW"] for i in circuits.values())
        self.consumed_w = sum(i["usedW"] for i in circuits.values())
        self._report("energyJ", self.produced_w, self.consumed_w)
        self.stored_j = sum(i["storedJ"] for i in circuits.values())
        self.circuit_stats = [
            {k: v for k, v in i.items() if not k.startswith("_")} for _, i in sorted(circuits.items())
        ]
        heat: dict[tuple[int, int] | None, float] = {}
        cav = self.cavities()
        for b in built:
            d, c = BUILDINGS[b.id], circuit(b)
            if d.utility:
                b.operational = True
                continue
            if d.power > 0:
                ok = c is not None and inputs(b)
            elif d.power < 0:
                ok = b.powered
            else:
                ok = inputs(b) and (not d.battery or c is not None)
            if d.plot:
                ok = self._grow(b)
            b.operational = ok
            if not ok:
                continue
            for t, q in d.consumes:
                r[t] -= q
            for t, q in d.produces:
                r[t] = r.get(t, 0.0) + q
                if t in ("Oxygen", "Food"):
                    self._report("oxygenKg" if t == "Oxygen" else "kcal", made=q)
            key = cav.get((b.x, b.y))
            heat[key] = heat.get(key, 0.0) + d.heat
            if b.id == "ResearchCenter" and self.research_current and workers:
                self.research_points += 0.1
        # each room warms with the heat of its working buildings (over its cells) and cools toward 24 °C
        sizes: dict[tuple[int, int], int] = {}
        for key in cav.values():
            sizes[key] = sizes.get(key, 0) + 1
        for key, temp in self.cavity_temp.items():
            self.cavity_temp[key] = temp + heat.get(key, 0.0) * 0.1 / sizes.get(key, 1) - (temp - 24.0) * 0.001
        return sum(heat.values())

    def _grow(self, plot: Building) -> bool:
        """A planted plot grows one second; ripe and marked for harvest, its crop is harvested (kcal
        into the food stock) and it grows again. Working = something grows in it."""
        if plot.seed is None:
            return False
        _, kcal, seconds = SEEDS[plot.seed]
        plot.growth = min(seconds, plot.growth + 1)
        if plot.growth >= seconds and plot.harvest:
            self.resources["Food"] += kcal
            self._report("kcal", made=kcal)
            plot.growth = 0
        return True

    def _errand(self, kind: str, c: tuple[int, int]) -> None:
        x, y = c
        if kind == "mop" and self.cell(x, y) == "~":
            self.cells[y][x] = "."  # the liquid is bottled and stored (a bottle of it: the colony's water)
            self.resources["Water"] += PUDDLE_KG
            self._cells_changed()
        elif kind == "sweep":
            self.debris.pop(c, None)  # carried to storage: still in the world inventory
        elif kind == "plant":
            seed, plot = self.plant_orders.get(c), self._plot(c)
            if seed is None or plot is None:
                self.plant_orders.pop(c, None)
                return
            if self.resources.get(seed, 0.0) < 1.0:
                self.errands.append(("plant", c))  # no seed in stock: the fetch waits
                return
            self.resources[seed] -= 1.0
            plot.seed, plot.growth, plot.harvest = seed, 0, True
            del self.plant_orders[c]

    def _research(self, tech: str | None) -> None:
        """Switches the active research; a tech keeps the points it had (the game keeps a TechInstance
        per tech, with its progress)."""
        if self.research_current:
            self.research_progress[self.research_current] = self.research_points
        self.research_current = tech
        self.research_points = self.research_progress.pop(tech, 0.0) if tech else 0.0

    def _with_prerequisites(self, tech: str) -> list[str]:
        """The tech after its missing prerequisites, each after its own."""
        out: list[str] = []

        def visit(t: str) -> None:
            for p in TECHS[t][2]:
                if p not in self.completed and p not in out:
                    visit(p)
            if t not in out:
                out.append(t)

        visit(tech)
        return out

    def _tick(self) -> None:
        self.tick_count += 1
        self._drain()
        if self.paused:  # paused by an action just applied
            return
        r = self.resources
        hour = (self.tick_count % CYCLE_TICKS) * 24 // CYCLE_TICKS
        workers = [d for d in self.dupes if self.schedules[d.schedule][hour] == "work"]
        # digging: each worker digs one cell every DIG_TICKS ticks
        if self.digs and self.tick_count % DIG_TICKS == 0:
            for _ in workers:
                if not self.digs:
                    break
                x, y = self.digs.popleft()
                if self.cells[y][x] == "#":
                    self.cells[y][x] = "."
                    # the dug material drops on the floor: reachable (in the world inventory) until swept
                    r["SandStone"] += DEBRIS_KG
                    self.debris[(x, y)] = self.debris.get((x, y), 0.0) + DEBRIS_KG
                    self._cells_changed()
        # errands (mop, sweep, plant): each worker does one every DIG_TICKS ticks, after the digs
        if self.errands and not self.digs and self.tick_count % DIG_TICKS == 0:
            for _ in workers:
                if not self.errands:
                    break
                self._errand(*self.errands.popleft())
        # construction, then power and production
        for b in self.buildings:
            if not b.built and workers:
                b.progress += 1
                if b.built and b.id in ("Tile", "Door"):  # a new wall: the cavities change
                    self._cells_changed()
        built = [b for b in self.buildings if b.built]
        heat = self._power_and_production(built, workers)
        if self.research_current and self.research_points >= TECHS[self.research_current][1]:
            self.completed.append(self.research_current)
            self._alert("research_complete", f"{self.research_current} researched", "info")
            self.research_current, self.research_points = None, 0.0
            self._research(self.research_queue.pop(0) if self.research_queue else None)
        self.temperature += heat * 0.001 - (self.temperature - 24.0) * 0.001
        # duplicants
        for d in self.dupes:
            if r["Oxygen"] >= O2_PER_DUPE:
                r["Oxygen"] -= O2_PER_DUPE
                self._report("oxygenKg", used=O2_PER_DUPE)
                d.oxygen = min(100.0, d.oxygen + 5.0)
            else:
                d.oxygen = max(0.0, d.oxygen - 2.0)
            d.calories = max(0.0, d.calories - CAL_PER_TICK)
            if d.calories < 300_000 and r["Food"] >= 1000:
                r["Food"] -= 1000
                self._report("kcal", used=1000)
                d.calories += 1000_000
            sleeping = self.schedules[d.schedule][hour] == "sleep"
            d.stamina = min(100.0, d.stamina + 0.2) if sleeping else max(0.0, d.stamina - 0.03)
            d.stress = max(
                0.0,
                min(
                    100.0,
                    d.stress
                    + (0.05 if d.oxygen < 50 else 0.0)
                    + (0.02 if d.calories < 100_000 else 0.0)
                    + (0.02 if self.temperature > 35 else 0.0)
                    - 0.005,
                ),
            )
        r["Oxygen"] = max(0.0, r["Oxygen"])
        if self.tick_count % CYCLE_TICKS == 0:
            self.reports = [*self.reports, self._new_report(self.tick_count // CYCLE_TICKS)][-REPORTS_KEPT:]
            if r["Oxygen"] < 10:
                self._alert("no_oxygen", "the base air is running out of oxygen", "bad")
            if r["Food"] < 3000:
                self._alert("low_food", "less than a cycle of food for the colony", "warning")
