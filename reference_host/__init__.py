"""The reference ASP host: owns policy, freshness, providers, authority, the decision and receipts."""

__version__ = "0.1.0"
HOST_NAME = "asp-reference-host"
