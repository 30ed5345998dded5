"""Per project + player: the ACP session id and a compact summary, in session.json (0600,
atomic replace). The summary seeds a new session when `session/load` is not possible."""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from mcb_common.files import atomic_write

SUMMARY_MAX = 600


@dataclass
class SessionRecord:
    session_id: str | None = None
    summary: str = ""
    last_task: str = ""
    last_result: str = ""
    unfinished: dict[str, Any] | None = None  # {"message_id", "started_ms", "task"} while a turn runs
    operations: list[str] = field(default_factory=list)  # operation ids seen in the last turn
    updated_ms: int = 0

    def compact_summary(self) -> str:
        parts = []
        if self.summary:
            parts.append(self.summary)
        if self.last_task:
            parts.append(f"Last request: {self.last_task}")
        if self.last_result:
            parts.append(f"Result: {self.last_result}")
        return "\n".join(parts)[-SUMMARY_MAX:]


def _slug(value: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in value)[:40]
    return f"{safe}-{hashlib.sha256(value.encode()).hexdigest()[:8]}"


class SessionStore:
    def __init__(self, state_dir: Path):
        self.root = state_dir / "sessions"

    def path(self, project_id: str, player_id: str) -> Path:
        return self.root / _slug(project_id) / _slug(player_id) / "session.json"

    def load(self, project_id: str, player_id: str) -> SessionRecord:
        try:
            data = json.loads(self.path(project_id, player_id).read_text())
        except (OSError, ValueError):
            return SessionRecord()
        known = {k: data[k] for k in SessionRecord.__dataclass_fields__ if k in data}
        return SessionRecord(**known)

    def save(self, project_id: str, player_id: str, rec: SessionRecord) -> None:
        path = self.path(project_id, player_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        for d in (self.root, path.parent.parent, path.parent):
            os.chmod(d, 0o700)
        rec.updated_ms = int(time.time() * 1000)
        atomic_write(path, json.dumps(asdict(rec), indent=1), mode=0o600)
