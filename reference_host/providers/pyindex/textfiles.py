"""Which of the workspace's other files (not `.py`/`.pyi`) can use a renamed name, and how.

The index reads Python only, but a program also reaches its functions and methods by name from
files that are not Python: a template calls a method (`{{ page.has_other_pages }}`), an entry
point names a function (`x = "pkg.mod:main"` in pyproject.toml, setup.cfg, entry_points.txt, a
Procfile's `gunicorn pkg.wsgi:application`), a settings file names a class, Sphinx documents
one by its dotted path (`.. autofunction:: pkg.mod.name`). A rename that says `complete` without
looking there leaves those uses behind, and they fail only when they run. So before a rename may
say `complete`, every other file is sorted by its name here, and each kind counts differently:
- templates (`.html`, `.jinja`, `.j2`, ..., or any file under a `templates`/`jinja2`
  directory that is not under `docs/`): the name inside a tag (`{{ }}`, `{% %}`, `${ }`,
  `<% %>`) counts, but not as a statement tag's own name and not inside a quoted literal;
- configuration and entry points (`.toml`, `.cfg`, `.ini`, `.yaml`, `.json`, an egg-info's
  `entry_points.txt`, a `Procfile`, other extensionless or unrecognised text): the name as a
  whole word anywhere counts;
- documentation (`.rst`, `.md`, `.txt`, man pages, LICENSE/README-style names, anything under a
  `docs/` tree): a Sphinx directive or role whose target is the definition's dotted path
  (`pkg.mod.name`, `pkg.mod.Class.name`, or the target read under the page's
  `.. currentmodule::`) counts; a mention in prose is only a plan warning (the page goes stale,
  nothing breaks);
- not read: binary content (a NUL byte in the first 8 KiB), locale catalogues (`.po`, `.pot`,
  `.mo`, anything under `LC_MESSAGES`: translated prose) and static assets (scripts, styles,
  images, fonts, archives), which never look Python up by name, nor lists of files
  (`MANIFEST.in`, `.gitignore`, `CODEOWNERS`, ...), which name paths, not objects.
What counts makes the rename incomplete, with `path:line`. The word rule is the one stub files
are checked with: the name not preceded or followed by a word character.

Measured on Django 5.2 (4,095 files that are not Python: 1,470 binary or not read, 728
documentation, 383 templates, 129 configuration), 100 random renames of its definitions: the
whole word anywhere in templates refused 10 of them, all but 2 by coincidence: text a template
prints (`<form method="get">`, prose), a tag's own name (`{% load %}` in 78 templates,
`{% url %}` in 43), a quoted literal (`{% translate "..." %}`). Outside its tags a template is
text, literals are not looked up, and a tag or filter named after its function is refused by
rebinding.py's registering decorators; so templates count inside tags only, which leaves the 2
real attribute reads (`{{ choice.link }}`, `{{ widget.value.url }}`). Configuration stays a
whole-word count: 6 of the 100 were refused by it, by coincidence (`"type": "link"` in GeoJSON
test data, `black --check` in tox.ini, a `"composite_pk.post"` fixture label, `render` imported
in the `views.py-tpl` project template), but a missed entry point or dotted setting breaks at
run time while a refusal only costs a look. The `docs/` rule is there because Django's
`docs/ref/templates/*.txt` read as templates and `docs/spelling_wordlist` as configuration.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["template", "config", "docs", "skip"]
SNIFF_BYTES = 8192

TEMPLATE_DIRS = frozenset({"templates", "jinja2"})
LOCALE_DIRS = frozenset({"LC_MESSAGES"})
DOC_DIRS = frozenset({"doc", "docs"})
TEMPLATE_SUFFIXES = frozenset(
    {".html", ".htm", ".xhtml", ".jinja", ".jinja2", ".j2", ".djhtml", ".tpl", ".tmpl", ".mako"}
)
DOC_SUFFIXES = frozenset({".rst", ".rest", ".md", ".markdown", ".txt"})
DOC_STEMS = frozenset(
    {"license", "licence", "copying", "authors", "contributors", "changes", "changelog"}
    | {"history", "news", "readme", "install", "notice", "pkg-info"}
)
ENTRY_POINT_FILES = frozenset({"entry_points.txt"})  # an egg-info's entry points: counted
FILE_LISTS = frozenset(  # they name files, never a Python object (`include` in MANIFEST.in)
    {"manifest.in", ".gitignore", ".gitattributes", ".dockerignore", ".hgignore", "codeowners"}
    | {".gitkeep", ".keep", ".editorconfig"}
)
NOT_READ_SUFFIXES = frozenset(
    {".po", ".pot", ".mo"}  # locale catalogues
    | {".js", ".mjs", ".cjs", ".ts", ".css", ".scss", ".sass", ".less", ".map"}  # static assets
    | {".png", ".jpg", ".jpeg", ".gif", ".ico", ".svg", ".webp", ".bmp", ".tif", ".tiff"}
    | {".woff", ".woff2", ".ttf", ".otf", ".eot"}  # fonts
    | {".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".lzma", ".7z", ".whl", ".egg", ".jar"}
    | {".pdf", ".pyc", ".so", ".dll", ".dylib", ".exe"}
)
_DIRECTIVE = re.compile(r"^[ \t]*\.\.[ \t]+(?:py:)?([\w-]+)::[ \t]*(\S*)", re.MULTILINE)
_ROLE = re.compile(r"(?::[\w.+-]+(?::[\w.+-]+)*:|\{[\w.:+-]+\})`([^`\n]+)`")
_MYST_DIRECTIVE = re.compile(r"^[ \t]*(?:`{3,}|:{3,})\{(?:py:)?([\w-]+)\}[ \t]*(\S*)", re.MULTILINE)
_TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\$\{.*?\}|<%.*?%>", re.DOTALL)
_STATEMENT = re.compile(r"\{%-?\s*\w+")
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")
_FILTER = re.compile(r"\|\s*\w+")  # a filter after `|` in a template tag
_MAN_PAGE = re.compile(r"\.[1-9]")
_CLASS_DIRECTIVES = frozenset({"class", "autoclass", "exception", "autoexception"})
_MODULE_DIRECTIVES = frozenset({"module", "currentmodule", "automodule"})


def kind_of(path: str) -> Kind:
    """How a file at *path* counts, from its name alone (binary content is found when read)."""
    parts = path.split("/")
    name = parts[-1].lower()
    stem, dot, suffix = name.rpartition(".")
    suffix = f".{suffix}" if dot and stem else ""
    dirs = set(parts[:-1])
    if suffix in NOT_READ_SUFFIXES or dirs & LOCALE_DIRS or name in FILE_LISTS:
        return "skip"
    if name in ENTRY_POINT_FILES:
        return "config"
    if dirs & DOC_DIRS:  # a documentation tree: its pages, its theme's templates, word lists
        return "docs"
    if suffix in TEMPLATE_SUFFIXES or dirs & TEMPLATE_DIRS:
        return "template"
    if suffix in DOC_SUFFIXES or (stem or name) in DOC_STEMS or _MAN_PAGE.fullmatch(suffix):
        return "docs"
    return "config"


def is_binary(data: bytes) -> bool:
    """A NUL byte early on: an image, an archive, a compiled catalogue, whatever its name."""
    return b"\0" in data[:SNIFF_BYTES]


@dataclass
class Found:
    """Where one file uses the name (`counted`, line numbers from 1) or only mentions it
    (`prose`)."""

    counted: list[int] = field(default_factory=list)
    prose: list[int] = field(default_factory=list)


def _targets(text: str) -> list[tuple[int, str]]:
    """(offset, target) of each Sphinx directive argument and role target in *text*, each also
    as Sphinx reads it in context: under the page's current module (`Class.name` after
    `.. currentmodule:: pkg.mod` names `pkg.mod.Class.name`) and inside the body of a class
    directive (an indented `.. method:: name` under `.. class:: Class`)."""
    found: list[tuple[int, str, str]] = []  # offset, directive or "", target
    for pattern in (_DIRECTIVE, _MYST_DIRECTIVE):
        found += [(m.start(), m.group(1), m.group(2)) for m in pattern.finditer(text)]
    for role in _ROLE.finditer(text):
        target = role.group(1)
        if "<" in target and target.endswith(">"):
            target = target.rpartition("<")[2][:-1]  # `title <target>`
        found.append((role.start(), "", target))
    out: list[tuple[int, str]] = []
    current = ""
    classes: list[tuple[int, str]] = []  # (indent, class) of the class bodies being read
    for offset, directive, target in sorted(found):
        target = target.strip().lstrip("~!.").split("(", 1)[0].rstrip(".,;:")
        start = text.rfind("\n", 0, offset) + 1
        end = text.find("\n", start)
        line = text[start : end if end >= 0 else len(text)]
        indent = len(line) - len(line.lstrip(" \t"))
        while classes and classes[-1][0] >= indent:
            classes.pop()
        if directive in _MODULE_DIRECTIVES:
            current = target
            continue
        spelled = [target, *(f"{c}.{target}" for _, c in classes[-1:])]
        out += [(offset, t) for t in spelled]
        out += [(offset, f"{current}.{t}") for t in spelled if current]
        if directive in _CLASS_DIRECTIVES:
            classes.append((indent, spelled[-1]))
    return out


def _words(word: re.Pattern[str], tag: str) -> list[re.Match[str]]:
    """The matches of *word* in template tag *tag* but in its quoted strings (a `{% translate
    "..." %}` text, a `{% url 'name' %}`) and a statement tag's own name (`{% load %}`, `{% url
    %}`, `{% for %}`): literals and tag names are not Python looked up by name (a tag or filter
    named after its function is refused by rebinding.py's registering decorators). So is a
    filter's name (`{{ title|capfirst }}`, `{{ x | e }}`): it names a registered filter, and
    Django's 16 uses of `|capfirst` refused renaming `django.utils.text.capfirst`, which the
    filter only calls."""
    blanked = _QUOTED.sub(lambda q: " " * len(q.group()), tag)
    blanked = _FILTER.sub(lambda f: " " * len(f.group()), blanked)
    statement = _STATEMENT.match(blanked)
    if statement is not None and statement.group().lstrip("{%-").strip() == "filter":
        return []  # `{% filter capfirst|lower %}`: all of it names filters
    if statement is not None:
        blanked = " " * statement.end() + blanked[statement.end() :]
    return list(word.finditer(blanked))


def scan(path: str, data: bytes, name: str, names_it: Callable[[str], bool]) -> Found:
    """Where file *path* (*data*, read) holds *name*: nothing when the bytes do not contain it
    (the search runs before any decoding) or the file is binary. *names_it*: whether a dotted
    path (a Sphinx target in a documentation page) names the renamed definition."""
    found = Found()
    if name.encode() not in data or is_binary(data):
        return found
    text = data.decode("utf-8", "replace")
    word = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
    kind = kind_of(path)
    if kind == "template":
        at = [t.start() + m.start() for t in _TAG.finditer(text) for m in _words(word, t.group())]
    else:
        at = [m.start() for m in word.finditer(text)]
    lines = _line_numbers(text, at)
    if kind != "docs":
        found.counted = lines
        return found
    named = [a for a, t in _targets(text) if t.rpartition(".")[2] == name and names_it(t)]
    counted = set(_line_numbers(text, named))
    found.counted = sorted(counted)
    found.prose = [n for n in lines if n not in counted]
    return found


def _line_numbers(text: str, offsets: list[int]) -> list[int]:
    """The distinct line numbers (from 1) of *offsets* in *text*, counted in one pass."""
    out: list[int] = []
    line, last = 1, 0
    for at in sorted(offsets):
        line += text.count("\n", last, at)
        last = at
        if not out or out[-1] != line:
            out.append(line)
    return out
