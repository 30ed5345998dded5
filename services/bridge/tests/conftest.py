"""Fixtures for the bridge tests (a FakeJournal on a free port); helpers live in bridge_testkit."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for p in (str(HERE), str(HERE.parents[2] / "tests")):
    if p not in sys.path:
        sys.path.insert(0, p)

from bridge_testkit import fake_env, fresh_fake  # noqa: E402,F401  (fixtures)
