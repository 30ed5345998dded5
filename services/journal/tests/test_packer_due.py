"""The automatic packing pass asks first whether anything is due (history.pack_is_due, issue 29):
a journal with nothing to pack starts no child process (≈ 0.8 s of CPU each), and the answer is
``packable``'s, for every kind of live row, on a real schema-2 journal."""

from __future__ import annotations

import asyncio

from mcb_journal import packer as packer_mod
from mcb_journal.db import Database
from mcb_journal.history import pack_is_due, pack_operation, packable
from mcb_journal.packer import Packer

from services.journal.tests.test_history import v2_journal


def test_pack_is_due_answers_as_packable_does(tmp_path):
    db = Database(v2_journal(tmp_path))
    ops = packable(db)
    assert ops and pack_is_due(db, 0)
    assert not pack_is_due(db, -1)  # negative: never packed
    with db.tx() as c:  # every operation settled just now: not due for 30 s
        c.execute("UPDATE operations SET updated_ms=?", (2**62,))
    assert not pack_is_due(db, 30) and packable(db, 0) == []
    with db.tx() as c:
        c.execute("UPDATE operations SET updated_ms=1")
    for op in ops:
        assert pack_is_due(db, 0)
        pack_operation(db, op)
    assert packable(db) == [] and not pack_is_due(db, 0)
    # each kind of live row of a finished operation makes it due again, as it makes it packable
    op = ops[0]
    x, y, z = db.row("SELECT x0, y0, z0 FROM packed_writes WHERE op_id=?", op)
    for add, drop in (
        (
            (
                "INSERT INTO written(op_id, x, y, z, before, after, uncertain, at_ms) VALUES (?,?,?,?,'a','b',1,1)",
                (op, x, y, z),
            ),
            "DELETE FROM written WHERE op_id=?",
        ),
        (
            (
                "INSERT INTO observed(kind, host_instance, host_seq, x, y, z, before, after, source, player_id,"
                " op_id, at_ms) VALUES ('event','h',1,?,?,?,'a','b','ours','',?,1)",
                (x, y, z, op),
            ),
            "DELETE FROM observed WHERE op_id=?",
        ),
        (
            (
                "INSERT INTO batch_writes(op_id, seq, n, lo, hi, x0, y0, z0, x1, y1, z1, data, sha256)"
                " VALUES (?, 999, 1, 1, 1, 0, 0, 0, 0, 0, 0, X'00', '')",
                (op,),
            ),
            "DELETE FROM batch_writes WHERE op_id=?",
        ),
        (
            (
                "INSERT INTO batch_events(op_id, n, lo, hi, x0, y0, z0, x1, y1, z1, data, sha256)"
                " VALUES (?, 1, 99999, 99999, 0, 0, 0, 0, 0, 0, X'00', '')",
                (op,),
            ),
            "DELETE FROM batch_events WHERE op_id=?",
        ),
        (
            ("UPDATE batches SET entries=X'01' WHERE op_id=? AND seq=0", (op,)),
            "UPDATE batches SET entries=X'' WHERE op_id=?",
        ),
    ):
        with db.tx() as c:
            c.execute(*add)
        assert packable(db) == [op] and pack_is_due(db, 0), add[0]
        with db.tx() as c:
            c.execute(drop, (op,))
        assert packable(db) == [] and not pack_is_due(db, 0), drop


def test_a_pass_with_nothing_due_starts_no_child_process(tmp_path, monkeypatch):
    db = Database(v2_journal(tmp_path))
    started: list[str] = []
    real = packer_mod.Packer._run

    async def recording_run(self, job, pack_after_s):  # noqa: ANN001
        started.append(job.__name__)
        return await real(self, job, pack_after_s)

    monkeypatch.setattr(packer_mod.Packer, "_run", recording_run)
    p = Packer(db.path, tmp_path / "blobs")

    async def main():
        try:
            with db.tx() as c:
                c.execute("UPDATE operations SET updated_ms=?", (2**62,))
            assert await p.pack_due(30) == 0  # settled just now: nothing due, no child
            assert started == []
            with db.tx() as c:
                c.execute("UPDATE operations SET updated_ms=1")
            n = len(packable(db))
            assert await p.pack_due(0) == n > 0  # due: the child packs them
            assert started == ["_pack_due"] and packable(db) == []
            assert await p.pack_due(0) == 0 and started == ["_pack_due"]  # all packed: no child again
        finally:
            p.stop()

    asyncio.run(main())
