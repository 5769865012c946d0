"""One value kept beside the key it was made from, given back only for an equal key.

The status-like methods answer a client that polls: between two requests the provider views
and the drafted answer are usually what they were. They are kept here with a key that holds
every input they were made from (`status/providers.py` `views_key`, `status/results.py`), so
a request whose inputs are equal reuses them and any change to an input makes a new one: a
kept value is never older than its inputs. A key of None means "not keepable" (an input that
changes without leaving a trace in the key): nothing is kept or given back for it.
"""

from __future__ import annotations

from typing import Generic, TypeVar

Value = TypeVar("Value")


class Memo(Generic[Value]):
    """The last value `put` with its key (one entry: a polled status asks for the same one)."""

    __slots__ = ("_key", "_value")

    def __init__(self) -> None:
        self._key: object = None
        self._value: Value | None = None

    def get(self, key: object) -> Value | None:
        """The kept value when *key* equals the one it was kept with (None: not kept)."""
        if key is None or self._value is None or key != self._key:
            return None
        return self._value

    def put(self, key: object, value: Value) -> Value:
        """Keep *value* for *key* (a None key keeps nothing) and give it back."""
        if key is not None:
            self._key, self._value = key, value
        return value


class Identity:
    """Equal only to an Identity of the very same object: a key part for a value made from that
    object (kept alive by the key, so its id is never another's)."""

    __slots__ = ("of",)

    def __init__(self, of: object) -> None:
        self.of = of

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Identity) and other.of is self.of

    def __hash__(self) -> int:
        return id(self.of)
