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

Reading those files costs more than the rest of the key, and it is paid before `git status` can
start, so `ConfigFiles` keeps each file's bytes while its whole stat is unchanged, by the rule
work-tree digests follow (`workfiles.py`): device, inode, size, mtime and ctime to the
nanosecond, and never bytes read less than `RACY_NS` after the file last changed (a same-size
rewrite within one timestamp tick shows in no stat). The key is the same bytes either way.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from reference_host.repo.workfiles import RACY_NS, Signature, signature

#: A config file larger than this is not fingerprinted (the host re-reads the drivers each call).
CONFIG_BYTES = 1024 * 1024
_UNREADABLE = re.compile(rb"unable to read config file '([^']+)'")

#: One file's part of the key: its path and bytes (None when absent).
Part = tuple[str, bytes | None]
ConfigKey = tuple[object, ...]
Reader = Callable[[str], bytes | None]


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
    found = _read_stat(path)
    return None if found is None else found[0]


class ConfigFiles:
    """Configuration files' bytes, read again only when the stat says they may have changed
    (see the module docstring); `reads` counts the files actually read."""

    def __init__(self) -> None:
        self._known: dict[str, tuple[Signature, bytes]] = {}
        self.reads = 0

    def read(self, path: str) -> bytes | None:
        """`_read(path)`, from memory while the file's stat is what it was at a settled read."""
        if path == os.devnull:
            return b""
        try:
            info = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            self._known.pop(path, None)
            return None
        known = self._known.get(path)
        if known is not None and known[0] == signature(info) and stat.S_ISREG(info.st_mode):
            return known[1]
        self._known.pop(path, None)
        began = time.time_ns()
        self.reads += 1
        found = _read_stat(path)
        if found is None:
            return None
        data, read_as = found
        if read_as == signature(info) and max(read_as[3], read_as[4]) < began - RACY_NS:
            self._known[path] = (read_as, data)
        return data


def _read_stat(path: str) -> tuple[bytes, Signature] | None:
    """The file's bytes and its stat while it was open (`_read`, which says what raises)."""
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
    return data, signature(info)


def _git_dirs(root: str, read: Reader) -> tuple[list[Part], str, str, os.stat_result]:
    """The `.git` pointer files read on the way, the git and common directories, and `.git`'s
    own lstat. Paths are joined by hand: this runs before every `git status`."""
    parts: list[Part] = []
    dot_git = root + "/.git"
    link = os.lstat(dot_git)
    if stat.S_ISDIR(link.st_mode) or (stat.S_ISLNK(link.st_mode) and os.path.isdir(dot_git)):
        git_dir = dot_git
    else:
        pointer = read(dot_git)
        parts.append((dot_git, pointer))
        if pointer is None or not pointer.startswith(b"gitdir: "):
            raise OSError("no git directory")
        git_dir = os.path.join(root, os.fsdecode(pointer[len(b"gitdir: ") :].strip()))
    common_file = git_dir + "/commondir"
    common = read(common_file)
    parts.append((common_file, common))
    common_dir = git_dir if common is None else os.path.join(git_dir, os.fsdecode(common.strip()))
    return parts, git_dir, common_dir, link


def _global_paths(env: Mapping[str, str]) -> list[str]:
    paths = [env["GIT_CONFIG_GLOBAL"]] if env.get("GIT_CONFIG_GLOBAL") else []
    home = env.get("HOME")
    xdg = env.get("XDG_CONFIG_HOME") or (home + "/.config" if home else None)
    if xdg:
        paths.append(xdg + "/git/config")
    if home:
        paths.append(home + "/.gitconfig")
    return paths


def config_key(
    root: Path, env: Mapping[str, str], system: str | None, files: ConfigFiles | None = None
) -> ConfigKey | None:
    """A key that changes whenever git's configuration for *root* could read differently, or
    None when the host must not reuse an earlier answer (see the module docstring). *files*:
    the configuration files are read through it (the same key, fewer reads)."""
    if system is None:
        return None
    read: Reader = _read if files is None else files.read
    top = str(root)
    try:
        parts, git_dir, common_dir, link = _git_dirs(top, read)
        paths = [system, "/etc/gitconfig", *_global_paths(env)]
        paths += [common_dir + "/config", git_dir + "/config.worktree"]
        for path in dict.fromkeys(paths):
            data = read(path)
            if data is not None and b"include" in data.lower():
                return None
            parts.append((path, data))
        infos = [os.stat(top), link]  # `.git` itself, then where it leads
        for path in dict.fromkeys((git_dir, common_dir)):
            plain = path == top + "/.git" and stat.S_ISDIR(link.st_mode)
            infos.append(link if plain else os.stat(path))
        owners = tuple((s.st_dev, s.st_ino, s.st_uid, s.st_mode) for s in infos)
    except (OSError, ValueError):
        return None
    return (top, tuple(env.items()), owners, tuple(parts))
