"""The camera worker's own settings: every ``MCB_CAMERA_*`` variable is read here, once, and
checked (a bad value stops the worker with a message naming the variable). The stack-wide
settings (ports, addresses, Redis, secrets) come from ``mcb_rpc.settings.Settings``; no other
module of the worker reads the environment. The README's configuration table lists them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

DRIVERS = ("builtin", "fabric", "none")


@dataclass(frozen=True)
class CameraSettings:
    driver: str = "builtin"  # MCB_CAMERA_DRIVER: builtin | fabric | none
    readiness_timeout_s: float = 20.0  # MCB_CAMERA_READINESS_TIMEOUT_S
    operation_timeout_s: float = 120.0  # MCB_CAMERA_OPERATION_TIMEOUT_S
    inline_wait_s: float = 2.0  # MCB_CAMERA_INLINE_WAIT_S (0 = always pending)
    view_distance: float = 64.0  # MCB_CAMERA_VIEW_DISTANCE
    gl_backend: str = "egl"  # MCB_CAMERA_GL_BACKEND
    link_host: str = "127.0.0.1"  # MCB_CAMERA_LINK_HOST
    link_port: int = 8766  # MCB_CAMERA_LINK_PORT
    link_key: str = ""  # MCB_CAMERA_LINK_KEY ("" = <secrets>/camera-link.token)
    test_hold_after_read_s: float = 0.0  # MCB_CAMERA_TEST_HOLD_AFTER_READ_S (tests only)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, link_port: int | None = None) -> CameraSettings:
        """``link_port``: the stack's camera_link port (mcb_rpc Settings: config.json "ports" when
        `mcb up` saved one); MCB_CAMERA_LINK_PORT still wins."""
        env = os.environ if env is None else env
        d = cls() if link_port is None else cls(link_port=link_port)

        def text(name: str, default: str) -> str:
            return env.get(name, "").strip() or default

        def number(name: str, default: float) -> float:
            raw = env.get(name, "").strip()
            try:
                value = float(raw) if raw else default
            except ValueError:
                raise SystemExit(f"{name} must be a number (got {raw!r})") from None
            if value < 0:
                raise SystemExit(f"{name} must not be negative (got {raw!r})")
            return value

        driver = text("MCB_CAMERA_DRIVER", d.driver).lower()
        if driver not in DRIVERS:
            raise SystemExit(f"MCB_CAMERA_DRIVER must be builtin, fabric or none (got {driver!r})")
        port = number("MCB_CAMERA_LINK_PORT", d.link_port)
        if port != int(port) or not 0 < port < 65536:
            raise SystemExit(f"MCB_CAMERA_LINK_PORT must be a port number (got {port!r})")
        return cls(
            driver=driver,
            readiness_timeout_s=number("MCB_CAMERA_READINESS_TIMEOUT_S", d.readiness_timeout_s),
            operation_timeout_s=number("MCB_CAMERA_OPERATION_TIMEOUT_S", d.operation_timeout_s),
            inline_wait_s=number("MCB_CAMERA_INLINE_WAIT_S", d.inline_wait_s),
            view_distance=number("MCB_CAMERA_VIEW_DISTANCE", d.view_distance),
            gl_backend=text("MCB_CAMERA_GL_BACKEND", d.gl_backend),
            link_host=text("MCB_CAMERA_LINK_HOST", d.link_host),
            link_port=int(port),
            link_key=env.get("MCB_CAMERA_LINK_KEY", ""),
            test_hold_after_read_s=number("MCB_CAMERA_TEST_HOLD_AFTER_READ_S", d.test_hold_after_read_s),
        )
