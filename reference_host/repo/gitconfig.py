"""When may the host reuse its last reading of the configured driver names? Only when no file git
would read for it has changed — decided from the files' bytes, never from a timestamp alone.

`GitRunner.refresh_drivers` asks git which filter/diff/merge drivers the effective configuration
names (`git config --get-regexp`), so that it can blank each one (docs/workspace-git.md). That is
a second git process per `host/status`. Its answer is a function of the configuration files git
reads, so the host keeps the answer keyed by `config_key`: the bytes of every file git could read
for it — the system file (its location as git itself reports it), the user's global files
(`$GIT_CONFIG_GLOBAL`, or `$XDG_CONFIG_HOME/git/config` and `~/.gitconfig`), the repository's
`config` and `config.worktree` (through a `.git` file and `commondir` when the work tree is a
linked one) — plus the identity and owner of the work tree and git directories (git ignores a
repository it does not trust). Reading more files than git does only costs a needless re-read;
reading fewer would be unsafe, so whatever cannot be settled means *no key*: the host then asks
git again on every call. That is the case for any file that mentions `include` (an
`include.path` / `includeIf` target, possibly conditional on the branch or a remote, could change
without any listed file changing), for a file that cannot be read or is over `CONFIG_BYTES`, and
when git will not say where its system file lives.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from collections.abc import Mapping
from pathlib import Path

#: A config file larger than this is not fingerprinted (the host re-reads the drivers each call).
CONFIG_BYTES = 1024 * 1024
_UNREADABLE = re.compile(rb"unable to read config file '([^']+)'")

#: One file's part of the key: its path and bytes (None when absent).
Part = tuple[str, bytes | None]
ConfigKey = tuple[object, ...]


def system_config_path(argv: list[str], env: Mapping[str, str], cwd: Path) -> str | None:
    """Where git reads its system configuration, as git itself says (None: it did not say).

    `git config --system --list --show-origin` names the file when it holds a key, and git's
    error names it when the file is absent; an existing file with no key is not named."""
    if env.get("GIT_CONFIG_SYSTEM"):
        return env["GIT_CONFIG_SYSTEM"]
    try:
        done = subprocess.run(
            [*argv, "config", "--system", "--list", "--show-origin", "-z"],
            cwd=cwd,
            env=dict(env),
            capture_output=True,
            check=False,
        )
    except OSError:
        return None
    if done.returncode == 0 and done.stdout.startswith(b"file:"):
        return os.fsdecode(done.stdout[len(b"file:") :].split(b"\0", 1)[0])
    found = _UNREADABLE.search(done.stderr)
    return os.fsdecode(found.group(1)) if found else None


def _read(path: str) -> bytes | None:
    """The file's bytes, None when it does not exist; raises OSError when it cannot be settled
    (not a regular file, too large). Raw `os` calls: this runs on every status. `/dev/null` (a
    usual `GIT_CONFIG_GLOBAL`) reads as empty, as git reads it."""
    if path == os.devnull:
        return b""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > CONFIG_BYTES:
            raise OSError("config file not fingerprinted")
        chunks = [os.read(fd, info.st_size + 1)]
        while chunks[-1] and sum(map(len, chunks)) <= CONFIG_BYTES:
            chunks.append(os.read(fd, CONFIG_BYTES))
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > CONFIG_BYTES:
        raise OSError("config file too large to fingerprint")
    return data


def _git_dirs(root: Path) -> tuple[list[Part], str, str]:
    """The `.git` pointer files read on the way, the git directory and the common directory."""
    parts: list[Part] = []
    dot_git = root / ".git"
    if dot_git.is_dir():
        git_dir = str(dot_git)
    else:
        pointer = _read(str(dot_git))
        parts.append((str(dot_git), pointer))
        if pointer is None or not pointer.startswith(b"gitdir: "):
            raise OSError("no git directory")
        git_dir = os.path.join(root, os.fsdecode(pointer[len(b"gitdir: ") :].strip()))
    common = _read(os.path.join(git_dir, "commondir"))
    parts.append((os.path.join(git_dir, "commondir"), common))
    common_dir = git_dir if common is None else os.path.join(git_dir, os.fsdecode(common.strip()))
    return parts, git_dir, common_dir


def _global_paths(env: Mapping[str, str]) -> list[str]:
    paths = [env["GIT_CONFIG_GLOBAL"]] if env.get("GIT_CONFIG_GLOBAL") else []
    home = env.get("HOME")
    xdg = env.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else None)
    if xdg:
        paths.append(os.path.join(xdg, "git", "config"))
    if home:
        paths.append(os.path.join(home, ".gitconfig"))
    return paths


def config_key(root: Path, env: Mapping[str, str], system: str | None) -> ConfigKey | None:
    """A key that changes whenever git's configuration for *root* could read differently, or
    None when the host must not reuse an earlier answer (see the module docstring)."""
    if system is None:
        return None
    try:
        parts, git_dir, common_dir = _git_dirs(root)
        files = [system, "/etc/gitconfig", *_global_paths(env)]
        files += [os.path.join(common_dir, "config"), os.path.join(git_dir, "config.worktree")]
        for path in dict.fromkeys(files):
            data = _read(path)
            if data is not None and b"include" in data.lower():
                return None
            parts.append((path, data))
        owners = [
            (s.st_dev, s.st_ino, s.st_uid, s.st_mode)
            for s in (os.stat(root), os.lstat(root / ".git"), os.stat(git_dir), os.stat(common_dir))
        ]
    except (OSError, ValueError):
        return None
    return (str(root), tuple(sorted(env.items())), tuple(owners), tuple(parts))
