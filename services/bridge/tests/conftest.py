"""Fixtures for the bridge tests (a FakeJournal on a free port); helpers live in bridge_testkit."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for p in (str(HERE), str(HERE.parents[2] / "tests")):
    if p not in sys.path:
        sys.path.insert(0, p)

import pytest  # noqa: E402
from bridge_testkit import fake_env, fresh_fake  # noqa: E402,F401  (fixtures)
from harness import start_redis  # noqa: E402


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory):
    """A real redis-server for the chat loop tests (one per test module)."""
    proc, url = start_redis(tmp_path_factory.mktemp("chat-redis"))
    yield url
    proc.stop()
