"""Migration parity benchmark (not a test): 100,000 old x 10,000 host findings through
`parity_from_decision`, the function `asp_migration_check` runs in its worker thread.

    python bench/parity_bench.py [--old 100000] [--asp 10000] [--files 1000]

The findings are spread over *files* files, three rule kinds and distinct names, the shape of a
real lint run; the host side is a decision envelope like the reference host's.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bridge.migration.findings import parse_findings
from bridge.migration.parity import parity_from_decision

RULES = (
    ("UnusedImport", "python/unused-import", "'{}' imported but unused"),
    ("UndefinedName", "python/undefined-name", "undefined name '{}'"),
    (
        "UnusedVariable",
        "python/unused-variable",
        "local variable '{}' is assigned to but never used",
    ),
)


def _sarif(i: int, files: int) -> dict[str, Any]:
    rule, _, text = RULES[i % 3]
    return {
        "ruleId": rule,
        "message": {"text": text.format(f"n{i}")},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": f"pkg/m{i % files}.py"},
                    "region": {"startLine": 1 + (i // files) * 3},
                }
            }
        ],
    }


def _host(i: int, files: int) -> dict[str, Any]:
    _, code, text = RULES[i % 3]
    line = (i // files) * 3
    return {
        "diagnostic": {
            "code": code,
            "severity": "warning",
            "source": "asp-python-check",
            "message": text.format(f"n{i}"),
            "fingerprint": f"sha256:{i:064x}",
            "location": {
                "path": f"pkg/m{i % files}.py",
                "range": {"start": {"line": line, "char": 0}, "end": {"line": line, "char": 1}},
            },
        },
        "disposition": "advisory",
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--old", type=int, default=100_000)
    parser.add_argument("--asp", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=1000)
    args = parser.parse_args()
    old = parse_findings([_sarif(i, args.files) for i in range(args.old)])
    decision = {
        "decision": "allow",
        "callSite": "interactive",
        "coverage": {"ran": ["python-check"], "degraded": []},
        "findings": [_host(i, args.files) for i in range(args.asp)],
    }
    started, cpu = time.perf_counter(), time.process_time()
    result, _ = parity_from_decision(old.findings, decision, change_paths=None)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    c = result.counts
    print(
        f"{args.old} old x {args.asp} host findings over {args.files} files: {elapsed:.2f} s "
        f"wall, {cpu:.2f} s CPU "
        f"(matched {c.matched}, only-old {c.only_old}, only-ASP {c.only_asp}); "
        f"Python {platform.python_version()} on {platform.machine()}, {platform.system()}"
    )


if __name__ == "__main__":
    main()
