"""A readable unified diff of an edit plan, from the host's `host/proposalPreview` helper.

The bridge never reads workspace files: the before and after text come from the host, which
computed them from the cached plan exactly as apply would. The diff is host data: capped here
and fenced as untrusted text by the caller; the plan itself stays verbatim in structuredContent.
"""

from __future__ import annotations

import difflib
from typing import Any

MAX_DIFF_CHARS = 20_000
CONTEXT_LINES = 3


def unified_diff(preview: Any) -> tuple[str, bool]:
    """(the diff of every previewed file, whether it was cut at MAX_DIFF_CHARS)."""
    files = preview.get("files") if isinstance(preview, dict) else None
    chunks: list[str] = []
    for item in files if isinstance(files, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("path"), str):
            continue
        path = item["path"]
        target = item.get("to") if isinstance(item.get("to"), str) else path
        if isinstance(item.get("omitted"), str):
            chunks.append(f"--- a/{path}\n+++ b/{target}\n(no text diff: {item['omitted']})\n")
            continue
        before, after = item.get("before"), item.get("after")
        old = before.splitlines(keepends=True) if isinstance(before, str) else []
        new = after.splitlines(keepends=True) if isinstance(after, str) else []
        lines = difflib.unified_diff(
            old,
            new,
            fromfile="/dev/null" if before is None else f"a/{path}",
            tofile="/dev/null" if after is None else f"b/{target}",
            n=CONTEXT_LINES,
        )
        chunks.append("".join(line if line.endswith("\n") else line + "\n" for line in lines))
    text = "".join(chunks)
    if len(text) <= MAX_DIFF_CHARS:
        return text, False
    return text[:MAX_DIFF_CHARS], True
