"""The real `python -m mcb_planner` process: health, Compile, and structured errors over gRPC."""

from __future__ import annotations

import json

import grpc
import httpx
import pytest
from mcb.common.v1 import common_pb2
from mcb.planner.v1 import planner_pb2, planner_pb2_grpc
from mcb_common.errors import ErrorCode
from mcb_common.registry import Registry
from mcb_planner import PLANNER_VERSION
from mcb_planner.compile import compile_recipe
from mcb_rpc.auth import call_metadata
from mcb_rpc.errors import from_rpc_error
from mcb_rpc.tokens import ensure_token
from planner_cases import SEED_TEXT, seed

from tests.harness import PY, free_port, start_process


class Bearer(grpc.UnaryUnaryClientInterceptor):
    """Every call carries the service token, as the journal's calls do."""

    def __init__(self, token: str):
        self.md = call_metadata(token)

    def intercept_unary_unary(self, continuation, details, request):
        details = details._replace(metadata=tuple(details.metadata or ()) + self.md)
        return continuation(details, request)


@pytest.fixture(scope="module")
def planner(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("planner")
    grpc_port, health_port = free_port(), free_port()
    env = {
        "MCB_PLANNER_GRPC_PORT": str(grpc_port),
        "MCB_PLANNER_HEALTH_PORT": str(health_port),
        "MCB_BIND_HOST": "127.0.0.1",
        "MCB_RUNTIME_DIR": str(tmp / "runtime"),
    }
    token = ensure_token(tmp / "runtime" / "secrets", "service")  # the journal's principal
    proc = start_process(
        "planner", [PY, "-m", "mcb_planner"], tmp / "logs", env=env, health_url=f"http://127.0.0.1:{health_port}/health"
    )
    channel = grpc.intercept_channel(grpc.insecure_channel(f"127.0.0.1:{grpc_port}"), Bearer(token))
    grpc.channel_ready_future(channel).result(timeout=15)
    try:
        yield proc, planner_pb2_grpc.PlannerStub(channel), f"http://127.0.0.1:{health_port}/health"
    finally:
        channel.close()
        code = proc.stop()
        assert code == 0, proc.log()


def compile_rpc(stub, recipe_json: str, **kw) -> planner_pb2.CompileResponse:
    return stub.Compile(planner_pb2.CompileRequest(recipe_json=recipe_json, **kw), timeout=30)


def rpc_error(stub, recipe_json: str, **kw):
    with pytest.raises(grpc.RpcError) as ei:
        compile_rpc(stub, recipe_json, **kw)
    return ei.value, from_rpc_error(ei.value, "planner")


def test_health_reports_service_version_and_registries(planner):
    _, _, url = planner
    body = httpx.get(url, timeout=5).json()
    reg = Registry.load()
    assert body["status"] == "ok" and body["service"] == "planner"
    assert body["version"] == PLANNER_VERSION
    assert body["registries"]["1.21.11"] == {"dataVersion": 4671, "sha256": reg.sha256, "blockCount": len(reg.blocks)}


def test_compile_seed_matches_the_core(planner):
    _, stub, _ = planner
    resp = compile_rpc(stub, SEED_TEXT, minecraft_version="1.21.11")
    core = compile_recipe(SEED_TEXT)
    ws = resp.write_set
    assert len(ws.state) == 310 and len(ws.xyz) == 3 * 310
    assert list(ws.palette) == list(core.palette)
    assert list(ws.xyz) == core.xyz.ravel().tolist()
    assert list(ws.state) == core.states.tolist()
    assert [(m.state, m.count) for m in resp.materials] == list(core.materials)
    assert resp.recipe_hash == core.recipe_hash
    assert resp.planner_version == PLANNER_VERSION
    assert resp.examined_positions == 315
    assert (resp.bounds.min.x, resp.bounds.min.y, resp.bounds.max.x, resp.bounds.max.z) == (0, 64, 15, 21)
    decoded = {(ws.xyz[3 * i], ws.xyz[3 * i + 1], ws.xyz[3 * i + 2]): ws.palette[s] for i, s in enumerate(ws.state)}
    assert decoded == core.blocks()


def test_compile_honours_area_and_limits(planner):
    _, stub, _ = planner
    area = common_pb2.Box(min=common_pb2.Vec3(x=-64, y=-64, z=-64), max=common_pb2.Vec3(x=64, y=319, z=64))
    assert len(compile_rpc(stub, SEED_TEXT, area=area).write_set.state) == 310
    _, err = rpc_error(stub, SEED_TEXT, limits=planner_pb2.Limits(max_changed_blocks=300))
    assert err.code == ErrorCode.BUDGET_EXCEEDED
    assert err.details == {"limit": "max_changed_blocks", "value": 310, "max": 300}


def test_unknown_block_crosses_grpc_as_a_structured_error(planner):
    _, stub, _ = planner
    doc = seed()
    doc["operations"][0]["block"] = "minecraft:stone_brick"
    exc, err = rpc_error(stub, json.dumps(doc))
    assert exc.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.code == ErrorCode.UNSUPPORTED_BLOCK and err.retryable is False
    assert err.details["path"] == "operations[0].block"
    assert "minecraft:stone_bricks" in err.details["suggestions"]


def test_out_of_bounds_crosses_grpc(planner):
    _, stub, _ = planner
    area = common_pb2.Box(min=common_pb2.Vec3(x=0, y=60, z=0), max=common_pb2.Vec3(x=13, y=80, z=30))
    exc, err = rpc_error(stub, SEED_TEXT, area=area)
    assert exc.code() == grpc.StatusCode.OUT_OF_RANGE
    assert err.code == ErrorCode.OUT_OF_BOUNDS and err.details["path"] == "operations[2]"


@pytest.mark.parametrize(
    ("text", "kw", "code"),
    [
        ("{not json", {}, ErrorCode.INVALID_REQUEST),
        ('{"version": 1, "operations": [{"type": "torus"}]}', {}, ErrorCode.INVALID_REQUEST),
        (SEED_TEXT, {"minecraft_version": "1.8.9"}, ErrorCode.VERSION_MISMATCH),
        (SEED_TEXT, {"limits": planner_pb2.Limits(max_operations=10**9)}, ErrorCode.INVALID_REQUEST),
        (
            SEED_TEXT,
            {"area": common_pb2.Box(min=common_pb2.Vec3(x=5), max=common_pb2.Vec3(x=0))},
            ErrorCode.INVALID_REQUEST,
        ),
        (
            '{"version": 1, "operations": [{"type": "box", "min": {"x": 0, "y": -64, "z": 0}, '
            '"max": {"x": 3999, "y": 318, "z": 651}, "block": "stone"}]}',
            {},
            ErrorCode.BUDGET_EXCEEDED,
        ),
    ],
    ids=["bad-json", "unknown-op", "unknown-version", "limit-ceiling", "inverted-area", "huge-box"],
)
def test_bad_requests_are_structured_errors(planner, text, kw, code):
    _, stub, _ = planner
    _, err = rpc_error(stub, text, **kw)
    assert err.code == code, err
    assert err.message


def test_service_stays_healthy_after_errors(planner):
    proc, stub, url = planner
    assert proc.alive()
    assert httpx.get(url, timeout=5).status_code == 200
    assert len(compile_rpc(stub, SEED_TEXT).write_set.state) == 310
