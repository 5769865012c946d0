"""Streamable HTTP that cannot be reached by the wrong people.

- Host/Origin (DNS-rebinding) checks for every bind address, through the SDK's own
  `TransportSecuritySettings`: the allowed hosts are the bind address, the loopback names and any
  `http_allowed_hosts` the user names (the SDK turns the check on only for an exact loopback bind).
- A bind that is not loopback refuses to start without a bearer token (`--http-token`, or
  `ASP_BRIDGE_HTTP_TOKEN`); with a token, every request must carry `Authorization: Bearer <token>`
  (compared in constant time), on loopback too.
- Each HTTP session sees only its own exchanges in the debug tools (`bridge/tools/debug.py`).
"""

from __future__ import annotations

import hmac
import ipaddress
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from bridge.config import BridgeSettings, ConfigError

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _authority(host: str) -> str:
    """A host as it appears in a Host header: IPv6 literals in brackets."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def security_settings(bind: str, extra: list[str]) -> TransportSecuritySettings:
    """DNS-rebinding protection on, whatever the bind address; any port of each allowed name."""
    names = list(dict.fromkeys([bind, *LOOPBACK_NAMES, *extra]))
    hosts = [form for name in names for form in (_authority(name), f"{_authority(name)}:*")]
    origins = [f"{scheme}://{host}" for scheme in ("http", "https") for host in hosts]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


class BearerToken:
    """ASGI middleware: an HTTP request without the configured bearer token gets 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                response = Response(
                    "missing or wrong bearer token",
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="asp-mcp-bridge"'},
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def check_exposure(settings: BridgeSettings) -> None:
    """Off loopback, a token is required (the bridge reads a repository and runs its host)."""
    if not is_loopback(settings.http_host) and not settings.http_token:
        raise ConfigError(
            f"http_host {settings.http_host!r} is not a loopback address: refusing to serve "
            "streamable HTTP without a bearer token (set ASP_BRIDGE_HTTP_TOKEN or --http-token)"
        )


def http_app(server: Any, settings: BridgeSettings) -> ASGIApp:
    """The SDK's streamable HTTP app with the checks above; raises ConfigError when exposed."""
    check_exposure(settings)
    app: ASGIApp = server.streamable_http_app(
        transport_security=security_settings(settings.http_host, settings.http_allowed_hosts),
        host=settings.http_host,
    )
    return BearerToken(app, settings.http_token) if settings.http_token else app


def run_http(server: Any, settings: BridgeSettings) -> None:
    import uvicorn

    app = http_app(server, settings)
    uvicorn.run(
        app, host=settings.http_host, port=settings.port, log_level=settings.log_level.lower()
    )
