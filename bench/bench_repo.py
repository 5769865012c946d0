"""Generated Python repositories for the host benchmarks: many small, realistic modules.

`build_repo` writes one with a single `git fast-import` stream and one checkout, so a
50,000-file tree is ready in seconds rather than the minutes per-file adds take."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def module_source(index: int) -> str:
    """A small but realistic module: imports, a class, functions that use each other."""
    return (
        f'"""Module {index}."""\n\nimport os\nfrom typing import Any\n\n\n'
        f"class Thing{index}:\n    def __init__(self, value: int) -> None:\n"
        f"        self.value = value\n\n    def double(self) -> int:\n"
        f"        return self.value * 2\n\n\n"
        f"def helper_{index}(items: list[Any]) -> int:\n"
        f"    total = 0\n    for item in items:\n        total += len(str(item))\n"
        f"    return total + len(os.sep)\n"
    )


def repo_files(count: int) -> tuple[tuple[str, str], ...]:
    return tuple((f"pkg/sub{i % 20:02d}/mod_{i:04d}.py", module_source(i)) for i in range(count))


def changed_files(files: tuple[tuple[str, str], ...], changed: int) -> dict[str, str | None]:
    step = max(1, len(files) // changed)
    chosen = [files[i * step] for i in range(changed)]
    return {path: text + "\n\ndef added() -> int:\n    return 1\n" for path, text in chosen}


GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def build_repo(repo: Path, size: int, changed: int) -> None:
    """A committed *size*-file tree (one fast-import stream, one checkout), *changed* files edited."""
    env = {**os.environ, **GIT_ENV}
    files = repo_files(size)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    stream = [b"commit refs/heads/main\ncommitter bench <bench@example.invalid> 0 +0000\n"]
    stream.append(b"data 7\ncommit\n")
    for path, text in files:
        data = text.encode()
        stream.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
    subprocess.run(
        ["git", "fast-import", "--quiet"], cwd=repo, input=b"".join(stream), check=True, env=env
    )
    subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=repo, check=True, env=env)
    for path, text in changed_files(files, changed).items():
        (repo / path).write_text(text or "")
