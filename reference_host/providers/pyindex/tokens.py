"""Where names sit in the source text: the index's facts give spans of whole uses, definitions and
import statements; edits need the exact token of one name inside them.

This is the lexer (`tokenize`), not a second parser: it only places names the index has already
resolved. Positions are (zero-based line, code-point column), as in the facts' spans.
"""

from __future__ import annotations

import bisect
import io
import itertools
import keyword
import tokenize
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


def tokens_of(text: str) -> list[Token] | None:
    """Every token of *text*, or None when it does not tokenize."""
    out: list[Token] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            out.append(
                Token(
                    tok.type,
                    tok.string,
                    (tok.start[0] - 1, tok.start[1]),
                    (tok.end[0] - 1, tok.end[1]),
                )
            )
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None
    return out


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
    found: list[Pos | None] = []
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
            found.append(tok.start)
            expect_name = False
        if len(found) == len(chain):
            break
    if len(found) != len(chain) or any(
        (p is None) != (c == CALL) for p, c in zip(found, chain, strict=True)
    ):
        return [None] * len(chain)
    return found


def definition_name(tokens: list[Token], span: Span, name: str) -> Pos | None:
    """The name token after `def` / `class` at the start of a definition's span."""
    inside = _inside(tokens, span)
    for first, second in itertools.pairwise(inside):
        if first.kind == tokenize.NAME and first.text in ("def", "class"):
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


def all_strings(tokens: list[Token], name: str) -> list[Token]:
    """String tokens spelling *name* inside module-level `__all__ = [...]` / `+=` statements."""
    found: list[Token] = []
    active = False
    for tok in tokens:
        if tok.kind == tokenize.NAME and tok.text == "__all__" and tok.start[1] == 0:
            active = True
        elif active and tok.kind == tokenize.NEWLINE:
            active = False
        elif active and tok.kind == tokenize.STRING and tok.text in (f"'{name}'", f'"{name}"'):
            found.append(tok)
    return found
