"""Issue 30 item 4: a plan never changes after prepare. Its metadata (``PlanMeta``, the row's
``summary_json``) and what it was made from (``PlanOrigin``, the ``plan_origins`` table) are
written once with the plan; undo and regeneration no longer rewrite ``summary_json``. A schema-3
journal made by the previous code (``fixtures/journal_v3.sql``) moves those keys at open."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sqlite3
from pathlib import Path

import pytest
from mcb.journal.v1 import journal_pb2 as jpb
from mcb_journal.db import SCHEMA_VERSION, Database
from mcb_journal.plans import PlanMeta, PlanOrigin, RollbackOf
from mcb_journal.planstore import plan_origin

from services.journal.tests.test_executor_queue import CALLER, RecordingWorld, make_core

FIXTURE = Path(__file__).parent / "fixtures" / "journal_v3.sql"
UNDO, REGEN = "pl_f6c5f4af6c81bb10", "pl_ea8a797439824ba1"  # the fixture's undo and regeneration plans


def v3_journal(tmp_path: Path) -> Path:
    path = tmp_path / "journal.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(FIXTURE.read_text())
    conn.close()
    return path


def test_a_schema_3_journal_moves_what_undo_and_regeneration_added_into_plan_origins(tmp_path):
    path = v3_journal(tmp_path)
    before = {r[0]: json.loads(r[1]) for r in sqlite3.connect(path).execute("SELECT plan_id, summary_json FROM plans")}
    assert before[UNDO]["undo_of"] and before[REGEN]["regenerates"] and before[REGEN]["design_sha"]
    db = Database(path)
    assert db.get_meta("schema_version") == SCHEMA_VERSION == 5
    undo_of = db.row("SELECT op_id FROM operations ORDER BY created_ms LIMIT 1")["op_id"]
    assert before[UNDO]["undo_of"] == undo_of
    assert plan_origin(db, UNDO) == PlanOrigin(undo_of=undo_of)
    assert plan_origin(db, REGEN) == PlanOrigin(
        regenerates=before[REGEN]["regenerates"], design_sha=before[REGEN]["design_sha"]
    )
    assert db.row("SELECT COUNT(*) AS n FROM plan_origins")["n"] == 2  # the recipe's plan has none
    for r in db.all("SELECT plan_id, summary_json FROM plans"):
        doc = json.loads(r["summary_json"])
        assert set(doc) == {"conflicts", "observed_oid", "replaced"}, r["plan_id"]  # what prepare wrote, as it was
        meta = PlanMeta.from_json(r["summary_json"])
        assert (meta.conflicts, meta.observed_oid, dict(meta.replaced)) == (
            before[r["plan_id"]]["conflicts"],
            before[r["plan_id"]]["observed_oid"],
            before[r["plan_id"]]["replaced"],
        )
    db.close()
    again = Database(path)  # opened again: nothing moves twice
    assert again.row("SELECT COUNT(*) AS n FROM plan_origins")["n"] == 2
    again.close()


def test_a_schema_3_rollback_plan_keeps_whose_changes_it_rolls_back(tmp_path):
    """Schema-3 rollback.py (issue 32) added ``rollback_of`` to summary_json the same way."""
    path = v3_journal(tmp_path)
    conn = sqlite3.connect(path)
    doc = json.loads(conn.execute("SELECT summary_json FROM plans WHERE plan_id=?", (UNDO,)).fetchone()[0])
    doc.pop("undo_of")
    target = {"player": "griefer", "cause": "", "since_millis": 1796222000000}
    conn.execute("UPDATE plans SET summary_json=? WHERE plan_id=?", (json.dumps(doc | {"rollback_of": target}), UNDO))
    conn.commit()
    conn.close()
    db = Database(path)
    assert plan_origin(db, UNDO) == PlanOrigin(rollback_of=RollbackOf(**target))
    assert "rollback_of" not in json.loads(
        db.row("SELECT summary_json FROM plans WHERE plan_id=?", UNDO)["summary_json"]
    )
    db.close()


def test_undo_and_regeneration_store_their_plans_without_changing_any_plan_row(tmp_path):
    """A trigger refuses every UPDATE of ``plans``: the previous code's undo (undo.py) and
    regeneration (parts.py) rewrote summary_json after the insert and fail here."""
    core = make_core(tmp_path, RecordingWorld())
    with core.db.tx() as c:
        c.execute(
            "CREATE TRIGGER plans_never_change BEFORE UPDATE ON plans"
            " BEGIN SELECT RAISE(ABORT, 'plans never change after prepare'); END"
        )
    recipe = json.dumps(
        {
            "version": 1,
            "operations": [
                {
                    "type": "box",
                    "min": {"x": 0, "y": 64, "z": 0},
                    "max": {"x": 2, "y": 64, "z": 0},
                    "block": "minecraft:glass",
                }
            ],
        }
    )

    async def main() -> tuple[str, str, str, str]:
        first = await core.prepare.build_prepare(CALLER, jpb.BuildPrepareRequest(recipe_json=recipe))
        op = await core.build_apply(
            CALLER, jpb.BuildApplyRequest(plan_id=first.plan_id, plan_hash=first.plan_hash, idempotency_key="k1")
        )
        await core.executor().run_operation(op.operation_id)
        undo = await core.undo.undo_prepare(CALLER, op.operation_id)
        part = await core.parts.part_define(CALLER, "row", op.operation_id)
        regen = await core.prepare.build_prepare(
            CALLER,
            jpb.BuildPrepareRequest(recipe_json=recipe.replace("glass", "stone"), regenerate_part_id=part["part_id"]),
        )
        return op.operation_id, part["part_id"], undo.plan_id, regen.plan_id

    op_id, part_id, undo_plan, regen_plan = asyncio.run(main())
    assert plan_origin(core.db, undo_plan) == PlanOrigin(undo_of=op_id)
    regen = plan_origin(core.db, regen_plan)
    assert regen is not None and regen.regenerates == part_id and regen.undo_of is None
    design = json.loads(core.blobs.get(regen.design_sha or ""))
    assert design["positions"] == [[0, 64, 0], [1, 64, 0], [2, 64, 0]]
    assert set(design["generated"].values()) == {"minecraft:stone"}
    assert set(
        json.loads(core.db.row("SELECT summary_json FROM plans WHERE plan_id=?", undo_plan)["summary_json"])
    ) == {"conflicts", "observed_oid", "replaced"}


def test_plan_metadata_is_a_frozen_typed_object():
    meta = PlanMeta.from_json('{"conflicts": 2, "observed_oid": 7, "replaced": {"total": 0, "by_source": {}}}')
    assert meta == PlanMeta(conflicts=2, observed_oid=7, replaced={"total": 0, "by_source": {}})
    with pytest.raises(dataclasses.FrozenInstanceError):
        meta.observed_oid = 8  # type: ignore[misc]
    assert PlanMeta.from_json(meta.to_json()) == meta
    assert PlanMeta.from_json("") == PlanMeta()  # a row without metadata: nothing counted
