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
