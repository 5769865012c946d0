"""A bounded byte ring for the host's stderr: keeps the newest bytes, counts the dropped ones."""

from __future__ import annotations

from collections import deque


class ByteRing:
    """Keeps at most *capacity* of the most recent bytes; writing never blocks or grows unbounded."""

    def __init__(self, capacity: int) -> None:
        self.capacity = max(1, capacity)
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self.total = 0

    def write(self, data: bytes) -> None:
        if not data:
            return
        self.total += len(data)
        if len(data) >= self.capacity:
            self._chunks.clear()
            self._chunks.append(bytes(data[-self.capacity :]))
            self._size = self.capacity
            return
        self._chunks.append(bytes(data))
        self._size += len(data)
        while self._size > self.capacity:
            head = self._chunks[0]
            excess = self._size - self.capacity
            if len(head) <= excess:
                self._chunks.popleft()
                self._size -= len(head)
            else:
                self._chunks[0] = head[excess:]
                self._size -= excess

    @property
    def dropped(self) -> int:
        return self.total - self._size

    def tail(self, limit: int | None = None) -> str:
        """The newest bytes (at most *limit*), decoded leniently."""
        data = b"".join(self._chunks)
        if limit is not None:
            data = data[-limit:]
        return data.decode("utf-8", errors="replace")
