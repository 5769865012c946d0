"""The bridge's SDK middleware as one router: each request runs only the layers for its method.

The SDK calls every middleware for every request and notification. Most of the bridge's serve
one or two methods (the extension's advertisement only `initialize` and `server/discover`, the
listing filter `tools/list`, the resource context `resources/read`), so a `tools/call` used to
pass through five layers to meet the two that act on it. Here each layer says which methods it
serves (`Scoped`; a bare middleware serves every method) and the router composes, per method,
the chain of the layers that apply, in the order given. A method none of them serves goes
straight to the SDK's handler; the chains are built once, for the methods the layers name, so an
unknown method never grows them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext

Middleware = Callable[[ServerRequestContext[Any, Any], CallNext], Awaitable[HandlerResult]]


@dataclass(frozen=True)
class Scoped:
    """A middleware and the methods it acts on."""

    methods: frozenset[str]
    middleware: Middleware


def scoped(methods: Iterable[str], middleware: Middleware) -> Scoped:
    return Scoped(frozenset(methods), middleware)


async def _apply(
    middleware: Middleware, call_next: CallNext, ctx: ServerRequestContext[Any, Any]
) -> HandlerResult:
    return await middleware(ctx, call_next)


def router(layers: Sequence[Scoped | Middleware]) -> ServerMiddleware[Any]:
    """One middleware running, for each method, the *layers* that serve it (outermost first)."""
    everywhere = tuple(layer for layer in layers if not isinstance(layer, Scoped))
    named = {method for layer in layers if isinstance(layer, Scoped) for method in layer.methods}
    chains: dict[str, tuple[Middleware, ...]] = {
        method: tuple(
            layer.middleware if isinstance(layer, Scoped) else layer
            for layer in layers
            if not isinstance(layer, Scoped) or method in layer.methods
        )
        for method in named
    }

    async def route(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        chain = chains.get(ctx.method, everywhere)
        call = call_next
        for middleware in reversed(chain):
            call = partial(_apply, middleware, call)
        return await call(ctx)

    return route
