"""The world host an end-to-end stack runs against, one of ``HOSTS``:

- ``embedded``: the Python host (`mcb_world_host`), started with the stack's own secrets folder;
- ``java-core``: the Java test host built from ``paper-plugin/`` (the Paper plugin's core over an
  in-memory world; ``tests/contract/hosts.py`` builds and starts it). It keeps a token folder of its
  own, like a Paper server; the stack reaches it as an external host: ``MCB_WORLD_HOST_URL`` and
  ``MCB_WORLD_HOST_TOKEN_FILE`` (its ``service.token``; the ``admin.token`` beside it is the chat
  loop's), or ``mcb up --world-host URL --world-host-token-file F``.
- ``paper-mock``: the real Paper plugin inside MockBukkit's server (``hosts.paper_mock``), an external
  host like ``java-core``; skipped with the reason where paper-api does not resolve.

Tests talk to the host only over its protocol (``rpc``), as the services do.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import httpx
from harness import Proc

HOSTS = ("embedded", "java-core", "paper-mock")
EXTERNAL = ("java-core", "paper-mock")  # started by the tests, outside the stack (a Paper server's place)
PREGEN = "-64,-64,63,63"  # the default project area's chunks (`mcb up` pre-generates the same)
# why a test that needs the embedded host's files cannot run on the Java hosts
NO_SAVE = (
    "java-core and paper-mock keep their worlds in their own save formats (no Anvil region files): "
    "nothing on disk to read back with an independent reader"
)


# hosts whose world reaches disk only at a save, as a game server's: a kill -9 rolls the world back to it
ROLLS_BACK = ("java-core", "paper-mock")

# Tests that need what MockBukkit 4.116.3 cannot model, with the reason; conftest skips them on paper-mock
# (only there: they run on the other hosts). Each reason names what differs from Paper 1.21.11.
_NO_BLOCK_DATA = (
    "MockBukkit 4.116.3 has no block data for glass_pane, iron_bars, cobblestone_wall or lantern: "
    "Bukkit.createBlockData refuses their states ('unknown block state'), while Paper 1.21.11 has a "
    "CraftBlockData for every block state of the registry"
)
PAPER_MOCK_UNMODELLED = {
    "test_house_example_prepares_and_applies_with_turned_states": _NO_BLOCK_DATA + " (the house has glass panes)",
    "test_every_tool_answers_in_snake_case_and_cameras": _NO_BLOCK_DATA + " (it builds the house example)",
    "test_connected_blocks_come_out_joined_and_read_back_independently": _NO_BLOCK_DATA + " (walls and panes)",
    "test_region_inspect_summary_heightmap_and_unknown_chunks": (
        "MockBukkit makes and keeps a block object for every position read (WorldMock#createBlock, and "
        "HarnessWorld's strict copy): the 2M-position summary's region_read took 13.8 s with 6.8 s of GC on an idle "
        "machine (bench/REPORT.md, MockBukkitTickBench) and more than the bridge's 30 s tool-call limit under CI load; "
        "Paper reads chunk sections without an object per block"
    ),
}

# CI time (a 2-core machine; the whole `make test` stays well under 45 min): on paper-mock a test whose host part
# is the same in every case runs for a representative subset of its parameters: test -> (parameter, kept values)
PAPER_MOCK_SUBSET = {
    # the journal's crash points and the admin's settling, 12 cases; the host only answers batches: one per point
    "test_6_crash_leaves_recovery_required_and_admin_settles_it": ("skip", (0,)),
}


@dataclass
class WorldHost:
    kind: str
    url: str
    secrets: Path  # the folder of the tokens this host accepts
    handle: object | None = None  # java-core: the contract suite's HostHandle (restart, live Proc)

    def token(self, principal: str) -> str:
        return (self.secrets / f"{principal}.token").read_text().strip()

    def rpc(self, method: str, params: dict, principal: str = "service") -> dict:
        r = httpx.post(
            f"{self.url}/v1/rpc",
            json={"method": method, "params": params, "requestId": "t"},
            headers={"Authorization": f"Bearer {self.token(principal)}"},
            timeout=60,
        )
        body = r.json()
        assert body["ok"], body
        return body["result"]

    @property
    def external(self) -> bool:
        """Started outside the stack (a Paper server's place): the services are pointed at it."""
        return self.handle is not None

    def stack_env(self) -> dict[str, str]:
        """What the services (and `mcb up`) need to use this host instead of an embedded one."""
        if not self.external:
            return {}
        return {"MCB_WORLD_HOST_URL": self.url, "MCB_WORLD_HOST_TOKEN_FILE": str(self.secrets / "service.token")}

    # --- an external host's process (the embedded one belongs to `mcb up` or Components) ---
    @property
    def proc(self) -> Proc:
        return self.handle.extra["proc"]  # type: ignore[union-attr]

    def start(self) -> Proc:
        """Start it again after a stop or kill -9 (a no-op stop first if it still runs)."""
        self.handle.restart(False)  # type: ignore[union-attr]
        return self.proc

    def stop(self) -> None:
        if self.external:
            self.handle.stop()  # type: ignore[union-attr]


class OnWorldHost:
    """What a running stack (``conftest.Stack``, ``components.Components``) offers tests: the
    stack's own tokens, its MCP URL, and its world host's protocol. Needs ``runtime``, ``ports``
    and ``world``."""

    runtime: Path
    ports: dict[str, int]
    world: WorldHost

    def token(self, principal: str) -> str:
        """The stack's own token (the agent's for MCP, admin for the journal's admin RPCs)."""
        return (self.runtime / "secrets" / f"{principal}.token").read_text().strip()

    @property
    def host(self) -> str:
        return self.world.kind

    @property
    def world_url(self) -> str:
        return self.world.url

    @property
    def mcp_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['bridge']}/mcp"

    def world_rpc(self, method: str, params: dict, principal: str = "service") -> dict:
        """A world-protocol call with the host's own token of ``principal``."""
        return self.world.rpc(method, params, principal)

    def saved_world(self) -> Path:
        """The embedded host's save, complete while the host runs: it answers a batch once the
        batch is in its write-ahead log and writes region files at checkpoints, so a reader of the
        files asks for one first (``POST /v1/save``, which answers when they hold every answered
        block: docs/world-protocol.md)."""
        assert self.world.kind == "embedded", "only the embedded host keeps a save on disk"
        r = httpx.post(
            f"{self.world.url}/v1/save",
            headers={"Authorization": f"Bearer {self.world.token('service')}"},
            timeout=60,
        )
        assert r.status_code == 200 and r.json()["result"]["saved"] is True, r.text
        return self.runtime / "world"


def external_host(kind: str, tmp: Path) -> WorldHost:
    """A Java host (``java-core`` or ``paper-mock``) on a free port with its own secrets folder (skips
    without a JDK/Maven, or for paper-mock without paper-api)."""
    from contract.hosts import java_core, paper_mock

    h = {"java-core": java_core, "paper-mock": paper_mock}[kind](tmp, True, pregen=PREGEN)
    return WorldHost(kind, h.base_url, h.extra["secrets_dir"], h)
