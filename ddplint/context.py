"""One parsed file and what one sweep over it learns: parents, scopes, calls, bindings.

Rules ask questions of a `FileContext` instead of walking the tree themselves. Positions
are not computed here: the checker resolves them only for nodes that end up reported.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterable, Iterator
from functools import cached_property
from typing import TypeVar, cast

import libcst as cst
from libcst._nodes.internal import CodegenState

from ddplint.engine import Binding, Flow, Frame, Resolver, SemanticModel
from ddplint.engine.node_table import NodeTable
from ddplint.names import dotted

Scope = Frame
T = TypeVar("T")
K = TypeVar("K")
_NOTHING = contextlib.nullcontext()

__all__ = ["Binding", "FileContext", "Scope"]


class FileContext:
    """Everything rules may ask about one file."""

    def __init__(
        self, path: str, source: str, module: cst.Module, project: object | None = None
    ) -> None:
        self.path = path
        self.source = source
        self.module = module
        # The project the file is checked in (`ddplint.domain.project_view.project_of` types
        # it); the context itself asks nothing of it.
        self.project = project
        model = self.model = SemanticModel(module)
        self.imports = model.imports
        self.nodes = model.nodes
        self.calls = model.calls
        self.by_type = model.by_type
        self.functions = model.functions
        self.bindings = model.bindings
        # `is_inside(node, container)`: `node` is `container` or lies below it. The model's
        # own method, not a method of the context calling it: rules ask it millions of times
        # on a large file (a forward against every backward's flow), one call less each.
        self.is_inside: Callable[[cst.CSTNode, cst.CSTNode], bool] = model.is_inside
        # By node id, each entry keeping its node (a node hashes through a Python method).
        self._qualnames: dict[int, tuple[cst.BaseExpression, str | None]] = {}
        self._nodes_of: dict[tuple[type[cst.CSTNode], ...], list[cst.CSTNode]] = {}
        self._code: dict[int, str] = {}  # by node id: the module keeps its nodes alive
        self._memo: dict[Callable[[FileContext], object], object] = {}
        self._answers: dict[Callable[..., object], dict[object, object]] = {}

    # The model's tables by node (`NodeTable`), for rules that read them directly.
    @property
    def parents(self) -> NodeTable[cst.CSTNode]:
        return self.model.parents

    @property
    def order(self) -> NodeTable[int]:
        return self.model.order

    @property
    def subtree_end(self) -> NodeTable[int]:
        return self.model.subtree_end

    @property
    def scope_of_node(self) -> NodeTable[Frame]:
        return self.model.frame_of

    @cached_property
    def resolver(self) -> Resolver:
        """What names can hold, which functions a call runs (`ddplint.engine.resolve`)."""
        return Resolver(self.model)

    @cached_property
    def flow(self) -> Flow:
        """What leaves a block, the conditions a node runs under (`ddplint.engine.flow`)."""
        return Flow(self.model)

    # -- names ---------------------------------------------------------------------------

    def qualname(self, node: cst.BaseExpression) -> str | None:
        """Canonical qualified name of an imported Name/Attribute chain, else None."""
        entry = self._qualnames.get(id(node))
        if entry is not None and entry[0] is node:
            return entry[1]
        name = self.imports.resolve(node)
        self._qualnames[id(node)] = (node, name)
        return name

    def call_name(self, call: cst.Call) -> str | None:
        """Qualified name of the called function, e.g. `torch.distributed.all_reduce`."""
        return self.qualname(call.func)

    def calls_to(self, *qualnames: str) -> Iterator[cst.Call]:
        """Every call whose callee resolves to one of `qualnames`, in source order."""
        index = self._calls_by_qualname
        found = [call for name in set(qualnames) for call in index.get(name, ())]
        if len(qualnames) > 1:
            found.sort(key=self.model.position)
        return iter(found)

    @cached_property
    def _calls_by_qualname(self) -> dict[str | None, list[cst.Call]]:
        index: dict[str | None, list[cst.Call]] = {}
        for call in self.calls:
            index.setdefault(self.call_name(call), []).append(call)
        return index

    def nodes_of(self, *kinds: type[cst.CSTNode]) -> list[cst.CSTNode]:
        """Every node of exactly these LibCST types, in source order (one list per choice of
        types: do not change it)."""
        if len(kinds) == 1:
            return self.by_type.get(kinds[0], [])
        found = self._nodes_of.get(kinds)
        if found is None:
            found = [n for kind in kinds for n in self.by_type.get(kind, [])]
            found = self._nodes_of[kinds] = sorted(found, key=self.model.position)
        return found

    def nodes_within(self, root: cst.CSTNode, *kinds: type[cst.CSTNode]) -> list[cst.CSTNode]:
        """The nodes of exactly these types that are `root` or lie below it, in source
        order (a bisection of `nodes_of`, not a walk)."""
        return self.model.within(root, self.nodes_of(*kinds))

    def method_calls(self, *methods: str) -> Iterator[cst.Call]:
        """Every `<expr>.method(...)` call, whatever the receiver, in source order."""
        index = self.model.calls_by_name
        found = [
            call
            for name in set(methods)
            for call in index.get(name, ())
            if type(call.func) is cst.Attribute
        ]
        if len(methods) > 1:
            found.sort(key=self.model.position)
        return iter(found)

    # -- tree ----------------------------------------------------------------------------

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.model.parent(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        """Parents of `node`, innermost first."""
        return self.model.ancestors(node)

    def scope(self, node: cst.CSTNode) -> Scope:
        """The function (or the module) whose body holds `node`."""
        return self.model.frame(node)

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The function whose body holds `node`; None at module level."""
        scope = self.scope(node)
        return scope if type(scope) is cst.FunctionDef else None

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
        return self.model.before(first, second)

    def walk(self, root: cst.CSTNode) -> list[cst.CSTNode]:
        """`root` and every node below it, in source order."""
        return self.model.walk(root)

    def calls_within(self, root: cst.CSTNode) -> list[cst.Call]:
        """Calls inside `root`, not entering nested function definitions."""
        scope = root if type(root) is cst.FunctionDef else self.scope(root)
        calls = self.model.calls_by_frame(scope)
        return self.model.within(root, calls) if calls else []

    def code(self, node: cst.CSTNode) -> str:
        """Source text of a node (normalised by LibCST's code generation), generated once."""
        text = self._code.get(id(node))
        if text is None:
            state = _TextState(self.module.default_indent, self.module.default_newline)
            node._codegen(state)
            text = self._code[id(node)] = "".join(state.tokens)
        return text

    def code_in_place(self, original: cst.CSTNode, new: cst.CSTNode) -> str:
        """Source of `new` as it reads in the place of `original`: continuation lines keep
        the indentation of the blocks around `original` (`Module.code_for_node` would
        generate them at indentation zero)."""
        indents = [
            self.module.default_indent if a.indent is None else a.indent
            for a in self.ancestors(original)
            if type(a) is cst.IndentedBlock
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
        by_frame = self.model.bindings_by_scope(name, frame=True)
        local = by_frame.get(self.scope(at))
        if local:
            return list(local)
        return list(by_frame.get(self.module, []))

    def values_of(self, name: str, at: cst.CSTNode | None = None) -> list[cst.BaseExpression]:
        return [b.value for b in self.bindings_of(name, at) if b.kind not in ("param", "except")]

    # -- what the layers above learn about the file --------------------------------------

    def for_project(self, project: object | None) -> FileContext:
        """This file's context for a check in `project`: the engine's answers (the semantic
        model, what the resolver and the flow remembered, qualified names), which depend on
        the file alone, are shared; the domain's (`memo`), which may ask the project, start
        afresh."""
        fresh = copy.copy(self)
        fresh.project = project
        fresh._memo = {}
        fresh._answers = {}
        return fresh

    def memo(self, factory: Callable[[FileContext], T]) -> T:
        """`factory(self)`, computed once for this file and kept: how the domain attaches its
        per-file answers (`ddplint.domain.domain_of`, `ddplint.domain.ddp_facts.facts_of`)."""
        try:
            return cast(T, self._memo[factory])
        except KeyError:
            value = self._memo[factory] = factory(self)
            return value

    def remembered(self, question: Callable[[FileContext, K], T], key: K) -> T:
        """`question(self, key)`, computed once for this file and `key` and kept as `memo`
        keeps its answers: for the domain's questions asked again and again of the same
        name or node (every mention of a helper in a large file)."""
        answers = self._answers.setdefault(question, {})
        if key not in answers:
            answers[key] = question(self, key)
        return cast(T, answers[key])

    def names_in(self, node: cst.CSTNode) -> Iterable[str]:
        """Dotted names read anywhere inside `node`: `cfg.optim.loss`, `cfg.optim` and
        `cfg`, not the attribute's own name (`loss`), nor a keyword (`f(loss=x)`)."""
        for child in self.walk(node):
            if type(child) is cst.Name and self.names_no_variable(child):
                continue
            if isinstance(child, (cst.Name, cst.Attribute)):
                name = dotted(child)
                if name:
                    yield name

    def names_no_variable(self, name: cst.Name) -> bool:
        """`name` is an attribute's own name (`loss` of `cfg.loss`) or an argument's
        keyword (`f(loss=x)`): it reads no variable."""
        parent = self.parent(name)
        if type(parent) is cst.Attribute:
            return parent.attr is name
        return type(parent) is cst.Arg and parent.keyword is name

    def name_bound_to(self, value: cst.BaseExpression) -> str | None:
        """The plain name a single-target `x = value` binds."""
        statement = self.parent(value)
        if type(statement) is cst.Assign and len(statement.targets) == 1:
            target = statement.targets[0].target
            if type(target) is cst.Name:
                return target.value
        return None


class _TextState(CodegenState):
    """`Module.code_for_node`'s code generation without its per-node context manager (the
    position bookkeeping, not needed for the text)."""

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> contextlib.AbstractContextManager[None]:
        return _NOTHING
