"""The ASP vocabulary: every closed set of names the wire uses, defined once next to its Literal.

Each Literal types the fields that carry the name; the tuple or set beside it is derived from the
Literal (never written out again), so a name added to the definition reaches every loop, check and
table that enumerates it. The host, the client, the bridge and the tests import from here instead
of keeping their own copies.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

# -- call-sites and decisions -----------------------------------------------------------------------

CallSite = Literal["interactive", "gate", "sweep"]
CALL_SITES: tuple[CallSite, ...] = get_args(CallSite)

Decision = Literal["allow", "deny", "indeterminate"]

# -- capability families and their legacy role names ------------------------------------------------

CapabilityFamily = Literal["inspect", "check", "edit"]
CAPABILITY_FAMILIES: tuple[CapabilityFamily, ...] = get_args(CapabilityFamily)

LegacyRole = Literal["sense", "judge", "act"]
"""The pre-1.0 role names: compatibility labels only, never a separate capability."""
LEGACY_ROLE: dict[CapabilityFamily, LegacyRole] = {
    "inspect": "sense",
    "check": "judge",
    "edit": "act",
}
LEGACY_ROLES: tuple[LegacyRole, ...] = get_args(LegacyRole)

# -- assessments, assurance and provider lifecycle --------------------------------------------------

AssessmentStatus = Literal["complete", "incomplete", "unsupported", "error", "cancelled"]
AssuranceMode = Literal["advisory", "gated", "mediated-write", "isolated"]
Comparison = Literal["introduced", "all", "resolved"]
LifecycleState = Literal[
    "launched",
    "initializing",
    "initialized",
    "active",
    "cancelled",
    "shutting-down",
    "exited",
    "crashed",
    "timed-out",
    "incompatible",
    "malformed",
    "unavailable",
    "quarantined",
    "degraded",
]

# -- coverage degradation reasons -------------------------------------------------------------------

HealthReason = Literal["timed-out", "crashed"]
"""A provider that could not run (a timeout or a crash): a health failure, which fails open only
at `interactive` and closed everywhere else."""
HEALTH_REASONS: frozenset[HealthReason] = frozenset(get_args(HealthReason))

DenyReason = Literal["blocking-diagnostic", "direct-write-risk", "lattice-fast-path"]
"""The reasons that make a decision `deny` (every other degradation is at worst indeterminate)."""
DENY_REASONS: frozenset[DenyReason] = frozenset(get_args(DenyReason))

DegradationReason = Literal[
    HealthReason,
    DenyReason,
    "fail-open",
    "quarantined",
    "skewed",
    "missing",
    "stale",
    "missing-required-provider",
    "stale-baseline",
    "missing-authority",
    "insufficient-assurance",
    "incomplete",
    "unsupported",
    "error",
    "cancelled",
    "malformed",
    "optional-degraded",
    "unavailable",
    "incompatible",
    "unsupported-assurance",
    "policy-self-authorization",
]

# -- blob references --------------------------------------------------------------------------------

BLOB_REF_PATTERN = r"^blob:[a-z0-9]+:[0-9a-f]+$"
"""A provider-side blob reference: any digest algorithm (the inner seam names it)."""
BLOB_REF = re.compile(BLOB_REF_PATTERN)

OUTER_BLOB_REF_PATTERN = r"^blob:sha256:[0-9a-f]+$"
"""An outer-seam blob id: the host content-addresses uploads and answers with sha256 only."""
OUTER_BLOB_REF = re.compile(OUTER_BLOB_REF_PATTERN)
