"""The bridge's one `tools/call` handler, on the SDK's lowlevel server.

See docs/architecture.md, "The path of a tool call", for where it sits.

Why it exists: `MCPServer` answers a tool call through its tool layer — a `Context` model, the
`ToolManager` look-up, `Tool.run` (argument pre-parse, validation and a one-level dump, the call,
two layers of error wrapping), then `convert_result`, which validates the bridge's structured
content against the output model once more before the runner dumps it. For the bridge's tools,
which are all `async` and all answer a labelled `CallToolResult`, most of that is generic work
done on every call.

What stays the SDK's: the session and dispatcher, the runner's checks of the request
(`CallToolRequestParams`, the per-era surface), every middleware (the label guard and the budget
among them, bridge/middleware.py), the per-era result shaping and serialization, cancellation
(the request's cancel scope) and progress (`Context.report_progress`, the session's own
`notifications/progress`). The tools are still `MCPServer` tools: added with `add_tool`, listed by
`MCPServer` (so `tools/list` is unchanged byte for byte), and their arguments are validated by the
same pydantic argument model their published input schema is generated from.

What this handler does on each call: look the tool up in the server's tool manager (so
`remove_tool` and the `tools` allow-list apply at once), validate the arguments, call the tool
with a `Context` for this request (`_ToolContext`: the SDK's, with its request context
read from a slot), and hand the runner the result — a `WireResult`
(bridge/wire_result.py) as its wire form, so the SDK does not dump it again. Failures read as
`MCPServer` words them (unknown tool, argument errors, a `ToolError`'s text, a crash's generic
text; an `MCPError` stays a JSON-RPC error), so the label guard's readable, labelled refusal
(bridge/server.py) is unchanged. A labelled result built by bridge/label.py is not validated
against the output model again (its fields are the `Envelope`'s by construction, and the tests
check every tool's results against the published `outputSchema`); any other result goes through
the SDK's own `convert_result`, output check included.
"""

from __future__ import annotations

import logging
from typing import Any, cast

from mcp.server.context import HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, compose_tool_call_handler
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import (
    ResourceError,
    ToolError,
    UnexpectedResourceError,
    UnexpectedToolError,
)
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolRequestParams, CallToolResult, TextContent
from pydantic import ValidationError

from bridge.wire_result import WireResult

log = logging.getLogger(__name__)
TOOLS_CALL = "tools/call"


class _ToolContext(Context[Any, Any]):
    """The `Context` a tool gets, reading its request context from a slot.

    The SDK keeps the request context in a pydantic private attribute, and a private attribute
    is read through `BaseModel.__getattr__`, after a failed ordinary look-up (several
    microseconds a read); a tool call reads it at least twice (the bridge's state, the progress
    report). Everything else is `Context`'s own, built by its own constructor."""

    __slots__ = ("_request",)

    def __init__(
        self,
        request: ServerRequestContext[Any, Any],
        server: MCPServer[Any],
        params: CallToolRequestParams,
    ) -> None:
        super().__init__(
            request_context=request,
            mcp_server=server,
            input_params=params,
            subscriptions=server._subscriptions,
        )
        object.__setattr__(self, "_request", request)  # a slot: no pydantic hook on the way

    @property
    def request_context(self) -> ServerRequestContext[Any, Any]:
        request = getattr(self, "_request", None)  # a copy has none: the SDK's attribute then
        return cast(Any, request) if request is not None else super().request_context


def _error(text: str) -> CallToolResult:
    """The unlabelled error result `MCPServer` answers with (the label guard labels it)."""
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


class ToolDispatch:
    """Serves `tools/call` for every tool of one `MCPServer` (see the module doc)."""

    def __init__(self, server: MCPServer[Any]) -> None:
        self._server = server
        self._tools = server._tool_manager  # where add_tool / remove_tool keep the tools

    def install(self) -> None:
        """Register as the lowlevel server's `tools/call` handler, inside any extension's
        `intercept_tool_call` as `MCPServer` would compose it. Call it after every tool is added."""
        lowlevel = self._server._lowlevel_server
        extensions: list[Extension] = self._server._extensions
        intercepting = [
            e
            for e in extensions
            if type(e).intercept_tool_call is not Extension.intercept_tool_call
        ]
        handler = compose_tool_call_handler(extensions, self) if intercepting else self
        lowlevel.add_request_handler(TOOLS_CALL, CallToolRequestParams, handler)

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> HandlerResult:
        name = params.name
        tool = self._tools.get_tool(name)
        if tool is None:
            return _error(f"Unknown tool: {name}")
        server = self._server
        context: Context[Any, Any] = _ToolContext(ctx, server, params)
        if tool.resolved_params or not tool.is_async:  # resolvers, worker threads: the SDK's run
            return await self._sdk_run(tool, params, context)
        try:
            arguments = tool.fn_metadata.validate_arguments(params.arguments or {})
        except ValidationError as exc:
            fields = sorted({".".join(str(part) for part in err["loc"]) for err in exc.errors()})
            log.info("Tool %r rejected arguments: %r", name, fields)
            return _error(f"Error executing tool {name}: {exc}")
        except MCPError:
            raise
        except Exception:  # a validator or default factory that raises is a crash
            log.exception("Tool %r raised an unexpected exception", name)
            return _error(f"Error executing tool {name}")
        if tool.context_kwarg is not None:
            arguments[tool.context_kwarg] = context
        try:
            result = await tool.fn(**arguments)
            if isinstance(result, WireResult):
                wire = result.wire()
                if wire is not None:
                    return wire
            return tool.fn_metadata.convert_result(result)
        except MCPError:
            raise
        except (ToolError, ResourceError) as exc:
            if isinstance(exc, UnexpectedToolError | UnexpectedResourceError):
                log.exception("Tool %r raised an unexpected exception", name)
                return _error(f"Error executing tool {name}: {exc}")
            log.info("Tool %r failed: %r", name, str(exc))
            return _error(f"Error executing tool {name}: {exc}")
        except Exception:  # a crash: its own text stays in the log
            log.exception("Tool %r raised an unexpected exception", name)
            return _error(f"Error executing tool {name}")

    async def _sdk_run(
        self, tool: Tool, params: CallToolRequestParams, context: Context[Any, Any]
    ) -> HandlerResult:
        """A tool outside the bridge's shape (resolvers, a sync function): `MCPServer`'s own run."""
        try:
            result: HandlerResult = await tool.run(
                params.arguments or {}, context, convert_result=True
            )
        except MCPError:
            raise
        except ToolError as exc:
            if isinstance(exc, UnexpectedToolError):
                log.exception("Tool %r raised an unexpected exception", tool.name)
            return _error(str(exc))
        return result
