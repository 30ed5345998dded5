"""Projects: who may build where (the decisions: policy.py). Trusted configuration (``config.json``'s ``projects``, written by
``mcb`` and by players' ``/ai project`` commands), never the model; re-read when the file changes."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box

from . import policy
from .db import Database

log = logging.getLogger("mcb.journal")


@dataclass(frozen=True)
class Caller:
    principal: str
    project_id: str
    player_id: str


@dataclass
class Project:
    project_id: str
    name: str
    owner_player_id: str
    area: Box
    world_uuid: str = ""


class Projects:
    def __init__(self, db: Database, file: Path | None = None):
        self.db = db
        self.file = file  # the runtime config; None: only what load() was given
        self._stamp: tuple[int, int] | None = None

    def load(self, projects: list[dict[str, Any]]) -> None:
        """Upsert the configured projects."""
        with self.db.tx() as c:
            for p in projects:
                try:
                    area = Box.parse(p["area"]["min"], p["area"]["max"], "project.area")
                    p["project_id"], p["owner_player_id"]  # noqa: B018 - required keys
                except (McbError, KeyError, TypeError) as exc:
                    # one bad entry must not keep every other project from loading (or the journal from starting)
                    log.warning(
                        "ignoring project %r in the configuration: %s",
                        p.get("project_id") if isinstance(p, dict) else p,
                        exc.message if isinstance(exc, McbError) else f"missing or malformed {exc}",
                    )
                    continue
                c.execute(
                    "INSERT INTO projects(project_id, name, owner_player_id, area_json, world_uuid)"
                    " VALUES (?,?,?,?,?) ON CONFLICT(project_id) DO UPDATE SET name=excluded.name,"
                    " owner_player_id=excluded.owner_player_id, area_json=excluded.area_json,"
                    " world_uuid=excluded.world_uuid",
                    (
                        p["project_id"],
                        p.get("name", p["project_id"]),
                        p["owner_player_id"],
                        json.dumps(area.as_dict()),
                        p.get("world_uuid", ""),
                    ),
                )

    def refresh(self) -> None:
        """Upsert the config file's projects when it changed since the last look (one stat per call)."""
        if self.file is None:
            return
        try:
            st = self.file.stat()
        except OSError:
            return
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == self._stamp:
            return
        self._stamp = stamp
        try:
            self.load(json.loads(self.file.read_text()).get("projects", []))
        except (OSError, ValueError, KeyError, TypeError, AttributeError, McbError) as exc:
            log.warning("ignoring the changed projects in %s: %s", self.file, exc)

    def project_for(self, caller: Caller) -> Project:
        """The caller's project, when the caller has rights in it (its owner, or one of our services)."""
        self.refresh()
        if not caller.project_id:
            raise McbError(
                ErrorCode.PERMISSION_DENIED, "no project configured for this client (x-mcb-project-id missing)"
            )
        project = self.get(caller.project_id)
        if project is None:
            raise McbError(
                ErrorCode.PERMISSION_DENIED, f"project {caller.project_id!r} is not configured on this server"
            )
        refused = policy.rights_refusal(caller.principal, caller.player_id, project.project_id, project.owner_player_id)
        if refused is not None:
            raise refused
        return project

    def get(self, project_id: str) -> Project | None:
        """The project as the journal has it now (no rights asked: the executor's check before each
        batch, policy.batch_refusal), None when it is not configured."""
        row = self.db.one("SELECT * FROM projects WHERE project_id=?", project_id)
        if row is None:
            return None
        a = json.loads(row["area_json"])
        return Project(
            row["project_id"], row["name"], row["owner_player_id"], Box.parse(a["min"], a["max"]), row["world_uuid"]
        )
