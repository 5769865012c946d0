"""The reference host's reading of one Assessment, for the tests that judge provider output
directly: the host's own validator (`validate_assessment`) with what those tests never vary filled
in (no provider configuration; the provider declares only its own id as diagnostic source), so that
each call names only what its test is about. Imports the host: not for the hostile suite."""

from __future__ import annotations

from typing import Any

from reference_host.evaluate.assessment_checks import AssessmentCheck, validate_assessment


def host_reading(
    raw: Any,
    provider_id: str,
    capability_version: str,
    *,
    baseline: dict[str, Any],
    changeset_digest: str,
    served: set[str],
    served_ever: set[str] | None = None,
    sources: list[str] | None = None,
    expected_digest: str | None = None,
) -> AssessmentCheck:
    """*raw* judged for this request: blobs *served* to it now (and *served_ever*, default the
    same, over the session), diagnostic *sources* declared (default: the provider's own id)."""
    return validate_assessment(
        raw,
        provider_id=provider_id,
        declared_sources=[provider_id] if sources is None else sources,
        capability_version=capability_version,
        configuration=None,
        expected_digest=expected_digest,
        baseline=baseline,
        changeset_digest=changeset_digest,
        served_now=served,
        served_ever=served if served_ever is None else served_ever,
    )


def as_stamped(
    raw: dict[str, Any],
    provider_id: str,
    capability_version: str,
    *,
    sources: list[str] | None = None,
    expected_digest: str | None = None,
    read: bool = True,
) -> AssessmentCheck:
    """*raw* judged against what its own `validAsOf` claims: that baseline, that changeset digest,
    its blobs served over the session (and to this request too, unless not *read*)."""
    stamped = raw["validAsOf"]
    blobs = set(stamped["blobs"])
    return host_reading(
        raw,
        provider_id,
        capability_version,
        baseline=stamped["baseline"],
        changeset_digest=stamped["changesetDigest"],
        served=blobs if read else set(),
        served_ever=blobs,
        sources=sources,
        expected_digest=expected_digest,
    )
