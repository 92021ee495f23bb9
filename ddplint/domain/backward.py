"""One definition of "what reaches `backward()`": the backward calls of a file, the value
each differentiates, and the expressions and statements that value is computed from.

`x.backward()`, `scaler.scale(x).backward()`, `torch.autograd.backward(x)` and
`accelerator.backward(x)` / `fabric.backward(x)` differentiate `x`. The flow follows `x`
back through names (reaching assignments, `loss /= n` augmented assignments, parameters
to what callers pass), arithmetic, tensor methods (`loss.mean()`), `sum(...)` /
`torch.stack` / `torch.sum` / `torch.mean`, containers, conditional expressions and the
return values of this file's functions. With `dependencies=True` it also follows every
argument of every call (`criterion(model(x), y)` depends on `model(x)`). `forwards` names
the objects whose calls (`model(x)`) the value comes from, also through what lists are
filled with (`preds.append(model(x))`, comprehension elements).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import libcst as cst

from ddplint.domain.apis import AUTOGRAD_BACKWARD, BACKWARD_OWNERS
from ddplint.engine import MAX_DEPTH, Binding, Resolver
from ddplint.names import dotted

_AGGREGATES = frozenset({"torch.stack", "torch.sum", "torch.mean", "torch.cat"})
# List methods that add to the list (the position of the added value, or of the iterable).
_FILLING = {"append": 0, "extend": 0, "insert": 1}
# Methods whose result carries no autograd graph: a value computed through them feeds no
# backward (`(x + eps * grad.sign()).detach()`, `loss.item()`).
_CUT_GRAPH = frozenset({"detach", "item", "tolist", "numpy"})


@dataclass(frozen=True)
class BackwardSite:
    """A backward call and the expression it differentiates."""

    call: cst.Call
    loss: cst.BaseExpression


@dataclass(frozen=True)
class Step:
    """An expression (or an augmented assignment) the differentiated value comes from,
    and the node it is evaluated at."""

    node: cst.CSTNode
    at: cst.CSTNode


@dataclass(frozen=True)
class ModelCall:
    """A call of an object (`model(x)`) and the expression naming the object (`model`)."""

    model: cst.BaseExpression
    call: cst.Call


class Backward:
    """The backward calls of one file and what flows into them."""

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self.model = resolver.model
        self._sites: list[BackwardSite] | None = None
        self._by_call: dict[cst.Call, BackwardSite] | None = None
        self._flows: dict[tuple[cst.Call, bool, bool], list[Step]] = {}

    @property
    def sites(self) -> list[BackwardSite]:
        if self._sites is None:
            self._sites = [
                s for c in self.model.calls_by_name.get("backward", []) if (s := self._site(c))
            ]
        return self._sites

    def _site(self, call: cst.Call) -> BackwardSite | None:
        func = call.func
        if type(func) is not cst.Attribute:
            return None
        receiver = func.value
        qualified = self.model.imports.resolve(func)
        owner = (dotted(receiver) or "").rpartition(".")[2]
        if qualified == AUTOGRAD_BACKWARD or owner in BACKWARD_OWNERS:
            return BackwardSite(call, call.args[0].value) if call.args else None
        if qualified is not None or self.model.imports.resolve(receiver) is not None:
            return None
        if (
            type(receiver) is cst.Call
            and type(receiver.func) is cst.Attribute
            and receiver.func.attr.value == "scale"
            and receiver.args
        ):
            return BackwardSite(call, receiver.args[0].value)
        return BackwardSite(call, receiver)

    def flow(
        self, site: BackwardSite, dependencies: bool = False, collections: bool = False
    ) -> list[Step]:
        """What the differentiated value of `site` is computed from, nearest first: its
        autograd graph, which a detached value (`x.detach()`, `loss.item()`) leaves; with
        `collections`, also what the lists it reads were filled with
        (`preds.append(model.module.predict(x))`, then `torch.stack(preds)`)."""
        key = (site.call, dependencies, collections)
        known = self._flows.get(key)
        if known is None:
            trace = _Trace(dependencies, graph=True, collections=collections)
            self._trace(site.loss, site.call, MAX_DEPTH, trace)
            known = self._flows[key] = trace.found
        return known

    def dependencies(self, expr: cst.BaseExpression, at: cst.CSTNode) -> list[Step]:
        """Everything the value of `expr` at `at` is computed from (the same walk as
        `flow(..., dependencies=True)`, from any expression)."""
        trace = _Trace(dependencies=True)
        self._trace(expr, at, MAX_DEPTH, trace)
        return trace.found

    def sources(self, site: BackwardSite, stop: frozenset[str] = frozenset()) -> list[Binding]:
        """The bindings the differentiated value of `site` is computed from (the walk of
        `flow(..., dependencies=True)`), not following names in `stop` (the batch)."""
        trace = _Trace(dependencies=True, stop=stop)
        self._trace(site.loss, site.call, MAX_DEPTH, trace)
        return trace.bindings

    def forwards(self, site: BackwardSite) -> list[ModelCall]:
        """The objects whose calls the differentiated value of `site` is computed from
        (`model` of `model(x)`, `self.net` of `self.net(x)`, `model` of `model.forward(x)`;
        not functions, classes or methods of values such as `out.sum()`), each with the node
        it is called by; also through what lists are filled with (`preds.append(model(x))`,
        `preds.extend([o[k] for k in keys])`)."""
        trace = _Trace(dependencies=True, collections=True)
        self._trace(site.loss, site.call, MAX_DEPTH, trace)
        found = []
        for step in trace.found:
            if type(step.node) is cst.Call:
                called = self._called_object(step.node)
                if called is not None:
                    found.append(ModelCall(called, step.node))
        return found

    def _called_object(self, call: cst.Call) -> cst.BaseExpression | None:
        func = call.func
        if self.model.imports.resolve(func) is not None or self.resolver.callees(call):
            return None
        if type(func) is cst.Name:
            return func
        if type(func) is not cst.Attribute:
            return None
        if func.attr.value == "forward":
            return func.value
        is_self = type(func.value) is cst.Name and func.value.value == "self"
        return func if is_self else None

    def site_of(self, call: cst.Call) -> BackwardSite | None:
        """The backward site of `call`, if it is a backward call."""
        if self._by_call is None:
            self._by_call = {site.call: site for site in reversed(self.sites)}
        return self._by_call.get(call)

    def reaches(self, node: cst.CSTNode) -> bool:
        """The value of `node` (a forward call, say) flows into some backward call."""
        model = self.model
        for site in self.sites:
            if model.is_inside(node, site.call):
                return True
            for step in self.flow(site, dependencies=True, collections=True):
                if model.is_inside(node, step.node):
                    return True
        return False

    def _trace(self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int, trace: _Trace) -> None:
        if id(expr) in trace.seen or depth < 0:
            return
        trace.seen.add(id(expr))
        trace.found.append(Step(expr, at))

        def follow(inner: cst.BaseExpression, where: cst.CSTNode = at) -> None:
            # sub-expressions keep the depth: only names and returns followed spend it
            self._trace(inner, where, depth, trace)

        kind = type(expr)  # exact types: no slow ABC `isinstance` misses
        if kind is cst.BinaryOperation:
            follow(expr.left)  # type: ignore[attr-defined]
            follow(expr.right)  # type: ignore[attr-defined]
        elif kind is cst.UnaryOperation:
            follow(expr.expression)  # type: ignore[attr-defined]
        elif kind is cst.Name or kind is cst.Attribute:
            self._trace_name(expr, at, depth - 1, trace)  # type: ignore[arg-type]
            if kind is cst.Attribute:
                follow(expr.value)  # type: ignore[attr-defined]
        elif kind is cst.Subscript:
            follow(expr.value)  # type: ignore[attr-defined]
        elif kind is cst.Tuple or kind is cst.List:
            for element in expr.elements:  # type: ignore[attr-defined]
                follow(element.value)
        elif kind is cst.Dict:
            for item in expr.elements:  # type: ignore[attr-defined]
                if type(item) is cst.DictElement:
                    follow(item.value)
        elif kind is cst.IfExp:
            follow(expr.body)  # type: ignore[attr-defined]
            follow(expr.orelse)  # type: ignore[attr-defined]
        elif (kind is cst.ListComp or kind is cst.GeneratorExp) and trace.collections:
            follow(expr.elt)  # type: ignore[attr-defined]
        elif kind is cst.Call:
            self._trace_call(expr, follow, depth, trace)  # type: ignore[arg-type]

    def _trace_call(self, call: cst.Call, follow: _Follow, depth: int, trace: _Trace) -> None:
        func = call.func
        if trace.graph and type(func) is cst.Attribute and func.attr.value in _CUT_GRAPH:
            return  # detached: what it is computed from reaches no backward through it
        qualified = self.model.imports.resolve(func)
        callees = self.resolver.callees(call)
        for callee in callees:
            for returned in self.model.returns.get(callee, []):
                if returned.value is not None:
                    self._trace(returned.value, returned, depth - 1, trace)
        if trace.dependencies:
            if type(func) is cst.Attribute and qualified is None:
                follow(func.value)
            for arg in call.args:
                follow(arg.value)
            return
        if type(func) is cst.Attribute and qualified is None and not callees:
            follow(func.value)  # `loss.mean()`, `losses.sum()`, `loss_dict.values()`
        elif (type(func) is cst.Name and func.value == "sum") or qualified in _AGGREGATES:
            for arg in call.args:
                follow(arg.value)

    def _trace_name(
        self, expr: cst.Name | cst.Attribute, at: cst.CSTNode, depth: int, trace: _Trace
    ) -> None:
        key = dotted(expr)
        if key is None or depth < 0 or key in trace.stop:
            return
        if trace.collections:
            self._trace_filling(key, at, depth, trace)
        for binding in self.resolver.reaching(key, at):
            statement = binding.statement
            if binding.kind == "augassign":
                if id(statement) not in trace.seen:
                    trace.seen.add(id(statement))
                    trace.found.append(Step(statement, statement))
                    trace.bindings.append(binding)
                    self._trace(binding.value, statement, depth, trace)
            elif binding.kind == "assign":
                value = binding.value
                if (
                    binding.index is not None
                    and isinstance(value, (cst.Tuple, cst.List))
                    and binding.index < len(value.elements)
                ):  # not `a, b = (*pair,)`: fewer elements than targets
                    value = value.elements[binding.index].value
                trace.bindings.append(binding)
                self._trace(value, statement, depth, trace)
            elif binding.kind == "param":
                for passed in self.resolver.arguments_for(binding):
                    self._trace(passed, passed, depth, trace)
            elif binding.kind in ("for", "with") and trace.dependencies:
                trace.bindings.append(binding)
                self._trace(binding.value, statement, depth, trace)

    def _trace_filling(self, key: str, at: cst.CSTNode, depth: int, trace: _Trace) -> None:
        """What `key.append(v)`, `key.extend(vs)`, `key.insert(i, v)` before `at` in the
        same frame add to the list `key`."""
        model = self.model
        frame = model.frame(at)
        for method, position in _FILLING.items():
            for call in model.calls_by_name.get(method, []):
                func = call.func
                if (
                    type(func) is cst.Attribute
                    and len(call.args) > position
                    and dotted(func.value) == key
                    and model.frame(call) is frame
                    and model.before(call, at)
                ):
                    self._trace(call.args[position].value, call, depth, trace)


@dataclass
class _Trace:
    """One walk: whether it follows every call argument, whether it stops at detached
    values, names it does not follow, whether it follows what lists are filled with, and
    what it found (steps, and the bindings it went through)."""

    dependencies: bool
    graph: bool = False  # the autograd graph only: a detached value ends the walk
    collections: bool = False
    stop: frozenset[str] = frozenset()
    found: list[Step] = field(default_factory=list)
    bindings: list[Binding] = field(default_factory=list)
    seen: set[int] = field(default_factory=set)


class _Follow(Protocol):
    """The local `follow` helper: an expression, and where it is evaluated."""

    def __call__(self, inner: cst.BaseExpression, where: cst.CSTNode = ..., /) -> None: ...
