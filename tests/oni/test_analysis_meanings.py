"""The analysis reads the game's meanings (issue 28 Deliver 2): oxygen as breathable kg over the
world's cells and food in kcal from /api/state/game, not the item inventory of /resources, which in
the game has no air and counts food in kg of items."""

from __future__ import annotations

from oni_agent.analysis import analyze

DUPES = [{"name": "Ada", "oxygen": 100, "calories": 900_000}, {"name": "Bram", "oxygen": 100, "calories": 900_000}]


def _levels(view: dict) -> dict[str, str]:
    return {f["metric"]: f["level"] for f in analyze(view)["findings"]}


def test_a_real_colony_with_air_and_food_is_not_critical() -> None:
    # what the glue sends for a healthy colony: items only in /resources (no Oxygen, Food as 12 kg of items)
    view = {
        "game": {"oxygen": {"breathableKg": 900.0, "breathableCells": 400}, "food": {"kcal": 20_000.0}},
        "resources": [{"name": "Meal Lice", "tag": "BasicPlantFood", "amount": 12.0, "unit": "kg"}],
        "duplicants": DUPES,
        "buildings": [],
    }
    levels = _levels(view)
    assert levels["oxygen_kg_per_dupe"] == "ok" and levels["food_cycles"] == "ok"


def test_the_inventory_alone_would_read_critical() -> None:
    """The same colony read the old way (no oxygen/food in /game): both critical. This is what the
    analysis said about every real colony before."""
    view = {
        "game": {},
        "resources": [{"name": "Meal Lice", "tag": "BasicPlantFood", "amount": 12.0, "unit": "kg"}],
        "duplicants": DUPES,
        "buildings": [],
    }
    levels = _levels(view)
    assert levels["oxygen_kg_per_dupe"] == "critical" and levels["food_cycles"] == "critical"


def test_game_measures_win_over_resources() -> None:
    view = {
        "game": {"oxygen": {"breathableKg": 2.0, "breathableCells": 3}, "food": {"kcal": 100.0}},
        "resources": [
            {"name": "Oxygen", "tag": "Oxygen", "amount": 5000.0, "unit": "kg"},
            {"name": "Food", "tag": "Food", "amount": 90_000.0, "unit": "kcal"},
        ],
        "duplicants": DUPES,
        "buildings": [],
    }
    levels = _levels(view)
    assert levels["oxygen_kg_per_dupe"] == "critical" and levels["food_cycles"] == "critical"
