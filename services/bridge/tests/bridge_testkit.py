"""Shared helpers of the bridge tests (a uniquely named module: ``conftest`` names collide across
the workspace's test folders under --import-mode=importlib)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from bridge_fake_journal import FakeJournal, serve
from mcb_bridge.config import BridgeConfig

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]

TOKEN = "agent-token-for-tests-0123456789abcdef"
PROJECT = "proj-test"
PLAYER = "6f1c0e1e-0000-4000-8000-00000000beef"

SEED_RECIPE = {
    "version": 1,
    "operations": [
        {
            "type": "box",
            "min": {"x": 0, "y": 64, "z": 0},
            "max": {"x": 4, "y": 70, "z": 4},
            "block": "minecraft:stone_bricks",
            "hollow": True,
        },
        {
            "type": "line",
            "from": {"x": 0, "y": 64, "z": 0},
            "to": {"x": 8, "y": 64, "z": 8},
            "block": "minecraft:stone",
        },
        {
            "type": "cylinder",
            "center": {"x": 12, "y": 64, "z": 12},
            "radius": 3,
            "height": 8,
            "block": "minecraft:stone_bricks",
            "hollow": True,
        },
        {
            "type": "repeat",
            "count": 3,
            "offset": {"x": 6, "y": 0, "z": 0},
            "operations": [
                {
                    "type": "box",
                    "min": {"x": 0, "y": 64, "z": 20},
                    "max": {"x": 1, "y": 67, "z": 21},
                    "block": "minecraft:oak_log[axis=y]",
                }
            ],
        },
    ],
}


def arun(coro: Coroutine[Any, Any, Any], timeout: float = 60.0) -> Any:
    """Run one test coroutine in a fresh event loop, with a deadline."""

    async def bounded() -> Any:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


@dataclass
class FakeEnv:
    fake: FakeJournal
    port: int

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    def config(self, **over: Any) -> BridgeConfig:
        base = dict(
            project_id=PROJECT,
            player_id=PLAYER,
            journal_addr=self.addr,
            bind_host="127.0.0.1",
            port=0,
            agent_token=TOKEN,
        )
        base.update(over)
        return BridgeConfig(**base)

    def runtime(self, tmp: Path) -> dict[str, str]:
        """A runtime dir (secrets + config.json) and the env a bridge subprocess needs."""
        (tmp / "secrets").mkdir(parents=True, exist_ok=True)
        tok = tmp / "secrets" / "agent.token"
        tok.write_text(TOKEN + "\n")
        os.chmod(tok, 0o600)
        (tmp / "config.json").write_text(
            json.dumps({"projects": [{"project_id": PROJECT, "owner_player_id": PLAYER, "name": "t"}]})
        )
        return {
            "MCB_RUNTIME_DIR": str(tmp),
            "MCB_SECRETS_DIR": str(tmp / "secrets"),
            "MCB_CONFIG": str(tmp / "config.json"),
            "MCB_JOURNAL_ADDR": self.addr,
            "MCB_BIND_HOST": "127.0.0.1",
            # empty = unset for read_token/_identity: the values must come from the files
            "MCB_AGENT_TOKEN": "",
            "MCB_PROJECT_ID": "",
            "MCB_PLAYER_ID": "",
        }


@pytest.fixture(scope="module")
def fake_env() -> Iterator[FakeEnv]:
    fake = FakeJournal(TOKEN, PROJECT, PLAYER)
    server, port = serve(fake)
    try:
        yield FakeEnv(fake, port)
    finally:
        server.stop(grace=None)


@pytest.fixture
def fresh_fake(fake_env: FakeEnv) -> FakeEnv:
    """The module's fake, with its call log emptied for this test."""
    fake_env.fake.calls.clear()
    return fake_env
