"""The semantic model of one file, built by one iterative sweep over the tree.

It records, for every node: its parent, its pre-order index and the end of its subtree
(so "is inside" and "comes before" are integer comparisons), and the function or module
whose frame runs it; and for the file: calls, function and class definitions, return
statements and bindings. A binding knows the frame and the precise scope it lives in
(module, class body, function, lambda, comprehension), the conditional block it sits in
(an `if`/`else` branch, a loop body, a `try` body or handler, a `case`) and its loop.
"""

from __future__ import annotations

import bisect
import operator
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar, cast

import libcst as cst

from ddplint.engine.node_table import NodeTable
from ddplint.engine.tree import children
from ddplint.names import ImportMap, dotted

Frame = cst.FunctionDef | cst.Module
ScopeNode = (
    cst.Module
    | cst.FunctionDef
    | cst.ClassDef
    | cst.Lambda
    | cst.ListComp
    | cst.SetComp
    | cst.DictComp
    | cst.GeneratorExp
)
Loop = cst.For | cst.While
N = TypeVar("N", bound=cst.CSTNode)
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
SCOPE_TYPES = (cst.Module, cst.FunctionDef, cst.ClassDef, cst.Lambda, *COMPREHENSIONS)
# The same as sets of exact types: parsed trees hold no subclasses of LibCST's node types, and
# a set look-up avoids `isinstance` on LibCST's ABC-based classes on the hottest path.
_SCOPE_KINDS: frozenset[type[cst.CSTNode]] = frozenset(SCOPE_TYPES)
_COMPREHENSION_KINDS: frozenset[type[cst.CSTNode]] = frozenset(COMPREHENSIONS)
_SEQUENCES: frozenset[type[cst.CSTNode]] = frozenset({cst.Tuple, cst.List})
_BODY_SCOPE_KINDS: frozenset[type[cst.CSTNode]] = frozenset(
    {cst.FunctionDef, cst.ClassDef, cst.Lambda}
)


@dataclass(frozen=True)
class Binding:
    """`target = value` (or `with value as target`, `for target in value`, a parameter)."""

    target: str
    value: cst.BaseExpression
    statement: cst.CSTNode
    scope: Frame  # the function (or module) whose frame runs the binding
    kind: str = "assign"  # "assign", "augassign", "with", "for", "param", "except"
    owner: ScopeNode | None = None  # the precise scope: class body, comprehension, ...
    branch: cst.CSTNode | None = None  # the innermost conditional block holding it
    loop: Loop | None = None  # the innermost loop of its frame holding it
    index: int | None = None  # position in an unpacked value: `a, b = f()`
    node: cst.BaseExpression | None = None  # the target as written (`model` of `model, opt = f()`)


def storage_key(expr: cst.BaseExpression) -> str | None:
    """`a.b` for an attribute chain, `cfg['rank']` for a string-keyed subscript of one."""
    if type(expr) is cst.Subscript and len(expr.slice) == 1:
        element = expr.slice[0].slice
        if type(element) is cst.Index and type(element.value) is cst.SimpleString:
            base = dotted(expr.value)
            key = element.value.evaluated_value
            if base is not None and isinstance(key, str):
                return f"{base}[{key!r}]"
        return None
    return dotted(expr)


def parameter_positions(func: cst.FunctionDef) -> dict[str, int]:
    """Each parameter of `func` with its position among a call's arguments (`self` and
    `cls` not counted; -1 for `self`/`cls` and keyword-only ones)."""
    names = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
    offset = 1 if names and names[0] in ("self", "cls") else 0
    positions = {name: index - offset for index, name in enumerate(names)}
    positions.update((p.name.value, -1) for p in func.params.kwonly_params)
    return positions


def all_params(params: cst.Parameters) -> Iterator[cst.Param]:
    """Every parameter, in order: positional-only, positional, `*args`, keyword-only, `**kw`."""
    yield from params.posonly_params
    yield from params.params
    if type(params.star_arg) is cst.Param:
        yield params.star_arg
    yield from params.kwonly_params
    if params.star_kwarg is not None:
        yield params.star_kwarg


@dataclass(frozen=True)
class _Where:
    """The context the sweep carries down: frame, precise scope, block and loop."""

    frame: Frame
    owner: ScopeNode
    branch: cst.CSTNode | None
    loop: Loop | None


class SemanticModel:
    """Everything one sweep learns about a module."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.imports = ImportMap()
        self.nodes: list[cst.CSTNode] = []
        # By node identity (`NodeTable`): `id(node)` -> pre-order position, and per position
        # the parent's position (-1 for the module), the end of the subtree and the frame.
        self._at: dict[int, int] = {}
        self._parent_at: list[int] = []
        self._ends: list[int] = []
        self._frames: list[Frame] = []
        self.calls: list[cst.Call] = []
        self.by_type: dict[type[cst.CSTNode], list[cst.CSTNode]] = defaultdict(list)
        self.functions: dict[str, list[cst.FunctionDef]] = defaultdict(list)
        self.classes: dict[str, list[cst.ClassDef]] = defaultdict(list)
        self.bindings: dict[str, list[Binding]] = defaultdict(list)  # names, attributes
        self.item_bindings: dict[str, list[Binding]] = defaultdict(list)  # `cfg['k'] = v`
        self.returns: dict[Frame, list[cst.Return]] = defaultdict(list)
        self.calls_by_name: dict[str, list[cst.Call]] = defaultdict(list)
        self._by_frame: dict[Frame, dict[str, list[Binding]]] | None = None
        self._calls_by_frame: dict[Frame, list[cst.Call]] | None = None
        self._orders: dict[int, tuple[list[Any], list[int]]] = {}
        self._by_scope: dict[bool, dict[str, dict[cst.CSTNode, list[Binding]]]] = {
            False: {},
            True: {},
        }
        self._sweep()

    # -- queries ---------------------------------------------------------------------------

    def bindings_by_scope(self, key: str, frame: bool = False) -> dict[cst.CSTNode, list[Binding]]:
        """The bindings of `key` grouped by their precise scope (or by frame), in source
        order; built once per key, so that asking in many places stays linear."""
        index = self._by_scope[frame]
        grouped = index.get(key)
        if grouped is None:
            grouped = index[key] = {}
            table = self.item_bindings if key.endswith("]") else self.bindings
            for binding in table.get(key, ()):
                group = binding.scope if frame else binding.owner
                grouped.setdefault(group or self.module, []).append(binding)
        return grouped

    def calls_by_frame(self, frame: Frame) -> list[cst.Call]:
        """The calls the frame of `frame` runs (lambdas and class bodies in it included)."""
        grouped = self._calls_by_frame
        if grouped is None:
            grouped = self._calls_by_frame = {}
            for call in self.calls:
                grouped.setdefault(self.frame(call), []).append(call)
        return grouped.get(frame, [])

    def bindings_in(self, frame: Frame) -> dict[str, list[Binding]]:
        """The bindings of names (not attributes) made in the frame of `frame`, by name."""
        grouped = self._by_frame
        if grouped is None:
            grouped = self._by_frame = {}
            for name, bindings in self.bindings.items():
                if "." in name:
                    continue
                for binding in bindings:
                    grouped.setdefault(binding.scope, {}).setdefault(name, []).append(binding)
        return grouped.get(frame, {})

    # -- the tables by node (`NodeTable`): read-only mappings, built when first asked ----

    @cached_property
    def order(self) -> NodeTable[int]:
        """Node -> its pre-order position."""
        return NodeTable(self._at, self.nodes, range(len(self.nodes)))

    @cached_property
    def subtree_end(self) -> NodeTable[int]:
        """Node -> the position after the last node below it."""
        return NodeTable(self._at, self.nodes, self._ends)

    @cached_property
    def parents(self) -> NodeTable[cst.CSTNode]:
        """Node -> its parent (the module has none)."""
        nodes = self.nodes
        return NodeTable(self._at, nodes, [None, *map(nodes.__getitem__, self._parent_at[1:])])

    @cached_property
    def frame_of(self) -> NodeTable[Frame]:
        """Node -> the function (or the module) whose frame runs it."""
        return NodeTable(self._at, self.nodes, self._frames)

    def position(self, node: cst.CSTNode) -> int:
        """The pre-order position of a node of the module (KeyError for another)."""
        return self._at[id(node)]

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The parent of `node`; None for the module and for nodes of another tree."""
        at = self._at.get(id(node))
        if at is None:
            return None
        above = self._parent_at[at]
        return self.nodes[above] if above >= 0 else None

    def frame(self, node: cst.CSTNode) -> Frame:
        """The function (or the module) whose frame runs `node`."""
        at = self._at.get(id(node))
        return self.module if at is None else self._frames[at]

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """Parents of `node`, innermost first."""
        at = self._at.get(id(node))
        if at is None:
            return
        nodes, parent_at = self.nodes, self._parent_at
        at = parent_at[at]
        while at >= 0:
            yield nodes[at]
            at = parent_at[at]

    def walk(self, root: cst.CSTNode) -> list[cst.CSTNode]:
        """`root` and every node below it, in source order."""
        at = self._at[id(root)]
        return self.nodes[at : self._ends[at]]

    def is_inside(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        """`node` is `container` or lies below it."""
        index = self._at
        start = index[id(container)]
        return start <= index[id(node)] < self._ends[start]

    def before(self, first: cst.CSTNode, second: cst.CSTNode) -> bool:
        """`first` starts before `second` in the source."""
        index = self._at
        return index[id(first)] < index[id(second)]

    def within(self, root: cst.CSTNode, nodes: list[N]) -> list[N]:
        """The part of `nodes` (nodes of this module in source order, a list that is not
        changed afterwards, such as `calls`) that is `root` or lies below it: two bisections
        instead of a scan, so asking for every loop or function stays linear."""
        known = self._orders.get(id(nodes))
        if known is None or known[0] is not nodes:
            index = self._at
            known = self._orders[id(nodes)] = (nodes, [index[id(n)] for n in nodes])
        orders = known[1]
        at = self._at[id(root)]
        first = bisect.bisect_left(orders, at)
        return nodes[first : bisect.bisect_left(orders, self._ends[at], first)]

    def owner(self, node: cst.CSTNode) -> ScopeNode:
        """The precise scope a name read at `node` is looked up in first: the innermost
        function, lambda, comprehension or class body that evaluates it (decorators,
        defaults, annotations and class bases belong to the scope around the definition)."""
        nodes, parent_at = self.nodes, self._parent_at
        at = self._at.get(id(node))
        if at is None:
            return self.module
        child: cst.CSTNode = node
        first_iterable = False  # the first iterable of a comprehension runs outside it
        at = parent_at[at]
        while at >= 0:
            ancestor = nodes[at]
            kind = type(ancestor)
            if kind in _SCOPE_KINDS and not first_iterable and _evaluated_inside(ancestor, child):
                return cast("ScopeNode", ancestor)
            above = parent_at[at]
            first_iterable = (
                kind is cst.CompFor
                and child is cast("cst.CompFor", ancestor).iter
                and above >= 0
                and type(nodes[above]) in _COMPREHENSION_KINDS
            )
            child = ancestor
            at = above
        return self.module

    def enclosing_class(self, frame: Frame) -> cst.ClassDef | None:
        """The class a method is defined in directly."""
        if type(frame) is cst.Module:
            return None
        parent = self.parent(frame)
        if type(parent) is cst.IndentedBlock:
            holder = self.parent(parent)
            if type(holder) is cst.ClassDef:
                return holder
        return None

    # -- the sweep -------------------------------------------------------------------------

    def _sweep(self) -> None:
        """One iterative pre-order sweep (deeply nested code cannot exhaust the stack). It
        lists the nodes, each with its parent's index and its frame; the indexes by node are
        built from those lists at the end."""
        module = self.module
        nodes, by_type, visitors = self.nodes, self.by_type, _VISITORS
        parent_at: list[int] = []
        frames: list[Frame] = []
        stack: list[tuple[cst.CSTNode, int, _Where]] = [
            (module, -1, _Where(module, module, None, None))
        ]
        while stack:
            node, parent, where = stack.pop()
            index = len(nodes)
            nodes.append(node)
            parent_at.append(parent)
            frames.append(where.frame)
            kind = type(node)
            by_type[kind].append(node)
            visit = visitors.get(kind)
            if visit is None:
                kids = children(node)
                if kids:
                    stack.extend([(c, index, where) for c in reversed(kids)])
            else:
                placed = visit(self, node, where)
                stack.extend([(c, index, w) for c, w in reversed(placed)])
        count = len(nodes)
        self._at = dict(zip(map(id, nodes), range(count), strict=True))
        self._frames = frames
        self._parent_at = parent_at
        sizes = [1] * count
        for index in range(count - 1, 0, -1):
            sizes[parent_at[index]] += sizes[index]
        self._ends = list(map(operator.add, range(count), sizes))

    def bind(
        self,
        target: cst.BaseExpression,
        value: cst.BaseExpression,
        statement: cst.CSTNode,
        where: _Where,
        kind: str,
    ) -> None:
        """Bind every name in `target`; a tuple target takes a tuple value element-wise."""
        if type(target) in _SEQUENCES:
            elements = cast("cst.Tuple | cst.List", target).elements
            starred = any(type(e) is cst.StarredElement for e in elements)
            if (
                isinstance(value, (cst.Tuple, cst.List))
                and not starred
                and len(value.elements) == len(elements)
                and not any(type(e) is cst.StarredElement for e in value.elements)
            ):
                for element, item in zip(elements, value.elements, strict=True):
                    self.bind(element.value, item.value, statement, where, kind)
                return
            for position, element in enumerate(elements):
                inner = element.value
                if (
                    type(element) is cst.StarredElement
                    or starred
                    or isinstance(inner, (cst.Tuple, cst.List))
                ):
                    self.bind(inner, value, statement, where, kind)
                else:
                    self._add(inner, value, statement, where, kind, position)
            return
        if type(target) is cst.StarredElement:
            self.bind(target.value, value, statement, where, kind)
            return
        self._add(target, value, statement, where, kind, None)

    def _add(
        self,
        target: cst.BaseExpression,
        value: cst.BaseExpression,
        statement: cst.CSTNode,
        where: _Where,
        kind: str,
        index: int | None,
    ) -> None:
        key = storage_key(target)
        if key is not None:
            table = self.item_bindings if type(target) is cst.Subscript else self.bindings
            table[key].append(
                Binding(
                    key,
                    value,
                    statement,
                    where.frame,
                    kind,
                    where.owner,
                    where.branch,
                    where.loop,
                    index,
                    target,
                )
            )


def _evaluated_inside(scope: cst.CSTNode, child: cst.CSTNode) -> bool:
    """Whether `child` (a direct child of the scope node `scope`) runs in that scope."""
    if type(scope) in _BODY_SCOPE_KINDS:
        return child is cast("cst.FunctionDef | cst.ClassDef | cst.Lambda", scope).body
    return True


# -- visitors: where each child of a node runs, and what the node binds --------------------

_Placed = list[tuple[cst.CSTNode, _Where]]


def _same(node: cst.CSTNode, where: _Where) -> _Placed:
    return [(c, where) for c in children(node)]


def _visit_function(model: SemanticModel, node: cst.FunctionDef, where: _Where) -> _Placed:
    model.functions[node.name.value].append(node)
    inner = _Where(node, node, None, None)
    for param in all_params(node.params):
        model.bind(param.name, param.default or param.name, node, inner, "param")
    return [(c, inner if c is node.body else where) for c in children(node)]


def _visit_class(model: SemanticModel, node: cst.ClassDef, where: _Where) -> _Placed:
    model.classes[node.name.value].append(node)
    inner = _Where(where.frame, node, None, None)
    return [(c, inner if c is node.body else where) for c in children(node)]


def _visit_lambda(model: SemanticModel, node: cst.Lambda, where: _Where) -> _Placed:
    inner = _Where(where.frame, node, None, None)
    for param in all_params(node.params):
        model.bind(param.name, param.default or param.name, node, inner, "param")
    return [(c, inner if c is node.body else where) for c in children(node)]


def _visit_comprehension(
    model: SemanticModel,
    node: cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp,
    where: _Where,
) -> _Placed:
    inner = _Where(where.frame, node, None, None)
    return [(c, inner) for c in children(node)]


def _visit_comp_for(model: SemanticModel, node: cst.CompFor, where: _Where) -> _Placed:
    model.bind(node.target, node.iter, node, where, "for")
    # The first iterable (`[x for x in <here>]`) runs in the enclosing scope; only the
    # precise owner differs, which `SemanticModel.owner` works out on demand.
    return _same(node, where)


def _visit_if(model: SemanticModel, node: cst.If, where: _Where) -> _Placed:
    placed: _Placed = [(node.test, where), (node.body, _branch(where, node.body))]
    if node.orelse is not None:
        placed.append((node.orelse, _branch(where, node.orelse)))
    return placed


def _visit_loop(model: SemanticModel, node: cst.For | cst.While, where: _Where) -> _Placed:
    body = _Where(where.frame, where.owner, node.body, node)
    placed: _Placed = []
    if isinstance(node, cst.For):
        model.bind(node.target, node.iter, node, body, "for")
        placed += [(node.target, where), (node.iter, where)]
    else:
        placed.append((node.test, where))
    placed.append((node.body, body))
    if node.orelse is not None:
        placed.append((node.orelse, _branch(where, node.orelse)))
    return placed


def _visit_try(model: SemanticModel, node: cst.Try | cst.TryStar, where: _Where) -> _Placed:
    placed: _Placed = [(node.body, _branch(where, node.body))]
    placed += [(h, _branch(where, h)) for h in node.handlers]
    if node.orelse is not None:
        placed.append((node.orelse, _branch(where, node.orelse)))
    if node.finalbody is not None:
        placed.append((node.finalbody, where))
    return placed


def _visit_handler(
    model: SemanticModel, node: cst.ExceptHandler | cst.ExceptStarHandler, where: _Where
) -> _Placed:
    if node.name is not None and node.type is not None:
        model.bind(node.name.name, node.type, node, where, "except")
    return _same(node, where)


def _visit_case(model: SemanticModel, node: cst.MatchCase, where: _Where) -> _Placed:
    inner = _branch(where, node)
    return [(c, inner) for c in children(node)]


def _visit_if_exp(model: SemanticModel, node: cst.IfExp, where: _Where) -> _Placed:
    return [
        (node.body, _branch(where, node.body)),
        (node.test, where),
        (node.orelse, _branch(where, node.orelse)),
    ]


def _visit_bool(model: SemanticModel, node: cst.BooleanOperation, where: _Where) -> _Placed:
    return [(node.left, where), (node.operator, where), (node.right, _branch(where, node.right))]


def _branch(where: _Where, block: cst.CSTNode) -> _Where:
    return _Where(where.frame, where.owner, block, where.loop)


def _visit_call(model: SemanticModel, node: cst.Call, where: _Where) -> _Placed:
    model.calls.append(node)
    func = node.func
    if type(func) is cst.Name:
        model.calls_by_name[func.value].append(node)
    elif type(func) is cst.Attribute:
        model.calls_by_name[func.attr.value].append(node)
    return _same(node, where)


def _visit_return(model: SemanticModel, node: cst.Return, where: _Where) -> _Placed:
    if isinstance(where.owner, (cst.FunctionDef, cst.Module)):
        model.returns[where.frame].append(node)
    return _same(node, where)


def _visit_import(
    model: SemanticModel, node: cst.Import | cst.ImportFrom, where: _Where
) -> _Placed:
    model.imports.add(node)
    return _same(node, where)


def _visit_assign(model: SemanticModel, node: cst.Assign, where: _Where) -> _Placed:
    for target in node.targets:
        model.bind(target.target, node.value, node, where, "assign")
    return _same(node, where)


def _visit_ann_assign(model: SemanticModel, node: cst.AnnAssign, where: _Where) -> _Placed:
    if node.value is not None:
        model.bind(node.target, node.value, node, where, "assign")
    return _same(node, where)


def _visit_aug_assign(model: SemanticModel, node: cst.AugAssign, where: _Where) -> _Placed:
    model.bind(node.target, node.value, node, where, "augassign")
    return _same(node, where)


def _visit_named_expr(model: SemanticModel, node: cst.NamedExpr, where: _Where) -> _Placed:
    model.bind(node.target, node.value, node, where, "assign")
    return _same(node, where)


def _visit_with_item(model: SemanticModel, node: cst.WithItem, where: _Where) -> _Placed:
    if node.asname is not None:
        model.bind(node.asname.name, node.item, node, where, "with")
    return _same(node, where)


_VISITORS: dict[type[cst.CSTNode], Callable[[SemanticModel, Any, _Where], _Placed]] = {
    cst.FunctionDef: _visit_function,
    cst.ClassDef: _visit_class,
    cst.Lambda: _visit_lambda,
    cst.ListComp: _visit_comprehension,
    cst.SetComp: _visit_comprehension,
    cst.DictComp: _visit_comprehension,
    cst.GeneratorExp: _visit_comprehension,
    cst.CompFor: _visit_comp_for,
    cst.If: _visit_if,
    cst.For: _visit_loop,
    cst.While: _visit_loop,
    cst.Try: _visit_try,
    cst.TryStar: _visit_try,
    cst.ExceptHandler: _visit_handler,
    cst.ExceptStarHandler: _visit_handler,
    cst.MatchCase: _visit_case,
    cst.IfExp: _visit_if_exp,
    cst.BooleanOperation: _visit_bool,
    cst.Call: _visit_call,
    cst.Return: _visit_return,
    cst.Import: _visit_import,
    cst.ImportFrom: _visit_import,
    cst.Assign: _visit_assign,
    cst.AnnAssign: _visit_ann_assign,
    cst.AugAssign: _visit_aug_assign,
    cst.NamedExpr: _visit_named_expr,
    cst.WithItem: _visit_with_item,
}
