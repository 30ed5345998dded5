"""The journal's jobs wired onto its core (app.py at start; tests): the observer of block events,
undo, recovery decisions, parts and the change feed, each in its own module."""

from __future__ import annotations

from dataclasses import dataclass

from .changes import Changes
from .core import JournalCore
from .observer import Observer
from .parts import Parts
from .recovery import Recovery
from .undo import Undo


def wire_jobs(core: JournalCore, observer: Observer) -> None:
    core.observer = observer
    core.parts = Parts(core, observer)
    core.undo = Undo(core, observer)
    core.recovery = Recovery(core)
    core.changes = Changes(core, observer, core.parts.part_mask)


@dataclass(frozen=True)
class Jobs:
    parts: Parts
    undo: Undo
    recovery: Recovery
    changes: Changes


def jobs_of(core: JournalCore) -> Jobs:
    """The wired jobs (servicer.py); a core without them is a wiring bug, not a caller's error."""
    if core.parts is None or core.undo is None or core.recovery is None or core.changes is None:
        raise RuntimeError("the journal's jobs are not wired (jobs.wire_jobs)")
    return Jobs(core.parts, core.undo, core.recovery, core.changes)
