"""Listed ⇔ callable: `tools/list` shows only tools a call could actually be served by.

A tool is hidden when the `tools` allow-list leaves it out (it is then not registered at all), when
the repository's `adapters.mcp` policy refuses its surface (`enabled: false` refuses every tool;
`inspect-status-only` refuses evaluate and edit-plan), or when the host capability it needs is
unavailable (edit, from `host/capabilities`). Clients see a tool they can only be refused as a bug.

What is known about the host comes from a warm-up on the first `tools/list` (policy and
capabilities are read once; the host itself was started in the background when the connection
opened) and from the host results that pass through the bridge later. `tools/list` waits briefly for the warm-up so a fresh client's first list is already right;
when the policy or the capabilities change the visible set, every client that listed tools gets
`notifications/tools/list_changed` (legacy era: on its session; 2026-07-28 era: through
`subscriptions/listen`). `listChanged` is advertised in both eras.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.subscriptions import SubscriptionBus
from mcp.shared.subscriptions import ToolsListChanged
from mcp.types import ListToolsResult, Tool
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from bridge.adapter_policy import AdapterPolicyGate, Surface

log = logging.getLogger(__name__)

# Tools whose host surface is not a plain read, and the host capability a tool needs.
TOOL_SURFACES: dict[str, Surface] = {
    "asp_ext_evaluate_changeset": "evaluate",
    "asp_ext_request_edit_plan": "edit-plan",
}
TOOL_CAPABILITY: dict[str, str] = {"asp_ext_request_edit_plan": "edit"}
MAX_SESSIONS = 16  # sessions remembered for list_changed (one per stdio connection in practice)
WARM_UP_WAIT_S = 3.0  # longest a tools/list waits for the first policy/capabilities read
WARM_UP_READ_S = 10.0  # deadline of the warm-up's host/capabilities read (a cold host)

ToolLister = Callable[[], Awaitable[list[Tool]]]


def capability_availability(result: Any) -> dict[str, bool]:
    """`{family: available}` from a `host/capabilities` result (odd entries are left out)."""
    capabilities = result.get("capabilities") if isinstance(result, dict) else None
    if not isinstance(capabilities, dict):
        return {}
    return {
        str(family): status["available"]
        for family, status in capabilities.items()
        if isinstance(status, dict) and isinstance(status.get("available"), bool)
    }


class Listing:
    """The visible tool set of one connection's host, and who to tell when it changes."""

    def __init__(self, gate: AdapterPolicyGate, bus: SubscriptionBus | None = None) -> None:
        self.gate = gate
        self.bus = bus
        self.capabilities: dict[str, bool] = {}
        self.ready = anyio.Event()
        self._sessions: dict[int, Any] = {}  # legacy-era sessions that listed tools
        self._listed: frozenset[str] | None = None
        # every registered tool's name, as the last tools/list found them (the set is fixed once
        # the server is built): a call re-checks visibility by name, not by listing every tool
        self._names: tuple[str, ...] = ()
        self.lister: ToolLister | None = None  # every registered tool (set by create_server)
        self._start_warm_up: Callable[[], object] | None = None

    def arm(self, start: Callable[[], object]) -> None:
        """*start* begins the warm-up; it runs on the first `tools/list` (a connection that never
        lists tools never gets the extra host traffic)."""
        self._start_warm_up = start

    def begin(self) -> None:
        start, self._start_warm_up = self._start_warm_up, None
        if start is not None:
            start()
        elif not self.ready.is_set() and self.lister is None:
            self.ready.set()  # nothing armed (a server built without the bridge lifespan)

    def hidden_because(self, name: str) -> str | None:
        """Why *name* is not listed now, or None when it is listed."""
        surface = TOOL_SURFACES.get(name, "read")
        refused = self.gate.known_refusal(surface)
        if refused is not None:
            return refused
        family = TOOL_CAPABILITY.get(name)
        if family is not None and self.capabilities.get(family) is not True:
            state = "unavailable" if family in self.capabilities else "not reported yet"
            return f"the host's {family} capability is {state} (host/capabilities)"
        return None

    def visible(self, tools: list[Tool]) -> list[Tool]:
        return [tool for tool in tools if self.hidden_because(tool.name) is None]

    def observe(self, method: str, result: Any) -> None:
        """Learn capabilities from a host result passing through the bridge."""
        if method == "host/capabilities":
            seen = capability_availability(result)
            if seen:
                self.capabilities = seen

    async def after(
        self, read_policy: Callable[[], Awaitable[Any]], method: str, result: Any
    ) -> None:
        """After a host result: learn from it, re-read a policy the result showed to be stale
        (the gate forgot it), and notify when the visible set changed."""
        self.observe(method, result)
        if self.gate.current is None and self._listed is not None:
            await read_policy()
        await self.changed()

    async def warm_up(
        self, read_policy: Callable[[], Awaitable[Any]], read_caps: Callable[[], Awaitable[Any]]
    ) -> None:
        """Read the capabilities, then the policy, once, and notify when that changed the list.

        The capabilities read goes first and waits for a cold host; only a host that answered it
        is asked for its policy (an unanswered policy read would count as a failure and refuse
        evaluate for a while). Failures leave both unknown: the calls report the host."""
        try:
            with anyio.move_on_after(WARM_UP_READ_S + 5):  # both reads are bounded, too
                self.observe("host/capabilities", await read_caps())
                await read_policy()
        except Exception as exc:  # an unreadable host is reported by the calls themselves
            log.info("listing warm-up could not read the host (%s)", exc.__class__.__name__)
        finally:
            self.ready.set()
        await self.changed()

    async def changed(self) -> None:
        """Tell every client that listed tools when the visible set differs from what it saw."""
        if self._listed is None or self.lister is None:
            return
        now = frozenset(name for name in self._names if self.hidden_because(name) is None)
        if now == self._listed:
            return
        self._listed = now
        log.info("visible tools changed: %s", ", ".join(sorted(now)) or "(none)")
        for key, session in list(self._sessions.items()):
            try:
                await session.send_tool_list_changed()
            except Exception as exc:  # a closed session misses the notice and is forgotten
                log.debug("tools/list_changed not delivered (%s)", exc.__class__.__name__)
                self._sessions.pop(key, None)
        if self.bus is not None:
            await self.bus.publish(ToolsListChanged())

    def filtered(self, ctx: ServerRequestContext[Any, Any], result: HandlerResult) -> HandlerResult:
        if isinstance(result, dict):
            result = ListToolsResult.model_validate(result)
        if not isinstance(result, ListToolsResult):
            return result
        self._names = tuple(tool.name for tool in result.tools)
        shown = self.visible(result.tools)
        self._listed = frozenset(tool.name for tool in shown)
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            # the 2026-07-28 era hears it through the bus instead
            self._sessions[id(ctx.session)] = ctx.session
            while len(self._sessions) > MAX_SESSIONS:
                self._sessions.pop(next(iter(self._sessions)))
        return result.model_copy(update={"tools": shown})


SERVED = frozenset({"tools/list", "initialize"})  # what `middleware` acts on


def middleware(lister: ToolLister) -> Any:
    """Filter `tools/list` by the connection's `Listing`; advertise `listChanged` on the legacy
    `initialize` result (the 2026-07-28 era derives it from `subscriptions/listen`)."""

    async def filter_tools(
        ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        listing = getattr(ctx.lifespan_context, "listing", None)
        if ctx.method == "tools/list" and isinstance(listing, Listing):
            listing.begin()
            listing.lister = lister
            with anyio.move_on_after(WARM_UP_WAIT_S):
                await listing.ready.wait()
            return listing.filtered(ctx, await call_next(ctx))
        result = await call_next(ctx)
        if ctx.method == "initialize" and isinstance(result, dict):
            tools = result.setdefault("capabilities", {}).setdefault("tools", {})
            if isinstance(tools, dict):
                tools["listChanged"] = True
        return result

    return filter_tools
