"""A status-like answer drafted and encoded while git runs, with placeholders for what only git's
answer and the clock can give; after git only those values are encoded and put in.

`status_like_wire` (results.py) builds the answer while `git status` runs (status/snapshot.py),
under the policy and provider views the guessed state implies, from a *template state*
(`_TemplateState`) that holds placeholder strings for the work tree's `rev` and `dirty` digest
and says git is usable — and nothing else: an answer that reads any other part of the state
raises AttributeError there, and is then built after git as before. The receipt's `receiptId`,
`issuedAt` and `timing` get placeholders too. The draft is encoded once and cut around the placeholders'
encodings. When git has answered with a usable state under the same policy (whether or not the
guess was right), the pieces are joined with the encodings of that state's `rev` and `dirty`
and of the stamps taken now (a new receipt id among them): building and encoding the 9 KB answer after git cost a status
0.2-0.4 ms of latency; the join costs a few microseconds.

The bytes are those the answer built from that state would encode to: the encoder writes a
string value as its own encoding wherever it sits, so a placeholder's encoding can be swapped for
the value's. That holds when every placeholder in the draft is a whole string value the answer
took as it was, which is checked: the placeholders carry a random token drawn when the host
starts and never written anywhere, so no workspace or policy text can hold it; it must occur in
the encoded draft exactly as many times as the placeholders were found as whole strings (a value
made *from* a placeholder would show the token elsewhere). Otherwise, or when the state git gave
is unusable or differs in whether it has a `dirty` digest, the answer is built after git.
tests/host/test_host_status_drafts.py compares the joined answer with the built one.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, cast

from asp_protocol.framing import EncodedJson, UnencodableMessage, compact_json
from reference_host.receipts import Clock, receipt_id
from reference_host.repo.workspace import WorkTreeState
from reference_host.status.snapshot import Snapshot

_TOKEN = secrets.token_hex(16)
_NAMES = ("rev", "dirty", "at", "time", "id")
_REV, _DIRTY, _ISSUED, _TIMING, _ID = (f"asp-draft-{n}-{_TOKEN}" for n in _NAMES)
_ENCODED = {compact_json(p): n for n, p in enumerate((_REV, _DIRTY, _ISSUED, _TIMING, _ID))}
_FIND = re.compile(b"|".join(re.escape(e) for e in _ENCODED))


class _TemplateState:
    """The state a draft is built from: placeholders for `rev` and `dirty`, git usable, and no
    other attribute (reading one is an AttributeError: that answer is not drafted)."""

    __slots__ = ("dirty",)
    rev = _REV
    unusable = None

    def __init__(self, dirty: bool) -> None:
        self.dirty = _DIRTY if dirty else None

    def baseline(self) -> dict[str, str]:
        return WorkTreeState.baseline(cast(WorkTreeState, self))  # the real one: same keys, order


@dataclass(frozen=True)
class Draft:
    """An answer encoded but for its placeholders: the pieces between them, which placeholder
    each gap is (0 rev, 1 dirty, 2 issuedAt, 3 timing, 4 receiptId), whether it has a `dirty`
    digest, and its receipt's kind; and the same with the guessed state's rev and dirty already
    in (`guessed`: only the stamps' gaps left, for when git's answer is that state)."""

    pieces: tuple[bytes, ...]
    gaps: tuple[int, ...]
    dirty: bool
    kind: str
    guessed: tuple[WorkTreeState, tuple[bytes, ...], tuple[int, ...]] | None = None


def draft(build: Callable[[Snapshot], dict[str, Any]], guessed: Snapshot) -> Draft | None:
    """`build`'s answer from the guessed snapshot's policy and views and a template state,
    encoded and cut (None: it cannot be drafted; see the module docstring), with the guessed
    state's values put in (`for_state`)."""
    made = template(build, guessed)
    return for_state(made, guessed.state) if made is not None else None


def template(build: Callable[[Snapshot], dict[str, Any]], guessed: Snapshot) -> Draft | None:
    """The draft alone (`guessed` None): what `draft` makes before it puts the guess in."""
    dirty = guessed.state.dirty is not None
    try:
        value = build(replace(guessed, state=cast(WorkTreeState, _TemplateState(dirty))))
    except AttributeError:
        return None  # the answer reads more of the state than a template has
    stamps = {"receiptId": _ID, "issuedAt": _ISSUED, "timing": _TIMING}
    marked = {**value, "receipt": {**value["receipt"], **stamps}}  # each keeps its place
    try:
        data = compact_json(marked)
    except UnencodableMessage:
        return None  # built after git, and answered typed by the endpoint as any such result
    found = list(_FIND.finditer(data))
    if data.count(_TOKEN.encode()) != len(found):
        return None  # a placeholder inside another value: not a whole string the answer took
    cuts = [0] + [edge for m in found for edge in m.span()] + [len(data)]
    pieces = tuple(data[cuts[i] : cuts[i + 1]] for i in range(0, len(cuts), 2))
    gaps = tuple(_ENCODED[m.group()] for m in found)
    return Draft(pieces, gaps, dirty, str(value["receipt"]["kind"]))


def for_state(drafted: Draft, state: WorkTreeState) -> Draft:
    """*drafted* with *state*'s rev and dirty already in (`Draft.guessed`), for when git's answer
    is that very state; as it is when it has them already or *state* is unusable."""
    if state.unusable is not None or (drafted.guessed is not None and drafted.guessed[0] is state):
        return drafted
    known = _join(drafted, (compact_json(state.rev), compact_json(state.dirty)), stop=2)
    return replace(drafted, guessed=(state, *known))


def _join(
    drafted: Draft, encoded: tuple[bytes, ...], stop: int
) -> tuple[tuple[bytes, ...], tuple[int, ...]]:
    """The draft's gaps below *stop* filled with *encoded*: (pieces, the gaps left)."""
    pieces, gaps, run = [], [], [drafted.pieces[0]]
    for gap, piece in zip(drafted.gaps, drafted.pieces[1:], strict=True):
        if gap < stop:
            run += (encoded[gap], piece)
        else:
            pieces.append(b"".join(run))
            gaps.append(gap)
            run = [piece]
    pieces.append(b"".join(run))
    return tuple(pieces), tuple(gaps)


def filled(drafted: Draft, state: WorkTreeState, clock: Clock) -> EncodedJson | None:
    """The answer for *state* with its receipt stamped now (`timing` ends now, `issuedAt` is its
    end), or None when the draft does not fit the state (unusable, or `dirty` there or not)."""
    if state.unusable is not None or (state.dirty is not None) != drafted.dirty:
        return None
    timing = clock.timing()
    stamps = (
        _string(timing["endedAt"]),  # one clock reading
        b"{%s}" % b",".join(b"%s:%s" % (_string(k), _value(v)) for k, v in timing.items()),
        _string(receipt_id(drafted.kind, clock)),
    )
    if drafted.guessed is not None and drafted.guessed[0] is state:  # git confirmed the guess
        pieces, gaps = drafted.guessed[1:]
        encoded: tuple[bytes, ...] = (b"", b"", *stamps)
    else:
        pieces, gaps = drafted.pieces, drafted.gaps
        encoded = (_string(state.rev), _value(state.dirty), *stamps)
    parts = [pieces[0]]
    for gap, piece in zip(gaps, pieces[1:], strict=True):
        parts += (encoded[gap], piece)
    return EncodedJson(b"".join(parts))


#: A string whose JSON is itself between quotes: a time stamp, a receipt id, a rev, a digest.
_PLAIN = re.compile(r"[0-9A-Za-z:.+_-]*")


def _string(text: str) -> bytes:
    """*text*'s JSON as `compact_json` writes it, written here for the plain strings the stamps
    and the state give after git: the encoder's first call after git costs ~15 us cold."""
    return b'"%s"' % text.encode() if _PLAIN.fullmatch(text) else compact_json(text)


def _value(value: object) -> bytes:
    """`_string` for a string, an int's digits, null for None, else `compact_json`'s bytes."""
    if isinstance(value, str):
        return _string(value)
    if type(value) is int:
        return b"%d" % value
    return b"null" if value is None else compact_json(value)
