"""Issue 29 item 3: the executor records each batch's writes as ONE packed ``batch_writes`` record
in the batch's completion transaction instead of a ``written`` row per block. History answers
every question exactly as over rows: the same random sequence of operations, stored as rows in one
journal and as per-batch records in another (with recovery's uncertain rows, our echoes, foreign
events and per-operation packing in between), gets identical answers — and the wids are the
same numbers, so ordering across operations is unchanged. The world host's echoes of our own
writes go through the observer, which packs them per operation and transaction
(``batch_events``), against the previous observer's row per event.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcb_journal import history
from mcb_journal.db import SCHEMA_VERSION, Database
from mcb_journal.history import History, journal_stats, pack_operation, packable
from mcb_journal.observer import Observer, Page, Run

from services.journal.tests.test_history import ALL, answers

STATES = ["minecraft:air", "minecraft:stone", "minecraft:oak_planks", "minecraft:glass", "minecraft:dirt"]
POS = st.tuples(st.integers(-3, 3), st.integers(64, 66), st.integers(-3, 3))
BOXES = [ALL, (-3, 64, -3, 0, 66, 0), (1, 65, 1, 3, 65, 3), (2, 64, -3, 2, 66, 3)]

# One step: ("batch", op, positions, states) | ("uncertain", op, positions) | ("foreign", pos)
# | ("finish", op): the operation ends and is packed.
STEP = st.one_of(
    st.tuples(
        st.just("batch"),
        st.integers(0, 3),
        st.lists(POS, min_size=1, max_size=12, unique=True),
        st.lists(st.sampled_from(STATES), min_size=12, max_size=12),
    ),
    st.tuples(st.just("uncertain"), st.integers(0, 3), st.lists(POS, min_size=1, max_size=3, unique=True)),
    st.tuples(st.just("foreign"), POS),
    st.tuples(st.just("finish"), st.integers(0, 3)),
)


def _journal(path: Path) -> Database:
    db = Database(path)
    with db.tx() as c:
        for i in range(4):
            c.execute(
                "INSERT INTO operations(op_id, project_id, plan_id, plan_hash, idempotency_key, state, created_ms,"
                " updated_ms) VALUES (?, 'p', 'plan', 'h', ?, 'applying', ?, ?)",
                (f"op{i}", f"k{i}", i, i),
            )
    return db


def as_runs(events: list[tuple]) -> list[Run]:
    """A page's events as the runs a host answering in runs sends: consecutive events of one writer
    at one time (the seqs are consecutive here) are one run."""
    runs: list[Run] = []
    for seq, x, y, z, before, after, source, player, op, at, name, cause in events:
        common = (source, player, at, op, name, cause)
        last = runs[-1] if runs else None
        if (
            last is not None
            and (last.source, last.player_id, last.at_millis, last.operation_id, last.player_name, last.cause) == common
            and last.first + len(last.x) == seq
        ):
            for col, v in zip((last.x, last.y, last.z, last.before, last.after), (x, y, z, before, after), strict=True):
                col.append(v)
        else:
            runs.append(Run(seq, source, player, at, op, name, cause, [x], [y], [z], [before], [after]))
    return runs


def _observe(db: Database, events: list[tuple], packed: bool | str) -> None:
    """One observer transaction of one events_since page: through ``Observer._record`` (packed;
    ``"runs"``: the page in runs, as the embedded host answers since issue 29), or as the observer
    before issue 29 stored it, a row per event (the reference). The events are numbered here, the
    host's seqs counting on from the last page's."""
    cursor = db.get_meta("observer_cursor", "")
    first = int(db.get_meta("test_seq", "0")) + 1
    events = [(first + k, *e[1:]) for k, e in enumerate(events)]
    db.set_meta("test_seq", str(first + len(events) - 1))
    nxt = f"h:{len(cursor) + 1}"
    if packed:
        obs = Observer.__new__(Observer)
        obs._rdb = db
        page = (
            Page([], nxt, False, False, "", as_runs(events))
            if packed == "runs"
            else Page(events, nxt, False, False, "")
        )
        obs._record([(cursor, page)])
        return
    with db.tx() as c:
        if not cursor:
            c.execute(
                "INSERT INTO observed(kind, host_instance, at_ms, reason) VALUES ('gap', ?, ?, ?)",
                ("h", 1, "observation started"),
            )
        c.executemany(
            "INSERT INTO observed(kind, host_instance, host_seq, x, y, z, before, after, source,"
            " player_id, op_id, at_ms, player_name, cause) VALUES ('event',?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [("h", *e) for e in events],
        )
        db.set_meta("observer_cursor", nxt)


def _event(p: tuple, before: str, after: str, source: str, op: str, cause: str = "") -> tuple:
    return (7, *p, before, after, source, "" if source == "ours" else "bob", op, 5, "", cause)


def _run(db: Database, steps: list[tuple], packed: bool | str) -> None:
    seqs = [0, 0, 0, 0]
    last: dict[tuple[int, int, int], str] = {}
    finished: set[int] = set()
    for step in steps:
        kind = step[0]
        if kind == "batch" and step[1] not in finished:
            _, i, positions, states = step
            rows = [(*p, last.get(p, "minecraft:air"), s) for p, s in zip(positions, states, strict=False)]
            with db.tx() as c:  # the completion transaction, in the two ways
                if packed:
                    history.record_batch_writes(c, f"op{i}", seqs[i], rows, 1000 + seqs[i])
                else:
                    history.insert_write_rows(c, f"op{i}", rows, 1000 + seqs[i])
            echoes = [_event((x, y, z), b, a, "ours", f"op{i}") for x, y, z, b, a in rows]
            if len(rows) > 3:  # a player's change between two of our echoes, in the same page
                echoes.insert(2, _event(rows[0][:3], rows[0][4], "minecraft:dirt", "player", ""))
            if len(rows) > 6:  # an echo with a cause stays a row (a record has no such column)
                echoes[5] = _event(rows[4][:3], rows[4][3], rows[4][4], "ours", f"op{i}", cause="piston")
            _observe(db, echoes, packed)
            seqs[i] += 1
            last.update({(x, y, z): a for x, y, z, _, a in rows})
        elif kind == "uncertain" and step[1] not in finished:  # recovery stays row-based
            with db.tx() as c:
                history.insert_write_rows(
                    c, f"op{step[1]}", [(*p, "minecraft:air", "minecraft:stone") for p in step[2]], 7, 1
                )
        elif kind == "foreign":
            _observe(db, [_event(step[1], "minecraft:stone", "minecraft:dirt", "player", "")], packed)
        elif kind == "finish" and step[1] not in finished:
            finished.add(step[1])
            with db.tx() as c:
                c.execute("UPDATE operations SET state='applied' WHERE op_id=?", (f"op{step[1]}",))
            pack_operation(db, f"op{step[1]}")


def _everything(db: Database) -> dict:
    out = answers(db)
    h = History(db)
    for op in ("op0", "op1", "op2", "op3"):
        out[("count", op)] = h.write_count(op)
    for box in BOXES:
        out[("last_writes_in", box)] = History(db, box).last_writes_in(box)
        out[("live_events", box)] = sorted(History(db, box).live_event_tuples_in(box))
        out[("live_events_all", box)] = sorted(History(db).live_event_tuples_in(box))
        out[("region_first", box)] = {
            p: History(db, box).first_certain_write(p) for p in [(box[0], box[1], box[2]), (box[3], box[4], box[5])]
        }
    return out


@pytest.mark.parametrize("form", [True, "runs"], ids=["events", "runs"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=14))
def test_per_batch_records_answer_every_history_question_as_rows_do(tmp_path_factory, form, steps):
    base = tmp_path_factory.mktemp("eq")
    rows_db, packed_db = _journal(base / "rows.sqlite"), _journal(base / "packed.sqlite")
    try:
        _run(rows_db, steps, packed=False)
        _run(packed_db, steps, packed=form)
        assert packed_db.one("SELECT COUNT(*) AS n FROM written WHERE uncertain=0")["n"] == 0  # no row per block
        assert packed_db.one("SELECT COUNT(*) AS n FROM observed WHERE source='ours' AND cause=''")["n"] == 0
        assert _everything(packed_db) == _everything(rows_db)
        # the operations still running keep their per-batch records; packing merges them all
        for i in range(4):
            for db in (rows_db, packed_db):
                with db.tx() as c:
                    c.execute("UPDATE operations SET state='applied' WHERE op_id=?", (f"op{i}",))
                pack_operation(db, f"op{i}")
        assert packed_db.one("SELECT COUNT(*) AS n FROM batch_writes")["n"] == 0
        assert packed_db.one("SELECT COUNT(*) AS n FROM batch_events")["n"] == 0
        assert _everything(packed_db) == _everything(rows_db)
    finally:
        rows_db.close()
        packed_db.close()


def test_a_batch_record_takes_the_wids_rows_would_and_rows_after_it_continue(tmp_path):
    db = _journal(tmp_path / "j.sqlite")
    with db.tx() as c:
        history.insert_write_rows(c, "op0", [(0, 64, 0, "minecraft:air", "minecraft:stone")], 1)
        history.record_batch_writes(c, "op1", 0, [(1, 64, 0, "a", "b"), (2, 64, 0, "a", "c")], 2)
        history.insert_write_rows(c, "op0", [(3, 64, 0, "minecraft:air", "minecraft:stone")], 3, 1)
    rec = db.row("SELECT lo, hi, n, x0, x1 FROM batch_writes WHERE op_id='op1'")
    assert (rec["lo"], rec["hi"], rec["n"], rec["x0"], rec["x1"]) == (2, 3, 2, 1, 2)
    assert [r["wid"] for r in db.all("SELECT wid FROM written ORDER BY wid")] == [1, 4]
    assert [r["wid"] for r in History(db).writes_of("op1")] == [2, 3]
    assert History(db).later_write((1, 64, 0), 0) == "op1"


def test_a_batch_record_dropped_after_it_was_listed_is_read_from_its_operations_pack(tmp_path):
    """Packing commits the operation's pack before it drops the batch records: a History that
    listed a batch record before the drop reads its rows from the pack."""
    db = _journal(tmp_path / "j.sqlite")
    with db.tx() as c:
        history.record_batch_writes(c, "op0", 0, [(1, 64, 1, "minecraft:air", "minecraft:stone")], 2)
        c.execute("UPDATE operations SET state='applied' WHERE op_id='op0'")
    h = History(db)
    assert [pk.table for pk in h._write_packs()] == ["batch_writes"]  # listed, not decoded yet
    pack_operation(db, "op0")
    assert db.one("SELECT COUNT(*) AS n FROM batch_writes")["n"] == 0
    assert h.first_certain_write((1, 64, 1)) == {"wid": 1, "before": "minecraft:air"}
    assert h.last_writes_in(ALL) == {(1, 64, 1): "minecraft:stone"}


def test_a_damaged_batch_record_is_refused_never_used(tmp_path):
    db = _journal(tmp_path / "j.sqlite")
    with db.tx() as c:
        history.record_batch_writes(c, "op0", 0, [(1, 64, 1, "minecraft:air", "minecraft:stone")], 2)
        c.execute("UPDATE batch_writes SET sha256='0' || substr(sha256, 2)")
    try:
        History(db).writes_of("op0")
    except history.McbError as err:
        assert "batch_writes/op0/0" in err.message and "checksum" in err.message
    else:
        raise AssertionError("a damaged record was read")


def test_a_schema_4_journal_opens_and_its_live_rows_answer_as_before(tmp_path):
    path = tmp_path / "j.sqlite"
    db = _journal(path)
    with db.tx() as c:
        history.insert_write_rows(c, "op0", [(0, 64, 0, "minecraft:air", "minecraft:stone")], 1)
    ref = History(db).writes_of("op0")
    with db.tx() as c:  # what the v4 code left: no batch_writes table
        c.execute("DROP TABLE batch_writes")
        c.execute("UPDATE meta SET value='4' WHERE key='schema_version'")
    db.close()
    db = Database(path)
    assert db.get_meta("schema_version") == SCHEMA_VERSION == 5
    assert History(db).writes_of("op0") == ref
    with db.tx() as c:
        history.record_batch_writes(c, "op1", 0, [(0, 64, 0, "minecraft:stone", "minecraft:glass")], 2)
    assert History(db).later_write((0, 64, 0), ref[0]["wid"]) == "op1"
    db.close()


def test_stats_count_the_rows_in_per_batch_records_as_not_packed_yet(tmp_path):
    db = _journal(tmp_path / "j.sqlite")
    rows = [(x, 64, 0, "minecraft:air", "minecraft:stone") for x in range(5)]
    with db.tx() as c:
        history.record_batch_writes(c, "op0", 0, rows, 2)
        c.execute("UPDATE operations SET state='applied' WHERE op_id='op0'")
    _observe(db, [_event(r[:3], r[3], r[4], "ours", "op0") for r in rows], packed=True)
    st = journal_stats(db, tmp_path, 30.0)
    assert st["live"]["write_rows"] == 5 and st["live"]["our_event_rows"] == 5
    assert st["batch_records"] == {
        "records": 2,
        "write_rows": 5,
        "event_rows": 5,
        "bytes": st["batch_records"]["bytes"],
    }
    assert st["packable"]["write_rows"] == 5 and st["packable"]["event_rows"] == 5
    assert packable(db) == ["op0"]
    pack_operation(db, "op0")
    st = journal_stats(db, tmp_path, 30.0)
    assert st["live"]["write_rows"] == 0 and st["live"]["our_event_rows"] == 0 and packable(db) == []
    assert st["packed"]["write_rows"] == 5 and st["packed"]["event_rows"] == 5
