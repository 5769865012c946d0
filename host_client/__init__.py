"""The ASP outer-seam client: supervise one host process and make typed `host/*` calls over its stdio."""

from host_client.client import HostClient, Validated
from host_client.errors import HostClientError, HostProtocolError, HostUnavailable
from host_client.settings import HostClientSettings
from host_client.supervision import HostState

__all__ = [
    "HostClient",
    "HostClientError",
    "HostClientSettings",
    "HostProtocolError",
    "HostState",
    "HostUnavailable",
    "Validated",
]
