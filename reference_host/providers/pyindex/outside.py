"""Names a rename cannot move because code outside the workspace reads them.

A method's name is part of a contract with whatever calls it. Python itself calls the dunder
methods (`__exit__`, `__getattr__`, `__init__`: renaming click's `LazyFile.__exit__` broke a test),
IPython and enum the `_sunder_` ones (renaming rich's `JupyterMixin._repr_mimebundle_` left
every rich renderable without its HTML form in a notebook),
and a class whose base is outside the workspace (`io.RawIOBase`, `dict`, a framework's model)
may be called back by that base under the method's name (`readinto`, `get`, `save`). The index
reads only the workspace, so such a base is judged here: a builtin or a standard-library class
already loaded in this process is asked whether it has the name (nothing is imported for it);
any other outside base cannot be read, and the rename is not claimed complete.

pytest calls plugins by name too: every `pytest_*` function or method of a plugin, a
`conftest.py` or pytest itself is taken as a hook implementation (pluggy matches it to the hook
spec of that name, with no decorator needed), and `config.hook.pytest_x(...)` calls the specs by
name. Renaming one (pytest's own `stepwise.pytest_sessionfinish`) silently unplugs it; renaming
something to such a name plugs it in (or fails "unknown hook").
"""

from __future__ import annotations

import builtins
import sys
import typing

from reference_host.providers.pyindex.index import PythonIndex

_HARMLESS = frozenset({"object"})
# standard-library frameworks that look optional methods up on their subclasses by name, beyond
# what the base class defines (importlib.resources asks a loader for `get_resource_reader`)
_CALLED_BY_NAME = frozenset({"importlib"})


class _NamedTupleBase(tuple):  # type: ignore[type-arg]
    """What `class P(NamedTuple)` inherits: tuple's members and the `_`-named helpers."""

    _make = _replace = _asdict = _fields = _field_defaults = None


def is_dunder(name: str) -> bool:
    """True for a name Python or a library calls by protocol: a dunder (`__exit__`), or a
    "sunder" `_name_` (IPython's `_repr_html_`/`_repr_mimebundle_`, which rich's JupyterMixin
    defines for every renderable; enum's `_missing_`, `_generate_next_value_`)."""
    if len(name) > 4 and name.startswith("__") and name.endswith("__"):
        return True
    return len(name) > 2 and name[0] == name[-1] == "_" and name[1] != "_" and name[-2] != "_"


HOOK_PREFIX = "pytest_"


def hook_name(name: str) -> bool:
    """True when pytest would call a plugin's function or method *name* by that name."""
    return name.startswith(HOOK_PREFIX) and len(name) > len(HOOK_PREFIX)


def collected(path: str, kind: str, parent_kind: str, name: str) -> bool:
    """True when pytest, with its default `python_files`/`python_classes`/`python_functions`,
    collects a definition *name* of *kind* ("class"/"function") whose enclosing scope is of
    *parent_kind*, in the file at *path*: a `test*` function of a `test_*.py`/`*_test.py` module
    or of a class in it, a `Test*` class. Functions nested in functions are never collected."""
    base = path.rpartition("/")[2]
    if not (base.startswith("test_") or base.endswith("_test.py")) or parent_kind == "function":
        return False
    return name.startswith("Test" if kind == "class" else "test")


def collection_change(path: str, kind: str, parent_kind: str, old: str, new: str) -> str | None:
    """Why renaming *old* to *new* changes what pytest runs, None when it does not: a test
    renamed out of pytest's naming pattern is silently dropped from the suite (flask's
    `test_options_work` -> `options_work`: one test fewer, still all green), a helper renamed
    into it becomes a test (its parameters are requested as fixtures: the suite errors)."""
    before, after = collected(path, kind, parent_kind, old), collected(path, kind, parent_kind, new)
    if before == after:
        return None
    if before:
        return f"pytest collects {old} by its name; as {new} it would no longer run"
    prefix = "Test" if kind == "class" else "test"
    return f"pytest would collect {new} as a test (a {kind} named {prefix}* in a test module)"


def outside_base(index: PythonIndex, classes: list[str], name: str) -> str | None:
    """Why *name*, a method of the first of *classes* (it and its workspace bases), may be read
    by a base outside the workspace; None when no such base can."""
    for class_id in classes:
        found = index.def_fact(class_id)
        if found is None:
            continue
        entry, fact = found
        for chain in fact.bases:
            target, consumed = index.resolve_chain(entry.path, fact.parent_scope, chain)
            if target is not None and consumed == len(chain) and target[0] == "def":
                continue  # a workspace class: the index's own override checks cover it
            spelled = ".".join(chain)
            if not chain or spelled in _HARMLESS:
                continue
            known = _loaded_class(index, entry.path, fact.parent_scope, chain)
            if known is None:
                return f"{class_id} derives from {spelled}, outside the workspace: it may define or call {name}"
            if hasattr(known, name):
                return f"{class_id} derives from {spelled}, which has {name}: renaming it changes what {spelled} calls"
            if known.__module__.partition(".")[0] in _CALLED_BY_NAME and name[:1] != "_":
                return f"{class_id} derives from {spelled}: {known.__module__} calls its hooks' methods by name (optional ones too, like get_resource_reader)"
    return None


def _loaded_class(index: PythonIndex, path: str, scope: int, chain: tuple[str, ...]) -> type | None:
    """The builtin or already-imported standard-library class *chain* names in *path*, if any."""
    binding = None
    scopes = index.files[path].facts.scopes
    at = scope
    while at >= 0 and binding is None:
        binding = scopes[at].bindings.get(chain[0])
        at = scopes[at].parent
    if binding is None:
        value: object = getattr(builtins, chain[0], None)
        rest = chain[1:]
    elif binding[0] == "import" and int(binding[3]) == 0:  # type: ignore[call-overload]
        dotted = str(binding[1]) + (f".{binding[2]}" if binding[2] is not None else "")
        top = dotted.partition(".")[0]
        if top not in sys.stdlib_module_names:
            return None
        value = _loaded(dotted)
        rest = chain[1:]
    else:
        return None
    for part in rest:
        value = getattr(value, part, None)
    if value is typing.NamedTuple:  # a function making a tuple class with its fields as members
        return _NamedTupleBase
    return value if isinstance(value, type) else None


def _loaded(dotted: str) -> object:
    """The module or module attribute *dotted* names, when its module is already imported."""
    module, _, attr = dotted.rpartition(".")
    if dotted in sys.modules:
        return sys.modules[dotted]
    holder = sys.modules.get(module)
    return getattr(holder, attr, None) if holder is not None else None
