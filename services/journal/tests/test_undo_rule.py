"""undo.undo_rule: which positions an undo restores, without a database or a world."""

from __future__ import annotations

from mcb_journal.undo import UndoWrite, undo_rule

AIR, STONE, DIRT, GLASS = "minecraft:air", "minecraft:stone", "minecraft:dirt", "minecraft:glass"


def test_untouched_writes_return_to_their_previous_state_top_down() -> None:
    keep, conflicts = undo_rule(
        [
            UndoWrite((0, 1, 0), AIR, STONE, STONE),
            UndoWrite((0, 3, 0), DIRT, STONE, STONE),
            UndoWrite((1, 3, 0), AIR, GLASS, GLASS),
        ]
    )
    assert conflicts == []
    assert keep == [((0, 3, 0), STONE, DIRT), ((1, 3, 0), GLASS, AIR), ((0, 1, 0), STONE, AIR)]


def test_a_later_write_of_ours_wins_over_everything_else() -> None:
    keep, conflicts = undo_rule([UndoWrite((0, 0, 0), AIR, STONE, GLASS, later_op="op_2", foreign_source="player")])
    assert keep == []
    [c] = conflicts
    assert (c.pos, c.expected, c.current, c.desired, c.source) == ((0, 0, 0), STONE, GLASS, AIR, "ours")
    assert "op_2" in c.why


def test_a_foreign_event_is_a_conflict_even_when_the_block_was_changed_back() -> None:
    keep, conflicts = undo_rule(
        [
            UndoWrite((0, 0, 0), AIR, STONE, STONE, foreign_source="player"),
            UndoWrite((1, 0, 0), AIR, STONE, DIRT, foreign_source="environment"),
        ]
    )
    assert keep == []
    assert [(c.source, c.current) for c in conflicts] == [("player", STONE), ("environment", DIRT)]
    assert conflicts[0].why.endswith("(and changed back)") and "changed back" not in conflicts[1].why


def test_an_unexplained_difference_is_external() -> None:
    keep, conflicts = undo_rule([UndoWrite((0, 0, 0), AIR, STONE, DIRT), UndoWrite((0, 1, 0), AIR, STONE, STONE)])
    assert keep == [((0, 1, 0), STONE, AIR)]
    assert [(c.pos, c.source, c.desired) for c in conflicts] == [((0, 0, 0), "external", AIR)]
