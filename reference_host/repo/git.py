"""The one way the host runs git: `run_git`, which never lets the repository start a program.

A repository's own configuration (`.git/config`, anything it reaches through `include.path` /
`includeIf`, a submodule's config) and its `.gitattributes` can name programs that git runs while
it reads the work tree: `core.fsmonitor`, filter drivers (`filter.<x>.clean|smudge|process`), diff
drivers and `textconv`, `diff.external`, pagers, hooks. The workspace is untrusted input, so every
git call of the host goes through `run_git`, which:

- sets, in the command scope (`GIT_CONFIG_KEY_n`, the highest-precedence config scope, so no
  file and no include can override it), every fixed key that names a program to a value that runs nothing
  (`FIXED_OVERRIDES`);
- blanks every *named* driver key (`filter.<x>.*`, `diff.<x>.command|textconv`,
  `merge.<x>.driver`) that the effective configuration defines — the names are read first with
  `git config --get-regexp`, which runs nothing — and makes such filters non-required, so git
  reads the raw bytes instead of dying;
- never enters submodules (`--ignore-submodules=all` is the caller's job for `status`, and
  `submodule.recurse=false` here), never takes optional locks, never pages, never prompts;
- drops inherited `GIT_*` variables that would redirect git (`GIT_DIR`, `GIT_WORK_TREE`, ...,
  `GIT_EXTERNAL_DIFF`, `GIT_CONFIG_PARAMETERS`) but keeps the user's own config locations, so a
  `safe.directory` the *user* set is honoured. The host never sets `safe.directory` itself.

A path whose filter was blanked is compared byte for byte with HEAD by the workspace (see
`Workspace.state`), so it is reported as changed when its raw bytes differ — never as clean on
the strength of a filter that did not run. See docs/workspace-git.md.
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from reference_host.repo.gitconfig import ConfigFiles, ConfigKey, config_key, system_config_path
from reference_host.repo.spawn import Child, EncodedEnv, find_program, spawn_start

#: Keys that name a program (or start a daemon), pinned to a value that runs nothing.
FIXED_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.useBuiltinFSMonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("core.askPass", ""),
    ("core.sshCommand", "false"),
    ("core.untrackedCache", "false"),
    ("core.quotepath", "off"),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("sequence.editor", "true"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("protocol.allow", "never"),
)

#: Per-driver keys that name a program: section -> (key, neutral value) pairs.
DRIVER_KEYS: dict[str, tuple[tuple[str, str], ...]] = {
    "filter": (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")),
    "diff": (("command", ""), ("textconv", ""), ("cachetextconv", "false")),
    "merge": (("driver", ""),),
}

#: Inherited variables that would point git elsewhere or run something; the rest are kept.
_ENV_DROP_PREFIXES = ("GIT_",)
_ENV_KEEP = frozenset(
    {"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_EXEC_PATH"}
)


class GitUnusable(Exception):
    """git cannot be used here (missing, refused the repository, or failed); `reason` is git's own."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class GitResult:
    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def reason(self) -> str:
        """git's own message (first lines of stderr), for status and degradation details."""
        text = self.stderr.decode("utf-8", "replace").strip()
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return ("; ".join(lines[:4]) or f"git exited with {self.returncode}")[:500]


@dataclass
class RunningGit:
    """A git command started by `GitRunner.start`."""

    child: Child

    def result(self) -> GitResult:
        done = self.child.finish()
        return GitResult(done.returncode, done.stdout, done.stderr)

    async def result_async(self) -> GitResult:
        """`result`, awaited on the event loop instead of blocking a thread."""
        done = await self.child.finish_async()
        return GitResult(done.returncode, done.stdout, done.stderr)

    def close(self) -> None:
        self.child.close()


def has_git_entry(root: Path) -> bool:
    """True when `.git` exists (or cannot be looked at) at *root* or any parent directory."""
    for directory in (root, *root.parents):
        try:
            if os.path.lexists(directory / ".git"):
                return True
        except OSError:
            return True
    return False


def git_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment every host git call runs with (see the module docstring)."""
    source = os.environ if base is None else base
    env = {
        k: v for k, v in source.items() if not k.startswith(_ENV_DROP_PREFIXES) or k in _ENV_KEEP
    }
    env.update(
        GIT_OPTIONAL_LOCKS="0",
        GIT_PAGER="cat",
        GIT_TERMINAL_PROMPT="0",
        GIT_NO_LAZY_FETCH="1",
        LC_ALL="C",
    )
    return env


@dataclass
class GitRunner:
    """Runs git in one directory with every repository-named program disabled.

    `refresh_drivers()` re-reads which filter/diff/merge drivers the configuration names (call it
    once per host request, before `git status`); `filtered_drivers` is the set of filter names
    blanked, which the workspace uses to compare those paths itself. The reading is reused while
    every configuration file git would read is byte-identical (`gitconfig.config_key`)."""

    cwd: Path
    env: dict[str, str] = field(default_factory=git_env)
    driver_overrides: tuple[tuple[str, str], ...] = ()
    filtered_drivers: frozenset[str] = frozenset()
    #: How many times the driver names were read from git (the rest were reused).
    driver_reads: int = 0
    _system: str | None = field(default=None, repr=False)
    _system_known: bool = field(default=False, repr=False)
    _driver_key: ConfigKey | None = field(default=None, repr=False)
    _config_files: ConfigFiles = field(default_factory=ConfigFiles, repr=False)
    _driver_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _program: str | None = field(default=None, repr=False)
    _encoded: EncodedEnv = field(default_factory=EncodedEnv, repr=False)
    _spawn_key: tuple[object, ...] = field(default=(), repr=False)

    def argv(self, *args: str) -> list[str]:
        return ["git", "--no-pager", "--no-optional-locks", *args]

    def program(self) -> str:
        """git's absolute path, from PATH's absolute entries (`spawn.find_program`); looked up
        again after a failed start, so git installed or moved meanwhile is found."""
        if self._program is None:
            self._program = find_program("git", self.env)
        if self._program is None:
            raise GitUnusable("git cannot be run: no git executable on PATH")
        return self._program

    def _env(self) -> dict[str, str]:
        """The overrides travel as GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n (command scope, like
        `-c`), so a driver name holding `=` cannot be misparsed into another key."""
        env = dict(self.env)
        pairs = list(FIXED_OVERRIDES) + list(self.driver_overrides)
        env["GIT_CONFIG_COUNT"] = str(len(pairs))
        for index, (key, value) in enumerate(pairs):
            env[f"GIT_CONFIG_KEY_{index}"] = key
            env[f"GIT_CONFIG_VALUE_{index}"] = value
        return env

    def _spawn_env(self) -> Mapping[bytes, bytes]:
        """`_env()` encoded, built again only when the overrides or the base environment changed
        (it is built before every git start: 17 us a call, more on a cold cache)."""
        key = (self.driver_overrides, tuple(self.env.items()))
        if key != self._spawn_key:
            self._encoded.get(self._env())
            self._spawn_key = key
        return self._encoded.encoded

    def run(self, *args: str, stdin: bytes | None = None, cwd: Path | None = None) -> GitResult:
        """One git command; raises GitUnusable only when git itself cannot be started."""
        running = self.start(*args, stdin=stdin, cwd=cwd)
        try:
            return running.result()
        finally:
            running.close()

    def start(self, *args: str, stdin: bytes | None = None, cwd: Path | None = None) -> RunningGit:
        """`run` in two halves: git works while the caller does something else, then
        `result()`; `close()` (always, in a finally) kills it if the result was never taken."""
        argv = self.argv("-C", os.fspath(cwd or self.cwd), *args)
        try:
            child = spawn_start(self.program(), argv, self._spawn_env(), stdin)
        except OSError as exc:
            self._program = None
            raise GitUnusable(f"git cannot be run: {exc.strerror or exc}") from None
        return RunningGit(child)

    def popen(self, *args: str) -> subprocess.Popen[bytes]:
        """A streaming git process (e.g. `cat-file --batch`) with the same protections."""
        try:
            return subprocess.Popen(
                self.argv(*args),
                executable=self.program(),
                cwd=self.cwd,
                env=self._env(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError as exc:
            self._program = None
            raise GitUnusable(f"git cannot be run: {exc.strerror or exc}") from None

    def _config_key(self) -> ConfigKey | None:
        if not self._system_known:
            argv = [self.program(), *self.argv()[1:]]
            self._system = system_config_path(argv, self._env(), self.cwd)
            self._system_known = True
        return config_key(self.cwd, self.env, self._system, self._config_files)

    def refresh_drivers(self) -> None:
        """Blank every driver the effective configuration (includes followed) names.

        Asks git unless the configuration files are byte-identical to the last time git was
        asked (and hold no include): then the last answer stands."""
        with self._driver_lock:
            self._refresh_drivers()

    def _refresh_drivers(self) -> None:
        fingerprint = self._config_key()
        if fingerprint is not None and fingerprint == self._driver_key:
            return
        self._driver_key = None
        out = self.run("config", "--null", "--name-only", "--get-regexp", r"^(filter|diff|merge)\.")
        self.driver_reads += 1
        names: dict[str, set[str]] = {}
        if out.returncode not in (0, 1):
            fingerprint = None  # git could not read its configuration: ask again next time
        if out.ok:
            for raw in out.stdout.split(b"\0"):
                key = raw.decode("utf-8", "surrogateescape").strip()
                section, _, rest = key.partition(".")
                driver, dot, _ = rest.rpartition(".")
                if dot and driver and section in DRIVER_KEYS:
                    names.setdefault(section, set()).add(driver)
        overrides = [
            (f"{section}.{driver}.{key}", value)
            for section, drivers in sorted(names.items())
            for driver in sorted(drivers)
            for key, value in DRIVER_KEYS[section]
        ]
        self.driver_overrides = tuple(overrides)
        self.filtered_drivers = frozenset(names.get("filter", set()))
        self._driver_key = fingerprint
