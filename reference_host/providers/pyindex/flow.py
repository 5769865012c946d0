"""The collector's visitors for statements that give a name an evident type, or guard imports.

`with C() as x`, `for x in f()` (f annotated `-> Iterator[C]`), `self.x = C()` in a method and
`x: C` in a class body type `x`; `if TYPE_CHECKING:` marks its imports as never run. A mixin of
`facts._Collector`, which owns the scopes and the generic traversal.
"""

from __future__ import annotations

import ast

from reference_host.providers.pyindex.chains import is_type_checking, name_chain
from reference_host.providers.pyindex.factmodel import LOCAL, Binding, DefFact, Scope


class FlowVisitors:
    """Needs the collector's scope stack, class table and traversal (declared here for typing)."""

    scopes: list[Scope]
    scope: int
    type_checking: int
    classes: dict[int, DefFact]
    dropped_attrs: set[tuple[int, str]]

    def visit(self, node: ast.AST) -> None:
        raise NotImplementedError

    def visit_many(self, nodes: list[ast.stmt] | list[ast.expr]) -> None:
        raise NotImplementedError

    def bind(self, name: str, binding: Binding) -> None:
        raise NotImplementedError

    def visit_If(self, node: ast.If) -> None:
        self.visit(node.test)
        guarded = is_type_checking(node.test)
        self.type_checking += guarded
        self.visit_many(node.body)
        self.type_checking -= guarded
        self.visit_many(node.orelse)

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            target, value = item.optional_vars, item.context_expr
            if isinstance(target, ast.Name):
                chain = name_chain(value.func) if isinstance(value, ast.Call) else None
                self.bind(target.id, ("instance", chain) if chain else LOCAL)
            elif target is not None:
                self.visit(target)
        self.visit_many(node.body)

    visit_AsyncWith = visit_With

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        if isinstance(node.target, ast.Name):
            chain = name_chain(node.iter.func) if isinstance(node.iter, ast.Call) else None
            self.bind(node.target.id, ("element", chain) if chain else LOCAL)
        else:
            self.visit(node.target)
        self.visit_many(node.body)
        self.visit_many(node.orelse)

    visit_AsyncFor = visit_For

    def attribute(self, target: ast.expr, binding: Binding) -> bool:
        """Record `self.attr = ...` in a method as a typed attribute of its class; True if it was."""
        scope = self.scopes[self.scope]
        if not (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and scope.self_name is not None
            and target.value.id == scope.self_name
            and scope.class_scope in self.classes
        ):
            return False
        self.class_attr(scope.class_scope, target.attr, binding)
        return True

    def class_attr(self, class_scope: int, name: str, binding: Binding) -> None:
        attrs = self.classes[class_scope].attrs
        assert attrs is not None, "a class definition always has its attrs dict"
        key = (class_scope, name)
        known = attrs.get(name)
        if key in self.dropped_attrs or binding == LOCAL or (known and known[0] != binding):
            attrs.pop(name, None)
            self.dropped_attrs.add(key)
        else:
            attrs[name] = (binding, self.scope)
