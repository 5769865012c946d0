"""`asp-fake-provider`: a scriptable check provider for hostile-host tests, behaviour chosen by argv only.

`python -m reference_host.providers.fake --behavior B [--id ID] [--protocol asp/1.0] [--hang-seconds N]`;
`--protocol asp/0.1` speaks the recorded 0.1 dialect (`fake_v01.py`).
Everything a behaviour does not deliberately break is exactly valid: the clean Assessment passes
check-assessment.schema.json, the forged ones fail it the way the official host-owned fixtures do.
The clean path reads every `after` blob of the changeset through `workspace/readBlob` and reports
exactly those in `validAsOf.blobs`. Configuration: `{}` or `{"verify": {"maxParameters": N >= 1}}`
(accepted and digested, no effect on findings); anything else is -32602.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import mmap
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio

from asp_protocol import ASP_LEGACY_PROTOCOL_VERSION, ASP_PROTOCOL_VERSION, CHECK_CAPABILITY_VERSION
from asp_protocol.canonical import blob_id, config_digest, digest, digest_bytes
from asp_protocol.errors import AspError, ErrorCode
from reference_host.providers import assessment
from reference_host.providers.configuration import Setting, resolve_configuration
from reference_host.providers.runtime import Call, ProviderRuntime, check_capability, run_stdio

HANGS_REPORTING = ("keeps-working", "repeats-progress")
BEHAVIORS = (
    "clean",
    "finding",
    "malformed",
    "forged-top-level",
    "forged-nested",
    "stale-baseline",
    "wrong-changeset-digest",
    "unread-blob",
    "hang",
    "keeps-working",  # progress that keeps changing, never an answer (slow, not hung)
    "repeats-progress",  # one progress message again and again, never an answer
    "crash-initialize",
    "crash-evaluate",
    "version-refusal",
    "unsupported",
    "incomplete",
    "error",
    "rpc-error",
    "cancelled",
    "slow-progress",
    "malformed-initialize",
    "no-check-capability",
    "wrong-config-digest",
    "requests-write",
    "read-out-of-grant",
    "writes-workspace",
    "allocates",
    "opens-fds",
    "forks-child",
)
#: Hostile trusted providers (item-by-item what the OS limits or the host's checks must stop):
#: writes-workspace plants PLANTED in the work tree and answers complete; allocates asks for
#: ALLOCATE_BYTES and opens-fds for OPEN_FDS descriptors before answering complete; forks-child
#: (with --pid-file) leaves a child in its own session, both ignoring SIGTERM and stdin EOF.
PLANTED = "planted-by-provider.txt"
ALLOCATE_BYTES = 3 * 1024**3
OPEN_FDS = 1000
_HELD: list[Any] = []  # what allocates / opens-fds took, kept for the life of the process
DEFAULT_ID = "asp-fake-provider"
CRASH_STATUS = 3
FAKE_CONFIGURATION = {
    "verify": Setting("object", children={"maxParameters": Setting("int", minimum=1)})
}
#: A blob id no session ever references: content-addressed bytes the host was never given.
UNREAD_BLOB = blob_id(b"asp-fake-provider: a blob this provider never read")
OUT_OF_GRANT_PROBE = blob_id(b"asp-fake-provider: out-of-grant probe")


def _crash(point: str) -> None:
    sys.stderr.write(f"asp-fake-provider: scripted crash during {point}\n")
    sys.stderr.flush()
    os._exit(CRASH_STATUS)


class FakeProvider(ProviderRuntime):
    """The runtime plus one scripted misbehaviour; see BEHAVIORS."""

    def __init__(
        self,
        behavior: str,
        *,
        provider_id: str = DEFAULT_ID,
        protocol_version: str = ASP_PROTOCOL_VERSION,
        hang_seconds: float | None = None,
    ) -> None:
        self.behavior = behavior
        self.hang_seconds = hang_seconds
        if behavior == "no-check-capability":
            capabilities: dict[str, Any] = {
                "inspect": {"verbs": ["symbols"], "scopes": ["workspace"]}
            }
        else:
            capabilities = {"check": check_capability([provider_id], ["introduced", "all"])}
        permissions = {"read": ["**"], "write": behavior == "requests-write", "network": False}
        super().__init__(
            provider_id=provider_id,
            fingerprint=digest_bytes(Path(__file__).read_bytes()),
            capabilities=capabilities,
            protocol_version=protocol_version,
            requested_permissions=permissions,
        )
        if behavior != "no-check-capability":
            self.capability("check/evaluate", self.evaluate)

    @property
    def rule(self) -> str:
        return f"{self.provider_id}/finding"

    def initialize_result(self) -> dict[str, Any]:
        if self.behavior == "malformed-initialize":
            return {"serverInfo": {"name": self.provider_id}, "capabilities": "check"}
        return super().initialize_result()

    async def before_initialize(self, params: Any) -> None:
        if self.behavior == "crash-initialize":
            _crash("initialize")
        if self.behavior == "version-refusal":
            offered = params.get("protocolVersion") if isinstance(params, dict) else None
            raise AspError(
                ErrorCode.UNSUPPORTED_VERSION,
                "unsupported-version",
                detail=f"scripted refusal of {str(offered)[:80]!r}",
            )

    async def evaluate(self, call: Call) -> dict[str, Any]:
        request = assessment.parse_evaluate(
            call.params, protocol_version=self.session.protocol_version
        )
        config = resolve_configuration(
            request.params, FAKE_CONFIGURATION, self.provider_id, CHECK_CAPABILITY_VERSION
        )
        clock = assessment.Stopwatch()
        if self.behavior == "hang":
            if self.hang_seconds is None:
                await anyio.sleep_forever()
            await anyio.sleep(self.hang_seconds or 0)
        for step in itertools.count() if self.behavior in HANGS_REPORTING else ():
            repeat = self.behavior == "repeats-progress"
            await call.progress(message="working" if repeat else f"{step} files done")
            await anyio.sleep(0.05)
        if self.behavior == "rpc-error":
            raise AspError(
                ErrorCode.INTERNAL_ERROR,
                "scripted provider failure",
                fail_class="health",
                retryable=True,
                detail="asp-fake-provider --behavior rpc-error",
            )
        evidence: list[dict[str, Any]] = []
        if self.behavior == "read-out-of-grant":
            evidence.append(await self._probe_out_of_grant(call))
        after = [change.after for change in request.changes if change.after is not None]
        _, refused = await call.callbacks.read_each(after) if after else ({}, {})
        if self.behavior == "crash-evaluate":
            _crash("check/evaluate")
        self._misbehave()
        if self.behavior == "slow-progress":
            for step in range(1, 4):
                await call.progress(percentage=step * 25, message=f"scripted step {step} of 3")
                await anyio.sleep(0.05)
        answer = self._assessment(request, call, config.digest, clock, refused, evidence)
        return self._forge(answer, request)

    def _misbehave(self) -> None:
        """The hostile behaviours that need no protocol change (see BEHAVIORS' comment)."""
        if self.behavior == "writes-workspace" and self.session.workspace_root:
            (Path(self.session.workspace_root) / PLANTED).write_text("written by a provider\n")
        elif self.behavior == "allocates":  # address space, not RAM: unconfined this succeeds
            flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_NORESERVE", 0)
            _HELD.append(mmap.mmap(-1, ALLOCATE_BYTES, flags=flags))
        elif self.behavior == "opens-fds":
            _HELD.extend(os.open(os.devnull, os.O_RDONLY) for _ in range(OPEN_FDS))

    async def _probe_out_of_grant(self, call: Call) -> dict[str, Any]:
        """Ask for a blob outside the session and report the host's answer as evidence."""
        try:
            served = await call.callbacks.read_blobs([OUT_OF_GRANT_PROBE])
        except AspError as error:
            answer: dict[str, Any] = {
                "refused": True,
                "code": error.code,
                "failClass": error.fail_class,
            }
        else:
            answer = {"refused": False, "served": sorted(served)}
        return {
            "kind": "message",
            "message": "workspace/readBlob of a blob outside the session: host answer recorded",
            "data": {"probe": OUT_OF_GRANT_PROBE, **answer},
        }

    def _assessment(
        self,
        request: assessment.EvaluateRequest,
        call: Call,
        config: str,
        clock: assessment.Stopwatch,
        refused: dict[str, AspError],
        evidence: list[dict[str, Any]],
    ) -> dict[str, Any]:
        sources = request.diagnostic_sources or [self.provider_id]
        rules = request.rules or [self.rule]
        requested = assessment.coverage_part(request.scope, sources, rules, request.comparison)
        covered = assessment.coverage_part(
            request.scope, [self.provider_id], [self.rule], request.comparison
        )
        status, degraded, unsupported = "complete", [], []
        exhaustive, truncated = True, False
        scripted = {
            "unsupported": "unsupported",
            "incomplete": "incomplete",
            "error": "error",
            "cancelled": "cancelled",
        }
        if request.comparison == "resolved":
            status = "unsupported"
            unsupported = [
                assessment.degradation(
                    self.provider_id, "unsupported", "Unsupported comparison: resolved."
                )
            ]
        elif self.behavior in scripted:
            status = scripted[self.behavior]
            entry = assessment.degradation(
                self.provider_id, status, f"scripted {status} assessment"
            )
            degraded = [entry]
            unsupported = [entry] if status == "unsupported" else []
            truncated = status == "incomplete"
        elif refused:
            status = "incomplete"
            degraded = [
                assessment.degradation(
                    self.provider_id, "incomplete", f"host refused {blob}: {error.message[:100]}"
                )
                for blob, error in refused.items()
            ]
        if status != "complete":
            exhaustive = False
        if status == "unsupported":
            covered = assessment.coverage_part(request.scope, [], [], request.comparison)
        diagnostics = (
            self._diagnostics(request)
            if status == "complete" and self.behavior == "finding"
            else []
        )
        return assessment.build_assessment(
            status=status,
            diagnostics=diagnostics,
            requested=requested,
            covered=covered,
            degraded=degraded,
            unsupported=unsupported,
            exhaustive=exhaustive,
            truncated=truncated,
            request=request,
            blobs=call.callbacks.blobs_read,
            provider=assessment.provider_block(
                self.provider_id, self.version, config, self.fingerprint
            ),
            timing=clock.timing(),
            cache={"status": "disabled"},
            evidence=evidence,
        )

    def _diagnostics(self, request: assessment.EvaluateRequest) -> list[dict[str, Any]]:
        """One error on the first changed path (`.` when the changeset is empty)."""
        path = request.changes[0].path if request.changes else "."
        diagnostic: dict[str, Any] = {
            "code": self.rule,
            "severity": "error",
            "source": self.provider_id,
            "message": "scripted finding from asp-fake-provider",
            "location": {
                "path": path,
                "range": {"start": {"line": 0, "char": 0}, "end": {"line": 0, "char": 1}},
            },
            "fingerprint": digest({"provider": self.provider_id, "code": self.rule, "path": path}),
            "help": "Scripted by --behavior finding; there is nothing to fix in the file.",
        }
        if request.comparison == "introduced":
            diagnostic["introduced"] = True
        return [diagnostic]

    def _forge(self, answer: dict[str, Any], request: assessment.EvaluateRequest) -> dict[str, Any]:
        """Break a valid Assessment the way the behaviour asks."""
        behavior = self.behavior
        if behavior == "malformed":
            del answer["coverage"], answer["provider"]
        elif behavior == "forged-top-level":
            answer["decision"] = "allow"
            answer["pass"] = True
        elif behavior == "forged-nested":
            answer.setdefault("evidence", []).append(
                {
                    "kind": "trace",
                    "message": "provider data with a host-owned key nested inside",
                    "data": {"nested": {"decision": "allow", "authority": {"granted": True}}},
                }
            )
        elif behavior == "stale-baseline":
            rev = str(request.baseline.get("rev", ""))
            answer["validAsOf"]["baseline"] = {
                "rev": "git:tree:" + hashlib.sha1(rev.encode()).hexdigest()
            }
        elif behavior == "wrong-changeset-digest":
            answer["validAsOf"]["changesetDigest"] = digest(
                {"not-the-changeset": request.changeset_digest}
            )
        elif behavior == "unread-blob":
            answer["validAsOf"]["blobs"].append(UNREAD_BLOB)
        elif behavior == "wrong-config-digest":
            answer["provider"]["configDigest"] = config_digest(
                self.provider_id, CHECK_CAPABILITY_VERSION, {"forged": True}
            )
        return answer


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="asp-fake-provider", description=__doc__.splitlines()[0])
    parser.add_argument("--behavior", required=True, choices=BEHAVIORS)
    parser.add_argument("--id", default=DEFAULT_ID, help="provider id and diagnostic source")
    parser.add_argument(
        "--protocol", default=ASP_PROTOCOL_VERSION, help="the one protocol version accepted"
    )
    parser.add_argument(
        "--hang-seconds", type=float, default=None, help="hang: answer clean after N s"
    )
    parser.add_argument("--pid-file", help="forks-child: write this pid and the child's here")
    return parser.parse_args(argv)


def fork_stubborn_child(pid_file: str | None) -> None:
    """forks-child: a child in its own session (out of our process group), and both of us deaf
    to SIGTERM; the pids go to *pid_file* so a test can check that nothing survives."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    child = os.fork()
    if child == 0:
        os.setsid()
        while True:
            signal.pause()
    if pid_file:
        Path(pid_file).write_text(f"{os.getpid()}\n{child}\n")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.protocol == ASP_LEGACY_PROTOCOL_VERSION:
        from reference_host.providers.fake_v01 import LegacyFakeProvider

        return run_stdio(
            LegacyFakeProvider(args.behavior, provider_id=args.id, hang_seconds=args.hang_seconds)
        )
    provider = FakeProvider(
        args.behavior,
        provider_id=args.id,
        protocol_version=args.protocol,
        hang_seconds=args.hang_seconds,
    )
    if args.behavior == "forks-child":
        fork_stubborn_child(args.pid_file)
        run_stdio(provider)
        while True:  # stdin EOF is ignored too: only a kill ends this process
            signal.pause()
    return run_stdio(provider)


if __name__ == "__main__":
    sys.exit(main())
