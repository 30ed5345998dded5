"""`mcb up` stopped at any phase (Ctrl-C or SIGTERM, once or twice) ends without a traceback and
leaves no service running (issue 19 item 6). Phases: while Python imports the runner, as the
stack starts, right after Redis, right after the world host. Linux (/proc, PR_SET_PDEATHSIG)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harness import free_port, redis_ping

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>/status")
PORTS = (
    "WORLD_HOST",
    "BRIDGE",
    "PLANNER_GRPC",
    "JOURNAL_GRPC",
    "CAMERA_GRPC",
    "PLANNER_HEALTH",
    "JOURNAL_HEALTH",
    "CAMERA_HEALTH",
    "REDIS",
    "DASHBOARD",
)


def _catches_sigterm(pid: int) -> bool:
    """Whether the process has a SIGTERM handler: `mcb up` installs one first thing in main()
    (Python itself does not), so from then on its own code runs (Linux /proc)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    except OSError:
        pass
    return False


@pytest.mark.parametrize(
    ("after", "signals"),
    [
        ("main", [signal.SIGINT]),  # in main(), importing the runner
        ("Starting", [signal.SIGINT, signal.SIGINT]),  # twice, as a terminal sends it to make/uv/mcb
        ("redis ", [signal.SIGTERM]),
        ("world-host ", [signal.SIGINT, signal.SIGTERM]),
    ],
)
def test_mcb_up_stops_without_a_traceback(tmp_path: Path, after, signals):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCB_")}
    env["MCB_RUNTIME_DIR"] = str(tmp_path)
    env.update({f"MCB_{n}_PORT": str(free_port()) for n in PORTS})
    p = subprocess.Popen(
        [sys.executable, "-m", "mcb_cli.main", "up", "--quiet"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    seen: list[str] = []
    try:
        if after == "main":  # a signal during interpreter start-up is CPython's, not ours
            deadline = time.monotonic() + 30
            while not _catches_sigterm(p.pid) and time.monotonic() < deadline:
                time.sleep(0.002)
        else:
            assert p.stdout is not None
            for line in p.stdout:
                seen.append(line)
                if after in line:
                    break
            else:
                pytest.fail("mcb up ended before the phase: " + "".join(seen))
        for sig in signals:
            p.send_signal(sig)
            time.sleep(0.05)
        rest, _ = p.communicate(timeout=90)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(10)
    out = "".join(seen) + rest
    assert "Traceback" not in out, out
    assert p.returncode in (0, 130), out
    if after != "main":
        assert out.rstrip().endswith("Stopped."), out
    assert not redis_ping(int(env["MCB_REDIS_PORT"]))
