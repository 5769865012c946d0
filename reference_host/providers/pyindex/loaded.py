"""What one edit request works on: the session's finished Python index, the files it could not
index, and file texts read on demand through the host (kept in the provider's blob cache)."""

from __future__ import annotations

from dataclasses import dataclass, field

from reference_host.providers.callbacks import HostCallbacks
from reference_host.providers.editing import BlobCache
from reference_host.providers.pyindex.index import PythonIndex

READ_BATCH = 256


@dataclass(frozen=True)
class Loaded:
    """The session's Python index, what could not be indexed, and file texts read on demand."""

    index: PythonIndex
    blobs: dict[str, str]  # path -> blob id of every indexed file
    unindexed: dict[str, str]  # listed Python files with no facts (unparsable, refused, too large)
    callbacks: HostCallbacks
    gap: str | None = None  # files the index could not even list, when there are
    cache: BlobCache = field(default_factory=BlobCache)  # the provider's, across requests
    stubs: dict[str, str] = field(default_factory=dict)  # path -> blob of each `.pyi` stub
    key: str = ""  # the baseline, as the builds key it

    async def texts(self, paths: list[str]) -> dict[str, str | None]:
        """The text of each of *paths* (None when the host refuses or lacks its blob)."""
        maps = (self.blobs, self.unindexed, self.stubs)
        wanted = {p: next((m[p] for m in maps if p in m), None) for p in paths}
        served = await self.data({p: b for p, b in wanted.items() if b is not None})
        return {
            p: served[p].decode("utf-8", "replace") if p in served else None
            for p, b in wanted.items()
            if b is not None
        }

    async def data(self, wanted: dict[str, str]) -> dict[str, bytes]:
        """The bytes of each path of *wanted* (path -> blob id) the host serves; each batch read
        joins the cache at once, so a request cancelled midway keeps what it read."""
        served: dict[str, bytes] = {}
        ids: list[str] = []
        for blob in dict.fromkeys(wanted.values()):
            known = self.cache.get(blob)
            if known is None:
                ids.append(blob)
            else:
                served[blob] = known
        for start in range(0, len(ids), READ_BATCH):
            got, _ = await self.callbacks.read_each(ids[start : start + READ_BATCH])
            for blob, data in got.items():
                self.cache.put(blob, data)
            served.update(got)
        return {p: served[b] for p, b in wanted.items() if b in served}
