"""Projects as the chat commands see them: the runtime config's ``projects`` (config.json, which the
journal re-reads when it changes) and each player's chosen project (``<state>/players.json``).

A project is ``{project_id, name, owner_player_id, area: {min, max}}``. Players create projects and
move their areas in game (``/ai project create``, ``/ai area set``); areas of different owners never
overlap. Writes take an exclusive lock on ``config.json.lock`` and replace the file atomically,
keeping every other key as it was.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mcb_common.files import atomic_write

Box = tuple[tuple[int, int, int], tuple[int, int, int]]


class ProjectError(Exception):
    """A refused project change; the message is shown to the player."""


def box_of(area: dict[str, Any]) -> Box:
    lo, hi = area["min"], area["max"]
    a = (int(lo["x"]), int(lo["y"]), int(lo["z"]))
    b = (int(hi["x"]), int(hi["y"]), int(hi["z"]))
    return (min(a[0], b[0]), min(a[1], b[1]), min(a[2], b[2])), (max(a[0], b[0]), max(a[1], b[1]), max(a[2], b[2]))


def area_of(box: Box) -> dict[str, dict[str, int]]:
    (x0, y0, z0), (x1, y1, z1) = box
    return {"min": {"x": x0, "y": y0, "z": z0}, "max": {"x": x1, "y": y1, "z": z1}}


def overlaps(a: Box, b: Box) -> bool:
    return all(a[0][i] <= b[1][i] and b[0][i] <= a[1][i] for i in range(3))


def describe(box: Box) -> str:
    (x0, y0, z0), (x1, y1, z1) = box
    return f"x {x0}..{x1}, y {y0}..{y1}, z {z0}..{z1}"


def _write_json(path: Path, doc: Any) -> None:
    try:
        atomic_write(path, json.dumps(doc, indent=2) + "\n")
    except OSError as exc:
        raise ProjectError(
            f"the bridge cannot write {path} ({exc.strerror or exc}); projects and areas can only "
            "be changed where the chat loop may write the runtime config"
        ) from None


class ProjectRegistry:
    def __init__(self, config_file: Path, state_dir: Path, fallback_owners: dict[str, str] | None = None):
        self.config_file = config_file
        self.players_file = state_dir / "players.json"
        self.fallback_owners = dict(fallback_owners or {})

    # --- reading ---------------------------------------------------------------------------
    def _config(self) -> dict[str, Any]:
        try:
            doc = json.loads(self.config_file.read_text())
        except FileNotFoundError:
            return {}
        except ValueError as exc:
            raise ProjectError(f"the runtime config {self.config_file.name} is not valid JSON ({exc})") from None
        return doc if isinstance(doc, dict) else {}

    def projects(self) -> list[dict[str, Any]]:
        ps = self._config().get("projects")
        return [p for p in ps if isinstance(p, dict) and p.get("project_id")] if isinstance(ps, list) else []

    def get(self, project_id: str) -> dict[str, Any] | None:
        return next((p for p in self.projects() if p["project_id"] == project_id), None)

    def owner(self, project_id: str) -> str | None:
        p = self.get(project_id)
        if p is not None and p.get("owner_player_id"):
            return str(p["owner_player_id"])
        return self.fallback_owners.get(project_id)

    def current(self, player_id: str, default: str) -> str:
        """The player's chosen project (``project use``/``create``), else the host's project."""
        try:
            chosen = json.loads(self.players_file.read_text()).get(player_id)
        except (FileNotFoundError, ValueError, AttributeError):
            chosen = None
        if chosen and (self.get(chosen) is not None or chosen in self.fallback_owners):
            return str(chosen)
        return default

    # --- changing --------------------------------------------------------------------------
    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        """The config document under an exclusive lock; written back when the block ends normally."""
        lock = self.config_file.with_name(self.config_file.name + ".lock")
        try:
            fh = open(lock, "a")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise ProjectError(
                f"the bridge cannot lock {lock} ({exc.strerror or exc}); projects and areas can only "
                "be changed where the chat loop may write the runtime config"
            ) from None
        with fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            doc = self._config()
            yield doc
            _write_json(self.config_file, doc)

    def use(self, player_id: str, project_id: str) -> None:
        try:
            chosen = json.loads(self.players_file.read_text())
        except (FileNotFoundError, ValueError):
            chosen = {}
        if not isinstance(chosen, dict):
            chosen = {}
        chosen[player_id] = project_id
        _write_json(self.players_file, chosen)
        os.chmod(self.players_file, 0o600)

    @staticmethod
    def _check_overlap(doc: dict[str, Any], project_id: str, owner: str, box: Box) -> None:
        for p in doc.get("projects") or []:
            if not isinstance(p, dict) or p.get("project_id") == project_id or p.get("owner_player_id") == owner:
                continue
            try:
                other = box_of(p["area"])
            except (KeyError, TypeError, ValueError):
                continue
            if overlaps(box, other):
                raise ProjectError(
                    f"that area overlaps project {p['project_id']!r} of another player ({describe(other)})"
                )

    def create(self, project_id: str, owner: str, box: Box) -> dict[str, Any]:
        with self._locked() as doc:
            projects = doc.setdefault("projects", [])
            if not isinstance(projects, list):
                raise ProjectError("the runtime config's `projects` is not a list; fix config.json")
            if (
                any(
                    isinstance(p, dict) and str(p.get("project_id", "")).lower() == project_id.lower() for p in projects
                )
                or project_id in self.fallback_owners
            ):
                raise ProjectError(f"a project named {project_id!r} exists already")
            self._check_overlap(doc, project_id, owner, box)
            entry = {"project_id": project_id, "name": project_id, "owner_player_id": owner, "area": area_of(box)}
            projects.append(entry)
        return entry

    def set_area(self, project_id: str, owner: str, box: Box) -> None:
        with self._locked() as doc:
            entry = next(
                (p for p in doc.get("projects") or [] if isinstance(p, dict) and p.get("project_id") == project_id),
                None,
            )
            if entry is None:
                raise ProjectError(f"project {project_id!r} is not in the runtime config")
            self._check_overlap(doc, project_id, owner, box)
            entry["area"] = area_of(box)
