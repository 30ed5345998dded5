"""Unit tests: the error table, the schemas, the trusted configuration, rendering bounds."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from bridge_testkit import PLAYER, PROJECT, SEED_RECIPE, TOKEN, FakeEnv
from jsonschema import Draft202012Validator
from mcb_bridge import errors, render, tools
from mcb_bridge.config import ConfigError, load_config
from mcb_common.errors import RETRYABLE, ErrorCode, McbError
from mcb_rpc.settings import Settings


def test_every_error_code_has_a_hint_and_a_result_shape() -> None:
    assert set(errors.HINTS) == set(ErrorCode)
    for code in ErrorCode:
        res = errors.tool_error(McbError(code, f"m-{code}"))
        assert res.is_error is True
        body = json.loads(res.content[0].text)
        assert body == res.structured_content
        assert body["error"]["code"] == str(code)
        assert body["error"]["retryable"] is RETRYABLE[code]
        assert body["error"]["message"] == f"m-{code}"


def test_huge_error_details_are_cut_visibly() -> None:
    res = errors.tool_error(McbError(ErrorCode.CONFLICT, "x", details={"blob": "y" * 10_000}))
    body = res.structured_content["error"]
    assert "details" not in body and body["details_truncated"] is True
    assert len(res.content[0].text) < 6000


def test_recipe_schema_is_embedded_with_working_refs() -> None:
    from mcb_common.recipe_schema import RECIPE_SCHEMA

    schema = tools.build_specs()["build_prepare"].input_schema
    assert "$id" not in json.dumps(schema["properties"]["recipe"])
    assert set(RECIPE_SCHEMA["$defs"]) <= set(schema["$defs"])
    v = Draft202012Validator(schema)
    assert list(v.iter_errors({"recipe": SEED_RECIPE})) == []
    bad = {
        "recipe": {
            "version": 1,
            "operations": [
                {"type": "box", "min": {"x": 0, "y": 0, "z": 0}, "max": {"x": 1, "y": 1, "z": 1}, "block": ""}
            ],
        }
    }
    assert list(v.iter_errors(bad))  # the $ref to #/$defs/block resolved: minLength applies
    # the standalone schema and the embedded one agree on the seed example and on a bad one
    assert list(Draft202012Validator(RECIPE_SCHEMA).iter_errors(bad["recipe"]))


def test_embed_rewrites_root_refs() -> None:
    root = {"type": "object", "properties": {"r": {}}}
    tools._embed(
        root,
        "r",
        {"$id": "x", "type": "object", "properties": {"self": {"$ref": "#"}, "p": {"$ref": "#/properties/self"}}},
    )
    assert root["properties"]["r"]["properties"]["self"] == {"$ref": "#/properties/r"}
    assert root["properties"]["r"]["properties"]["p"] == {"$ref": "#/properties/r/properties/self"}


def _settings(tmp: Path) -> Settings:
    return Settings(
        runtime_dir=tmp,
        bind_host="127.0.0.1",
        world_host_url="",
        planner_addr="",
        journal_addr="j:1",
        camera_addr="",
        redis_url="",
    )


def test_identity_comes_from_config_then_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake_env: FakeEnv
) -> None:
    env = fake_env.runtime(tmp_path)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    cfg = load_config(_settings(tmp_path))
    assert (cfg.project_id, cfg.player_id, cfg.agent_token) == (PROJECT, PLAYER, TOKEN)
    assert TOKEN not in repr(cfg)
    monkeypatch.setenv("MCB_PROJECT_ID", "from-env")
    monkeypatch.setenv("MCB_PLAYER_ID", "player-env")
    cfg = load_config(_settings(tmp_path))
    assert (cfg.project_id, cfg.player_id) == ("from-env", "player-env")


def test_missing_configuration_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("MCB_PROJECT_ID", "MCB_PLAYER_ID", "MCB_AGENT_TOKEN"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("MCB_CONFIG", str(tmp_path / "none.json"))
    monkeypatch.setenv("MCB_SECRETS_DIR", str(tmp_path / "secrets"))
    with pytest.raises(ConfigError, match="MCB_PROJECT_ID"):
        load_config(_settings(tmp_path))
    monkeypatch.setenv("MCB_PROJECT_ID", "p")
    monkeypatch.setenv("MCB_PLAYER_ID", "q")
    with pytest.raises(ConfigError, match="agent token"):
        load_config(_settings(tmp_path))


def test_fit_never_drops_silently() -> None:
    d = {"a": list(range(50_000)), "b": "x"}
    out = render.fit(d, max_bytes=4096)
    assert render.text_size(out) <= 4096
    assert out["truncated"] is True
    assert len(out["a"]) + out["a_omitted"] == 50_000


def test_redaction_filter_hides_the_token() -> None:
    from mcb_bridge.__main__ import RedactSecrets

    rec = logging.LogRecord("x", logging.INFO, __file__, 1, "token is %s", (TOKEN,), None)
    RedactSecrets([TOKEN]).filter(rec)
    assert TOKEN not in rec.getMessage() and "***" in rec.getMessage()


def test_capture_meta_is_snake_case_itself():
    """camera_capture sends capture_meta's document as it is: the typed CaptureMetadata's own
    (snake_case) names, only the fields the worker set, never an empty string, nested messages
    as to_dict gives them."""
    from mcb.camera.v1 import camera_pb2
    from mcb.common.v1 import common_pb2

    class Resp:
        status, capture_id = "completed", "cap_1"
        metadata = camera_pb2.CaptureMetadata(
            after_operation_id="op_1",
            mime_type="image/png",
            camera_id="",
            stale=True,
            changed_section_count=2,
            pose=camera_pb2.Pose(x=1, fov=70),
            sections=4,
            width=0,
            region=common_pb2.Box(min=common_pb2.Vec3(x=0), max=common_pb2.Vec3(x=3, y=1, z=2)),
            preview=camera_pb2.CapturePreview(plan_id="plan_1", entries_drawn=3, written=False),
            faces=9,
            client_report={"stableFrames": 3},
        )

    meta = render.capture_meta(Resp())
    assert meta == render.snake_keys(meta)
    assert list(meta) == [
        "status",
        "capture_id",
        "width",
        "stale",
        "region",
        "after_operation_id",
        "sections",
        "changed_section_count",
        "pose",
        "mime_type",
        "preview",
        "next",
    ]
    assert meta["width"] == 0  # set to zero is shown; unset (height) is not
    assert meta["pose"] == {
        "x": 1.0,
        "y": 0.0,
        "z": 0.0,
        "yaw": 0.0,
        "pitch": 0.0,
        "fov": 70.0,
        "width": 0,
        "height": 0,
    }
    assert meta["region"] == {"min": {"x": 0, "y": 0, "z": 0}, "max": {"x": 3, "y": 1, "z": 2}}
    assert meta["preview"] == {"plan_id": "plan_1", "entries_drawn": 3, "entries_total": 0, "written": False}
    assert "camera_id" not in meta and "faces" not in meta and "client_report" not in meta
    pending = type(
        "Pending",
        (),
        {
            "status": "pending",
            "capture_id": "cap_2",
            "metadata": camera_pb2.CaptureMetadata(stage="queued", hint="poll"),
        },
    )
    assert render.capture_meta(pending()) == {
        "status": "pending",
        "capture_id": "cap_2",
        "stage": "queued",
        "hint": "poll",
        "next": render.capture_meta(pending())["next"],
    }
