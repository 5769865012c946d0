"""What the fact collector records per node besides scopes: positions and the uses' columns.

Positions are zero-based (line, character) pairs, characters counted as code points (the AST gives
UTF-8 byte columns); uses are kept in plain lists while a module is collected and packed into
`Uses` columns once at the end (factmodel.py), every distinct chain numbered once.
"""

from __future__ import annotations

import ast
import hashlib

from reference_host.providers.pyindex.factmodel import KIND_CODES, Span, Uses

CALL, LOAD, BASE, DECORATOR = (KIND_CODES[k] for k in ("call", "load", "base", "decorator"))


class Recorder:
    """Positions of one blob's nodes and the uses recorded so far (the collector's base)."""

    scope: int  # the collector's current scope, charged with each use

    def __init__(self, data: bytes, lines: list[bytes]) -> None:
        self.lines = lines
        self.stripped: list[bytes] | None = None  # lines without trailing blanks, for `shape`
        # one-based numbers of the lines whose byte columns are not character columns (the
        # line breaks split off are ASCII, so an ASCII blob has none)
        self.wide = (
            frozenset()
            if data.isascii()
            else frozenset(n for n, line in enumerate(lines, 1) if not line.isascii())
        )
        self.use_scopes: list[int] = []
        self.use_kinds: list[int] = []
        self.use_spans: list[int] = []  # four numbers a use
        self.use_chains: list[int] = []  # index into `chains`
        self.chains: list[tuple[str, ...]] = []
        self.known_chains: dict[tuple[str, ...], int] = {}

    def _char(self, line: int, col: int) -> int:
        if line in self.wide:
            return len(self.lines[line - 1][:col].decode("utf-8", errors="replace"))
        return col

    def span(self, node: ast.stmt | ast.expr) -> Span:
        line, col = node.lineno, node.col_offset  # every statement and expression has both
        end_line = node.end_lineno or line
        end_col = node.end_col_offset or col
        if self.wide and (line in self.wide or end_line in self.wide):
            return (line - 1, self._char(line, col), end_line - 1, self._char(end_line, end_col))
        return (line - 1, col, end_line - 1, end_col)

    def shape(self, node: ast.AST, span: Span) -> str:
        first = getattr(node, "decorator_list", None)
        start = min([d.lineno for d in first] + [span[0] + 1]) - 1 if first else span[0]
        if self.stripped is None:  # once per file: nested definitions hash their lines again
            self.stripped = [line.rstrip() for line in self.lines]
        text = b"\n".join(self.stripped[start : span[2] + 1])
        return hashlib.blake2b(text, digest_size=12).hexdigest()

    # -- uses ------------------------------------------------------------------------------
    def use(self, chain: tuple[str, ...], kind: int, node: ast.expr) -> None:
        """Record a use of *chain* (*kind*: a code of `USE_KINDS`) spanning *node*."""
        number = self.known_chains.get(chain)
        if number is None:
            number = self.known_chains[chain] = len(self.chains)
            self.chains.append(chain)
        self.use_scopes.append(self.scope)
        self.use_kinds.append(kind)
        line, col = node.lineno, node.col_offset  # `span` inline: most names are a use
        end_line = node.end_lineno or line
        wide = self.wide
        if wide and (line in wide or end_line in wide):
            self.use_spans.extend(self.span(node))
        else:
            self.use_spans.extend((line - 1, col, end_line - 1, node.end_col_offset or col))
        self.use_chains.append(number)

    def uses(self) -> Uses:
        return Uses.from_lists(
            self.use_scopes, self.use_kinds, self.use_spans, self.use_chains, self.chains
        )
