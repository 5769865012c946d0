"""What one Python blob says, independent of its path: scopes, definitions, uses, imports.

Facts depend only on the bytes, so they are cached per blob id and reused across baselines;
name resolution across modules happens later, in `index.py`.
"""

from __future__ import annotations

import ast

__all__ = [
    "LOCAL",
    "Binding",
    "DefFact",
    "ImportFact",
    "ModuleFacts",
    "Scope",
    "Span",
    "UseFact",
    "Uses",
    "parse_facts",
]

from reference_host.providers.pyindex.chains import (
    annotation_chain,
    element_chain,
    name_chain,
    split_chain,
)
from reference_host.providers.pyindex.factmodel import (
    LOCAL,
    Binding,
    DefFact,
    ImportFact,
    ModuleFacts,
    Scope,
    Span,
    UseFact,
    Uses,
)
from reference_host.providers.pyindex.flow import FlowVisitors
from reference_host.providers.pyindex.recorder import BASE, CALL, DECORATOR, LOAD, Recorder
from reference_host.providers.pyindex.walk import (
    CONSTANT,
    Handler,
    Handlers,
    generic,
    nothing,
    written_out,
)


class _Collector(Recorder, FlowVisitors):
    """One pass over the tree recording scopes, bindings, definitions, uses and imports."""

    def __init__(self, blob: str, data: bytes, lines: list[bytes]) -> None:
        super().__init__(data, lines)
        self.scopes: list[Scope] = [Scope(owner="", kind="module", parent=-1)]
        self.defs: list[DefFact] = []
        self.imports: list[ImportFact] = []
        self.all_names: list[str] | None = None
        self.scope = 0
        self.blob = blob
        self.type_checking = 0
        self.classes: dict[int, DefFact] = {}  # class scope index -> its definition
        self.dropped_attrs: set[tuple[int, str]] = set()

    # -- bindings --------------------------------------------------------------------------
    def bind(self, name: str, binding: Binding) -> None:
        scope = self.scopes[self.scope]
        if name in scope.declared_global:
            scope = self.scopes[0]
        current = scope.bindings.get(name)
        if current is None:
            scope.bindings[name] = binding
        elif current[0] in ("def", "import"):
            return
        elif binding[0] in ("def", "import"):
            scope.bindings[name] = binding
        else:
            scope.bindings[name] = LOCAL

    def push(self, owner: str, kind: str, **extra: object) -> int:
        self.scopes.append(Scope(owner=owner, kind=kind, parent=self.scope, **extra))  # type: ignore[arg-type]
        return len(self.scopes) - 1

    def qualname(self, name: str) -> str:
        owner = self.scopes[self.scope].owner
        return f"{owner}.{name}" if owner else name

    # -- traversal -------------------------------------------------------------------------
    def visit(self, node: ast.AST) -> None:
        _HANDLERS[type(node)](self, node)

    def visit_many(self, nodes: list[ast.stmt] | list[ast.expr]) -> None:
        handlers = _HANDLERS
        for node in nodes:
            if type(node) is not CONSTANT:
                handlers[type(node)](self, node)

    def _decorators(self, decorators: list[ast.expr]) -> None:
        for deco in decorators:
            chain, root = split_chain(deco) if not isinstance(deco, ast.Call) else (None, None)
            if chain is not None:
                self.use(chain, DECORATOR, deco)
                if root is not None:
                    self.visit_Call(root)
            else:
                self.visit(deco)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._decorators(node.decorator_list)
        args = node.args
        self.visit_many([d for d in args.defaults if d is not None])
        self.visit_many([d for d in args.kw_defaults if d is not None])
        all_args = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        for extra in (args.vararg, args.kwarg):
            if extra is not None:
                all_args.append(extra)
        for arg in all_args:
            if arg.annotation is not None:
                self.visit(arg.annotation)
        if node.returns is not None:
            self.visit(node.returns)
        qualname = self.qualname(node.name)
        parent = self.scope
        self.bind(node.name, ("def", qualname))
        span = self.span(node)
        enclosing = self.scopes[parent]
        self_name = None
        positional = [*args.posonlyargs, *args.args]
        decorator_names = {c[-1] for c in map(name_chain, node.decorator_list) if c}
        if enclosing.kind == "class" and positional and "staticmethod" not in decorator_names:
            self_name = positional[0].arg
        scope = self.push(
            qualname, "function", self_name=self_name, class_scope=parent if self_name else -1
        )
        self.defs.append(
            DefFact(
                qualname,
                node.name,
                "function",
                span,
                scope,
                parent,
                self.shape(node, span),
                returns=annotation_chain(node.returns),
                returns_element=element_chain(node.returns),
            )
        )
        self.scope = scope
        for arg in all_args:
            chain = annotation_chain(arg.annotation)
            if arg.arg != self_name:
                self.bind(arg.arg, ("instance", chain) if chain else LOCAL)
        self.visit_many(node.body)
        self.scope = parent

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._decorators(node.decorator_list)
        bases: list[tuple[str, ...]] = []
        for base in node.bases:
            chain, root = split_chain(base)
            if chain is not None and root is None:
                bases.append(chain)
                self.use(chain, BASE, base)
            else:
                self.visit(base)
        for keyword in node.keywords:
            self.visit(keyword.value)
        qualname = self.qualname(node.name)
        parent = self.scope
        self.bind(node.name, ("def", qualname))
        span = self.span(node)
        scope = self.push(qualname, "class")
        fact = DefFact(
            qualname,
            node.name,
            "class",
            span,
            scope,
            parent,
            self.shape(node, span),
            tuple(bases),
            attrs={},
        )
        self.defs.append(fact)
        self.classes[scope] = fact
        self.scope = scope
        self.visit_many(node.body)
        self.scope = parent

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit_many([d for d in node.args.defaults if d is not None])
        parent = self.scope
        self.scope = self.push(self.scopes[parent].owner, "function")
        for arg in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]:
            self.bind(arg.arg, LOCAL)
        for extra in (node.args.vararg, node.args.kwarg):
            if extra is not None:
                self.bind(extra.arg, LOCAL)
        self.visit(node.body)
        self.scope = parent

    def _comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp
    ) -> None:
        generators = node.generators
        self.visit(generators[0].iter)
        parent = self.scope
        self.scope = self.push(self.scopes[parent].owner, "function")
        for index, gen in enumerate(generators):
            if index:
                self.visit(gen.iter)
            self.visit(gen.target)
            self.visit_many(gen.ifs)
        if isinstance(node, ast.DictComp):
            self.visit(node.key)
            self.visit(node.value)
        else:
            self.visit(node.elt)
        self.scope = parent

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def visit_Global(self, node: ast.Global) -> None:
        scope = self.scopes[self.scope]
        scope.declared_global = scope.declared_global | set(node.names)

    def visit_Import(self, node: ast.Import) -> None:
        span = self.span(node)
        for alias in node.names:
            self.imports.append(
                ImportFact(self.scope, alias.name, 0, None, span, bool(self.type_checking))
            )
            if alias.asname:
                self.bind(alias.asname, ("import", alias.name, None, 0))
            else:
                first = alias.name.split(".", 1)[0]
                self.bind(first, ("import", first, None, 0))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        span = self.span(node)
        module = node.module or ""
        for alias in node.names:
            self.imports.append(
                ImportFact(
                    self.scope, module, node.level, alias.name, span, bool(self.type_checking)
                )
            )
            if alias.name != "*":
                self.bind(alias.asname or alias.name, ("import", module, alias.name, node.level))

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        value_chain = name_chain(node.value.func) if isinstance(node.value, ast.Call) else None
        binding: Binding = ("instance", value_chain) if value_chain else LOCAL
        # `run = compute`, `alias = core.compute`: another name for what the chain names
        alias = name_chain(node.value) if isinstance(node.value, ast.Name | ast.Attribute) else None
        for target in node.targets:
            if isinstance(target, ast.Name):
                self.bind(target.id, ("alias", alias) if alias else binding)
                if target.id == "__all__" and self.scope == 0:
                    self._record_all(node.value)
            elif not self.attribute(target, binding):
                self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.annotation)
        if node.value is not None:
            self.visit(node.value)
        chain = annotation_chain(node.annotation)
        binding: Binding = ("instance", chain) if chain else LOCAL
        if isinstance(node.target, ast.Name):
            self.bind(node.target.id, binding)
            if self.scope in self.classes:
                self.class_attr(self.scope, node.target.id, binding)
        elif not self.attribute(node.target, binding):
            self.visit(node.target)

    def _record_all(self, value: ast.expr) -> None:
        if isinstance(value, ast.List | ast.Tuple):
            names = [e.value for e in value.elts if isinstance(e, ast.Constant)]
            self.all_names = [n for n in names if isinstance(n, str)]

    def visit_Name(self, node: ast.Name) -> None:
        if type(node.ctx) is ast.Load:
            self.use((node.id,), LOAD, node)
        else:
            self.bind(node.id, LOCAL)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        chain, root = split_chain(node) if type(node.ctx) is ast.Load else (None, None)
        if chain is not None:
            self.use(chain, LOAD, node)
            if root is not None:
                self.visit_Call(root)
        else:
            self.visit(node.value)

    def visit_Call(self, node: ast.Call) -> None:
        chain, root = split_chain(node.func)
        if chain is not None:
            self.use(chain, CALL, node.func)
            if root is not None:
                self.visit_Call(root)
        else:
            self.visit(node.func)
        if node.args:
            self.visit_many(node.args)
        for keyword in node.keywords:
            value = keyword.value
            if type(value) is not ast.Constant:
                self.visit(value)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self.bind(node.name, LOCAL)
        self.visit_many(node.body)


def _handler(kind: type) -> Handler:
    """How the collector visits a node type: its `visit_` method, else a walk of its fields
    (walk.py)."""
    method = getattr(_Collector, "visit_" + kind.__name__, None)
    if method is not None:
        return method  # type: ignore[no-any-return]
    return _WRITTEN.get(kind) or generic(kind, _HANDLERS)


_HANDLERS = Handlers(_handler)
_WRITTEN = written_out(_HANDLERS)
_HANDLERS[type(None)] = nothing


def parse_facts(blob: str, data: bytes) -> ModuleFacts:
    """Parse *data* once; a file that does not parse still yields a (definition-less) module."""
    lines = data.splitlines()
    try:
        tree = ast.parse(data, type_comments=False)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        message = f"{type(exc).__name__}: {getattr(exc, 'msg', None) or exc}"
        return _bare(blob, message[:300], len(lines))
    collector = _Collector(blob, data, lines)
    try:
        collector.visit_many(tree.body)
    except RecursionError:
        return _bare(blob, "RecursionError: too deeply nested", len(lines))
    return ModuleFacts(
        blob,
        collector.scopes,
        collector.defs,
        collector.uses(),
        collector.imports,
        all_names=collector.all_names,
        lines=len(lines),
    )


def _bare(blob: str, error: str, lines: int) -> ModuleFacts:
    return ModuleFacts(blob, [Scope("", "module", -1)], [], Uses(), [], error=error, lines=lines)
