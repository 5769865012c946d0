"""A repository whose configuration and attributes name a marker program for every key git could run.

`hostile_repo(root)` builds it; `marker_runs(root)` lists every time the marker ran (it appends
its argv to a log outside the work tree). A host that reads this repository must leave the log
empty. The keys covered: core.fsmonitor, core.pager, core.hooksPath (every hook), core.editor,
core.askPass, core.sshCommand, credential.helper, gpg.program, sequence.editor, diff.external,
filter/diff/merge drivers through `.gitattributes` and `.git/info/attributes`, drivers reached
through `include.path` and `includeIf`, and a submodule with its own config and attributes.
"""

from __future__ import annotations

import stat
from pathlib import Path

from tests.support.gitrepo import git, make_repo, write_files

HOOKS = ("pre-commit", "post-checkout", "post-index-change", "fsmonitor-watchman", "pre-auto-gc")


def marker(root: Path) -> Path:
    """An executable at *root* that logs each run to `marker.log` and copies stdin to stdout."""
    log = root / "marker.log"
    script = root / "marker.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> {log}\ncat\n')
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script


def _plant(repo: Path, mark: Path, tag: str, extra: str = "") -> None:
    hooks = mark.parent / f"hooks-{tag}"
    hooks.mkdir(exist_ok=True)
    for hook in HOOKS:
        target = hooks / hook
        target.write_text(f"#!/bin/sh\n{mark} hook {hook}\n")
        target.chmod(0o755)
    config = f"""
[core]
\tfsmonitor = {mark} fsmonitor-{tag}
\tpager = {mark} pager
\thooksPath = {hooks}
\teditor = {mark} editor
\taskPass = {mark} askpass
\tsshCommand = {mark} ssh
[credential]
\thelper = !{mark} credential
[gpg]
\tprogram = {mark} gpg
[sequence]
\teditor = {mark} sequence
[diff]
\texternal = {mark} diff-external
[filter "evil"]
\tclean = {mark} clean-{tag}
\tsmudge = {mark} smudge-{tag}
\tprocess = {mark} process-{tag}
\trequired = true
[diff "evil"]
\tcommand = {mark} diff-command
\ttextconv = {mark} textconv
[merge "evil"]
\tdriver = {mark} merge %O %A %B
{extra}
"""
    git_dir = Path(git(repo, "rev-parse", "--absolute-git-dir").strip())
    with open(git_dir / "config", "a", encoding="utf-8") as handle:
        handle.write(config)
    (git_dir / "info").mkdir(exist_ok=True)
    (git_dir / "info" / "attributes").write_text("*.py filter=included diff=evil\n")


def hostile_repo(root: Path) -> Path:
    """A committed repository (with a submodule) whose every program-naming key runs the marker.

    `filtered.txt` was committed through a real clean filter (upper-casing), so its work-tree
    bytes differ from HEAD while git's stat cache calls it clean: an honest host reports it
    changed, because the filter that would make it equal is not allowed to run."""
    root.mkdir(parents=True)
    mark = marker(root)
    sub = make_repo(
        root / "sub-origin", {"inner.txt": "inner\n", ".gitattributes": "* filter=evil\n"}
    )
    repo = make_repo(
        root / "repo",
        {
            "app.py": "def add(a, b):\n    return a + b\n",
            "notes.txt": "notes\n",
            ".gitattributes": "*.txt filter=evil diff=evil merge=evil\nfiltered.txt filter=upper\n",
        },
    )
    write_files(repo, {"filtered.txt": "shouting\n"})
    git(repo, "-c", "filter.upper.clean=tr a-z A-Z", "add", "filtered.txt")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "sub")
    git(repo, "commit", "-q", "-m", "filtered file and submodule")
    included = root / "included.cfg"
    included.write_text(
        f'[filter "included"]\n\tclean = {mark} clean-included\n'
        f'\tprocess = {mark} process-included\n[filter "upper"]\n\tclean = {mark} clean-upper\n'
    )
    conditional = root / "conditional.cfg"
    conditional.write_text(f"[core]\n\tfsmonitor = {mark} fsmonitor-includeif\n")
    _plant(
        repo,
        mark,
        "repo",
        f'[include]\n\tpath = {included}\n[includeIf "gitdir:{repo}/"]\n\tpath = {conditional}\n',
    )
    _plant(repo / "sub", mark, "sub")
    write_files(repo, {"app.py": "def add(a, b):\n    return a - b\n", "notes.txt": "more notes\n"})
    write_files(repo / "sub", {"inner.txt": "changed inside the submodule\n"})
    return repo


def marker_runs(repo: Path) -> list[str]:
    log = repo.parent / "marker.log"
    return log.read_text().splitlines() if log.exists() else []
