"""Honour the active repository policy's `adapters.mcp` block (docs/architecture.md#bridge-decisions), read via `host/policy`.

One gate per host client (`BridgeRuntime.policy`) serves the ordinary tools (in the one forwarding
path, per host method) and the extension alike, with or without the extension installed.

`enabled: false` refuses every tool and method, naming the policy; `inspect-status-only` refuses
evaluate and edit-plan; other modes (or no block, or a host without `host/policy`) allow the
extension. The policy is cached and re-read when a host result shows another `policyDigest`,
and before any refusal, so a refusal is never based on a stale read — except `cached_refusal`,
which the bridge's own debug tools use while no host runs (a host is never started just to read
its policy).

A policy the host rejected (bad JSON, NaN, schema errors: `activation` is not `active`) leaves
`adapters.mcp` unknown: evaluate and edit-plan are refused until it parses, reads pass.
When `host/policy` exists but cannot be read (it errors or times out), the policy is unknown and
the gate fails closed for evaluate and edit-plan, while reads pass; when the host itself is down,
the call that follows reports that more clearly than a refusal would.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Literal

import anyio

from asp_protocol.errors import AspError, ErrorCode
from bridge import deadline
from host_client import HostClient, HostUnavailable

log = logging.getLogger(__name__)

Surface = Literal["read", "evaluate", "edit-plan"]
SURFACES: dict[str, Surface] = {
    "host/evaluateChangeset": "evaluate",
    "host/requestEditPlan": "edit-plan",
}
POLICY_METHOD = "host/policy"
POLICY_TIMEOUT_S = 20.0  # generous: on a loaded machine a fresh host answers slowly, and a
# timeout here refuses evaluate and edit-plan over MCP (fail closed) until the retry interval ends
RETRY_AFTER_FAILURE_S = 30.0  # a host whose host/policy fails is not asked again on every call


@dataclass(frozen=True)
class AdapterPolicy:
    """The `adapters.mcp` block in force, with where it came from."""

    available: bool  # False: the host has no host/policy helper
    enabled: bool = True
    mode: str | None = None
    source: str | None = None
    policy_digest: str | None = None
    rejected: str | None = None  # the host rejected the policy file: adapters.mcp is unknown

    def describe(self) -> str:
        where = self.source or "the active repository policy"
        digest = f", policyDigest {self.policy_digest}" if self.policy_digest else ""
        return f"{where}{digest}"


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def parse(result: Any) -> AdapterPolicy:
    """Read `adapters.mcp` out of a `host/policy` result; anything odd counts as no block."""
    result = _obj(result)
    block = _obj(_obj(_obj(result.get("policy")).get("adapters")).get("mcp"))
    source = result.get("source") if isinstance(result.get("source"), str) else None
    digest = result.get("policyDigest") if isinstance(result.get("policyDigest"), str) else None
    mode = block.get("mode") if isinstance(block.get("mode"), str) else None
    rejected = None
    if result.get("activation") != "active":
        detail = (
            result.get("detail") if isinstance(result.get("detail"), str) else "no reason given"
        )
        rejected = f"activation {str(result.get('activation'))[:40]}: {detail[:200]}"
    return AdapterPolicy(
        available=True,
        enabled=block.get("enabled") is not False,
        mode=mode,
        source=(source or "")[:200] or None,
        policy_digest=(digest or "")[:200] or None,
        rejected=rejected,
    )


def surface_of(method: str) -> Surface:
    """The adapter-policy surface a host method belongs to."""
    return SURFACES.get(method, "read")


def refusal(policy: AdapterPolicy, surface: Surface) -> str | None:
    """Why *policy* refuses *surface* over MCP, or None when it allows it."""
    if not policy.enabled:
        return (
            f"refused by repository policy ({policy.describe()}): adapters.mcp.enabled is false, "
            "so no MCP tool or method may reach this host"
        )
    if policy.rejected is not None and surface != "read":
        return (
            f"refused: the host did not accept the repository policy ({policy.describe()}; "
            f"{policy.rejected}), so its adapters.mcp block is unknown and {surface} is not "
            "offered over MCP until the policy parses"
        )
    if policy.mode == "inspect-status-only" and surface != "read":
        return (
            f"refused by repository policy ({policy.describe()}): adapters.mcp.mode is "
            f"inspect-status-only, which allows status, capabilities, authority, inspect and debug "
            f"but not {surface}"
        )
    return None


def digest_of(result: Any) -> str | None:
    """The policy digest a host result was produced under (decision, receipt or status)."""
    if not isinstance(result, dict):
        return None
    for holder in (result, result.get("receipt"), result.get("policy")):
        if isinstance(holder, dict):
            value = holder.get("policyDigest")
            if isinstance(value, str):
                return value
    return None


class AdapterPolicyGate:
    """Caches the adapter policy of one host and answers whether a surface is allowed."""

    def __init__(self) -> None:
        self._policy: AdapterPolicy | None = None
        self._lock = anyio.Lock(fast_acquire=True)  # every call checks: no loop turn when free
        self._failed_at: float | None = None
        self._unknown: str | None = None  # why the policy of a host that offers it is unknown
        self.reads = 0

    @property
    def current(self) -> AdapterPolicy | None:
        return self._policy

    async def _read(self, client: HostClient) -> AdapterPolicy | None:
        now = time.monotonic()
        if self._failed_at is not None and now - self._failed_at < RETRY_AFTER_FAILURE_S:
            return None
        self.reads += 1
        policy = await self._fetch(client)
        self._failed_at = now if policy is None else None
        return policy

    async def _fetch(self, client: HostClient) -> AdapterPolicy | None:
        self._unknown = None
        try:
            result = await client.call(
                POLICY_METHOD,
                None,
                # inside a tool call the read may use the call's budget: a host that is still
                # starting is slow to answer its first request, which is not a policy failure
                timeout=deadline.host_timeout(POLICY_TIMEOUT_S),
                origin="adapter-policy",
            )
        except AspError as error:
            if error.code == ErrorCode.METHOD_NOT_FOUND.value.code:
                log.warning("host has no %s helper; adapters.mcp cannot be honoured", POLICY_METHOD)
                return AdapterPolicy(available=False)
            log.warning("host/policy failed (%s); not caching", error)
            self._unknown = f"host/policy failed with ASP code {error.code} ({error.fail_class})"
            return None
        except HostUnavailable:  # the call that follows reports the dead host itself
            log.warning("host/policy unavailable: the host is down; not caching")
            return None
        except Exception as exc:  # timeout or a malformed reply: the policy is unknown
            log.warning("host/policy unreadable (%s); not caching", exc.__class__.__name__)
            self._unknown = f"host/policy could not be read ({exc.__class__.__name__})"
            return None
        return parse(result)

    async def check(self, client: HostClient, surface: Surface) -> str | None:
        """A refusal naming the policy, or None. Refusals are always based on a fresh read."""
        policy = self._policy
        if policy is not None and refusal(policy, surface) is None:
            # allowed by the policy in hand: no read, so no lock (the lock only keeps reads
            # and the refusal's fresh re-read from overlapping); every tool call passes here
            return None
        async with self._lock:
            if self._policy is None:
                self._policy = await self._read(client)
            policy = self._policy
            if policy is None:
                return self._unknown_refusal(surface)
            reason = refusal(policy, surface)
            if reason is None:
                return None
            fresh = await self._read(client)
            self._policy = fresh
            return refusal(fresh, surface) if fresh is not None else None

    def _unknown_refusal(self, surface: Surface) -> str | None:
        if surface != "read" and self._unknown is not None:
            return (
                f"refused: the repository's adapters.mcp policy is unknown "
                f"({self._unknown}), so {surface} is not offered over MCP until it can be read"
            )
        return None

    def known_refusal(self, surface: Surface) -> str | None:
        """The refusal what is known now implies, without asking the host: the cached policy's,
        or fail-closed for evaluate/edit-plan while the host cannot answer `host/policy`."""
        policy = self._policy
        return refusal(policy, surface) if policy is not None else self._unknown_refusal(surface)

    def cached_refusal(self, surface: Surface) -> str | None:
        """The refusal the policy already read implies, without asking the host (None if unread)."""
        policy = self._policy
        return refusal(policy, surface) if policy is not None else None

    def observe(self, result: Any) -> None:
        """Forget the cached policy when a host result was produced under another policy digest."""
        seen = digest_of(result)
        policy = self._policy
        if seen and policy is not None and policy.available and seen != policy.policy_digest:
            log.info("host policyDigest changed to %s; re-reading adapters.mcp", seen[:80])
            self._policy = None
