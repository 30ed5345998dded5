"""A pause outlives `mcb up`: writes paused (an /ai stop, the dashboard) before the stack stopped
are still paused when it starts again on the same runtime — the embedded host keeps the flag in
its batch log — and `mcb up` says so, with how to resume."""

from __future__ import annotations

from pathlib import Path

from e2e.conftest import start_stack
from mcb_rpc.worldhost import PAUSED_WARNING


def test_a_pause_is_kept_across_mcb_up_and_said(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    first = start_stack(runtime)
    try:
        assert first.world_rpc("pause", {"reason": "owner said stop"})["paused"] is True
        assert PAUSED_WARNING not in first.log()  # it was not paused when it started
    finally:
        assert first.stop() in (0, 130), first.log()
    first.log_path.rename(runtime / "mcb-up.first.log")  # start_stack waits for READY in this file
    again = start_stack(runtime)
    try:
        assert again.world_rpc("world_info", {})["paused"] is True
        assert f"warning: {PAUSED_WARNING}" in again.log(), again.log()
        assert again.world_rpc("resume", {"reason": "checked"})["paused"] is False
    finally:
        again.stop()
