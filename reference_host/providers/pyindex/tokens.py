"""Where names sit in the source text: the index's facts give spans of whole uses, definitions and
import statements; edits need the exact token of one name inside them.

This is the lexer (`tokenize`), not a second parser: it only places names the index has already
resolved. Positions are (zero-based line, code-point column), as in the facts' spans.
"""

from __future__ import annotations

import bisect
import functools
import io
import itertools
import keyword
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass

from reference_host.providers.pyindex.chains import CALL
from reference_host.providers.pyindex.facts import Span

Pos = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Token:
    kind: int
    text: str
    start: Pos
    end: Pos


class Source:
    """One file's tokens, read span by span. A rename needs the tokens of a few uses, imports
    and definitions, not of the whole file (tokenizing 47 of sympy's files whole took 2.8 s).
    A span starts where a syntax node starts, so lexing can start there: brackets opened before
    it only make the lexer's bracket depth go below zero, where it reads no indentation."""

    def __init__(self, text: str) -> None:
        self.lines = io.StringIO(text).readlines()

    def tokens_from(self, line: int, col: int) -> Iterator[Token]:
        """The tokens from (*line*, *col*) on, in file positions; raises the lexer's errors."""
        rest = itertools.chain(
            [self.lines[line][col:]], itertools.islice(self.lines, line + 1, None)
        )
        for tok in tokenize.generate_tokens(functools.partial(next, rest, "")):
            (row, start), (end_row, end) = tok.start, tok.end
            yield Token(
                tok.type,
                tok.string,
                (row - 1 + line, start + col if row == 1 else start),
                (end_row - 1 + line, end + col if end_row == 1 else end),
            )

    def within(self, span: Span) -> list[Token] | None:
        """The tokens that start inside *span* (None when its text does not lex)."""
        if not 0 <= span[0] < len(self.lines):
            return None
        end, out = (span[2], span[3]), []
        try:
            for tok in self.tokens_from(span[0], span[1]):
                if tok.start > end:
                    break
                out.append(tok)
        except (tokenize.TokenError, SyntaxError):
            return None
        return out

    def head(self, span: Span) -> list[Token] | None:
        """The tokens of a definition's span up to its name (after its decorators)."""
        out: list[Token] = []
        try:
            for tok in self.tokens_from(span[0], span[1]):
                out.append(tok)
                if len(out) > 1 and out[-2].kind == tokenize.NAME and out[-2].text in DEFINES:
                    return out
        except (tokenize.TokenError, SyntaxError):
            return None
        return out

    def all_statements(self) -> list[Token] | None:
        """The tokens of the module-level statements that assign `__all__` (None when one of
        them does not lex)."""
        out: list[Token] = []
        for row, text in enumerate(self.lines):
            if not text.startswith("__all__"):
                continue
            try:
                for tok in self.tokens_from(row, 0):
                    out.append(tok)
                    if tok.kind == tokenize.NEWLINE:
                        break
            except (tokenize.TokenError, SyntaxError):
                return None
        return out


DEFINES = ("def", "class")


def is_new_name(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name) and not keyword.issoftkeyword(name)


def _inside(tokens: list[Token], span: Span) -> list[Token]:
    """The tokens within *span*; *tokens* are in source order, so a bisection finds the first."""
    start, end = (span[0], span[1]), (span[2], span[3])
    out: list[Token] = []
    for tok in tokens[bisect.bisect_left(tokens, start, key=_start) :]:
        if tok.start > end:
            break
        if tok.end <= end:
            out.append(tok)
    return out


def _start(token: Token) -> Pos:
    return token.start


def chain_positions(tokens: list[Token], span: Span, chain: tuple[str, ...]) -> list[Pos | None]:
    """The start of each chain element's name token inside a use's span (None for a call marker).

    The chain `a.b().c` is the depth-0 token sequence NAME `.` NAME `(`...`)` `.` NAME; arguments
    inside the parentheses are skipped.
    """
    found: list[Token | None] = []
    depth = 0
    expect_name = True
    for tok in _inside(tokens, span):
        if tok.kind == tokenize.OP and tok.text in "([{":
            if depth == 0 and tok.text == "(":
                found.append(None)
            depth += 1
        elif tok.kind == tokenize.OP and tok.text in ")]}":
            depth -= 1
        elif depth == 0 and tok.kind == tokenize.OP and tok.text == ".":
            expect_name = True
        elif depth == 0 and tok.kind == tokenize.NAME and expect_name:
            found.append(tok)
            expect_name = False
        if len(found) == len(chain):
            break
    if len(found) != len(chain) or any(  # every name where the chain has it, spelled as it
        (t is None) != (c == CALL) or (t is not None and t.text != c)
        for t, c in zip(found, chain, strict=True)
    ):
        return [None] * len(chain)
    return [None if t is None else t.start for t in found]


def definition_name(tokens: list[Token], span: Span, name: str) -> Pos | None:
    """The name token after `def` / `class` at the start of a definition's span."""
    inside = _inside(tokens, span)
    for first, second in itertools.pairwise(inside):
        if first.kind == tokenize.NAME and first.text in DEFINES:
            return second.start if second.text == name else None
    return None


@dataclass(frozen=True, slots=True)
class Alias:
    """One `name [as bound]` of an import statement, with where its tokens are; *explicit* when
    it is spelled with `as` (`x as x` is how a typed package marks a re-export)."""

    name: str
    bound: str
    name_start: Pos
    start: Pos
    end: Pos
    explicit: bool = False


def import_aliases(tokens: list[Token], span: Span) -> tuple[list[Alias], bool]:
    """The aliases after `import` in one import statement, and whether it is parenthesized."""
    inside = _inside(tokens, span)
    names = [t for t in inside if t.kind not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT)]
    at = next(
        (i for i, t in enumerate(names) if t.kind == tokenize.NAME and t.text == "import"), None
    )
    if at is None:
        return [], False
    rest = names[at + 1 :]
    parens = bool(rest) and rest[0].text == "("
    aliases: list[Alias] = []
    group: list[Token] = []
    for tok in [*rest, Token(tokenize.OP, ",", (0, 0), (0, 0))]:
        if tok.kind == tokenize.OP and tok.text in ",()":
            words = [t for t in group if t.kind == tokenize.NAME or t.text == "."]
            if words:
                explicit = len(words) >= 3 and words[-2].text == "as"
                if explicit:
                    name, bound = "".join(t.text for t in words[:-2]), words[-1].text
                else:
                    name = "".join(t.text for t in words)
                    bound = name.split(".")[0]
                first, last = words[0].start, words[-1].end
                aliases.append(Alias(name, bound, first, first, last, explicit))
            group = []
        else:
            group.append(tok)
    return aliases, parens


def all_strings(tokens: list[Token], name: str, new: str) -> list[tuple[Token, str]]:
    """The string tokens of module-level `__all__ = [...]` / `+=` statements to rewrite when
    *name* becomes *new*, each with its new text: the one spelling *name*, or, when the
    statement is a plain list of names kept sorted (as is or case-folded; httpx's tests assert
    `httpx.__all__ == sorted(...)`), every string whose place in that order changes."""
    found: list[tuple[Token, str]] = []
    statement: list[Token] | None = None
    for tok in tokens:
        if tok.kind == tokenize.NAME and tok.text == "__all__" and tok.start[1] == 0:
            statement = []
        elif statement is not None and tok.kind == tokenize.NEWLINE:
            found += _exports(statement, name, new)
            statement = None
        elif statement is not None:
            statement.append(tok)
    return found


_LISTING = frozenset({tokenize.STRING, tokenize.NL, tokenize.COMMENT})


def _exports(statement: list[Token], name: str, new: str) -> list[tuple[Token, str]]:
    strings = [t for t in statement if t.kind == tokenize.STRING]
    plain = [t for t in strings if t.text[:1] in "'\"" and t.text[1:-1].isidentifier()]
    renamed = [(t, f"{t.text[0]}{new}{t.text[0]}") for t in plain if t.text[1:-1] == name]
    listing = all(t.kind in _LISTING or t.text in "=+=[](),:" for t in statement[1:])
    if not renamed or len(plain) != len(strings) or len(plain) < 3 or not listing:
        return renamed
    names = [t.text[1:-1] for t in plain]
    for key in (None, str.casefold):
        if names == sorted(names, key=key):
            after = sorted([new if n == name else n for n in names], key=key)
            return [
                (t, f"{t.text[0]}{a}{t.text[0]}")
                for t, n, a in zip(plain, names, after, strict=True)
                if n != a
            ]
    return renamed
