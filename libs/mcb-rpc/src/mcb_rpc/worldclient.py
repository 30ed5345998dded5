"""Client of the world protocol (HTTP/JSON, ``POST /v1/rpc``), shared by every service.

Messages are the protobuf types of ``mcb.world.v1`` in their canonical JSON mapping; errors
come back as ``McbError`` with the host's code and message. Transport failures become
``unavailable`` (retryable) — a caller decides whether a retry is safe (batch_apply is
idempotent by batch id, so repeating the same batch is).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from importlib import resources
from typing import Any, TypeVar

import httpx
from google.protobuf.message import Message
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_common.jsontext import JsonText

from . import pbjson

M = TypeVar("M", bound=Message)


def method_table() -> dict[str, dict[str, Any]]:
    raw = resources.files("mcb.world.v1").joinpath("methods.json").read_text()
    return json.loads(raw)["methods"]


def to_json(msg: Message) -> dict[str, Any]:
    return pbjson.to_json(msg)


def parse_result(data: dict[str, Any], result: type[M]) -> M:
    """A result in the protocol's JSON form as its message (unknown fields ignored: a newer host
    may add some). ``mcb_rpc.pbjson``: ParseDict's answer, several times faster on plain messages
    (an ``events_since`` page, region_read's large ``indices`` decoded with one b64decode)."""
    return pbjson.parse(data, result, ignore_unknown_fields=True)


class WorldClient:
    def __init__(self, base_url: str, token: str, timeout: float = 30.0):
        self._url = base_url.rstrip("/")
        self._client = httpx.AsyncClient(timeout=timeout, headers={"Authorization": f"Bearer {token}"})

    async def aclose(self) -> None:
        await self._client.aclose()

    async def health(self) -> dict[str, Any]:
        try:
            r = await self._client.get(f"{self._url}/health")
            return r.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise McbError(
                ErrorCode.UNAVAILABLE, f"world host unreachable at {self._url}: {exc.__class__.__name__}"
            ) from exc

    async def call(self, method: str, params: Message | Mapping[str, Any], result: type[M]) -> M:
        return parse_result(await self.call_json(method, params), result)

    async def call_json(self, method: str, params: Message | Mapping[str, Any]) -> dict[str, Any]:
        """The result as the host sent it (its JSON form, unparsed): for answers too large to be
        worth building messages for (the observer's 1,000-event pages). Errors as ``call``.
        ``params``: a message, its JSON form, or that form already encoded (``JsonText``: the
        journal's batch requests), sent as it is."""
        request_id = uuid.uuid4().hex
        post: dict[str, Any]
        if isinstance(params, JsonText):  # already encoded: its bytes go as they are
            body = b'{"method":%s,"params":%s,"requestId":"%s"}' % (
                json.dumps(method).encode(),
                params.text,
                request_id.encode(),
            )
            post = {"content": body, "headers": {"Content-Type": "application/json"}}
        else:
            post = {
                "json": {
                    "method": method,
                    "params": to_json(params) if isinstance(params, Message) else params,
                    "requestId": request_id,
                }
            }
        try:
            r = await self._client.post(f"{self._url}/v1/rpc", **post)
        except httpx.HTTPError as exc:
            raise McbError(
                ErrorCode.UNAVAILABLE,
                f"world host unreachable at {self._url} ({exc.__class__.__name__}); is it running?",
            ) from exc
        try:
            data = r.json()
        except ValueError as exc:
            raise McbError(ErrorCode.INTERNAL, f"world host answered HTTP {r.status_code} without JSON") from exc
        if not data.get("ok"):
            raise McbError.from_dict(data.get("error") or {"code": "internal", "message": "no error body"})
        result = data.get("result") or {}
        if not isinstance(result, dict):
            raise McbError(ErrorCode.INTERNAL, "the world host answered a result that is not a JSON object")
        return result

    # Convenience wrappers -------------------------------------------------------------
    async def world_info(self) -> world_pb2.WorldInfo:
        return await self.call("world_info", {}, world_pb2.WorldInfo)
