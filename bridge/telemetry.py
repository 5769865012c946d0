"""The SDK's OpenTelemetry middleware runs only when a tracer provider is configured.

The SDK puts `OpenTelemetryMiddleware` first in `Server.middleware`, so every request and
notification opens a server span: an attribute dict, trace-context extraction from `_meta`, the
tracer's context manager and its exception mapping. With no tracer provider configured the
OpenTelemetry API hands out a no-op tracer, and all of that records nothing — yet it is about
81 K instructions of each bridge `tools/call` (the SDK's own wrapper around every request).

The rule (docs/architecture.md, "The path of a tool call"): when the server is built, the
middleware stays where the SDK put it if the process has a real tracer provider — set in code
before the bridge is built, by `opentelemetry-instrument`, or named by the
`OTEL_PYTHON_TRACER_PROVIDER` environment variable — and is removed if the provider is the API's
default placeholder (`ProxyTracerProvider`, nothing configured) or an explicit
`NoOpTracerProvider`. A provider configured after the server is built is not picked up.
"""

from __future__ import annotations

from typing import Any

from mcp.server import Server
from mcp.server._otel import OpenTelemetryMiddleware
from opentelemetry import trace


def tracing_configured(provider: trace.TracerProvider | None = None) -> bool:
    """Whether *provider* (default: the process's global one) records anything."""
    provider = trace.get_tracer_provider() if provider is None else provider
    return not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)


def drop_idle_telemetry(server: Server[Any], provider: trace.TracerProvider | None = None) -> bool:
    """Remove the SDK's OpenTelemetry middleware from *server* unless tracing is configured;
    True when it was removed."""
    if tracing_configured(provider):
        return False
    before = len(server.middleware)
    server.middleware[:] = [
        m for m in server.middleware if not isinstance(m, OpenTelemetryMiddleware)
    ]
    return len(server.middleware) < before
