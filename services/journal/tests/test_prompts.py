"""Issue 32 item 3: block history names "the operation and its prompt". The chat bridge notes the
player's request beside the operations a turn started (prompts.py); only the caller player's own
operations in the caller's project take it, once; blame shows it, never another project's."""

from __future__ import annotations

import pytest
from mcb_common.errors import ErrorCode, McbError
from mcb_journal import blame
from mcb_journal.projects import Caller
from mcb_journal.prompts import PROMPT_MAX, note_prompt

from services.journal.tests.test_blame import AREA, BOX, ME, db, event, operation  # noqa: F401 - db: the fixture

ALICE = Caller("agent", "p1", "alice-uuid")


def prompts(db) -> dict[str, str]:  # noqa: F811
    return {r["op_id"]: r["prompt"] for r in db.all("SELECT op_id, prompt FROM op_extra")}


def test_only_the_callers_own_operations_take_the_prompt_once(db):  # noqa: F811
    operation(db, "op_a", "p1", "alice-uuid")
    operation(db, "op_b", "p1", "bob-uuid")  # same project, another player's
    operation(db, "op_c", "p2", "alice-uuid")  # alice's, another project
    n = note_prompt(db, ALICE, ["op_a", "op_b", "op_c", "op_missing", "op_a"], "  build a\n  tower  ")
    assert n == 1
    assert prompts(db) == {"op_a": "build a tower", "op_b": "", "op_c": ""}
    # a later turn cannot rewrite what an earlier one asked
    assert note_prompt(db, ALICE, ["op_a"], "something else") == 0
    assert prompts(db)["op_a"] == "build a tower"


def test_long_prompts_are_cut_and_bad_calls_refused(db):  # noqa: F811
    operation(db, "op_a", "p1", "alice-uuid")
    assert note_prompt(db, ALICE, ["op_a"], "x" * 1000) == 1
    assert prompts(db)["op_a"] == "x" * PROMPT_MAX
    for caller, ops, text in (
        (Caller("agent", "p1", ""), ["op_a"], "hi"),  # no player
        (ALICE, ["op_a"], "   "),  # empty
        (ALICE, [f"op_{i}" for i in range(101)], "hi"),  # too many
    ):
        with pytest.raises(McbError) as err:
            note_prompt(db, caller, ops, text)
        assert err.value.code == ErrorCode.INVALID_REQUEST


def test_history_shows_the_prompt_beside_our_operation_only_in_its_project(db):  # noqa: F811
    operation(db, "op_mine", "p1", "owner")
    operation(db, "op_other", "p2", "owner")
    note_prompt(db, Caller("agent", "p1", "owner"), ["op_mine"], "a stone tower here")
    note_prompt(db, Caller("agent", "p2", "owner"), ["op_other"], "secret plans of p2")
    event(db, 1, "ours", op="op_mine")
    event(db, 2, "ours", op="op_other")
    doc = blame.page(db, ME, AREA, blame.Query(BOX), 1 << 40)
    by_x = {e["pos"]["x"]: e for e in doc["entries"]}
    assert by_x[1]["prompt"] == "a stone tower here" and by_x[1]["operation_id"] == "op_mine"
    assert "prompt" not in by_x[2] and "operation_id" not in by_x[2]
