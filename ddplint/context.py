"""One parsed file and what one sweep over it learns: parents, scopes, calls, bindings.

Rules ask questions of a `FileContext` instead of walking the tree themselves. Positions
are not computed here: the checker resolves them only for nodes that end up reported.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from ddplint.names import ImportMap, dotted

if TYPE_CHECKING:
    from ddplint.facts import DDPFacts
    from ddplint.project import Project

Scope = cst.FunctionDef | cst.Module


@dataclass(frozen=True)
class Binding:
    """`target = value` (or `with value as target`, `for target in value`) in a scope."""

    target: str
    value: cst.BaseExpression
    statement: cst.CSTNode
    scope: Scope
    kind: str = "assign"  # "assign", "augassign", "with", "for", "param"


class _Indexer(cst.CSTVisitor):
    """Single pre-order sweep recording parents, order and the nodes rules look up."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.stack: list[cst.CSTNode] = []
        self.scopes: list[Scope] = [ctx.module]

    def on_visit(self, node: cst.CSTNode) -> bool:
        ctx = self.ctx
        if self.stack:
            ctx.parents[node] = self.stack[-1]
        ctx.order[node] = len(ctx.nodes)
        ctx.nodes.append(node)
        self.stack.append(node)
        scope = self.scopes[-1]
        ctx.scope_of_node[node] = scope
        if isinstance(node, cst.Call):
            ctx.calls.append(node)
        elif isinstance(node, (cst.Import, cst.ImportFrom)):
            ctx.imports.add(node)
        elif isinstance(node, cst.FunctionDef):
            ctx.functions[node.name.value].append(node)
            self.scopes.append(node)
            for param in _all_params(node.params):
                ctx._bind(param.name.value, param.default or param.name, node, node, "param")
        elif isinstance(node, cst.Assign):
            for target in node.targets:
                for name in _target_names(target.target):
                    ctx._bind(name, node.value, node, scope, "assign")
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            for name in _target_names(node.target):
                ctx._bind(name, node.value, node, scope, "assign")
        elif isinstance(node, cst.AugAssign):
            for name in _target_names(node.target):
                ctx._bind(name, node.value, node, scope, "augassign")
        elif isinstance(node, cst.NamedExpr):
            for name in _target_names(node.target):
                ctx._bind(name, node.value, node, scope, "assign")
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            for name in _target_names(node.asname.name):
                ctx._bind(name, node.item, node, scope, "with")
        elif isinstance(node, (cst.For, cst.CompFor)):
            for name in _target_names(node.target):
                ctx._bind(name, node.iter, node, scope, "for")
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.ctx.subtree_end[original_node] = len(self.ctx.nodes)
        self.stack.pop()
        if isinstance(original_node, cst.FunctionDef):
            self.scopes.pop()


def _all_params(params: cst.Parameters) -> Iterator[cst.Param]:
    yield from params.posonly_params
    yield from params.params
    yield from params.kwonly_params
    if isinstance(params.star_arg, cst.Param):
        yield params.star_arg
    if params.star_kwarg is not None:
        yield params.star_kwarg


def _target_names(target: cst.BaseExpression) -> Iterator[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_names(target.value)
    else:
        name = dotted(target)
        if name is not None:
            yield name


class FileContext:
    """Everything rules may ask about one file."""

    def __init__(
        self, path: str, source: str, module: cst.Module, project: Project | None = None
    ) -> None:
        self.path = path
        self.source = source
        self.module = module
        self.project = project
        self.imports = ImportMap()
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self.nodes: list[cst.CSTNode] = []
        self.order: dict[cst.CSTNode, int] = {}
        self.subtree_end: dict[cst.CSTNode, int] = {}
        self.scope_of_node: dict[cst.CSTNode, Scope] = {}
        self.calls: list[cst.Call] = []
        self.functions: dict[str, list[cst.FunctionDef]] = defaultdict(list)
        self.bindings: dict[str, list[Binding]] = defaultdict(list)
        module.visit(_Indexer(self))

    def _bind(
        self,
        name: str,
        value: cst.BaseExpression,
        statement: cst.CSTNode,
        scope: Scope,
        kind: str,
    ) -> None:
        self.bindings[name].append(Binding(name, value, statement, scope, kind))

    # -- names ---------------------------------------------------------------------------

    def qualname(self, node: cst.BaseExpression) -> str | None:
        """Canonical qualified name of an imported Name/Attribute chain, else None."""
        return self.imports.resolve(node)

    def call_name(self, call: cst.Call) -> str | None:
        """Qualified name of the called function, e.g. `torch.distributed.all_reduce`."""
        return self.imports.resolve(call.func)

    def calls_to(self, *qualnames: str) -> Iterator[cst.Call]:
        """Every call whose callee resolves to one of `qualnames`."""
        wanted = set(qualnames)
        for call in self.calls:
            if self.call_name(call) in wanted:
                yield call

    def method_calls(self, *methods: str) -> Iterator[cst.Call]:
        """Every `<expr>.method(...)` call, whatever the receiver."""
        wanted = set(methods)
        for call in self.calls:
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in wanted:
                yield call

    # -- tree ----------------------------------------------------------------------------

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """Parents of `node`, innermost first."""
        current = self.parents.get(node)
        while current is not None:
            yield current
            current = self.parents.get(current)

    def scope(self, node: cst.CSTNode) -> Scope:
        """The function (or the module) whose body holds `node`."""
        return self.scope_of_node.get(node, self.module)

    def statement(self, node: cst.CSTNode) -> cst.CSTNode:
        """The innermost simple or compound statement holding `node`."""
        for candidate in (node, *self.ancestors(node)):
            if isinstance(candidate, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return candidate
        return node

    def before(self, first: cst.CSTNode, second: cst.CSTNode) -> bool:
        """True if `first` starts before `second` in the source."""
        return self.order[first] < self.order[second]

    def is_inside(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        """True if `node` is `container` or lies below it."""
        start = self.order[container]
        return start <= self.order[node] < self.subtree_end[container]

    def walk(self, root: cst.CSTNode) -> list[cst.CSTNode]:
        """`root` and every node below it, in source order."""
        return self.nodes[self.order[root] : self.subtree_end[root]]

    def calls_within(self, root: cst.CSTNode) -> Iterator[cst.Call]:
        """Calls inside `root` (not entering nested function definitions)."""
        for call in self.calls:
            if self._within_same_scope(call, root):
                yield call

    def _within_same_scope(self, node: cst.CSTNode, root: cst.CSTNode) -> bool:
        for ancestor in self.ancestors(node):
            if ancestor is root:
                return True
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                return False
        return False

    def code(self, node: cst.CSTNode) -> str:
        """Source text of a node (normalised by LibCST's code generation)."""
        return self.module.code_for_node(node)

    # -- bindings ------------------------------------------------------------------------

    def bindings_of(self, name: str, at: cst.CSTNode | None = None) -> list[Binding]:
        """Bindings of a dotted name visible from `at`: its own scope first, then module."""
        found = self.bindings.get(name, [])
        if at is None or not found:
            return list(found)
        scope = self.scope(at)
        local = [b for b in found if b.scope is scope]
        if local:
            return local
        return [b for b in found if b.scope is self.module]

    def values_of(self, name: str, at: cst.CSTNode | None = None) -> list[cst.BaseExpression]:
        return [b.value for b in self.bindings_of(name, at) if b.kind != "param"]

    def origins(
        self, expr: cst.BaseExpression, at: cst.CSTNode | None = None, depth: int = 4
    ) -> Iterator[cst.BaseExpression]:
        """Expressions `expr` may stand for, following plain assignments a few steps."""
        yield expr
        name = dotted(expr)
        if name is None or depth == 0:
            return
        for binding in self.bindings_of(name, at if at is not None else expr):
            if binding.kind in ("assign", "with") and binding.value is not expr:
                yield from self.origins(binding.value, binding.statement, depth - 1)

    # -- DDP knowledge -------------------------------------------------------------------

    @cached_property
    def facts(self) -> DDPFacts:
        from ddplint.facts import DDPFacts

        return DDPFacts(self)

    def names_in(self, node: cst.CSTNode) -> Iterable[str]:
        """Dotted names read anywhere inside `node`."""
        for child in self.walk(node):
            if isinstance(child, (cst.Name, cst.Attribute)):
                name = dotted(child)
                if name:
                    yield name
