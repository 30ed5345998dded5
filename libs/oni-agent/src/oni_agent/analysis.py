"""Colony analysis: oxygen, food, power, temperature, water (pure functions of the API's states).

``analyze(view)`` takes the answers of /api/state/{game,resources,duplicants,buildings} (and
optionally alert) and returns findings, each with the measured value, the threshold it crossed,
a level (ok / warning / critical) and a recommendation an agent can act on. Thresholds are in
``THRESHOLDS`` (documented in docs/oni/toolchain.md).
"""

from __future__ import annotations

from typing import Any

KCAL_PER_DUPE_CYCLE = 1000.0
CYCLE_SECONDS = 600.0
LEVELS = ("ok", "warning", "critical")

THRESHOLDS: dict[str, dict[str, float]] = {
    "oxygen_kg_per_dupe": {"warning": 20.0, "critical": 5.0},  # breathable stock, below is bad
    "breath_percent": {"warning": 80.0, "critical": 50.0},  # lowest duplicant breath
    "food_cycles": {"warning": 3.0, "critical": 1.0},  # stored kcal / colony need per cycle
    "calories": {"warning": 500_000.0, "critical": 200_000.0},  # lowest duplicant, in cal
    "power_margin_w": {"warning": 0.0, "critical": -1.0},  # produced - consumed
    "battery_seconds": {"warning": 300.0, "critical": 60.0},  # stored J / deficit W
    "temperature_avg_c": {"warning": 30.0, "critical": 38.0},  # above is bad
    "temperature_max_c": {"warning": 50.0, "critical": 75.0},
    "room_temperature_c": {"warning": 30.0, "critical": 38.0},  # an occupied room's mean, above is bad
    "circuit_load": {"warning": 0.9, "critical": 1.0},  # W used / the wires' safe W, above is bad
    "water_cycles": {"warning": 3.0, "critical": 1.0},  # stored kg / use per cycle
}

O2_SOURCES = ("Electrolyzer", "MineralDeoxidizer", "AlgaeHabitat")
WATER_USE_KG_S = {"Electrolyzer": 1.0, "AlgaeHabitat": 0.3, "MicrobeMusher": 0.05, "FlushToilet": 0.01}


def _amount(resources: list[dict[str, Any]], tag: str) -> float:
    return sum(float(r.get("amount") or 0) for r in resources if r.get("tag") == tag)


def _below(value: float, key: str) -> str:
    t = THRESHOLDS[key]
    return "critical" if value < t["critical"] else "warning" if value < t["warning"] else "ok"


def _above(value: float, key: str) -> str:
    t = THRESHOLDS[key]
    return "critical" if value > t["critical"] else "warning" if value > t["warning"] else "ok"


def _finding(
    area: str,
    level: str,
    metric: str,
    value: float | None,
    threshold: float | None,
    message: str,
    recommendation: str = "",
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "area": area,
        "level": level,
        "metric": metric,
        "value": None if value is None else round(value, 2),
        "message": message,
    }
    if threshold is not None and level != "ok":
        out["threshold"] = threshold
    if recommendation and level != "ok":
        out["recommendation"] = recommendation
    return out


def _worst(*levels: str) -> str:
    return max(levels, key=LEVELS.index) if levels else "ok"


def _measure(game: dict[str, Any], key: str, field: str, resources: list[dict[str, Any]], tag: str) -> float:
    """A colony measure from /game (the game's meaning: breathable kg over the world's cells, kcal of
    reachable food) when the mod sends it; else the old reading of /resources (which, in the game,
    is the item inventory: no air, food in kg)."""
    v = game.get(key)
    if isinstance(v, dict) and isinstance(v.get(field), (int, float)):
        return float(v[field])
    return _amount(resources, tag)


def analyze(view: dict[str, Any]) -> dict[str, Any]:
    game = view.get("game") or {}
    resources = view.get("resources") or []
    dupes = view.get("duplicants") or []
    buildings = view.get("buildings") or []
    working = [b for b in buildings if b.get("isOperational") and not b.get("underConstruction")]
    ids = [b["id"] for b in working]
    n = max(1, len(dupes))
    f: list[dict[str, Any]] = []

    # oxygen
    o2 = _measure(game, "oxygen", "breathableKg", resources, "Oxygen") / n
    lvl = _below(o2, "oxygen_kg_per_dupe")
    sources = [i for i in ids if i in O2_SOURCES]
    rec = (
        "build a MineralDeoxidizer (needs Algae) or the 'spom' blueprint (research ImprovedOxygen, AdvancedPowerRegulation)"
        if not sources
        else "add another oxygen source or check that the existing ones have power and input"
    )
    f.append(
        _finding(
            "oxygen",
            lvl,
            "oxygen_kg_per_dupe",
            o2,
            THRESHOLDS["oxygen_kg_per_dupe"][lvl] if lvl != "ok" else None,
            f"{o2:.1f} kg of oxygen per duplicant; {len(sources)} working oxygen source(s)",
            rec,
        )
    )
    if not sources:
        f.append(_finding("oxygen", "warning", "oxygen_sources", 0, 1, "no working oxygen source", rec))
    if dupes:
        low = min(dupes, key=lambda d: float(d.get("oxygen", 100)))
        lvl = _below(float(low.get("oxygen", 100)), "breath_percent")
        f.append(
            _finding(
                "oxygen",
                lvl,
                "breath_percent",
                float(low.get("oxygen", 100)),
                THRESHOLDS["breath_percent"][lvl] if lvl != "ok" else None,
                f"lowest breath: {low.get('name')} at {float(low.get('oxygen', 100)):.0f}%",
                "dig suffocating duplicants a way to breathable air or build an oxygen source near them",
            )
        )

    # food
    food_cycles = _measure(game, "food", "kcal", resources, "Food") / (KCAL_PER_DUPE_CYCLE * n)
    lvl = _below(food_cycles, "food_cycles")
    f.append(
        _finding(
            "food",
            lvl,
            "food_cycles",
            food_cycles,
            THRESHOLDS["food_cycles"][lvl] if lvl != "ok" else None,
            f"{food_cycles:.1f} cycles of food for {len(dupes)} duplicant(s)",
            "build a MicrobeMusher or the 'farm' blueprint (research FineDining)",
        )
    )
    if dupes:
        hungry = min(dupes, key=lambda d: float(d.get("calories", 0)))
        cal = float(hungry.get("calories", 0))
        lvl = _below(cal, "calories")
        f.append(
            _finding(
                "food",
                lvl,
                "calories",
                cal,
                THRESHOLDS["calories"][lvl] if lvl != "ok" else None,
                f"hungriest: {hungry.get('name')} at {cal / 1000:.0f} kcal",
                "make sure food is reachable (RationBox) and meal time is in the schedule",
            )
        )

    # power
    power = game.get("power")
    if isinstance(power, dict):
        margin = float(power.get("produced", 0)) - float(power.get("consumed", 0))
        stored = float(power.get("stored", 0))
        lvl = "ok" if margin >= 0 else "warning"
        if margin < 0:
            seconds = stored / -margin if margin else float("inf")
            lvl = _below(seconds, "battery_seconds") if seconds != float("inf") else "ok"
            lvl = _worst(lvl, "warning")
        f.append(
            _finding(
                "power",
                lvl,
                "power_margin_w",
                margin,
                0.0 if lvl != "ok" else None,
                f"{power.get('produced', 0):.0f} W produced, {power.get('consumed', 0):.0f} W used, "
                f"{stored:.0f} J stored of {float(power.get('capacity', 0)):.0f} J",
                "build generators (the 'power' blueprint) or Batteries; switch off idle consumers",
            )
        )
        if float(power.get("capacity", 0)) == 0 and any(i in ids for i in ("ManualGenerator", "Generator")):
            f.append(
                _finding(
                    "power",
                    "warning",
                    "battery_capacity_j",
                    0.0,
                    1.0,
                    "generators without batteries waste power",
                    "build a Battery next to the generator",
                )
            )
        f += _circuits(power)
    else:
        f.append(_finding("power", "ok", "power_margin_w", None, None, "the mod does not report power"))

    # temperature
    temp = game.get("temperature")
    if isinstance(temp, dict):
        avg, mx = float(temp.get("average", 0)), float(temp.get("max", 0))
        lvl = _above(avg, "temperature_avg_c")
        f.append(
            _finding(
                "temperature",
                lvl,
                "temperature_avg_c",
                avg,
                THRESHOLDS["temperature_avg_c"][lvl] if lvl != "ok" else None,
                f"base average {avg:.1f} °C",
                "build the 'cooling' blueprint (research HVAC)",
            )
        )
        lvl = _above(mx, "temperature_max_c")
        f.append(
            _finding(
                "temperature",
                lvl,
                "temperature_max_c",
                mx,
                THRESHOLDS["temperature_max_c"][lvl] if lvl != "ok" else None,
                f"hottest spot {mx:.1f} °C",
                "insulate or cool the hottest machines",
            )
        )
        for room in temp.get("rooms") or []:
            t = float(room.get("temperature", 0))
            lvl = _above(t, "room_temperature_c")
            f.append(
                _finding(
                    "temperature",
                    lvl,
                    "room_temperature_c",
                    t,
                    THRESHOLDS["room_temperature_c"][lvl] if lvl != "ok" else None,
                    f"{room.get('room')} room at ({room.get('x')},{room.get('y')}), {room.get('cells')} cells, "
                    f"{room.get('duplicants')} duplicant(s): {t:.1f} °C",
                    "move the heat makers out of this room or cool it (the 'cooling' blueprint)",
                )
            )
    else:
        f.append(_finding("temperature", "ok", "temperature_avg_c", None, None, "the mod does not report temperature"))

    # water
    water = _amount(resources, "Water")
    use = sum(WATER_USE_KG_S.get(i, 0.0) for i in ids) * CYCLE_SECONDS
    if use > 0:
        cycles = water / use
        lvl = _below(cycles, "water_cycles")
        f.append(
            _finding(
                "water",
                lvl,
                "water_cycles",
                cycles,
                THRESHOLDS["water_cycles"][lvl] if lvl != "ok" else None,
                f"{water:.0f} kg of water, {use:.0f} kg used per cycle",
                "find a water source (geysers: oni status) or build a WaterPurifier for polluted water",
            )
        )
    else:
        f.append(_finding("water", "ok", "water_cycles", None, None, f"{water:.0f} kg of water, nothing uses it"))

    for a in view.get("alert") or []:
        if a.get("severity") == "bad":
            f.append(
                _finding(
                    "alerts",
                    "critical",
                    "game_alert",
                    None,
                    None,
                    f"{a.get('type')}: {a.get('message')}",
                    "read the alert and act on it",
                )
            )
    status = _worst(*(x["level"] for x in f))
    return {"status": status, "cycle": game.get("cycle"), "duplicants": len(dupes), "findings": f}


def _circuits(power: dict[str, Any]) -> list[dict[str, Any]]:
    """Per circuit (the game's CircuitManager figures): overloaded (W used above the wires' safe W:
    the wires take damage), consumers left unpowered; and power buildings without a wire."""
    out: list[dict[str, Any]] = []
    for c in power.get("circuits") or []:
        used, safe = float(c.get("usedW", 0)), float(c.get("maxSafeW", 0))
        if safe > 0:
            load = used / safe
            lvl = _above(load, "circuit_load")
            if lvl != "ok":
                out.append(
                    _finding(
                        "power",
                        lvl,
                        "circuit_load",
                        load,
                        THRESHOLDS["circuit_load"][lvl],
                        f"circuit {c.get('id')}: {used:.0f} W used of {safe:.0f} W its wires carry safely",
                        "split the circuit or use heavi-watt wire; above the rating the wires break",
                    )
                )
        off = int(c.get("unpowered", 0))
        if off:
            lvl = "critical" if float(c.get("generatedW", 0)) == 0 and float(c.get("storedJ", 0)) == 0 else "warning"
            out.append(
                _finding(
                    "power",
                    lvl,
                    "unpowered_consumers",
                    off,
                    0,
                    f"circuit {c.get('id')}: {off} of {c.get('consumers')} consumer(s) get no power "
                    f"({float(c.get('generatedW', 0)):.0f} W generated, {float(c.get('neededW', 0)):.0f} W needed)",
                    "add a generator or batteries to this circuit, or fewer consumers",
                )
            )
    loose = (power.get("unconnected") or {}).get("consumers", 0)
    if loose:
        out.append(
            _finding(
                "power",
                "warning",
                "unconnected_consumers",
                float(loose),
                0,
                f"{loose} building(s) that need power have no wire on their power port",
                "lay a wire (oni_action utility) through each one's power port to a powered circuit",
            )
        )
    return out


def fetch_view(client: Any) -> dict[str, Any]:
    """Everything analyze() reads, from a ModClient."""
    return {
        "game": client.state("game"),
        "resources": client.state_all("resources"),
        "duplicants": client.state_all("duplicants"),
        "buildings": client.state_all("buildings"),
        "alert": client.state_all("alert"),
    }
