"""The ASP wire layer shared by the reference host, the host client and the bridge."""

ASP_PROTOCOL_VERSION = "asp/1.0"
ASP_LEGACY_PROTOCOL_VERSION = "asp/0.1"
OUTER_PROTOCOL = "asp-outer/1.0"
CHECK_CAPABILITY_VERSION = "check/1.0"
DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024

__all__ = [
    "ASP_LEGACY_PROTOCOL_VERSION",
    "ASP_PROTOCOL_VERSION",
    "CHECK_CAPABILITY_VERSION",
    "DEFAULT_MAX_LINE_BYTES",
    "OUTER_PROTOCOL",
]
