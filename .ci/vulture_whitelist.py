"""Names vulture cannot see used (`vulture` reads this file with the packages; see pyproject.toml).

Most are pydantic fields: they are read by validation and serialisation (`model_dump`), never by
name. A name belongs here only with a reason; new dead code fails `.ci/run` instead.
"""

# ruff: noqa
# mypy: ignore-errors

# asp_protocol/models.py: pydantic fields (wire model: validated and dumped, not read by name).
stamped_at
help
code_description
build_digest
artifact_digest
refreshed_at
issued_at
private_only
trust_artifact
outer_protocol
binding_candidate
assurance_capabilities
policy_activation

# bridge/ext/extension.py: read by the MCP SDK (Extension.identifier).
identifier

# bridge/label.py: pydantic fields (wire model: validated and dumped, not read by name).
authoritative
gate_satisfied
basis
non_authoritative
host_method
latency_ms
host_result
bridge_result

# bridge/migration/parity.py: pydantic fields (wire model: validated and dumped, not read by name).
severity_differs

# bridge/migration/report.py: pydantic fields (wire model: validated and dumped, not read by name).
replacement_claimed
non_authoritative
basis
coverage_counts

# host_client/client.py: TraceEntry fields the client sets (see observe.py).
_.host_pid
_.request_bytes
_.response_bytes
_.late_reply_code

# host_client/observe.py: TraceEntry fields: set by the client, read through dataclasses.asdict (asp_debug_trace).
request_bytes
response_bytes
late_reply_code
host_pid

# reference_host/providers/pyindex/build.py: added with the background index build; drop the entry once used.
_.finished

# reference_host/sessions/session.py: pydantic fields (wire model: validated and dumped, not read by name).
network
network_allowlist
resource_limits
server_info
fixes

# reference_host/trust/manifests.py: pydantic fields (wire model: validated and dumped, not read by name).
license
signature
outbound
allowlist
inherit
variables
network
data_classes
schema_
manifest_version

# reference_host/trust/policy.py: pydantic fields (wire model: validated and dumped, not read by name).
authority_model
policy_change_activation
candidate_policy_authority
missing_host
interactive_ms
gate_ms
sweep_ms
acp
schema_
asp_version

# reference_host/repo/workspace.py: oversize/vcs: added for work in flight on other branches (blob size cap, plain directories); drop the entry once used.
vcs
_.oversize

# asp_protocol/edit_plan.py: pydantic fields of the closed EditPlan models (validated, never read by name).
confidence
conflict_hints
coordinate_system
document_changes
range_basis
rationale
recoverable
supported_operations
touched_resources

# bridge/label.py: pydantic fields of the `elided` record (validated and dumped, not read by name).
limit_chars
full_chars
full_digest
cuts

# tests/conftest.py: pytest hooks, called by pytest by name.
pytest_configure
pytest_unconfigure
pytest_collection_modifyitems
pytest_report_header

# bridge/stdio.py: asyncio Protocol callbacks, called by the event loop by name.
connection_made
data_received
eof_received
connection_lost
pause_writing
resume_writing

# tests/bridge/test_dispatch.py: the abstract method a TracerProvider subclass must define.
get_tracer
