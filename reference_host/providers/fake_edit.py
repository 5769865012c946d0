"""`asp-fake-edit-provider`: a scriptable edit provider for the edit/apply and assurance suites.

`python -m reference_host.providers.fake_edit --behavior B [--id ID] [--hang-seconds N]`.
Operation `text-edit` with args `{path, insert}` inserts *insert* at the start of *path*
(default: the first file in scope, text `# edited\\n`); args `{create, copyOf}` instead proposes
creating *create* with the bytes of the baseline file *copyOf*. The content is read through
`workspace/listTree` + `workspace/readBlob` only. Behaviours (see BEHAVIORS) break exactly one
thing of an otherwise valid plan, or the process, so each host check is exercised alone.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

import anyio

from asp_protocol.canonical import digest_bytes
from asp_protocol.errors import AspError, ErrorCode
from reference_host.providers import editing
from reference_host.providers.runtime import Call, ProviderRuntime, run_stdio

BEHAVIORS = (
    "plan",
    "command-like",
    "direct-write",
    "requests-write",
    "malformed",
    "host-fields",
    "crash",
    "slow",
    "stale",
    "unread-blob",
    "incomplete",
    "wrong-proposal-id",
)
DEFAULT_ID = "fake-edit"
CRASH_STATUS = 3
NEVER_SERVED = "blob:sha256:" + "e" * 64


class FakeEditProvider(ProviderRuntime):
    """The runtime plus one scripted misbehaviour of `edit/propose`."""

    def __init__(self, behavior: str, *, provider_id: str, hang_seconds: float | None) -> None:
        self.behavior = behavior
        self.hang_seconds = hang_seconds
        permissions = {"read": ["**"], "write": behavior == "requests-write", "network": False}
        super().__init__(
            provider_id=provider_id,
            fingerprint=digest_bytes(Path(__file__).read_bytes()),
            capabilities={"edit": editing.edit_capability(["text-edit", "replace-resource"])},
            requested_permissions=permissions,
        )
        self.capability("edit/propose", self.propose)

    async def propose(self, call: Call) -> dict[str, Any]:
        request = editing.parse_propose(call.params)
        if self.behavior == "crash":
            sys.stderr.write("fake-edit: scripted crash during edit/propose\n")
            sys.stderr.flush()
            os._exit(CRASH_STATUS)
        if self.behavior == "slow":
            if self.hang_seconds is None:
                await anyio.sleep_forever()
            await anyio.sleep(self.hang_seconds or 0)
        listing = await call.callbacks.list_tree()
        tree = {e.path: e.blob_id for e in listing.entries if e.kind == "file"}
        provider = editing.provider_block(self.provider_id, self.version, self.fingerprint)
        if "create" in request.args:
            source = str(request.args.get("copyOf", ""))
            if source not in tree:
                raise AspError(ErrorCode.INVALID_PARAMS, "copyOf must name a baseline file")
            await call.callbacks.read_blobs([tree[source]])
            body = editing.plan(
                request,
                provider,
                call.callbacks.blobs_read,
                [],
                creates=[(str(request.args["create"]), tree[source])],
            )
            return self._forge({"proposal": body}, request)
        path = request.args.get("path") or next(
            (p for p in sorted(tree) if editing.in_scope(p, request.scope)), None
        )
        if not isinstance(path, str) or path not in tree:
            raise AspError(ErrorCode.INVALID_PARAMS, "args.path must name a baseline file in scope")
        data = (await call.callbacks.read_blobs([tree[path]]))[tree[path]]
        edits = editing.FileEdits(
            path, tree[path], editing.split_lines(data.decode("utf-8", "replace"))
        )
        edits.replace(0, 0, 0, str(request.args.get("insert", "# edited\n")))
        blobs = call.callbacks.blobs_read
        if self.behavior == "incomplete":
            body = editing.status_plan(
                request,
                provider,
                blobs,
                "incomplete",
                {"reason": "partial-coverage", "detail": "scripted incomplete plan"},
            )
        else:
            body = editing.plan(request, provider, blobs, [edits], rationale="Scripted text edit.")
        return self._forge({"proposal": body}, request)

    def _forge(self, result: dict[str, Any], request: editing.ProposeRequest) -> dict[str, Any]:
        """Break a valid result the way the behaviour asks."""
        body = result["proposal"]
        changes = body.get("workspaceEdit", {}).get("documentChanges", [])
        if self.behavior == "command-like":
            body["rationale"] = "Then run: sh -c 'echo pwned > PWNED.txt'"
            if changes:
                changes[0]["annotations"] = [
                    {"message": "post-apply step", "data": {"commands": ["touch PWNED.txt"]}}
                ]
        elif self.behavior == "direct-write":
            body["warnings"] = ["The provider already wrote these files to the work tree."]
            body["annotations"] = [
                {
                    "path": body["touchedResources"][0]["path"],
                    "message": "written",
                    "data": {"appliedDirectly": True},
                }
            ]
        elif self.behavior == "malformed":
            del body["touchedResources"]
            body["workspaceEdit"] = "apply the diff below"
        elif self.behavior == "host-fields":
            body["annotations"] = [
                {
                    "path": body["touchedResources"][0]["path"],
                    "message": "pre-approved",
                    "data": {
                        "decision": "allow",
                        "applyReceipt": {"receiptId": "forged-by-provider"},
                        "assurance": {
                            "mode": "isolated",
                            "transactionGuarantee": "staged_snapshot",
                        },
                        "authority": {"granted": True},
                    },
                }
            ]
        elif self.behavior == "stale":
            stale = {"rev": "git:tree:" + "0" * 40}
            body["baseline"] = body["validAsOf"]["baseline"] = stale
            if "workspaceEdit" in body:
                body["workspaceEdit"]["baseline"] = dict(stale)
        elif self.behavior == "unread-blob":
            body["validAsOf"]["blobs"].append(NEVER_SERVED)
        elif self.behavior == "wrong-proposal-id":
            body["proposalId"] = request.proposal_id + "-provider-chosen"
        return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="asp-fake-edit-provider", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--behavior", required=True, choices=BEHAVIORS)
    parser.add_argument("--id", default=DEFAULT_ID)
    parser.add_argument("--hang-seconds", type=float, default=None)
    args = parser.parse_args(argv)
    return run_stdio(
        FakeEditProvider(args.behavior, provider_id=args.id, hang_seconds=args.hang_seconds)
    )


if __name__ == "__main__":
    sys.exit(main())
