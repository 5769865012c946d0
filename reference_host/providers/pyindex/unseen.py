"""The rename's last look, for uses of its name the index does not resolve: before a rename may
say `complete`, every other file of the workspace is read once more.

- Python files: strings (mentions.py: forward references are renamed in place, any other string
  spelling the name refuses), `.pyi` stubs declaring it, attributes assigned under the name;
- the other tracked files (templates, configuration, entry points, documentation), sorted and
  counted by textfiles.py: a use refuses, a prose mention in documentation is a plan warning.
Both reads share one time box (the provider's strings wait) and the provider's blob cache: a read
that outlasts it is `budget-exhausted` and recoverable, and what was read is kept for the next
request. A file that cannot be read refuses the rename, naming it: its uses cannot be ruled out.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

import anyio

from reference_host.providers.callbacks import HostCallbacks
from reference_host.providers.pyindex.index import split_id
from reference_host.providers.pyindex.loaded import Loaded
from reference_host.providers.pyindex.members import instance_attributes
from reference_host.providers.pyindex.mentions import attribute_stores, string_mentions
from reference_host.providers.pyindex.rename import RenameResult
from reference_host.providers.pyindex.textfiles import kind_of, scan

MAX_PLACES = 10
OTHER_GLOBS = ["**", "!**/*.py", "!**/*.pyi"]


class OtherFiles:
    """The listing of one baseline's files that are not Python source, listed once per baseline
    (the last one asked about) through the host's `workspace/listTree`."""

    def __init__(self) -> None:
        self._key: str | None = None
        self._listed: tuple[dict[str, str], bool] = ({}, False)

    async def of(self, callbacks: HostCallbacks, key: str) -> tuple[dict[str, str], bool]:
        """(path -> blob id, whether the host truncated the listing) of baseline *key*."""
        if self._key != key:
            listing = await callbacks.list_tree(globs=OTHER_GLOBS)
            files = {e.path: e.blob_id for e in listing.entries if e.kind == "file"}
            self._key, self._listed = key, (files, listing.truncated)
        return self._listed


async def look_elsewhere(
    loaded: Loaded, texts: dict[str, str], outcome: RenameResult, wait: float, others: OtherFiles
) -> list[str]:
    """Refuse *outcome* for a use found outside the index, or return the plan's warnings (prose
    mentions). Forward references join `outcome.sites` and their files' texts join *texts*."""
    deadline = anyio.current_time() + wait
    await _python(loaded, texts, outcome, wait)
    if outcome.refusal is not None:
        return []
    return await _text_files(loaded, outcome, deadline - anyio.current_time(), others)


async def _python(
    loaded: Loaded, texts: dict[str, str], outcome: RenameResult, wait: float
) -> None:
    """Read every other indexed file too and look at the name in their strings, stubs and
    attribute stores."""
    assert outcome.spelling is not None
    rest = [p for p in loaded.blobs if p not in texts]
    every = dict(texts)
    with anyio.move_on_after(wait) as box:
        every.update({p: t for p, t in (await loaded.texts(rest)).items() if t is not None})
    if box.cancelled_caught:
        have = sum(loaded.cache.get(loaded.blobs[p]) is not None for p in rest)
        outcome.refuse(
            "budget",
            f"read {have} of {len(rest)} other files for strings that may name "
            f"{outcome.old}; what was read is kept: ask again shortly",
        )
        return
    unread = sorted(set(loaded.blobs) - set(every))
    if unread:
        outcome.refuse("unresolved", f"{unread[0]} could not be read; it may use {outcome.old}")
        return
    stubs = await loaded.texts(sorted(loaded.stubs))
    word = re.compile(rf"(?<!\w){re.escape(outcome.old)}(?!\w)")
    typed = sorted(p for p, t in stubs.items() if t is None or word.search(t))
    if typed:
        outcome.refuse(
            "unresolved",
            f"{outcome.old} may be declared in {len(typed)} type stub(s), which a rename does "
            "not edit (type checkers would read the old name): " + ", ".join(typed[:MAX_PLACES]),
        )
        return
    stores = attribute_stores(every, outcome.old)
    if stores:
        outcome.refuse(
            "unresolved",
            f"{len(stores)} statement(s) assign an attribute named {outcome.old} (a monkeypatch, "
            "an instance attribute?), which a rename leaves as it is: "
            + ", ".join(stores[:MAX_PLACES]),
        )
        return
    hiding = instance_attributes(loaded.index, every, outcome.related, outcome.new)
    if hiding:
        outcome.refuse(
            "invalid",
            f"the class of {outcome.old}, its bases or subclasses give their instances an "
            f"attribute {outcome.new} (an instance attribute hides a method of that name): "
            + ", ".join(hiding[:MAX_PLACES]),
        )
        return
    found = string_mentions(loaded.index, every, outcome.spelling)
    if found.places:
        outcome.refuse(
            "unresolved",
            f"{outcome.old} is spelled in {len(found.places)} string(s) the index cannot "
            "follow (a dotted path, getattr, mock.patch, a doctest?); rename them by hand: "
            + ", ".join(found.places[:MAX_PLACES]),
        )
        return
    for path, sites in found.sites.items():
        outcome.sites.setdefault(path, set()).update(sites)
        texts[path] = every[path]


def dotted_names(loaded: Loaded, outcome: RenameResult) -> Callable[[str], bool]:
    """Whether a dotted path names the renamed definition in a way the rename changes: its own
    path (`pkg.mod.Class.name`) under any name of its module, or a path through a module that
    re-exports it (`pkg.name` after `from .mod import *`), unless that module keeps the old
    name (`from .mod import name as name`: `pkg.name` still works)."""
    index, spelling = loaded.index, outcome.spelling
    assert spelling is not None
    path, qualname = split_id(outcome.target)
    entry = index.files.get(path)
    modules = (entry.name.primary, *entry.name.aliases) if entry and entry.name else ()
    own = {f"{m}.{qualname}" for m in modules}

    @cache
    def names_it(dotted: str) -> bool:
        parts = dotted.split(".")
        if dotted in own or parts[-1] != outcome.old:
            return dotted in own
        for cut in range(len(parts) - 1, 0, -1):
            holder = index.resolve_module(".".join(parts[:cut]))
            if holder is None:
                continue
            reached = index.module_attr(holder, parts[cut])
            for attr in parts[cut + 1 :]:
                reached = index.attr_of(reached, attr) if reached is not None else None
            if reached != ("def", outcome.target):
                return False
            return cut < len(parts) - 1 or spelling.exports_new(holder)
        return False

    return names_it


async def _text_files(
    loaded: Loaded, outcome: RenameResult, wait: float, others: OtherFiles
) -> list[str]:
    """Read the workspace's other files and count the name in them (textfiles.py)."""
    old = outcome.old
    listed, truncated = await others.of(loaded.callbacks, loaded.key)
    if truncated:
        outcome.refuse(
            "unresolved",
            f"the host's listing of the non-Python files was truncated; they may use {old}",
        )
        return []
    wanted = {p: b for p, b in listed.items() if kind_of(p) != "skip"}
    got: dict[str, bytes] = {}
    with anyio.move_on_after(max(wait, 0.0)) as box:
        got = await loaded.data(wanted)
    if box.cancelled_caught:
        have = sum(loaded.cache.get(b) is not None for b in wanted.values())
        outcome.refuse(
            "budget",
            f"read {have} of {len(wanted)} non-Python files (templates, configuration, docs) that "
            f"may use {old}; what was read is kept: ask again shortly",
        )
        return []
    unread = sorted(set(wanted) - set(got))
    if unread:
        outcome.refuse(
            "unresolved",
            f"{len(unread)} non-Python file(s) could not be read; they may use {old}: "
            + ", ".join(unread[:MAX_PLACES]),
        )
        return []
    names_it = dotted_names(loaded, outcome)
    counted: list[str] = []
    prose: list[str] = []
    for path in sorted(got):
        found = scan(path, got[path], old, names_it)
        counted += [f"{path}:{n}" for n in found.counted]
        prose += [f"{path}:{n}" for n in found.prose]
    if counted:
        outcome.refuse(
            "unresolved",
            f"{old} is used in {len(counted)} place(s) of non-Python files (templates, "
            "configuration, entry points, Sphinx references), which a rename does not edit: "
            + ", ".join(counted[:MAX_PLACES]),
        )
        return []
    if not prose:
        return []
    return [
        f"{old} is mentioned in {len(prose)} place(s) of documentation, which a rename does not "
        "edit: " + ", ".join(prose[:MAX_PLACES])
    ]
