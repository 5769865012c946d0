"""A renamed method's new name against the other attributes of its class and its instances.

A method is a non-data descriptor: an instance attribute of the same name hides it, and a class
attribute of that name in a subclass or a base hides it or is hidden by it. The index knows a
class's methods and nested classes, not every attribute: `self.width = width` in `__init__` is
only a store. Renaming click's `HelpFormatter.write_usage` to `width` was `complete` and every
`formatter.width(...)` then called an int (76 tests failed); `Context.lookup_default` to
`default_map` failed 356. So the new name is looked for in the bodies of the class, its bases and
its subclasses in the workspace: a name their class bodies bind (index facts), an attribute
store `.name =` in their methods, or the name as a string there (`__slots__`, `setattr`) makes
the rename an error. Stores from outside those classes (`obj.width = 3` in some other module)
are not looked for.
"""

from __future__ import annotations

import re

from reference_host.providers.editing import split_lines
from reference_host.providers.pyindex.index import PythonIndex

# what follows `.name` in a store: an assignment or augmented one, or an annotated assignment
# (`self.default_map: t.Optional[...] = default_map`)
STORED = r"\s*(?:(?:[-+*/%&|^@]|//|\*\*|<<|>>)?=(?!=)|:[^=\n]*=(?!=))"


def bound_in_bodies(index: PythonIndex, classes: list[str], name: str) -> str | None:
    """The first of *classes* whose body binds *name* (an assignment, a def, an import)."""
    for class_id in classes:
        found = index.def_fact(class_id)
        if found is not None and name in found[0].facts.scopes[found[1].scope].bindings:
            return class_id
    return None


def instance_attributes(
    index: PythonIndex, texts: dict[str, str], classes: list[str], name: str
) -> list[str]:
    """`path:line` of each store of an attribute *name* (or *name* as a whole string) inside
    the bodies of *classes*; *texts* holds their files."""
    word = re.escape(name)
    store = re.compile(rf"\.\s*{word}{STORED}|(?P<q>['\"]){word}(?P=q)")
    places: list[str] = []
    for class_id in classes:
        found = index.def_fact(class_id)
        text = texts.get(found[0].path) if found is not None else None
        if found is None or text is None or name not in text:
            continue
        entry, fact = found
        lines = split_lines(text)[fact.span[0] : fact.span[2] + 1]
        places += [
            f"{entry.path}:{fact.span[0] + n + 1}"
            for n, line in enumerate(lines)
            if store.search(line)
        ]
    return sorted(set(places))
