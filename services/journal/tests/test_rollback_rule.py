"""Issue 32 item 4: the rollback rule (rollback.py), pure: the target's last run of changes at a
position is undone when nothing came after it; later changes by others are left and listed."""

from __future__ import annotations

from mcb_journal.rollback import rollback_rule, target_of

AIR, STONE, GLASS, DIRT, TNT = "minecraft:air", "minecraft:stone", "minecraft:glass", "minecraft:dirt", "minecraft:tnt"


def ev(x, source, before, after, pid="", name="", cause=""):
    return {
        "x": x,
        "y": 64,
        "z": 0,
        "source": source,
        "before": before,
        "after": after,
        "player_id": pid,
        "player_name": name,
        "cause": cause,
    }


def g(x, before, after):
    return ev(x, "player", before, after, "uuid-g", "Griefer")


def test_the_targets_changes_are_undone_and_later_ones_by_others_are_left_and_listed():
    events = [
        g(0, STONE, AIR),  # broke stone: back to stone
        g(1, AIR, TNT),  # placed tnt: back to air
        g(2, STONE, AIR),
        ev(2, "player", AIR, GLASS, "u-a", "Alice"),  # Alice built after: left, listed
        g(3, STONE, DIRT),
        g(3, DIRT, AIR),  # two changes in a row: before the first
        ev(4, "player", AIR, GLASS, "u-a", "Alice"),
        g(4, GLASS, AIR),  # Alice's earlier edit is what he broke
        g(5, STONE, AIR),
        ev(5, "ours", AIR, STONE),  # our operation repaired it: left
        g(6, STONE, AIR),  # changed since with no event: external
        ev(7, "player", STONE, AIR, "u-a", "Alice"),  # not the target's at all: not in the plan
        g(8, DIRT, AIR),
        ev(8, "environment", AIR, DIRT, cause="other"),
        g(8, DIRT, GLASS),  # last run only
    ]
    current = {
        (x, 64, 0): s
        for x, s in [(0, AIR), (1, TNT), (2, GLASS), (3, AIR), (4, AIR), (5, STONE), (6, DIRT), (7, AIR), (8, GLASS)]
    }
    keep, conflicts = rollback_rule(events, target_of("griefer", ""), current)
    assert sorted((p[0], cur, want) for p, cur, want in keep) == [
        (0, AIR, STONE),
        (1, TNT, AIR),
        (3, AIR, STONE),
        (4, AIR, GLASS),
        (8, GLASS, DIRT),
    ]
    assert [(c.pos[0], c.source, c.current, c.desired) for c in conflicts] == [
        (2, "player", GLASS, STONE),
        (5, "ours", STONE, STONE),
        (6, "external", DIRT, STONE),
    ]


def test_a_cause_and_a_player_id_select_their_changes():
    events = [ev(0, "environment", STONE, AIR, cause="explosion"), ev(1, "environment", STONE, AIR), g(2, STONE, AIR)]
    current = {(x, 64, 0): AIR for x in range(3)}
    keep, _ = rollback_rule(events, target_of("", "explosion"), current)
    assert [p[0] for p, _, _ in keep] == [0]
    keep, _ = rollback_rule(events, target_of("", "other"), current)  # no cause (an older host) is "other"
    assert [p[0] for p, _, _ in keep] == [1]
    keep, _ = rollback_rule(events, target_of("uuid-g", ""), current)
    assert [p[0] for p, _, _ in keep] == [2]


def test_a_position_already_as_before_is_not_written():
    keep, conflicts = rollback_rule([g(0, STONE, AIR), g(0, AIR, STONE)], target_of("Griefer", ""), {(0, 64, 0): STONE})
    assert keep == [] and conflicts == []
