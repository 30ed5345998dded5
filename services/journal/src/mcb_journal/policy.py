"""Who may build where: every decision on rights and the build area, in one place.

- Rights in a project: its owner, an admin, or one of our services (the servicer allows the
  service principal only read-only methods); ``rights_refusal``. An operation is written with
  the rights of the player who applied it: when that player is no longer the project's owner,
  its next batch is refused (``batch_refusal``).
- The area: every position written, every declared dependency, every exported box and every box
  whose history is asked (blame.py, histmap.py, rollback.py) lies
  inside the project's area as configured now (``outside``, ``area_refusal``,
  ``box_refusal``); the executor asks again before every batch, so a moved area stops an
  operation at its next batch. (The planner refuses a recipe that leaves the area it is given.)
- Protected parts: only an admin writes over them or redefines them (``overrides_protection``;
  the masks themselves are parts.py's).

Pure: the callers (projects.py, prepare.py, schematics.py, parts.py, executor.py, blame.py,
histmap.py) bring the project as projects.py read it and act on the answer.
"""

from __future__ import annotations

from collections.abc import Iterable

from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box, Vec3

ADMIN = "admin"
SERVICE = "service"  # another of our services acting for the project (read-only methods, servicer.py)


def rights_refusal(principal: str, player_id: str, project_id: str, owner_player_id: str) -> McbError | None:
    """None when the caller has rights in the project: its owner, an admin or one of our services."""
    if principal in (ADMIN, SERVICE) or player_id == owner_player_id:
        return None
    return McbError(
        ErrorCode.PERMISSION_DENIED, f"player {player_id or '(none)'} has no rights in project {project_id!r}"
    )


def batch_refusal(
    owner_player_id: str,
    area: Box,
    applied_by: str,
    positions: Iterable[tuple[int, ...]],
    bounds: Box | None = None,
) -> McbError | None:
    """Before every batch: the applying player's rights as the project stands now, then each
    position against its area now. ``applied_by`` '' (an admin's or a service's apply): rights hold.
    ``bounds``: a box around every position (the executor's: its whole plan's), looked at first:
    when the area holds it, it holds every position, and they are not looked at one by one."""
    if applied_by and applied_by != owner_player_id:
        return McbError(ErrorCode.PERMISSION_DENIED, "the player's rights in this project were revoked")
    if bounds is not None and area.contains_box(bounds):
        return None
    p = outside(area, positions)
    if p is not None:
        x, y, z = p
        return McbError(ErrorCode.OUT_OF_BOUNDS, f"({x},{y},{z}) is outside the project area now")
    return None


def outside(area: Box, positions: Iterable[tuple[int, ...]]) -> tuple[int, int, int] | None:
    """The first position (x, y, z, …) outside ``area``, None when all are inside."""
    lo, hi = area.min, area.max
    for x, y, z, *_ in positions:
        if not (lo.x <= x <= hi.x and lo.y <= y <= hi.y and lo.z <= z <= hi.z):
            return (x, y, z)
    return None


def area_refusal(area: Box, pos: tuple[int, int, int], what: str) -> McbError | None:
    """``what`` at ``pos`` (a dependency) must lie inside the area."""
    if outside(area, [pos]) is None:
        return None
    return McbError(ErrorCode.OUT_OF_BOUNDS, f"{what} {Vec3(*pos).as_dict()} is outside the project area")


def box_refusal(area: Box, box: Box, message: str) -> McbError | None:
    """``box`` (an export, a history question) must lie inside the area as a whole; ``message``
    says so in the caller's words."""
    if area.contains_box(box):
        return None
    return McbError(ErrorCode.OUT_OF_BOUNDS, message, details={"box": box.as_dict(), "area": area.as_dict()})


def overrides_protection(principal: str) -> bool:
    """Only an admin writes over a protected part or redefines it."""
    return principal == ADMIN
