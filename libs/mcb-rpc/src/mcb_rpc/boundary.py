"""The one gRPC boundary of every service: authenticate, run, translate errors.

A servicer class is decorated with ``grpc_boundary(service, SCOPES)``: ``SCOPES`` names the
principals (agent | admin | service) each method accepts (docs/architecture.md, "Who may call
what"), and every RPC of the generated servicer base must have an entry and an implementation
(a method without one fails at import, never open at run time). Each implementation is written
as ``async def Method(self, request, caller)`` (or a plain ``def``); the boundary around it

* turns the bearer token and trusted metadata into the ``Caller`` (mcb_rpc.auth), refusing
  ``unauthenticated`` / ``permission_denied`` per the table;
* translates an ``McbError`` exactly once (``errors.abort_with``: status + ``mcb-error`` trailer);
* answers any other exception as ``internal`` with ``internal_message`` (no internals leak),
  logging the traceback and remembering it for ``/health`` (``errors.abort_internal``).
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import grpc
from mcb_common.errors import McbError

from mcb_rpc.auth import caller_from_context
from mcb_rpc.errors import abort_internal, abort_with

C = TypeVar("C", bound=type)


def rpc_names(base: type) -> set[str]:
    """The RPC methods a generated ``*Servicer`` base class declares."""
    return {n for n, v in vars(base).items() if callable(v) and n[:1].isupper()}


def _generated_base(cls: type) -> type:
    for base in cls.__mro__[1:]:
        if base.__name__.endswith("Servicer") and base.__module__.endswith("_pb2_grpc"):
            return base
    raise TypeError(f"{cls.__name__} does not derive from a generated *Servicer class")


def grpc_boundary(
    service: str,
    scopes: Mapping[str, tuple[str, ...]],
    internal_message: str = "{service} internal error in {method}; see the {service} log",
) -> Callable[[C], C]:
    """Class decorator: wrap every RPC of the servicer in the boundary (module docstring).

    ``internal_message`` may use ``{service}`` and ``{method}``. The instance must have
    ``self.tokens`` (mcb_rpc.tokens.TokenTable)."""
    log = logging.getLogger(f"mcb.{service}.rpc")

    def decorate(cls: C) -> C:
        rpcs = rpc_names(_generated_base(cls))
        if set(scopes) != rpcs:
            raise TypeError(
                f"{cls.__name__}: the scope table must name every RPC exactly: "
                f"missing {sorted(rpcs - set(scopes))}, unknown {sorted(set(scopes) - rpcs)}"
            )
        for name in sorted(rpcs):
            impl = cls.__dict__.get(name)
            if impl is None:
                raise TypeError(f"{cls.__name__} does not implement {name}")
            setattr(cls, name, _guard(impl, name, tuple(scopes[name]), service, internal_message, log))
        return cls

    return decorate


def _guard(
    impl: Callable[..., Any],
    name: str,
    allowed: tuple[str, ...],
    service: str,
    internal_message: str,
    log: logging.Logger,
) -> Callable[..., Any]:
    @functools.wraps(impl)
    async def rpc(self: Any, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            caller = caller_from_context(context, self.tokens, allowed)
            out = impl(self, request, caller)
            if inspect.isawaitable(out):
                out = await out
            return out
        except McbError as err:
            await abort_with(context, err)
        except Exception as exc:  # noqa: BLE001 - a bug: log it here, answer without internals
            log.exception("%s %s failed", service, name)
            await abort_internal(context, exc, internal_message.format(service=service, method=name))
        raise AssertionError("unreachable: abort raises")

    return rpc
