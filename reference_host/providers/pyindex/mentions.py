"""The renamed name where the index does not look: inside string literals.

The index's facts hold the code's uses; a string holds a name the program may still read by it:
a forward reference (`-> "HelpFormatter"`, `t.Type["HelpFormatter"]`), a dotted path in settings
(`"django.contrib.auth.hashers.PBKDF2PasswordHasher"`), `getattr(obj, "name")`,
`mock.patch("pkg.mod.name")`, a doctest. Renaming around them would leave code that compiles and
then fails when it runs. So every Python file's strings are read once more:
- a string in an annotation (or `cast`'s first argument, a `TypeVar`'s `bound=`) is a forward
  reference: each name in it that resolves, from the module, to the renamed definition is renamed
  inside the string like any use (when the literal is plain: one line, no escapes, ASCII);
- `__all__` strings are the rename's own business (rename.py);
- any other string that spells the name as an identifier or a component of a dotted path
  (`pkg.mod.name`, `pkg.mod:name`), and any doctest line that uses it, makes the rename
  incomplete, with where: what such a string names cannot be known statically.
Prose that mentions the name among other words is left alone.
"""

from __future__ import annotations

import ast
import re
import tokenize
from dataclasses import dataclass, field

from reference_host.providers.pyindex.chains import name_chain
from reference_host.providers.pyindex.index import PythonIndex
from reference_host.providers.pyindex.spelling import Spelling
from reference_host.providers.pyindex.tokens import Pos, Token, all_strings, tokens_of

_PATH = re.compile(r"[A-Za-z_][\w.:]*")
_PLAIN = re.compile(r"(?i)(?P<prefix>[ru]?)(?P<quote>'|\")")
_OPENING = re.compile(r"(?i)[rfu]*('{3}|\"{3}|'|\")")


@dataclass
class Mentions:
    """What the strings of the files hold: name positions inside forward references to rename,
    and the places (`path:line`) where a string spells the name some other way."""

    sites: dict[str, set[Pos]] = field(default_factory=dict)
    places: list[str] = field(default_factory=list)


def _annotation_strings(tree: ast.Module) -> list[ast.Constant]:
    """String constants evaluated as type expressions: in annotations, `cast(T, ...)`'s first
    argument and `TypeVar(..., bound=T)`."""
    roots: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            roots += [a.annotation for a in every if a is not None and a.annotation is not None]
            if node.returns is not None:
                roots.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
        elif isinstance(node, ast.Call):
            called = name_chain(node.func) or ()
            if called[-1:] == ("cast",) and node.args:
                roots.append(node.args[0])
            elif called[-1:] == ("TypeVar",):
                roots += [k.value for k in node.keywords if k.arg == "bound"]
    return [
        c
        for root in roots
        for c in ast.walk(root)
        if isinstance(c, ast.Constant) and isinstance(c.value, str)
    ]


def _spells(content: str, name: str) -> bool:
    """True when *content* is an identifier or a dotted path with *name* as one component."""
    stripped = content.strip()
    return _PATH.fullmatch(stripped) is not None and name in re.split(r"[.:]", stripped)


def _doctest_uses(content: str, name: str) -> bool:
    word = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
    return any(
        word.search(line)
        for line in content.splitlines()
        if line.lstrip().startswith((">>>", "..."))
    )


def _forward_sites(
    index: PythonIndex,
    spelling: Spelling,
    path: str,
    token: Token,
    value: str,
) -> list[Pos] | None:
    """The positions of the renamed name inside forward reference *token* (value *value*);
    None when the reference cannot be rewritten in place (or names the target in a way that
    cannot be placed)."""
    plain = _PLAIN.match(token.text)
    if plain is None or token.start[0] != token.end[0] or not value.isascii():
        return None
    inner = len(plain.group("prefix")) + len(plain.group("quote"))
    if token.text[inner : len(token.text) - len(plain.group("quote"))] != value:
        return None
    try:
        expression = ast.parse(value.strip(), mode="eval")
    except SyntaxError:
        return None
    shift = value.index(value.strip()[:1]) if value.strip() else 0
    found: list[Pos] = []
    for node in ast.walk(expression):
        if not isinstance(node, (ast.Name, ast.Attribute)):
            continue
        chain = name_chain(node)
        if chain is None or chain[-1] != spelling.old:
            continue
        reached, consumed = index.resolve_chain(path, 0, chain)
        if reached is None:
            return None  # its first name is not bound in the module: it may be the target
        if reached != ("def", spelling.target) or consumed != len(chain):
            continue  # another definition of the same name
        if not spelling.use_follows(path, 0, chain[:-1]):
            continue  # read through a binding that keeps the old name
        end = node.end_col_offset
        assert end is not None
        found.append((token.start[0], token.start[1] + inner + shift + end - len(spelling.old)))
    return found


def string_mentions(
    index: PythonIndex, texts: dict[str, str], spelling: Spelling, skip: dict[str, list[Token]]
) -> Mentions:
    """The mentions of `spelling.old` in the strings of *texts* (path -> text); *skip* holds the
    string tokens the rename already rewrites (`__all__` entries)."""
    name, out = spelling.old, Mentions()
    quoted = re.compile(rf"['\"][^'\"\n]*(?<!\w){re.escape(name)}(?!\w)|>>>")
    for path, text in sorted(texts.items()):
        if name not in text or quoted.search(text) is None or path not in index.files:
            continue
        tokens = tokens_of(text)
        if tokens is None:
            continue  # rename.py refuses a file that does not tokenize and holds the name
        ignored = {t.start for t in [*skip.get(path, []), *all_strings(tokens, name)]}
        try:
            forward = {(c.lineno - 1, c.value) for c in _annotation_strings(ast.parse(text))}
        except (SyntaxError, ValueError):
            forward = set()
        for token in tokens:
            if token.kind != tokenize.STRING or name not in token.text or token.start in ignored:
                continue
            value = _literal(token.text)
            if value is None:
                continue  # bytes
            if (token.start[0], value) in forward:
                sites = _forward_sites(index, spelling, path, token, value)
                if sites is None:
                    out.places.append(f"{path}:{token.start[0] + 1}")
                elif sites:
                    out.sites.setdefault(path, set()).update(sites)
            elif _spells(value, name) or _doctest_uses(value, name):
                out.places.append(f"{path}:{token.start[0] + 1}")
    return out


def _literal(text: str) -> str | None:
    """The value of one string token: an f-string's text as written, None for bytes."""
    try:
        value = ast.literal_eval(text)
    except (SyntaxError, ValueError):  # an f-string: its code is the index's, its text is read
        opening = _OPENING.match(text)
        return text[opening.end() : len(text) - len(opening.group(1))] if opening else None
    return value if isinstance(value, str) else None
