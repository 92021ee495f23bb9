"""One parsed file and what one sweep over it learns: parents, scopes, calls, bindings.

Rules ask questions of a `FileContext` instead of walking the tree themselves. Positions
are not computed here: the checker resolves them only for nodes that end up reported.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import libcst as cst
from libcst._nodes.internal import CodegenState

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


# Fields that only hold whitespace, comments and punctuation: never indexed.
_TRIVIA_FIELD = re.compile(
    r"^(whitespace\w*|lpar|rpar|leading_lines|lines_after_decorators|header|footer"
    r"|trailing_whitespace|newline|semicolon|comma|equal|colon|dot|lbracket|rbracket"
    r"|lbrace|rbrace|asynchronous|star_tok)$"
)
# Fields listed in source order where the dataclass order differs.
_SOURCE_ORDER: dict[type[cst.CSTNode], tuple[str, ...]] = {
    cst.IfExp: ("body", "test", "orelse"),
}
_FIELDS: dict[type[cst.CSTNode], tuple[str, ...]] = {}


def _child_fields(cls: type[cst.CSTNode]) -> tuple[str, ...]:
    fields = _FIELDS.get(cls)
    if fields is None:
        names = [f.name for f in dataclasses.fields(cls) if not _TRIVIA_FIELD.match(f.name)]
        if "decorators" in names:  # decorators come before the `def` / `class`
            names.remove("decorators")
            names.insert(0, "decorators")
        fields = _FIELDS[cls] = _SOURCE_ORDER.get(cls, tuple(names))
    return fields


_IS_NODE: dict[type, bool] = {}


def _is_node(value: object) -> bool:
    """`isinstance(value, cst.CSTNode)` without the ABC machinery on the hot path."""
    kind = type(value)
    known = _IS_NODE.get(kind)
    if known is None:
        known = _IS_NODE[kind] = isinstance(value, cst.CSTNode)
    return known


def _children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Child nodes in source order, without whitespace and punctuation."""
    children: list[cst.CSTNode] = []
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        if type(value) is tuple or type(value) is list:
            children.extend(v for v in value if _is_node(v))
        elif _is_node(value):
            children.append(value)
    return children


def _index(ctx: FileContext) -> None:
    """One iterative pre-order sweep recording parents, order, scopes and the nodes rules
    look up (iterative, so deeply nested code cannot exhaust the Python stack)."""
    stack: list[tuple[cst.CSTNode, cst.CSTNode | None, Scope, bool]] = [
        (ctx.module, None, ctx.module, False)
    ]
    while stack:
        node, parent, scope, leaving = stack.pop()
        if leaving:
            ctx.subtree_end[node] = len(ctx.nodes)
            continue
        if parent is not None:
            ctx.parents[node] = parent
        ctx.order[node] = len(ctx.nodes)
        ctx.nodes.append(node)
        ctx.scope_of_node[node] = scope
        inner = scope
        kind = type(node)
        ctx.by_type[kind].append(node)
        if kind is cst.Call:
            ctx.calls.append(node)  # type: ignore[arg-type]
        elif kind is cst.FunctionDef:
            ctx.functions[node.name.value].append(node)  # type: ignore[attr-defined]
            inner = node  # type: ignore[assignment]
            for param in _all_params(node.params):  # type: ignore[attr-defined]
                ctx._bind(param.name.value, param.default or param.name, node, node, "param")
        elif kind in _BINDERS:
            _BINDERS[kind](ctx, node, scope)
        stack.append((node, None, scope, True))
        stack.extend((child, node, inner, False) for child in reversed(_children(node)))


def _bind_import(ctx: FileContext, node: cst.Import | cst.ImportFrom, scope: Scope) -> None:
    ctx.imports.add(node)


def _bind_assign(ctx: FileContext, node: cst.Assign, scope: Scope) -> None:
    for target in node.targets:
        for name in _target_names(target.target):
            ctx._bind(name, node.value, node, scope, "assign")


def _bind_ann_assign(ctx: FileContext, node: cst.AnnAssign, scope: Scope) -> None:
    if node.value is not None:
        for name in _target_names(node.target):
            ctx._bind(name, node.value, node, scope, "assign")


def _bind_aug_assign(ctx: FileContext, node: cst.AugAssign, scope: Scope) -> None:
    for name in _target_names(node.target):
        ctx._bind(name, node.value, node, scope, "augassign")


def _bind_named_expr(ctx: FileContext, node: cst.NamedExpr, scope: Scope) -> None:
    for name in _target_names(node.target):
        ctx._bind(name, node.value, node, scope, "assign")


def _bind_with_item(ctx: FileContext, node: cst.WithItem, scope: Scope) -> None:
    if node.asname is not None:
        for name in _target_names(node.asname.name):
            ctx._bind(name, node.item, node, scope, "with")


def _bind_for(ctx: FileContext, node: cst.For | cst.CompFor, scope: Scope) -> None:
    for name in _target_names(node.target):
        ctx._bind(name, node.iter, node, scope, "for")


_BINDERS: dict[type[cst.CSTNode], Callable[[FileContext, Any, Scope], None]] = {
    cst.Import: _bind_import,
    cst.ImportFrom: _bind_import,
    cst.Assign: _bind_assign,
    cst.AnnAssign: _bind_ann_assign,
    cst.AugAssign: _bind_aug_assign,
    cst.NamedExpr: _bind_named_expr,
    cst.WithItem: _bind_with_item,
    cst.For: _bind_for,
    cst.CompFor: _bind_for,
}


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
        self.by_type: dict[type[cst.CSTNode], list[cst.CSTNode]] = defaultdict(list)
        self._qualnames: dict[cst.CSTNode, str | None] = {}
        self.functions: dict[str, list[cst.FunctionDef]] = defaultdict(list)
        self.bindings: dict[str, list[Binding]] = defaultdict(list)
        _index(self)

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
        try:
            return self._qualnames[node]
        except KeyError:
            name = self._qualnames[node] = self.imports.resolve(node)
            return name

    def call_name(self, call: cst.Call) -> str | None:
        """Qualified name of the called function, e.g. `torch.distributed.all_reduce`."""
        return self.qualname(call.func)

    def calls_to(self, *qualnames: str) -> Iterator[cst.Call]:
        """Every call whose callee resolves to one of `qualnames`."""
        wanted = set(qualnames)
        for call in self.calls:
            if self.call_name(call) in wanted:
                yield call

    def nodes_of(self, *kinds: type[cst.CSTNode]) -> list[cst.CSTNode]:
        """Every node of exactly these LibCST types, in source order."""
        if len(kinds) == 1:
            return self.by_type.get(kinds[0], [])
        found = [n for kind in kinds for n in self.by_type.get(kind, [])]
        return sorted(found, key=self.order.__getitem__)

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

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The function whose body holds `node`; None at module level."""
        scope = self.scope(node)
        return scope if isinstance(scope, cst.FunctionDef) else None

    def statement(self, node: cst.CSTNode) -> cst.CSTNode:
        """The innermost simple or compound statement holding `node`."""
        for candidate in (node, *self.ancestors(node)):
            if isinstance(candidate, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return candidate
        return node

    def enclosing_loop(self, node: cst.CSTNode) -> cst.For | cst.While | None:
        """The innermost loop around `node` in its function, lambda or class body."""
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.For, cst.While)):
                return ancestor
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return None
        return None

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

    def calls_within(self, root: cst.CSTNode) -> list[cst.Call]:
        """Calls inside `root`, not entering nested function definitions."""
        scope = root if isinstance(root, cst.FunctionDef) else self.scope(root)
        orders = self._call_orders
        first = bisect.bisect_left(orders, self.order[root])
        last = bisect.bisect_left(orders, self.subtree_end[root])
        return [c for c in self.calls[first:last] if self.scope_of_node[c] is scope]

    @cached_property
    def _call_orders(self) -> list[int]:
        return [self.order[c] for c in self.calls]

    def code(self, node: cst.CSTNode) -> str:
        """Source text of a node (normalised by LibCST's code generation)."""
        return self.module.code_for_node(node)

    def code_in_place(self, original: cst.CSTNode, new: cst.CSTNode) -> str:
        """Source of `new` as it reads in the place of `original`: continuation lines keep
        the indentation of the blocks around `original` (`Module.code_for_node` would
        generate them at indentation zero)."""
        indents = [
            self.module.default_indent if a.indent is None else a.indent
            for a in self.ancestors(original)
            if isinstance(a, cst.IndentedBlock)
        ]
        state = CodegenState(
            default_indent=self.module.default_indent,
            default_newline=self.module.default_newline,
            indent_tokens=list(reversed(indents)),
        )
        new._codegen(state)
        return "".join(state.tokens)

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
