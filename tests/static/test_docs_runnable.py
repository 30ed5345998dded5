"""The docs check: every command block of README.md and docs/ marked as runnable runs, and exits 0.

Marker: an HTML comment ``<!-- runnable -->`` on the line before a fenced ```bash (or ```sh)
block. The blocks of one file run in order, each with ``bash -euo pipefail``, in one fresh
temporary directory (the current directory) holding an empty ``.runtime/`` with
``MCB_RUNTIME_DIR=$PWD/.runtime``, every
``MCB_*_PORT`` set to a free port (so a stack running on this machine is never touched), the
repository's ``.venv/bin`` first on ``PATH`` (``mcb`` is the repository's) and ``MCB_REPO`` naming
the repository. Mark only blocks that run offline in seconds; a block that starts the stack, needs
a game server or the network stays unmarked.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from harness import free_port

ROOT = Path(__file__).resolve().parents[2]
MARKED = re.compile(r"^<!-- runnable -->\n```(?:bash|sh)\n(.*?)^```", re.S | re.M)
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


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def runnable_blocks() -> dict[str, list[str]]:
    out = {}
    for doc in documents():
        blocks = MARKED.findall(doc.read_text())
        if blocks:
            out[str(doc.relative_to(ROOT))] = blocks
    return out


def test_the_marker_is_found():
    """The check must check something: docs/runtime.md marks its reset and backup commands."""
    assert len(runnable_blocks().get("docs/runtime.md", [])) >= 2


@pytest.mark.parametrize("doc", sorted(runnable_blocks()))
def test_runnable_blocks_run(doc, tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCB_")}
    env |= {
        "MCB_RUNTIME_DIR": str(tmp_path / ".runtime"),
        "MCB_REPO": str(ROOT),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        **{f"MCB_{p}_PORT": str(free_port()) for p in PORTS},
    }
    (tmp_path / ".runtime").mkdir()  # as `mcb up` leaves it (empty here)
    for i, block in enumerate(runnable_blocks()[doc], 1):
        r = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", block],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0, f"{doc} runnable block {i} exited {r.returncode}:\n{block}\n{r.stdout}\n{r.stderr}"
