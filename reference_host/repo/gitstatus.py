"""Reading one `git status --porcelain=v2 -z`: the arguments the host runs it with, its records
turned into (HEAD commit, candidate paths), and a reading still in progress (`PendingState`).

The host's status starts git, does the work that does not need git's answer (provider views,
gate roll-ups) while git reads the work tree on the other core, and only then waits for the
answer (reference_host/status/results.py). The candidates are every path git reports as
differing from HEAD in any way; `Workspace` then compares each one's bytes itself.

While git runs, the reading can also be *guessed* (`PendingState.guess`): the state git's answer
gives if it is byte for byte the last answer, with every path that answer named compared again
now. A polled status usually gets the same answer, so the comparison — the host's largest part
of a status — is done while git works instead of after it. The guess is the state only when
git's answer turns out to be those bytes (`Guess.stdout`); otherwise it is dropped and the
answer read as usual, the files the guess read taken as it read them (`Guess.taken`). Either way
every file's bytes are looked at after the request arrived.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from reference_host.repo.git import GitResult, GitRunner, GitUnusable, RunningGit
from reference_host.repo.workfiles import Taken, uncarried_reason

State = TypeVar("State")


class NeedsReading(Exception):
    """The state needs a large file read or another git command run: not for the event loop."""


STATUS_ARGS = (
    "status",
    "--porcelain=v2",
    "-z",
    "--branch",
    "--no-ahead-behind",  # only branch.oid is read: no walk to count commits against upstream
    "--no-renames",
    "--untracked-files=all",
    # a submodule whose checked-out commit moved is reported (git reads its HEAD, runs nothing in
    # it); edits inside a submodule are its own repository's change, not this one's, and unread
    "--ignore-submodules=dirty",
)
SUBMODULE = "submodule"  # a candidate's value for such a submodule: never a sha1, never carried
SUBMODULE_REASON = (
    "a submodule whose checked-out commit differs from the one this repository records; "
    "a ChangeSet cannot carry a submodule, and the host reads nothing inside it"
)
# With --untracked-files=all git names an untracked directory (`dir/`) only when it holds its own
# `.git`: a repository nested in this one, untracked here and never entered by git or the host
NESTED = "nested-repository"
NESTED_REASON = (
    "an untracked directory that is a git repository of its own (it holds a .git); "
    "its files are that repository's, a ChangeSet cannot carry them, and the host reads nothing "
    "inside it"
)


@dataclass(frozen=True)
class Guess(Generic[State]):
    """The state a `git status` answer of exactly `stdout` gives, and the identities of the
    files it compared meanwhile (reused when git's answer is another: taken in this request)."""

    stdout: bytes
    state: State
    taken: Taken


class PendingState(Generic[State]):
    """A work-tree reading in progress (`Workspace.start_state`): either already known, or a
    running `git status`, the function that turns its answer into the state, and optionally
    the one that guesses it from the last answer (see the module docstring)."""

    def __init__(
        self,
        ready: State | None,
        running: RunningGit | None = None,
        read: Callable[[GitResult, bool, Taken], State] | None = None,
        guess: Callable[[], Guess[State] | None] | None = None,
    ) -> None:
        self._state = ready
        self._running = running
        self._read = read
        self._guesser = guess
        self._guess: Guess[State] | None = None
        self._answer: GitResult | None = None

    def guess(self) -> State | None:
        """While git runs: the state if git answers what it answered last time (None: no
        guess). `result()` then returns this very object when git did."""
        if self._state is not None:
            return self._state
        if self._guesser is None or self._answer is not None:
            return None
        self._guess = self._guesser()
        return self._guess.state if self._guess is not None else None

    async def answered(self) -> None:
        """Wait on the event loop until git has answered (`result` then does not block on it)."""
        if self._running is not None and self._answer is None:
            self._answer = await self._running.result_async()

    def result(self, *, on_loop: bool = False) -> State:
        """The state. `on_loop`: raises `NeedsReading` rather than run another git command or
        read a large file (then call it again in a worker thread)."""
        if self._state is None:
            assert self._running is not None and self._read is not None
            if self._answer is None:
                self._answer = self._running.result()
            answer, guess = self._answer, self._guess
            if guess is not None and answer.ok and answer.stdout == guess.stdout:
                self._state = guess.state
            else:
                self._state = self._read(answer, on_loop, guess.taken if guess else {})
        return self._state

    def close(self) -> None:
        if self._running is not None:
            self._running.close()


def uncarried(path: str, head: str | None) -> str | None:
    """Why candidate *path* (HEAD sha1 *head*, from `parse_status`) cannot be in a ChangeSet."""
    if head == SUBMODULE:
        return SUBMODULE_REASON
    if head == NESTED:
        return NESTED_REASON
    return uncarried_reason(path)


#: The changed-entry records of one answer, each as `parse_status` read it: (path, HEAD sha1).
Parsed = dict[bytes, tuple[str, str | None]]


def parse_status(
    out: bytes, known: Parsed | None = None
) -> tuple[str | None, dict[str, str | None]]:
    """(HEAD commit or None before the first commit, path -> HEAD sha1 or None when HEAD lacks
    it) of every path `git status` reports; a submodule git reports maps to `SUBMODULE`, an
    untracked nested repository to `NESTED`.
    *known*: the changed-entry records of the answer read before, reused for the same bytes
    (an answer that changed mostly repeats the last one's), then replaced by this answer's."""
    commit: str | None = None
    candidates: dict[str, str | None] = {}  # path -> HEAD sha1 (None: not in HEAD)
    head: str | None
    records: Parsed = {}
    for record in out.split(b"\0"):
        kind = record[:2]
        if kind == b"1 ":
            parsed = known.get(record) if known is not None else None
            if parsed is None:
                # 1 <XY> <sub> <mH> <mI> <mW> <hH> <hI> <path>
                fields = record.split(b" ", 8)
                if b"160000" in (fields[3], fields[4], fields[5]):
                    head = SUBMODULE  # added, removed or moved: a change no ChangeSet can carry
                else:
                    head = None if fields[3] == b"000000" else fields[6].decode("ascii")
                parsed = (fields[8].decode("utf-8", "surrogateescape"), head)
            records[record] = parsed
            candidates[parsed[0]] = parsed[1]
        elif kind == b"? ":
            path = record[2:].decode("utf-8", "surrogateescape")
            # `git rm --cached f` with f kept on disk: a staged deletion of HEAD's f, then f
            # untracked; against HEAD that is one path whose bytes may differ, HEAD's sha1 kept
            candidates.setdefault(path, NESTED if path.endswith("/") else None)
        elif kind == b"u ":
            # u <XY> <sub> <m1> <m2> <m3> <mW> <h1> <h2> <h3> <path>: stage 2 is HEAD
            fields = record.split(b" ", 10)
            head = None if fields[4] == b"000000" else fields[8].decode("ascii")
            candidates[fields[10].decode("utf-8", "surrogateescape")] = head
        elif record.startswith(b"# branch.oid "):
            oid = record[len(b"# branch.oid ") :].decode("ascii")
            commit = None if oid == "(initial)" else oid
    if known is not None:
        known.clear()
        known.update(records)
    return commit, candidates


def filtered_paths(
    runner: GitRunner, entries: dict[str, tuple[str, str]], known: dict[str, str | None]
) -> dict[str, str | None]:
    """HEAD paths (of tree *entries*) whose filter driver the runner blanked, not *known* yet:
    compared byte for byte by the workspace, never assumed clean (path -> HEAD sha1)."""
    names = [p for p in entries if p not in known]
    if not names:
        return {}
    stdin = b"\0".join(p.encode("utf-8", "surrogateescape") for p in names) + b"\0"
    out = runner.run("check-attr", "-z", "--stdin", "filter", stdin=stdin)
    if not out.ok:
        raise GitUnusable(out.reason())
    fields = out.stdout.split(b"\0")
    result: dict[str, str | None] = {}
    for index in range(0, len(fields) - 2, 3):
        path = fields[index].decode("utf-8", "surrogateescape")
        value = fields[index + 2].decode("utf-8", "surrogateescape")
        if value in runner.filtered_drivers and path in entries:
            result[path] = entries[path][1]
    return result
