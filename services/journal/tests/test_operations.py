"""operations.py: the only writer of operation state; every transition through states.py's table."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from mcb_common.errors import ErrorCode, McbError
from mcb_journal import operations
from mcb_journal.db import Database
from mcb_journal.states import OpState

SRC = Path(__file__).resolve().parents[1] / "src" / "mcb_journal"
REPO = Path(__file__).resolve().parents[3]


def _db(tmp_path: Path, state: str) -> Database:
    db = Database(tmp_path / "j.sqlite")
    with db.tx() as c:
        c.execute("INSERT INTO projects(project_id, name, owner_player_id, area_json) VALUES ('p','p','alice','{}')")
        c.execute(
            "INSERT INTO operations(op_id, project_id, plan_id, plan_hash, idempotency_key, state, planned,"
            " batches_total, message, created_ms, updated_ms) VALUES ('op_1','p','pl','h','k',?,1,1,'m',1,1)",
            (state,),
        )
    return db


def _state(db: Database) -> tuple[str, str]:
    r = db.row("SELECT state, message FROM operations WHERE op_id='op_1'")
    return r["state"], r["message"]


@pytest.mark.parametrize(
    ("start", "new"),
    [("applied", "applying"), ("recovery_required", "applied"), ("queued", "applied"), ("failed", "recovery_required")],
)
def test_an_illegal_transition_is_refused_and_nothing_changes(tmp_path, start, new) -> None:
    db = _db(tmp_path, start)
    with pytest.raises(McbError) as e:
        operations.set_state(db, "op_1", OpState(new), message="changed")
    assert e.value.code == ErrorCode.INTERNAL and f"{start} -> {new} is not allowed" in e.value.message
    assert _state(db) == (start, "m")
    with pytest.raises(McbError), db.tx() as c:  # inside the caller's transaction too
        operations.set_state(db, "op_1", OpState(new), message="changed", conn=c)
    assert _state(db) == (start, "m")


def test_the_abandon_transition_is_in_the_table_and_written_in_the_callers_transaction(tmp_path) -> None:
    db = _db(tmp_path, "recovery_required")
    with db.tx() as c:
        operations.set_state(db, "op_1", OpState.FAILED, message="abandoned", conn=c)
    assert _state(db) == ("failed", "abandoned")


def test_counters_and_unknown_operation(tmp_path) -> None:
    db = _db(tmp_path, "queued")
    operations.set_state(db, "op_1", OpState.APPLYING, message="applying", batches_done=0, written=0)
    assert _state(db) == ("applying", "applying")
    with pytest.raises(McbError) as e:
        operations.set_state(db, "op_2", OpState.APPLYING)
    assert e.value.code == ErrorCode.NOT_FOUND


UPDATE_OPS = re.compile(r"\bUPDATE\s+operations\s+SET\b", re.IGNORECASE)
SETS_STATE = re.compile(r"(?<![\w.])state\s*=", re.IGNORECASE)


def state_writers(path: Path) -> list[str]:
    """`UPDATE operations SET ... state=` statements in one module (or a dynamic SET list: an
    f-string could write the state without showing it)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text, dynamic = node.value, False
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "{…}" for v in node.values)
            dynamic = True
        else:
            continue
        m = UPDATE_OPS.search(text)
        if m and (SETS_STATE.search(text, m.end()) or (dynamic and "{…}" in text[m.end() :])):
            found.append(f"{path}:{node.lineno}: {text.strip()[:80]}")
    return found


def test_only_operations_py_writes_operation_state() -> None:
    sources = [p for root in ("services", "libs") for p in (REPO / root).glob("*/src/**/*.py")]
    assert SRC / "core.py" in sources
    writers = [w for p in sources if p != SRC / "operations.py" for w in state_writers(p)]
    assert writers == []
    assert state_writers(SRC / "operations.py")  # the check sees the one writer


def test_the_static_check_catches_a_raw_state_update(tmp_path) -> None:
    bad = tmp_path / "writer.py"
    bad.write_text(
        'SQL = ("UPDATE operations SET message=?, "\n       "state=? WHERE op_id=?")\n'
        'OK = "UPDATE operations SET cancel_requested=1 WHERE op_id=?"\n'
        'SETS = f"UPDATE operations SET {cols} WHERE op_id=?"\n'
    )
    assert len(state_writers(bad)) == 2
