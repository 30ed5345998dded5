"""The journal re-reads the runtime config's projects when the file changes (in-game `/ai project
create` and `/ai area set` write it: mcb_bridge/chat/projects.py)."""

from __future__ import annotations

import json
import os

import pytest
from mcb_common.errors import McbError
from mcb_journal.blobs import BlobStore
from mcb_journal.core import JournalCore
from mcb_journal.db import Database
from mcb_journal.projects import Caller


def _write(path, projects, mtime_ns: int) -> None:
    path.write_text(json.dumps({"projects": projects}))
    os.utime(path, ns=(mtime_ns, mtime_ns))  # a distinct stamp even within one clock tick


def _area(x0: int, x1: int) -> dict:
    return {"min": {"x": x0, "y": -64, "z": 0}, "max": {"x": x1, "y": 319, "z": 10}}


def test_projects_follow_the_config_file(tmp_path) -> None:
    cfg = tmp_path / "config.json"
    _write(cfg, [{"project_id": "p", "owner_player_id": "alice", "area": _area(0, 10)}], 1_000_000_000)
    core = JournalCore(
        db=Database(tmp_path / "j.sqlite"), blobs=BlobStore(tmp_path / "blobs"), world=None, planner=None, queue=None
    )
    core.projects.file = cfg
    assert core.projects.project_for(Caller("agent", "p", "alice")).area.max.x == 10
    with pytest.raises(McbError, match="not configured"):
        core.projects.project_for(Caller("agent", "castle", "bob"))
    _write(
        cfg,
        [
            {"project_id": "p", "owner_player_id": "alice", "area": _area(0, 20)},
            {"project_id": "castle", "owner_player_id": "bob", "area": _area(100, 140)},
        ],
        2_000_000_000,
    )
    assert core.projects.project_for(Caller("agent", "castle", "bob")).area.min.x == 100
    assert core.projects.project_for(Caller("agent", "p", "alice")).area.max.x == 20
    # a broken file is ignored (logged): the last good projects stay
    _write(cfg, [{"project_id": "p", "owner_player_id": "alice", "area": {"min": {"x": "a"}}}], 3_000_000_000)
    assert core.projects.project_for(Caller("agent", "p", "alice")).area.max.x == 20


def test_one_bad_project_does_not_keep_the_others_from_loading(tmp_path) -> None:
    core = JournalCore(
        db=Database(tmp_path / "j.sqlite"), blobs=BlobStore(tmp_path / "blobs"), world=None, planner=None, queue=None
    )
    good = {
        "project_id": "good",
        "owner_player_id": "alice",
        "area": {"min": {"x": 0, "y": 0, "z": 0}, "max": {"x": 9, "y": 9, "z": 9}},
    }
    bad = {
        "project_id": "bad",
        "owner_player_id": "bob",
        "area": {"min": {"x": 99999000, "y": 0, "z": 0}, "max": {"x": 99999100, "y": 9, "z": 9}},
    }
    core.projects.load([bad, {"project_id": "no-owner", "area": good["area"]}, good])
    ids = [r["project_id"] for r in core.db.all("SELECT project_id FROM projects")]
    assert ids == ["good"]
