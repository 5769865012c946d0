"""Files the index holds no facts of, and whether an answer may be missing what they hold.

A file that does not parse with this interpreter (code for a newer Python: Home Assistant has
828 such files of 8,521) or is over the size cap yields a bare module: no definitions, no uses,
no imports. An answer built without them is not the whole answer if one of them may spell a name
the answer is about — the asked symbol, or any node it lists (a transitive `impact` or `callers`
reaches further through those names). Whether a file spells a word is the test of words.py
(never a false no); its bytes are read once through the callbacks, only when an answer asks.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from reference_host.providers.callbacks import HostCallbacks
from reference_host.providers.pyindex.index import PythonIndex
from reference_host.providers.pyindex.reading import READ_BATCH
from reference_host.providers.pyindex.words import searchable

ASCII_WORD = re.compile(rb"[A-Za-z0-9_]+")
SHOWN = 100
MAX_REMEMBERED = 20_000
_GLOB = re.compile(r"[*?\[]")


def unindexed_files(index: PythonIndex) -> dict[str, tuple[str, str]]:
    """path -> (blob id, why it has no facts) of every indexed file without facts (of a scoped
    index, scoped.py: of the files it holds, those spelling the names it covers)."""
    return {
        path: (entry.blob, entry.facts.error)
        for path, entry in dict.items(index.files)
        if entry.facts.error
    }


def answer_words(request_symbol: str, answer: dict[str, Any]) -> set[str] | None:
    """The names an answer is about (None: any name, e.g. a glob): the asked symbol's last name
    (none: ""), and the last dotted name of every node the answer lists."""
    if _GLOB.search(request_symbol):
        return None
    words = {_last(request_symbol)}
    for key in ("nodes", "changedNodes", "impactedNodes"):
        for node in answer.get(key) or ():
            if isinstance(node, dict) and isinstance(node.get("name"), str):
                words.add(_last(node["name"]))
    words.discard("")
    return words


def _last(name: str) -> str:
    return name.rpartition("::")[2].rpartition(".")[2].strip()


class UnindexedTexts:
    """The ASCII words of unindexed blobs, read once each (None: cannot be searched, or the
    host did not serve it: then it counts as spelling every name)."""

    def __init__(self) -> None:
        self._words: OrderedDict[str, frozenset[bytes] | None] = OrderedDict()

    async def may_spell(
        self,
        callbacks: HostCallbacks,
        files: dict[str, tuple[str, str]],
        words: Iterable[str] | None,
    ) -> dict[str, str]:
        """path -> why, of the *files* that may spell one of *words* (all of them for None)."""
        if not files:
            return {}
        if words is None:
            return {path: why for path, (_blob, why) in files.items()}
        wanted = {w.encode("utf-8", "surrogatepass") for w in words}
        await self._learn(callbacks, [blob for blob, _why in files.values()])
        found = {}
        for path, (blob, why) in files.items():
            known = self._words.get(blob)
            if known is None or not all(w.isascii() for w in wanted) or wanted & known:
                found[path] = why
        return found

    async def _learn(self, callbacks: HostCallbacks, blobs: list[str]) -> None:
        missing = list(dict.fromkeys(b for b in blobs if b not in self._words))
        for start in range(0, len(missing), READ_BATCH):
            batch = missing[start : start + READ_BATCH]
            got, _refused = await callbacks.read_each(batch)
            for blob in batch:
                data = got.get(blob)
                form = searchable(data) if data is not None else None
                self._words[blob] = None if form is None else frozenset(ASCII_WORD.findall(form))
        while len(self._words) > MAX_REMEMBERED:
            self._words.popitem(last=False)


def mark(answer: dict[str, Any], missing: dict[str, str], *, graph: bool) -> None:
    """Say in *answer* that it may lack what *missing* files hold: never the whole answer."""
    if not missing:
        return
    if not graph:  # an impact answer's shape is closed: only `truncated` can say it
        answer["truncated"] = True
        return
    data = answer.setdefault("data", {})
    incomplete = data.setdefault("incomplete", {})
    incomplete["unindexed"] = [
        {"path": path, "why": why[:200]} for path, why in sorted(missing.items())[:SHOWN]
    ]
    incomplete["unindexedCount"] = len(missing)
    data["truncated"] = True
