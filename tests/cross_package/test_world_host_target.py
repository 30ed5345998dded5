"""Choosing and checking the world host (mcb_rpc.worldhost, mcb_cli.runner): the pure rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcb_common.errors import ErrorCode, McbError
from mcb_rpc.settings import Settings
from mcb_rpc.tokens import world_host_token
from mcb_rpc.worldhost import check_url, compatibility_problems, read_token_file

from mcb_cli.runner import WorldHostTarget, resolve_world_host, services

GOOD = {
    "protocolVersion": "mcb.world.v1",
    "dataVersion": 4671,
    "minecraftVersion": "1.21.11",
    "worldUuid": "w-1",
    "capabilities": ["region_read", "blocks_get", "batch_apply", "events_since", "pause", "chat"],
}


def test_a_matching_host_is_accepted_without_warnings():
    assert compatibility_problems(GOOD) == ([], [])


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"dataVersion": 4440, "minecraftVersion": "1.21.5"}, "Minecraft 1.21.5 (data version 4440)"),
        ({"protocolVersion": "mcb.world.v2"}, "speaks mcb.world.v2"),
        ({"capabilities": ["region_read"]}, "lacks blocks_get, batch_apply, events_since, pause"),
        ({"worldUuid": ""}, "no world uuid"),
    ],
)
def test_version_skew_and_missing_capabilities_are_refused(change, words):
    refusals, _ = compatibility_problems({**GOOD, **change})
    assert len(refusals) == 1 and words in refusals[0]


def test_automation_and_pause_are_warnings():
    _, warnings = compatibility_problems(
        {**GOOD, "paused": True, "capabilities": [*GOOD["capabilities"], "local_automation"]}
    )
    assert any("local automation is ON" in w for w in warnings) and any("/ai resume" in w for w in warnings)


@pytest.mark.parametrize(
    "url",
    [
        "ftp://h:1",
        "127.0.0.1:8765",
        "http://",
        "http://u:p@h:1",
        "http://h:1/v1/rpc",
        "http://h:1?x=1",
        "http://127.0.0.1:abc",
        "http://[::1",
        "http://h:99999",
    ],
)
def test_bad_urls_are_invalid_requests(url):
    with pytest.raises(McbError) as e:
        check_url(url)
    assert e.value.code == ErrorCode.INVALID_REQUEST and e.value.details["reason"] == "bad_url"


def test_url_is_normalised():
    assert check_url(" http://127.0.0.1:8765/ ") == "http://127.0.0.1:8765"


def test_token_file_problems(tmp_path: Path):
    with pytest.raises(McbError, match="does not exist"):
        read_token_file(tmp_path / "missing")
    with pytest.raises(McbError, match="not a regular file"):
        read_token_file(tmp_path)
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(McbError, match="is empty"):
        read_token_file(tmp_path / "empty")


def test_world_host_tokens_come_from_the_token_file_and_its_folder(tmp_path: Path):
    stack = tmp_path / "stack"
    stack.mkdir()
    (stack / "service.token").write_text("stack-service\n")
    (stack / "admin.token").write_text("stack-admin\n")
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "service.token").write_text("plugin-service\n")
    assert world_host_token(stack, "service", None) == "stack-service"
    assert world_host_token(stack, "service", plugin / "service.token") == "plugin-service"
    # no admin.token beside the file: none (the stack's own is never sent to a host with its own)
    assert world_host_token(stack, "admin", plugin / "service.token") is None
    (plugin / "admin.token").write_text("plugin-admin\n")
    assert world_host_token(stack, "admin", plugin / "service.token") == "plugin-admin"
    assert world_host_token(stack, "service", plugin / "gone.token") is None


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    for k in ("MCB_WORLD_HOST_URL", "MCB_WORLD_HOST_TOKEN_FILE", "MCB_CONFIG", "MCB_SECRETS_DIR"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("MCB_RUNTIME_DIR", str(tmp_path / "rt"))
    (tmp_path / "rt").mkdir()
    (tmp_path / "rt" / "config.json").write_text(json.dumps({"projects": []}))
    return Settings.from_env()


def test_flags_are_saved_and_used_by_later_commands(settings: Settings, tmp_path: Path):
    tf = tmp_path / "service.token"
    t = resolve_world_host(settings, "http://127.0.0.1:9001/", str(tf))
    assert t == WorldHostTarget("http://127.0.0.1:9001", tf.resolve(), "--world-host")
    saved = json.loads(settings.config_file.read_text())
    assert saved["world_host"] == {"url": "http://127.0.0.1:9001", "token_file": str(tf.resolve())}
    assert saved["projects"] == []  # the rest of the config is kept
    later = Settings.from_env()  # a new shell: `mcb status`, `mcb mcp`, services
    assert later.world_host_url == "http://127.0.0.1:9001"
    assert later.world_host_token_file == tf.resolve()
    again = resolve_world_host(later)
    assert again.url == "http://127.0.0.1:9001" and again.token_file == tf.resolve()
    assert resolve_world_host(later, embedded=True) == WorldHostTarget()
    assert "world_host" not in json.loads(settings.config_file.read_text())
    assert Settings.from_env().world_host_url.endswith(":8765")


def test_environment_applies_for_one_run_without_saving(settings: Settings, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MCB_WORLD_HOST_URL", "http://127.0.0.1:9002")
    t = resolve_world_host(settings)
    assert t.external and t.url == "http://127.0.0.1:9002" and t.source == "MCB_WORLD_HOST_URL"
    assert "world_host" not in json.loads(settings.config_file.read_text())


def test_token_file_without_url_is_refused(settings: Settings):
    with pytest.raises(McbError, match="needs --world-host"):
        resolve_world_host(settings, None, "/x/service.token")


def test_external_host_means_no_embedded_process_and_chat_when_offered(settings: Settings):
    names = [s.name for s in services(settings)]
    assert names[0] == "world-host" and "chat" not in names
    ext = [s.name for s in services(settings, WorldHostTarget("http://127.0.0.1:9003"), chat=True)]
    assert "world-host" not in ext and ext[-1] == "chat"


def test_restart_line_tells_a_person_what_a_crash_cost():
    from mcb_rpc.worldhost import WorldHostIdentity

    clean = WorldHostIdentity.from_world_info("http://h:1", {**GOOD, "lastRestart": {"previousStop": "clean"}})
    assert clean.restart_line() == ""
    crash = WorldHostIdentity.from_world_info(
        "http://h:1",
        {
            **GOOD,
            "lastRestart": {
                "previousStop": "unclean",
                "lostWrites": 12,
                "doubtfulBatches": 3,
                "affectedOperationIds": ["op_a"],
            },
        },
    )
    line = crash.restart_line()
    assert "previous stop was unclean" in line and "12 of our block writes were rolled back" in line
    assert "op_a" in line and "3 batches are re-checked" in line
    damaged = WorldHostIdentity.from_world_info(
        "http://h:1", {**GOOD, "lastRestart": {"previousStop": "clean", "stateProblem": "checksum mismatch at 4096"}}
    )
    assert "damaged" in damaged.restart_line() and "paused" in damaged.restart_line()


def test_an_external_host_gets_a_longer_link_retry(settings: Settings, monkeypatch: pytest.MonkeyPatch):
    from mcb_cli.runner import EXTERNAL_LINK_RETRY_SECONDS, _env_for

    monkeypatch.delenv("MCB_LINK_RETRY_SECONDS", raising=False)
    assert "MCB_LINK_RETRY_SECONDS" not in _env_for(settings, WorldHostTarget())
    assert _env_for(settings, WorldHostTarget("http://h:1"))["MCB_LINK_RETRY_SECONDS"] == str(
        EXTERNAL_LINK_RETRY_SECONDS
    )
    monkeypatch.setenv("MCB_LINK_RETRY_SECONDS", "7")
    assert "MCB_LINK_RETRY_SECONDS" not in _env_for(settings, WorldHostTarget("http://h:1"))  # inherited as set
