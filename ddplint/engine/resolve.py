"""The value resolver: what a name (or attribute, or string-keyed subscript) can hold at a
point of the program, which functions of this file a call can run, and what callers pass
for a parameter. One depth limit, `MAX_DEPTH`, bounds every chain it follows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import cast

import libcst as cst

from ddplint.engine.model import (
    COMPREHENSIONS,
    Binding,
    ScopeNode,
    SemanticModel,
    storage_key,
)
from ddplint.names import dotted

MAX_DEPTH = 6
_STORED = frozenset({cst.Name, cst.Attribute, cst.Subscript})
_COMPREHENSION_KINDS = frozenset(COMPREHENSIONS)
_KILLING = frozenset({"assign", "for", "with", "param", "except"})
_FRAME_KINDS = (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)
_PARTIAL = frozenset({"functools.partial", "partial"})
# `os.environ.setdefault("RANK", ...)` returns the variable where it is set: a read too.
_ENVIRON_READS = frozenset({"os.environ.get", "os.environ.setdefault", "os.getenv"})
_NEVER_PASSED = -1  # `Resolver._position` of a parameter no call passes


@dataclass(frozen=True)
class Value:
    """One expression a name may stand for, the node it is evaluated at, and whether the
    resolver could follow it no further (a call of an unknown function, a literal, a
    parameter no caller in the file passes)."""

    expr: cst.BaseExpression
    at: cst.CSTNode
    leaf: bool


def argument(call: cst.Call, position: int | None, name: str) -> cst.BaseExpression | None:
    """The value passed at `position` (None: keyword only) or as `name=`."""
    positional: list[cst.Arg] = []
    for arg in call.args:
        if arg.keyword is not None:
            if arg.keyword.value == name:
                return arg.value
        elif arg.star:
            return None  # `*args`: positions after it are unknown
        else:
            positional.append(arg)
    if position is not None and position < len(positional):
        return positional[position].value
    return None


def argument_for(call: cst.Call, param: tuple[str, int]) -> cst.BaseExpression | None:
    """The value `call` passes for a parameter given as (name, position among a call's
    arguments; -1 for a keyword-only one), as the project's summaries record them."""
    name, position = param
    return argument(call, position if position >= 0 else None, name)


class Resolver:
    """Answers "what can this hold here" for one semantic model."""

    def __init__(self, model: SemanticModel) -> None:
        self.model = model
        # Answers by node identity (a node hashes through a Python method): each entry
        # keeps its nodes, so that no other node can take their ids while it is kept.
        self._callees: dict[int, tuple[cst.Call, list[cst.FunctionDef]]] = {}
        self._reaching: dict[tuple[str, int], tuple[cst.CSTNode, list[Binding]]] = {}
        self._values: dict[
            tuple[int, int, int], tuple[cst.BaseExpression, cst.CSTNode, list[Value]]
        ] = {}
        self._pending = 0  # callee look-ups under way (their partial answers are not kept)
        self._alias_index: dict[str, list[str]] | None = None
        self._bound_to: dict[int, list[str]] | None = None  # by id of the value bound
        self._derived: dict[int, list[cst.ClassDef]] | None = None  # by id of the base

    # -- bindings ----------------------------------------------------------------------------

    def reaching(self, key: str, at: cst.CSTNode) -> list[Binding]:
        """Bindings of `key` that may hold its value when `at` runs: in the innermost scope
        that binds it (LEGB; class bodies are not seen from inside their methods), the
        last binding on every path to `at`, and those made later in a loop around `at`."""
        entry = self._reaching.get((key, id(at)))
        if entry is None or entry[0] is not at:
            entry = self._reaching[key, id(at)] = (at, self._find_reaching(key, at))
        return list(entry[1])

    def _find_reaching(self, key: str, at: cst.CSTNode) -> list[Binding]:
        model = self.model
        table = model.item_bindings if key.endswith("]") else model.bindings
        candidates = table.get(key)
        if not candidates:
            return []
        head = key.partition(".")[0]
        if head in ("self", "cls") and "." in key:
            return self._instance_attribute(key, at, candidates)
        owner = model.owner(at)
        scope: ScopeNode = owner
        by_scope = model.bindings_by_scope(key)
        while True:
            local = by_scope.get(scope)
            if local:
                return self._flowing(local, at) if scope is owner else list(local)
            if type(scope) is cst.Module:
                break
            scope = self._enclosing_scope(scope)
        # An attribute of an object (`args.rank = ...` in `main`) is shared state.
        return list(candidates) if "." in key or "[" in key else []

    def _enclosing_scope(self, scope: ScopeNode) -> ScopeNode:
        outer = self.model.owner(scope)
        while type(outer) is cst.ClassDef:
            outer = self.model.owner(outer)
        return outer

    def _instance_attribute(
        self, key: str, at: cst.CSTNode, candidates: list[Binding]
    ) -> list[Binding]:
        """`self.x`: the stores in this method before `at`, else every store in the
        methods of the class (`__init__` runs first)."""
        model = self.model
        frame = model.frame(at)
        cls = model.enclosing_class(frame)
        if cls is None:
            return list(candidates)
        by_frame = model.bindings_by_scope(key, frame=True)
        mine = [
            b
            for method in _methods_of(cls)
            for b in (
                self._left_by_constructor(by_frame.get(method, []))
                if method.name.value == "__init__" and method is not frame
                else by_frame.get(method, ())
            )
        ]
        local = [b for b in by_frame.get(frame, ()) if self._precedes(b, at)]
        if local:
            return self._flowing(local, at)
        return mine or list(candidates)

    def _left_by_constructor(self, stores: list[Binding]) -> list[Binding]:
        """The stores of `__init__` (in order) whose value it may leave in the attribute:
        not one a later store replaces on every path, made outright in the method's body
        or under the same test as the earlier one (`if args.distributed: self.net =
        DDP(net)`, then `if args.distributed: self.net = self.net.module`)."""
        left: list[Binding] = []
        for binding in reversed(stores):
            if any(self._replaces(later, binding) for later in left):
                continue
            left.append(binding)
        return left[::-1]

    def _replaces(self, later: Binding, earlier: Binding) -> bool:
        """`later`, a store of the same frame after `earlier`, replaces it on every path."""
        if later.kind not in _KILLING or later.loop is not None:
            return False
        if later.branch is None:
            return True
        if earlier.branch is None:
            return False
        test, side = _branch_test(self.model, later.branch)
        other, other_side = _branch_test(self.model, earlier.branch)
        return (
            test is not None
            and other is not None
            and side == other_side
            and test.deep_equals(other)
            and self._same_answer(test, earlier.statement, later.statement)
        )

    def _same_answer(
        self, test: cst.BaseExpression, first: cst.CSTNode, second: cst.CSTNode
    ) -> bool:
        """`test` gives the same answer at `first` and at `second`: it calls nothing, and
        none of the names it reads is rebound between them."""
        model = self.model
        for node in model.walk(test):
            if type(node) in (cst.Call, cst.Await, cst.NamedExpr):
                return False
            key = dotted(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
            if key is None:
                continue
            for binding in model.bindings.get(key, ()):
                if model.before(first, binding.statement) and model.before(
                    binding.statement, second
                ):
                    return False
        return True

    def _precedes(self, binding: Binding, at: cst.CSTNode) -> bool:
        """The binding happened before `at` runs: `model` in `model = DDP(model)` still
        reads the old value; a loop or comprehension variable is bound for its body."""
        model = self.model
        if binding.kind == "param":
            return True
        if binding.kind == "for":
            if type(binding.owner) in _COMPREHENSION_KINDS:
                return not model.is_inside(at, binding.value)
            return model.before(binding.statement, at) and not model.is_inside(at, binding.value)
        if not model.before(binding.statement, at):
            return False
        if binding.kind in ("assign", "augassign"):
            return not model.is_inside(at, binding.statement)
        return True

    def _flowing(self, local: list[Binding], at: cst.CSTNode) -> list[Binding]:
        model = self.model
        found: list[Binding] = []
        killer: cst.CSTNode | None = None  # the statement after which nothing older reaches
        covering = self._covering_if(local, at)
        for binding in reversed(local):
            if not self._precedes(binding, at):
                continue
            if (
                covering is not None
                and model.before(binding.statement, covering)
                and not model.is_inside(binding.statement, covering)
            ):
                killer = covering  # bound before an `if` that rebinds it in every branch
                break
            found.append(binding)
            if binding.kind in _KILLING and (
                binding.branch is None or model.is_inside(at, binding.branch)
            ):
                killer = binding.statement
                break
        if killer is None:
            killer = covering
        # Bound later in a loop around `at`: the next iteration sees it, unless a binding
        # (or an `if` binding it in every branch) that every pass of the loop makes before
        # `at` replaces it first.
        for binding in local:
            loop = binding.loop
            if (
                loop is not None
                and binding not in found
                and not self._precedes(binding, at)
                and model.is_inside(at, loop)
                and (killer is None or not model.is_inside(killer, loop))
            ):
                found.append(binding)
        found.sort(key=lambda b: model.position(b.statement))
        return found

    def _covering_if(self, local: list[Binding], at: cst.CSTNode) -> cst.If | None:
        """The last `if` before `at`, on every path to it, whose every branch (`else`
        included, `elif`s followed) binds the key outright: nothing bound before it
        reaches `at` (`if fsdp: loss = a(x) else: loss = b(x)`)."""
        model = self.model
        killing = {
            id(b.branch): b
            for b in local
            if b.kind in _KILLING and b.branch is not None and self._precedes(b, at)
        }
        best: cst.If | None = None
        for binding in killing.values():
            statement = model.parent(binding.branch) if binding.branch else None
            while type(statement) is cst.If:  # an `elif`: from the `if` opening the chain
                outer = model.parent(statement)
                if not (type(outer) is cst.If and outer.orelse is statement):
                    break
                statement = outer
            if type(statement) is not cst.If or model.is_inside(at, statement):
                continue
            if not model.before(statement, at) or not self._binds_every_branch(statement, killing):
                continue
            branch = _enclosing_branch(model, statement)
            if branch is not None and not model.is_inside(at, branch):
                continue
            if best is None or model.before(best, statement):
                best = statement
        return best

    def _binds_every_branch(self, statement: cst.If, killing: dict[int, Binding]) -> bool:
        if id(statement.body) not in killing:
            return False
        orelse = statement.orelse
        if type(orelse) is cst.If:
            return self._binds_every_branch(orelse, killing)
        return orelse is not None and id(orelse) in killing

    # -- values ------------------------------------------------------------------------------

    def values(
        self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int = MAX_DEPTH
    ) -> list[Value]:
        """`expr` and every expression it may stand for, following names through their
        reaching bindings (tuple unpacking element-wise, parameters to what callers pass),
        conditional expressions to both branches, calls of this file's functions to what
        they return, and string-keyed subscripts of dict literals to the stored value."""
        if self._pending:  # inside a callee look-up: an answer that may be partial
            found: list[Value] = []
            self._follow(expr, at, depth, found, set())
            return found
        entry = self._values.get((id(expr), id(at), depth))
        if entry is not None and entry[0] is expr and entry[1] is at:
            return list(entry[2])
        known: list[Value] = []
        self._follow(expr, at, depth, known, set())
        self._values[id(expr), id(at), depth] = (expr, at, known)
        return list(known)

    def _follow(
        self,
        expr: cst.BaseExpression,
        at: cst.CSTNode,
        depth: int,
        found: list[Value],
        seen: set[int],
    ) -> None:
        if id(expr) in seen:
            return
        seen.add(id(expr))
        before = len(found)
        found.append(Value(expr, at, True))
        if depth <= 0:
            return
        # Exact types: `isinstance` on LibCST's ABC-based classes is slow when it fails.
        if type(expr) is cst.IfExp:
            self._follow(expr.body, at, depth - 1, found, seen)
            self._follow(expr.orelse, at, depth - 1, found, seen)
        elif type(expr) is cst.NamedExpr:
            self._follow(expr.value, at, depth - 1, found, seen)
        elif type(expr) is cst.Call:
            for func in self.callees(expr):
                for returned in self.model.returns.get(func, []):
                    if returned.value is not None:
                        self._follow(returned.value, returned, depth - 1, found, seen)
        elif type(expr) in _STORED:
            self._follow_name(
                cast("cst.Name | cst.Attribute | cst.Subscript", expr), at, depth, found, seen
            )
        if len(found) > before + 1:
            found[before] = Value(expr, at, False)

    def _follow_name(
        self,
        expr: cst.Name | cst.Attribute | cst.Subscript,
        at: cst.CSTNode,
        depth: int,
        found: list[Value],
        seen: set[int],
    ) -> None:
        key = storage_key(expr)
        bindings = self.reaching(key, at) if key is not None else []
        start = len(found)
        unknown: list[Binding] = []  # bindings whose value cannot be told
        for binding in bindings:
            if binding.kind == "assign":
                elements = self._element(binding.value, binding.index, binding.statement)
                for value, read_at in elements:
                    self._follow(value, read_at, depth - 1, found, seen)
                if not elements:  # `model, opt, _, _ = engine_init(...)`
                    unknown.append(binding)
            elif binding.kind in _UNTOLD:
                unknown.append(binding)
            elif binding.kind == "with":  # `with open(path) as f`: what entering gives
                self._follow(binding.value, binding.statement, depth - 1, found, seen)
            elif binding.kind == "param":
                for passed in self.arguments_for(binding):
                    self._follow(passed, passed, depth - 1, found, seen)
                if binding.value is not expr and type(binding.value) is not cst.Name:
                    self._follow(binding.value, binding.statement, depth - 1, found, seen)
        if len(found) > start:  # beside values told, an untold one stays a leaf: its target
            for binding in unknown:
                if binding.node is not None:
                    found.append(Value(binding.node, binding.statement, True))
        if not bindings and type(expr) is cst.Subscript:
            stored = self._dict_entry(expr, at, depth)
            if stored is not None:
                self._follow(stored[0], stored[1], depth - 1, found, seen)
        if not bindings and type(expr) is cst.Attribute:
            for getter in self._properties(expr, at):
                for returned in self.model.returns.get(getter, []):
                    if returned.value is not None:
                        self._follow(returned.value, returned, depth - 1, found, seen)

    def _properties(self, expr: cst.Attribute, at: cst.CSTNode) -> list[cst.FunctionDef]:
        """`self.x` where `x` is a `@property` of the enclosing class: its getter."""
        if not (type(expr.value) is cst.Name and expr.value.value == "self"):
            return []
        cls = self.model.enclosing_class(self.model.frame(at))
        if cls is None:
            return []
        return [
            method
            for method in methods_named(cls, expr.attr.value)
            if any(_is_property(d.decorator) for d in method.decorators)
        ]

    def sources(
        self,
        expr: cst.BaseExpression,
        at: cst.CSTNode,
        depth: int = 4,
        keep: Callable[[Value], bool] | None = None,
    ) -> list[Value]:
        """Every expression the value of `expr` is computed from: its values (`values`),
        the sub-expressions of each, and their values in turn, `depth` levels of nesting
        deep (`os.path.join(out, name)` with `name = f"ckpt_{rank}.pt"`: `rank`). With
        `keep`, a value it rejects is left out and not followed further."""
        found: list[Value] = []
        seen: set[int] = set()
        frontier = [(expr, at)]
        for level in range(depth + 1):
            inner: list[tuple[cst.BaseExpression, cst.CSTNode]] = []
            for start, where in frontier:
                for value in self.values(start, where):
                    if id(value.expr) in seen or (keep is not None and not keep(value)):
                        continue
                    seen.add(id(value.expr))
                    found.append(value)
                    if level < depth:
                        inner.extend((part, value.at) for part in self._parts(value.expr))
            frontier = inner
        return found

    def _parts(self, expr: cst.BaseExpression) -> Iterator[cst.BaseExpression]:
        """The sub-expressions of `expr` a value can be followed from: names, attribute
        chains (as a whole), subscripts and calls; not the parts of an attribute chain, nor
        the keywords of arguments."""
        model = self.model
        for node in model.walk(expr)[1:]:
            if type(node) is cst.Name:
                parent = model.parent(node)
                if type(parent) is cst.Attribute and _derives_string(model, parent):
                    yield node  # `path` of `path.split(".pt")[0]`: the text it cuts
                    continue
                if type(parent) is cst.Attribute or (
                    type(parent) is cst.Arg and parent.keyword is node
                ):
                    continue
            if isinstance(node, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
                yield node

    def _element(
        self, value: cst.BaseExpression, index: int | None, at: cst.CSTNode
    ) -> list[tuple[cst.BaseExpression, cst.CSTNode]]:
        """Element `index` of an unpacked value, each with where to read it: a callee's
        returned element where it returns it (`return model, opt`), not at the caller's
        statement; none when it cannot be told."""
        if index is None:
            return [(value, at)]
        if isinstance(value, (cst.Tuple, cst.List)):
            if _unstarred(value.elements, index):
                return [(value.elements[index].value, at)]
            return []
        found: list[tuple[cst.BaseExpression, cst.CSTNode]] = []
        if type(value) is cst.Call:
            for func in self.callees(value):
                for returned in self.model.returns.get(func, []):
                    inner = returned.value
                    if type(inner) is cst.Tuple and _unstarred(inner.elements, index):
                        found.append((inner.elements[index].value, returned))
        return found

    def _dict_entry(
        self, expr: cst.Subscript, at: cst.CSTNode, depth: int
    ) -> tuple[cst.BaseExpression, cst.CSTNode] | None:
        """`cfg["rank"]` where `cfg` holds a dict literal with that key."""
        key = string_key(expr)
        if key is None:
            return None
        for value in self.values(expr.value, at, depth - 1):
            if type(value.expr) is cst.Dict:
                for element in value.expr.elements:
                    if (
                        type(element) is cst.DictElement
                        and type(element.key) is cst.SimpleString
                        and element.key.evaluated_value == key
                    ):
                        return element.value, value.at
        return None

    # -- environment variables -------------------------------------------------------------

    def environ_key(self, expr: cst.BaseExpression, at: cst.CSTNode | None = None) -> str | None:
        """`"RANK"` for `os.environ["RANK"]`, `os.environ.get("RANK")`, `os.getenv("RANK")`,
        the same read from a copy of the environment (`env = dict(os.environ)`,
        `{k: os.environ[k] for k in KEYS}`), maybe converted (`int(...)`), or a name bound
        to one of them."""
        where = expr if at is None else at
        for value in self.values(expr, where):
            read = value.expr
            while (
                type(read) is cst.Call
                and type(read.func) is cst.Name
                and read.func.value in ("int", "float", "str")
                and read.args
            ):
                read = read.args[0].value  # `int(os.environ["RANK"])`
            key = self.direct_environ_key(read, value.at)
            if key is not None:
                return key
        return None

    def direct_environ_key(self, expr: cst.BaseExpression, at: cst.CSTNode) -> str | None:
        """The variable `expr` reads from the environment right there (no names followed
        for `expr` itself; the mapping it reads from may be a copy)."""
        if type(expr) is cst.Subscript:
            key = string_key(expr)
            if key is not None and self._is_environ(expr.value, at):
                return key
            return None
        if type(expr) is cst.Call and expr.args:
            first = string_literal(expr.args[0].value)
            if first is None:
                return None
            name = self.model.imports.resolve(expr.func)
            if name in _ENVIRON_READS:
                return first
            func = expr.func
            if (
                type(func) is cst.Attribute
                and func.attr.value in ("get", "setdefault")
                and self._is_environ(func.value, at)
            ):
                return first
        return None

    def _is_environ(self, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
        """`os.environ`, or a mapping copied or built from it."""
        for value in self.values(expr, at, 3):
            candidate = value.expr
            if self.model.imports.resolve(candidate) == "os.environ":
                return True
            if type(candidate) is cst.Call:
                func = candidate.func
                if (
                    type(func) is cst.Name
                    and func.value == "dict"
                    and candidate.args
                    and self.model.imports.resolve(candidate.args[0].value) == "os.environ"
                ):
                    return True
                if (
                    type(func) is cst.Attribute
                    and func.attr.value == "copy"
                    and self.model.imports.resolve(func.value) == "os.environ"
                ):
                    return True
            if type(candidate) is cst.DictComp and any(
                self.model.imports.resolve(n) == "os.environ" for n in _names_below(candidate)
            ):
                return True
        return False

    # -- calls -------------------------------------------------------------------------------

    def callees(self, call: cst.Call, depth: int = MAX_DEPTH) -> list[cst.FunctionDef]:
        """Functions of this file `call` may run: `f(...)` for a visible `def f` (or a name
        bound to it or to `functools.partial(f, ...)`), `self.f(...)` for a method of the
        enclosing class, `Cls(...)` for `Cls.__init__`. Decorated functions count as
        themselves (decorators are assumed to wrap, as `functools.wraps` does)."""
        entry = self._callees.get(id(call))
        if entry is not None and entry[0] is call:
            return entry[1]
        self._callees[id(call)] = (call, [])  # asked again while being worked out: no callee
        self._pending += 1
        try:
            known = self._find_callees(call.func, call, depth)
            self._callees[id(call)] = (call, known)
        finally:
            self._pending -= 1
        return known

    def _find_callees(
        self, func: cst.BaseExpression, at: cst.CSTNode, depth: int
    ) -> list[cst.FunctionDef]:
        model = self.model
        if type(func) is cst.Name:
            if model.imports.resolve(func) is not None:
                return []
            name = func.value
            if depth > 0:
                found: list[cst.FunctionDef] = []
                for binding in self.reaching(name, at):
                    if binding.kind != "assign":
                        continue
                    value = binding.value
                    if type(value) is cst.Call and self._is_partial(value) and value.args:
                        value = value.args[0].value
                    if isinstance(value, (cst.Name, cst.Attribute)) and value is not func:
                        found.extend(self._find_callees(value, binding.statement, depth - 1))
                if found:
                    return found
            defs = model.functions.get(name)
            if defs:
                return self._visible(defs, at)
            return [
                m for cls in model.classes.get(name, []) for m in methods_named(cls, "__init__")
            ]
        if (
            type(func) is cst.Attribute
            and type(func.value) is cst.Name
            and func.value.value in ("self", "cls")
        ):
            cls = model.enclosing_class(model.frame(at))
            if cls is not None:
                return self._dispatched(cls, func.attr.value)
            return [
                f
                for f in model.functions.get(func.attr.value, [])
                if model.enclosing_class(f) is not None
            ]
        if type(func) is cst.Attribute and depth > 0 and model.classes:
            # `tracker.update(...)` where `tracker = Tracker(...)` (a class of this file)
            found = []
            for held in self.values(func.value, at, depth - 1):
                made = held.expr
                if type(made) is cst.Call and type(made.func) is cst.Name:
                    for cls in model.classes.get(made.func.value, []):
                        found.extend(methods_named(cls, func.attr.value))
            return found
        return []

    def _dispatched(self, cls: cst.ClassDef, name: str) -> list[cst.FunctionDef]:
        """The methods `self.name(...)` in a method of `cls` may run: the one `cls`
        defines or inherits from the nearest base of this file that does, and the
        overrides in the subclasses of `cls` in this file (`fit` of a base trainer calls
        `self.validate(...)`, which each subclass defines)."""
        found = methods_named(cls, name)
        base: cst.ClassDef | None = cls
        seen = {id(cls)}
        while not found and base is not None:
            base = self._base_of(base)
            if base is None or id(base) in seen:
                break
            seen.add(id(base))
            found = methods_named(base, name)
        return found + [m for sub in self._subclasses(cls) for m in methods_named(sub, name)]

    def _base_of(self, cls: cst.ClassDef) -> cst.ClassDef | None:
        """The one base class of `cls` defined in this file, if exactly one is."""
        bases = [
            c
            for arg in cls.bases
            if type(arg.value) is cst.Name
            for c in self.model.classes.get(arg.value.value, [])
            if c is not cls
        ]
        return bases[0] if len(bases) == 1 else None

    def _subclasses(self, cls: cst.ClassDef) -> list[cst.ClassDef]:
        """The classes of this file deriving from `cls`, directly or not."""
        if self._derived is None:
            self._derived = {}
            for classes in self.model.classes.values():
                for sub in classes:
                    base = self._base_of(sub)
                    if base is not None:
                        self._derived.setdefault(id(base), []).append(sub)
        found: list[cst.ClassDef] = []
        pending = list(self._derived.get(id(cls), []))
        while pending:
            sub = pending.pop()
            if sub not in found and sub is not cls:
                found.append(sub)
                pending.extend(self._derived.get(id(sub), []))
        return found

    def _is_partial(self, call: cst.Call) -> bool:
        name = self.model.imports.resolve(call.func) or dotted(call.func)
        return name in _PARTIAL

    def _visible(self, defs: list[cst.FunctionDef], at: cst.CSTNode) -> list[cst.FunctionDef]:
        """The definitions of a name a call can see: those of its own scope chain (module
        level, or an enclosing function), never a method of some class."""
        model = self.model
        chain: list[ScopeNode] = []
        scope: ScopeNode = model.owner(at)
        while True:
            chain.append(scope)
            if type(scope) is cst.Module:
                break
            scope = self._enclosing_scope(scope)
        visible = [d for d in defs if any(model.owner(d) is s for s in chain)]
        return visible

    def arguments_for(self, param: Binding) -> list[cst.BaseExpression]:
        """Expressions the callers in this file pass for the parameter `param`."""
        func = param.owner
        if type(func) is not cst.FunctionDef:
            return []
        index = self._position(func, param.target)
        if index == _NEVER_PASSED:
            return []
        found: list[cst.BaseExpression] = []
        for call in self.calls_of(func):
            value = argument(call, index, param.target)
            if value is not None:
                found.append(value)
        return found

    def call_names(self, func: cst.FunctionDef) -> list[str]:
        """The names a call of `func` uses: its own, and its class's for `__init__`, and
        the names bound to either (`test_fn = test`; `callees` decides which of their
        calls run `func`)."""
        names = [func.name.value]
        if func.name.value == "__init__":
            cls = self.model.enclosing_class(func)
            if cls is not None:
                names.append(cls.name.value)
        aliases = self._aliases()
        return names + [alias for name in names for alias in aliases.get(name, ())]

    def _aliases(self) -> dict[str, list[str]]:
        """Names bound to another name or to a `functools.partial` of it (`test_fn =
        test`, `train_fn, eval_fn = train, evaluate`), by the name they take."""
        return self._alias_tables()[0]

    def names_bound_to(self, value: cst.BaseExpression) -> list[str]:
        """The names and attributes a plain assignment binds to the expression `value`
        itself (`test_fn = test`, element-wise in `train_fn, test_fn = train, test`,
        `self.fn = test`); [] where none does."""
        return self._alias_tables()[1].get(id(value), [])

    def _alias_tables(self) -> tuple[dict[str, list[str]], dict[int, list[str]]]:
        """`_aliases` and the keys `names_bound_to` gives, by id of the value; once per
        file."""
        if self._alias_index is None or self._bound_to is None:
            index: dict[str, list[str]] = {}
            bound_to: dict[int, list[str]] = {}
            for key, bindings in self.model.bindings.items():
                for binding in bindings:
                    value = binding.value
                    if binding.kind != "assign" or binding.index is not None:
                        continue
                    if type(binding.statement) is cst.Assign:
                        bound_to.setdefault(id(value), []).append(key)
                    if "." in key:
                        continue
                    if type(value) is cst.Call and self._is_partial(value) and value.args:
                        value = value.args[0].value
                    if type(value) is cst.Name and value.value != key:
                        aliases = index.setdefault(value.value, [])
                        if key not in aliases:
                            aliases.append(key)
            self._alias_index, self._bound_to = index, bound_to
        return self._alias_index, self._bound_to

    def calls_of(self, func: cst.FunctionDef) -> list[cst.Call]:
        """The calls of this file that may run `func` (`Cls(...)` for `Cls.__init__`)."""
        return [
            call
            for name in self.call_names(func)
            for call in self.model.calls_by_name.get(name, [])
            if func in self.callees(call)
        ]

    def passed(self, call: cst.Call, func: cst.FunctionDef, name: str) -> cst.BaseExpression | None:
        """What `call` of `func` passes for its parameter `name`, by keyword or at its
        position; None when it passes nothing for it."""
        index = self._position(func, name)
        return None if index == _NEVER_PASSED else argument(call, index, name)

    def _position(self, func: cst.FunctionDef, name: str) -> int | None:
        """Where a call passes `func`'s parameter `name` among its positional arguments
        (a method's `self` or `cls` not counted); None for a keyword-only parameter;
        `_NEVER_PASSED` for `self` itself, `*args` and `**kwargs`."""
        params = func.params
        positional = [p.name.value for p in (*params.posonly_params, *params.params)]
        if name not in positional:
            keyword_only = any(p.name.value == name for p in params.kwonly_params)
            return None if keyword_only else _NEVER_PASSED
        index = positional.index(name)
        if self.model.enclosing_class(func) is not None and positional[0] in ("self", "cls"):
            return _NEVER_PASSED if index == 0 else index - 1
        return index

    def returned(self, func: cst.FunctionDef) -> list[cst.BaseExpression]:
        """The expressions `func` returns."""
        return [r.value for r in self.model.returns.get(func, []) if r.value is not None]


# String methods whose result is cut or rewritten from the text they are called on.
_STRING_DERIVING = frozenset(
    {
        "split",
        "rsplit",
        "replace",
        "strip",
        "rstrip",
        "lstrip",
        "removesuffix",
        "removeprefix",
        "partition",
        "rpartition",
        "lower",
        "upper",
    }
)


def _derives_string(model: SemanticModel, attribute: cst.Attribute) -> bool:
    """`attribute` is the method of a call that cuts or rewrites the text of a name
    (`path.split(".pth")`, `name.replace("best", "last")`)."""
    call = model.parent(attribute)
    return (
        type(attribute.value) is cst.Name
        and attribute.attr.value in _STRING_DERIVING
        and type(call) is cst.Call
        and call.func is attribute
    )


def _branch_test(
    model: SemanticModel, branch: cst.CSTNode
) -> tuple[cst.BaseExpression | None, bool]:
    """The test of the `if` whose body (True) or `else` (False) is `branch`; (None, ...)
    for any other block (a loop body, a handler, an `elif`)."""
    parent = model.parent(branch)
    if type(parent) is cst.If and parent.body is branch:
        return parent.test, True
    if type(branch) is cst.Else and type(parent) is cst.If:
        return parent.test, False
    return None, False


def _methods_of(cls: cst.ClassDef) -> list[cst.FunctionDef]:
    body = cls.body
    if type(body) is not cst.IndentedBlock:
        return []
    return [s for s in body.body if type(s) is cst.FunctionDef]


def methods_named(cls: cst.ClassDef, name: str) -> list[cst.FunctionDef]:
    """The methods called `name` defined directly in the body of `cls`."""
    body = cls.body
    if type(body) is not cst.IndentedBlock:
        return []
    return [s for s in body.body if type(s) is cst.FunctionDef and s.name.value == name]


def sole_constructor(cls: cst.ClassDef) -> cst.FunctionDef | None:
    """The class's `__init__`, when it defines exactly one."""
    found = methods_named(cls, "__init__")
    return found[0] if len(found) == 1 else None


def top_level_asserts(func: cst.FunctionDef) -> list[cst.Assert]:
    """The `assert` statements of the function's own body, outside any block."""
    body = func.body.body if type(func.body) is cst.IndentedBlock else ()
    return [
        statement
        for line in body
        if type(line) is cst.SimpleStatementLine
        for statement in line.body
        if type(statement) is cst.Assert
    ]


def _is_property(decorator: cst.BaseExpression) -> bool:
    """`@property`, `@functools.cached_property`, `@cached_property`."""
    name = dotted(decorator) or ""
    return name.rpartition(".")[2] in ("property", "cached_property")


def string_literal(expr: cst.BaseExpression | None) -> str | None:
    """The value of a plain string literal (no f-string), else None."""
    if type(expr) is cst.SimpleString or type(expr) is cst.ConcatenatedString:
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None


def string_key(expr: cst.Subscript) -> str | None:
    """The plain string a one-element subscript reads (`ckpt["epoch"]`), else None."""
    if len(expr.slice) != 1:
        return None
    element = expr.slice[0].slice
    return string_literal(element.value) if type(element) is cst.Index else None


def _names_below(node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Attribute:
            yield current
        stack.extend(current.children)


def _enclosing_branch(model: SemanticModel, node: cst.CSTNode) -> cst.CSTNode | None:
    """The innermost conditional block around `node` in its frame (as `Binding.branch`
    names them: an `if`/`else` branch, a loop body, a `try` body or handler, a `case`, a
    conditional expression's branch, the right side of `and`/`or`); None at frame level."""
    child, parent = node, model.parent(node)
    while parent is not None and not isinstance(parent, _FRAME_KINDS):
        if type(parent) is cst.MatchCase:
            return parent
        if _conditional_child(parent, child):
            return child
        child, parent = parent, model.parent(parent)
    return None


def _conditional_child(parent: cst.CSTNode, child: cst.CSTNode) -> bool:
    if isinstance(parent, cst.If | cst.IfExp):
        return child is parent.body or child is parent.orelse
    if isinstance(parent, cst.For | cst.While):
        return child is parent.body or child is parent.orelse
    if isinstance(parent, cst.Try | cst.TryStar):
        return child is parent.body or child is parent.orelse or child in parent.handlers
    if type(parent) is cst.BooleanOperation:
        return child is parent.right
    return False


# Kinds of binding whose value the resolver does not tell: a loop's element, an update
# (`total += n`), a caught exception.
_UNTOLD = frozenset({"for", "augassign", "except"})


def _unstarred(elements: Sequence[cst.BaseElement], index: int) -> bool:
    """Element `index` of a tuple or list display is there and no starred element before
    it (or it) shifts the positions: `a, *rest = ...` unpacks by position only up to it."""
    return index < len(elements) and not any(
        type(e) is cst.StarredElement for e in elements[: index + 1]
    )
