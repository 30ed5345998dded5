"""The operation state machine (ARCHITECTURE §3). Pure: no I/O.

    prepared ─▶ queued ─▶ applying ─▶ applied
        │        ▲ │          ├──────▶ conflict            (a block was not as planned)
        │        │ ▼
        │   waiting_for_resume ───────▶ cancelled / failed  (writes were paused when its turn came;
        │                                                    back to queued when they resume)
        │          │          ├──────▶ recovery_required   (an intent without completion)
        ├──────────┴──────────┴──────▶ cancelled           (operation_cancel, pause, restart)
        └─────────────────────────────▶ failed             (refused before/while writing)
    recovery_required ─▶ failed        (admin abandon; undo forbidden forever)

Every state carries the count of confirmed writes; `cancelled`/`conflict` may mean a partly
changed world.
"""

from __future__ import annotations

from enum import StrEnum

from mcb_common.errors import ErrorCode, McbError


class OpState(StrEnum):
    PREPARED = "prepared"
    QUEUED = "queued"
    # Writes were paused (an owner's /ai stop, the dashboard) when the operation's turn came: nothing
    # of it was written, no intent exists; it is queued again when the host's writes resume.
    WAITING_FOR_RESUME = "waiting_for_resume"
    APPLYING = "applying"
    APPLIED = "applied"
    CONFLICT = "conflict"
    CANCELLED = "cancelled"
    FAILED = "failed"
    RECOVERY_REQUIRED = "recovery_required"


TERMINAL = frozenset({OpState.APPLIED, OpState.CONFLICT, OpState.CANCELLED, OpState.FAILED})

TRANSITIONS: dict[OpState, frozenset[OpState]] = {
    OpState.PREPARED: frozenset({OpState.QUEUED, OpState.CANCELLED, OpState.FAILED}),
    OpState.QUEUED: frozenset({OpState.APPLYING, OpState.WAITING_FOR_RESUME, OpState.CANCELLED, OpState.FAILED}),
    OpState.WAITING_FOR_RESUME: frozenset({OpState.QUEUED, OpState.CANCELLED, OpState.FAILED}),
    OpState.APPLYING: frozenset(
        {
            OpState.APPLIED,
            OpState.CONFLICT,
            OpState.CANCELLED,
            OpState.FAILED,
            OpState.RECOVERY_REQUIRED,
            OpState.WAITING_FOR_RESUME,
        }  # only when its first batch was refused as paused: nothing written
    ),
    OpState.RECOVERY_REQUIRED: frozenset({OpState.FAILED}),
    OpState.APPLIED: frozenset(),
    OpState.CONFLICT: frozenset(),
    OpState.CANCELLED: frozenset(),
    OpState.FAILED: frozenset(),
}


def check_transition(current: str, new: str) -> None:
    cur, nxt = OpState(current), OpState(new)
    if nxt not in TRANSITIONS[cur]:
        raise McbError(
            ErrorCode.INTERNAL,
            f"operation state machine: {cur} -> {nxt} is not allowed",
        )


def is_terminal(state: str) -> bool:
    return OpState(state) in TERMINAL
