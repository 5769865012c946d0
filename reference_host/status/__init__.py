"""`host/status`, `host/capabilities`, `host/authority/status`: provider views and the gate/coverage roll-ups."""
