"""The one request-body limit of every HTTP entry point (ASGI middleware).

A body over ``max_bytes`` is refused with 413 and the structured error
``{"ok": false, "error": {"code": "budget_exceeded", ...}}`` (errors.http_error_body) before
the app reads any of it:

- a declared ``Content-Length`` over the limit is refused from the headers alone: the app reads
  nothing; the server (uvicorn's h11) drops the rest of the body as it arrives, keeping none of
  it, so a client that sends its whole body before reading still gets the 413;
- a body without a length (``Transfer-Encoding: chunked``) is read here, at most ``max_bytes``
  of it, before the app is called: one byte more and the request is refused, so the app never
  sees a partial body and memory stays bounded by the limit.

Each service adds it once, around its whole app (``app.add_middleware(BodyLimit, max_bytes=N)``
or ``BodyLimit(app, N)``), with the limit its largest legitimate request needs.
"""

from __future__ import annotations

from typing import Any

from mcb_common.errors import ErrorCode, McbError
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .errors import http_error_body

HEALTH_MAX_BODY = 1024  # an app that takes no body (GET /health only)


class BodyLimit:
    def __init__(self, app: ASGIApp, max_bytes: int):
        self.app = app
        self.max_bytes = max_bytes

    def refusal(self, size: str) -> JSONResponse:
        err = McbError(
            ErrorCode.BUDGET_EXCEEDED,
            f"request body of {size} bytes; the limit is {self.max_bytes:,}",
            details={"limit": "request_bytes", "max": self.max_bytes},
        )
        return JSONResponse(http_error_body(err), status_code=413)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for k, v in scope.get("headers") or ():
            if k == b"content-length":
                if v.isdigit() and int(v) > self.max_bytes:
                    await self.refusal(f"{int(v):,}")(scope, receive, send)
                    return
                # the server holds the body to its declared length, which is within the limit
                await self.app(scope, receive, send)
                return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away: nobody to answer
                return
            body = message.get("body") or b""
            size += len(body)
            if size > self.max_bytes:
                await self.refusal(f"over {self.max_bytes:,}")(scope, receive, send)
                return
            chunks.append(body)
            if not message.get("more_body"):
                break
        whole: dict[str, Any] | None = {"type": "http.request", "body": b"".join(chunks), "more_body": False}

        async def replay() -> Message:
            nonlocal whole
            if whole is not None:
                message, whole = whole, None
                return message
            return await receive()  # after the body: the disconnect, when it comes

        await self.app(scope, replay, send)
