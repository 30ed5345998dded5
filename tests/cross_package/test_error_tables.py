"""Every ErrorCode is mapped at every boundary (STYLE habit 3)."""

from mcb_common.errors import RETRYABLE, ErrorCode, McbError
from mcb_rpc.errors import GRPC_STATUS, HTTP_STATUS


def test_every_code_has_a_retry_policy():
    assert set(RETRYABLE) == set(ErrorCode)


def test_every_code_maps_to_grpc_and_http():
    assert set(GRPC_STATUS) == set(ErrorCode)
    assert set(HTTP_STATUS) == set(ErrorCode)
    for code, status in HTTP_STATUS.items():
        assert 400 <= status < 600, code


def test_error_dict_roundtrip():
    e = McbError(ErrorCode.BUDGET_EXCEEDED, "too big", details={"limit": 5})
    back = McbError.from_dict(e.to_dict())
    assert (back.code, back.message, back.retryable, back.details) == (e.code, e.message, False, {"limit": 5})
    assert McbError.from_dict({"code": "nonsense", "message": "x"}).code == ErrorCode.INTERNAL


def _slow_and_missing_calls(delay: float, timeout: float):
    """A real gRPC server whose method answers after ``delay``; returns the two client errors:
    the call with ``timeout`` against it, and a call to a port nobody listens on."""
    import asyncio

    import grpc

    async def slow(request: bytes, context) -> bytes:  # noqa: ANN001
        await asyncio.sleep(delay)
        return b""

    async def go():
        server = grpc.aio.server()
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("t.Slow", {"Call": grpc.unary_unary_rpc_method_handler(slow)}),)
        )
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        out = []
        try:
            for addr in (f"127.0.0.1:{port}", "127.0.0.1:1"):
                async with grpc.aio.insecure_channel(addr) as ch:
                    try:
                        await ch.unary_unary("/t.Slow/Call")(b"", timeout=timeout)
                    except grpc.RpcError as exc:
                        out.append(exc)
        finally:
            await server.stop(None)
        return out

    return asyncio.run(go())


def test_a_grpc_deadline_says_it_took_too_long_not_that_the_service_is_down():
    from mcb_rpc.errors import from_rpc_error

    late, down = _slow_and_missing_calls(delay=2.0, timeout=0.3)
    err = from_rpc_error(late, "journal", 0.3)
    assert err.code == ErrorCode.UNAVAILABLE and err.retryable
    assert "took longer than 0.3 s" in err.message and "cannot be reached" not in err.message
    assert err.details == {"reason": "deadline", "deadline_s": 0.3}
    assert "took longer than its deadline" in from_rpc_error(late, "journal").message
    gone = from_rpc_error(down, "journal", 0.3)
    assert "cannot be reached" in gone.message and "took longer" not in gone.message


def test_unsupported_block_hint_names_what_the_rules_refuse_and_no_more():
    """Issue 31 item 13: the hint the agent reads with ``unsupported_block`` is true to the
    journal's block rules: every reason refused with this code is named, and furniture (block
    entities the tool writes) is not called refused."""
    from mcb_bridge.errors import HINTS
    from mcb_common.blockentity import REFUSED, SUPPORTED
    from mcb_journal.blockrules import _MESSAGES

    hint = HINTS[ErrorCode.UNSUPPORTED_BLOCK]
    reasons = [r for r, (code, _) in _MESSAGES.items() if code == ErrorCode.UNSUPPORTED_BLOCK]
    assert len(reasons) >= 4
    for reason in reasons:
        assert reason in hint, reason
    assert "block entities are refused" not in hint and "redstone" not in hint
    assert "chests" in hint and "signs" in hint
    assert "chest" in SUPPORTED and "mob_spawner" in REFUSED and "spawner" in hint


def test_the_java_error_table_is_the_python_one_in_full():
    """Issue 30 item 5: ``ErrorCode.java`` retypes the table for the Java hosts; every code, its
    wire name, HTTP status and retry flag must be the Python ones (mcb_common.errors,
    mcb_rpc.errors.HTTP_STATUS), none missing and none extra."""
    import pathlib
    import re

    java = (
        pathlib.Path(__file__).resolve().parents[2]
        / "paper-plugin"
        / "core"
        / "src"
        / "main"
        / "java"
        / "dev"
        / "mcb"
        / "world"
        / "core"
        / "ErrorCode.java"
    ).read_text()
    rows = re.findall(r'^\s*([A-Z_]+)\("([a-z_]+)",\s*(\d+),\s*(true|false)\)[,;]', java, re.MULTILINE)
    got = {name: (wire, int(status), flag == "true") for name, wire, status, flag in rows}
    want = {c.name: (c.value, HTTP_STATUS[c], RETRYABLE[c]) for c in ErrorCode}
    assert got == want
