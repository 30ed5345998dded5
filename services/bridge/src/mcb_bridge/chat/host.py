"""The world host's chat methods, with the ADMIN token (chat_poll, chat_reply, chat_preview, player_context).
The fake in the unit tests implements the same three coroutines."""

from __future__ import annotations

from mcb.world.v1 import world_pb2
from mcb_rpc.worldclient import WorldClient


class HostChat:
    def __init__(self, world_url: str, admin_token: str, timeout: float = 30.0):
        self.client = WorldClient(world_url, admin_token, timeout=timeout)

    async def chat_poll(self, client_id: str, max_messages: int = 16) -> world_pb2.ChatPollResult:
        return await self.client.call(
            "chat_poll",
            world_pb2.ChatPollParams(client_id=client_id, max_messages=max_messages),
            world_pb2.ChatPollResult,
        )

    async def chat_reply(self, params: world_pb2.ChatReplyParams) -> world_pb2.ChatReplyResult:
        return await self.client.call("chat_reply", params, world_pb2.ChatReplyResult)

    async def chat_preview(self, params: world_pb2.ChatPreviewParams) -> world_pb2.ChatPreviewResult:
        return await self.client.call("chat_preview", params, world_pb2.ChatPreviewResult)

    async def world_info(self) -> world_pb2.WorldInfo:
        return await self.client.world_info()

    async def writes_paused(self) -> bool:
        return bool((await self.client.world_info()).paused)

    async def resume(self, reason: str) -> None:
        await self.client.call("resume", world_pb2.PauseParams(reason=reason[:500]), world_pb2.PauseResult)

    async def health(self) -> dict:
        return await self.client.health()

    async def aclose(self) -> None:
        await self.client.aclose()
