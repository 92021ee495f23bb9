"""Epoch loops: the outer loops that iterate a loader (or sampler) pass after pass, found
through the names that hold it, helpers of this file it is passed to and project helpers
(an endless generator, `while True: for batch in loader: yield batch`, is one); the
endless reads (`itertools.cycle(loader)`, `iter(loader)` made anew inside a loop); and
whether such a loop calls `set_epoch` (directly, through a function of this file or a
project helper)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Container, Iterator
from dataclasses import dataclass
from typing import cast

import libcst as cst

from ddplint.context import FileContext, Scope
from ddplint.domain.ddp_facts import facts_of, string_key, string_value
from ddplint.domain.iterable_wrappers import entered_name, unwrapped, wrapped_iterable
from ddplint.domain.object_reads import trains_nothing_with
from ddplint.domain.project_view import project_of
from ddplint.domain.samplers import (
    SamplerUse,
    bound_name,
    returned_bindings,
    returned_positions,
)
from ddplint.names import dotted, on_self

_CYCLE = "itertools.cycle"
# Calls that wrap an iterable and iterate it when they are iterated.
# Parents of a name that is not read whole (`loader` in `loader.sampler`) or not read.
_NOT_WHOLE_READS = frozenset({cst.Attribute, cst.AssignTarget, cst.Param})


@dataclass
class EpochLoop:
    """An epoch loop and the loader's (or sampler's) name in its scope. `loop` is a `for`
    or `while` statement, or a call that reads the loader endlessly: `itertools.cycle(...)`
    or `iter(...)` made anew in each pass of a loop."""

    loop: cst.For | cst.While | cst.Call
    name: str
    is_sampler: bool
    # reached through a method called on an object of the class (`trainer.fit(epoch)`):
    # what the object's attribute holds on every path is out of sight
    through_object: bool = False

    @property
    def is_for(self) -> bool:
        return type(self.loop) is cst.For


def outer_loops(ctx: FileContext, node: cst.CSTNode) -> list[cst.For | cst.While]:
    """Loops around `node` in the same function, innermost first."""
    found = []
    for ancestor in ctx.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            break
        if isinstance(ancestor, (cst.For, cst.While)):
            found.append(ancestor)
    return found


def _for_iterating(ctx: FileContext, node: cst.CSTNode) -> cst.For | None:
    """The `for` statement whose iterable holds `node` (`for b in loader`,
    `for i, b in enumerate(tqdm(loader))`)."""
    child = node
    for ancestor in ctx.ancestors(node):
        if type(ancestor) is cst.For:
            return ancestor if child is ancestor.iter else None
        if isinstance(ancestor, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            return None
        child = ancestor
    return None


def _length_of(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`len(loader)`: a count of its batches, no pass over it."""
    arg = ctx.parent(node)
    call = ctx.parent(arg) if type(arg) is cst.Arg else None
    return type(call) is cst.Call and dotted(call.func) == "len" and len(call.args) == 1


def _yielded_from(ctx: FileContext, node: cst.CSTNode) -> cst.Yield | None:
    """The `yield from loader` that iterates `node`, handing on each batch (an endless
    generator: `while True: yield from loader`)."""
    parent = ctx.parent(node)
    holder = ctx.parent(parent) if type(parent) is cst.From else None
    return holder if type(holder) is cst.Yield else None


def _param_for(func: cst.FunctionDef, call: cst.Call, arg: cst.Arg) -> str | None:
    params = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
    if arg.keyword is not None:
        names = params + [p.name.value for p in func.params.kwonly_params]
        return arg.keyword.value if arg.keyword.value in names else None
    if arg.star:
        return None
    positional = [a for a in call.args if a.keyword is None and not a.star]
    index = positional.index(arg)
    bound = type(call.func) is cst.Attribute or func.name.value == "__init__"
    if bound and params and params[0] in ("self", "cls"):
        index += 1
    return params[index] if index < len(params) else None


def _keys(ctx: FileContext, node: cst.Subscript) -> tuple[list[str], cst.For | None]:
    """The string keys `node` may read: its literal key (`loaders["train"]`), or each
    string a loop variable takes from a literal list (`loaders[phase]` in `for phase in
    ("train", "val"):`), with that loop: one of its passes reads each key."""
    key = string_key(node)
    if key is not None:
        return [key], None
    if len(node.slice) != 1 or type(index := node.slice[0].slice) is not cst.Index:
        return [], None
    if type(index.value) is not cst.Name:
        return [], None
    bindings = ctx.resolver.reaching(index.value.value, node)
    if len(bindings) != 1 or bindings[0].kind != "for" or bindings[0].index is not None:
        return [], None
    listed, loop = bindings[0].value, bindings[0].statement
    if type(listed) not in (cst.List, cst.Tuple) or type(loop) is not cst.For:
        return [], None
    keys = [string_value(e.value) for e in listed.elements]  # type: ignore[attr-defined]
    return ([k for k in keys if k is not None], loop) if None not in keys else ([], None)


def _entry_name(ctx: FileContext, holder: str, key: str, at: cst.CSTNode) -> str | None:
    """The plain name the entry `key` of the dict literal that `holder` is bound to
    (its one binding, in the scope of `at`) holds."""
    bindings = ctx.resolver.reaching(holder, at)
    if len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].index is not None:
        return None
    value = bindings[0].value
    if type(value) is not cst.Dict or ctx.scope(value) is not ctx.scope(at):
        return None
    for element in value.elements:
        if type(element) is cst.DictElement and string_value(element.key) == key:
            return element.value.value if type(element.value) is cst.Name else None
    return None


@dataclass(frozen=True)
class LoaderName:
    """A name that holds a loader built on a sampler: in `scope`, bound where `made` runs
    (the loader's own call, or the call of the function of this file that returns or
    yields it); `via`: how the loader takes the sampler."""

    name: str
    scope: Scope
    via: str
    made: cst.Call


# Methods that change a dict's entries.
_DICT_CHANGES = frozenset({"update", "setdefault", "pop", "popitem", "clear", "__setitem__"})
_RETURN_DEPTH = 3  # helpers returning a helper's loader as it stands, followed this deep


def loader_names(ctx: FileContext, sampler: SamplerUse) -> list[LoaderName]:
    """The names that hold the loaders built on `sampler`: where it is built, where a
    function of this file returns or yields one (and a function returning that function's
    result as it stands, `_RETURN_DEPTH` deep), and the attribute a class of this file
    stores it in when such a call's result is handed straight to its constructor
    (`Trainer(loader=build_loader(...))`)."""
    names: list[LoaderName] = []
    for loader in sampler.loaders:
        scope = ctx.scope(loader.call)
        if loader.name is not None:
            names.append(LoaderName(loader.name, scope, loader.via, loader.call))
        names.extend(_constructed_with(ctx, loader.call, loader.via))
        frontier = [(loader.name, scope, cast("cst.CSTNode | None", loader.call))]
        for _ in range(_RETURN_DEPTH):
            found: list[tuple[str | None, Scope, cst.CSTNode | None]] = []
            for name, where, value in frontier:
                for bound, outer, site in returned_bindings(ctx, name, where, value):
                    names.append(LoaderName(bound, outer, loader.via, site))
                    found.append((bound, outer, None))
                for site in _unbound_calls(ctx, name, where, value):
                    names.extend(_constructed_with(ctx, site, loader.via))
                    found.append((None, ctx.scope(site), site))
            frontier = found
    return names


def _unbound_calls(
    ctx: FileContext, name: str | None, scope: Scope, value: cst.CSTNode | None
) -> list[cst.Call]:
    """The calls of the function `scope` whose result is not bound to a name, when that
    function returns the value of `name` (or the expression `value`) as it stands."""
    if type(scope) is not cst.FunctionDef or None not in returned_positions(
        ctx, name, scope, value
    ):
        return []
    return [
        call
        for call in ctx.model.calls_by_name.get(scope.name.value, ())
        if type(call.func) is cst.Name and type(ctx.parent(call)) is not cst.Assign
    ]


def _constructed_with(ctx: FileContext, value: cst.CSTNode, via: str) -> list[LoaderName]:
    """The attributes `self.x` that a class of this file stores `value` in, when `value`
    is an argument of its construction (`Trainer(loader=build(...))`)."""
    arg = ctx.parent(value)
    call = ctx.parent(arg) if type(arg) is cst.Arg else None
    if type(call) is not cst.Call or type(arg) is not cst.Arg:
        return []
    if type(call.func) is not cst.Name:
        return []
    inits = [f for f in ctx.resolver.callees(call) if f.name.value == "__init__"]
    if len(inits) != 1:
        return []
    param = _param_for(inits[0], call, arg)
    return [LoaderName(stored, inits[0], via, call) for stored in _stored_as(ctx, inits[0], param)]


def _peeks(loop: cst.CSTNode) -> bool:
    """`for _ in loader: break`: a loop whose body leaves it on the first item, whatever
    happens (a `break` or `return` of its own body, outside any branch), takes one batch
    (to start the loader's random state, say), not a pass over the data."""
    if type(loop) is not cst.For or type(loop.body) is not cst.IndentedBlock:
        return False
    return any(
        isinstance(small, (cst.Break, cst.Return))
        for line in loop.body.body
        if type(line) is cst.SimpleStatementLine
        for small in line.body
    )


class EpochLoops:
    """Epoch loops iterating one loader (or sampler), following helpers of this file and
    project helpers; and whether each calls `set_epoch`."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self._setters: dict[frozenset[str], set[str]] = {}
        self._reads: dict[str, list[cst.BaseExpression]] | None = None
        self._reads_by_scope: dict[str, dict[Scope, list[cst.BaseExpression]]] = {}
        self._entries: dict[str, list[cst.BaseExpression]] | None = None
        # entry reads keyed by a loop variable (`loaders[phase]`): the loop choosing the key
        self._keyed_by: dict[int, cst.For] = {}
        self._file_sets_epoch: bool | None = None

    def setters(self, others: frozenset[str] = frozenset()) -> set[str]:
        """Functions of this file that call `set_epoch`, directly or through another, on
        something other than the samplers named in `others`."""
        if others not in self._setters:

            def sets_epoch(call: cst.Call, known: Container[str]) -> bool:
                return self._sets_epoch(call, known, others)

            found = facts_of(self.ctx).functions_reaching(sets_epoch)
            self._setters[others] = set(found)
        return self._setters[others]

    def _sets_epoch(
        self, call: cst.Call, known: Container[str], others: frozenset[str] = frozenset()
    ) -> bool:
        """`call` sets an epoch, unless only on one of the samplers named in `others`
        (`self.aux_sampler.set_epoch(...)`: another loader's)."""
        func = call.func
        if type(func) is cst.Attribute and func.attr.value == "set_epoch":
            return dotted(func.value) not in others
        if type(func) is cst.Name and func.value in known:
            return True
        if type(func) is cst.Attribute and func.attr.value in known:
            method = func.attr.value
            if on_self(func) or any(
                f.name.value == method for f in self.ctx.resolver.callees(call)
            ):
                return True  # `self.train_epoch(epoch)`, `trainer.train_epoch(epoch)`: it sets it
        project = project_of(self.ctx)
        return project is not None and bool(project.helper_set_epoch_positions(self.ctx, call))

    def loop_sets_epoch(self, loop: cst.CSTNode, others: frozenset[str] = frozenset()) -> bool:
        """`loop` calls `set_epoch` (directly or through a function), not only on the
        samplers named in `others`."""
        setters = self.setters(others)
        return any(self._sets_epoch(c, setters, others) for c in self.ctx.calls_within(loop))

    def epoch_loops(
        self, name: str, scope: Scope, depth: int = 2
    ) -> Iterator[tuple[EpochLoop | None, cst.CSTNode]]:
        """(epoch loop or None, iteration site) for each place `name` is iterated: by a
        `for`, through a helper of this file it is passed to (`for b in gen(loader)`
        included), a project helper, an endless read, or a local name a wrapper binds
        (`it = tqdm(loader)`) or a plain alias binds (`batches = loader`); for a module-level
        name, also where a function of the file reads it as a global (`def train(): for b in
        train_loader`), seen from the calls of that function."""
        ctx = self.ctx
        for node in self._usages(name, scope):
            arg = ctx.parent(node)
            call = ctx.parent(arg) if type(arg) is cst.Arg else None
            if type(call) is cst.Call and type(arg) is cst.Arg:
                found = list(self._through_call(call, arg, name, depth, node))
                if found:
                    yield from found
                    continue
            alias = _alias(ctx, node)
            if alias is not None:
                if depth > 0:
                    yield from self.epoch_loops(alias, scope, depth - 1)
                continue
            loop: cst.CSTNode | None = _for_iterating(ctx, node) or _yielded_from(ctx, node)
            if loop is None or _peeks(loop):
                continue
            outer = self._around(loop, node)
            if outer is None and name.startswith("self.") and depth > 0:
                # `for b in self.loader` in a method the epoch loop calls
                callers = list(self._method_callers(loop, name))
                if callers:
                    yield from callers
                    continue
            yield self._epoch(outer, name), loop
        if type(scope) is cst.Module and "." not in name and depth > 0:
            yield from self._global_reads(name, depth - 1)

    def _global_reads(
        self, name: str, depth: int
    ) -> Iterator[tuple[EpochLoop | None, cst.CSTNode]]:
        """Where module-level functions that read the module's `name` as a global (no
        binding of their own) iterate it: a loop of the function when one is around the
        read, else each call of the function with the loop around that call (`for epoch
        in ...: train()` where `train` iterates the global `train_loader`)."""
        ctx = self.ctx
        for defs in ctx.functions.values():
            if len(defs) != 1 or type(ctx.scope(defs[0])) is not cst.Module:
                continue
            func = defs[0]
            if name in ctx.model.bindings_in(func):
                continue
            for epoch, site in self.epoch_loops(name, func, depth):
                if epoch is not None:
                    yield epoch, site
                    continue
                for call in ctx.model.calls_by_name.get(func.name.value, ()):
                    if type(call.func) is cst.Name and func in ctx.resolver.callees(call):
                        yield self._epoch(ctx.enclosing_loop(call), name), call

    def passes_in_sight(self, name: str, scope: Scope) -> bool:
        """`name` is a local of the function `scope` whose every read is the iterable of a
        `for` of that function (`for b in loader`, `enumerate(tqdm(loader))`) or asks its
        length, with no attribute of it read (`loader.__iter__()`) and no function nested
        in it reading the name: the loader goes nowhere else, so those loops are all the
        passes over it."""
        if "." in name or type(scope) is not cst.FunctionDef:
            return False
        ctx = self.ctx
        reads = list(self._usages(name, scope))
        for read in self._reads_index().get(name, []):
            if ctx.scope(read) is not scope and scope in ctx.ancestors(read):
                return False  # a closure reads it: its passes are out of this count
        for node in ctx.nodes_within(scope, cst.Attribute):
            value = node.value  # type: ignore[attr-defined]
            if type(value) is cst.Name and value.value == name:
                return False  # `loader.__iter__()`, `loader.sampler`: reached another way
        return bool(reads) and all(
            _for_iterating(ctx, read) is not None or _length_of(ctx, read) for read in reads
        )

    def _through_call(
        self, call: cst.Call, arg: cst.Arg, name: str, depth: int, node: cst.CSTNode
    ) -> Iterator[tuple[EpochLoop | None, cst.CSTNode]]:
        """What iterating `name` (read as `node`) through the call it is passed to (`arg`)
        gives; nothing for a call that is not a helper, an endless read or a wrapper."""
        ctx = self.ctx
        site_loop = _for_iterating(ctx, call)
        around = self._around(site_loop if site_loop is not None else call, node)
        endless = self._endless_read(call)
        if endless is not None:
            yield (EpochLoop(call, name, is_sampler=False) if endless else None), call
            return
        init = self._constructor(call)
        if init is not None:
            param = _param_for(init, call, arg) if depth > 0 else None
            for attribute in _stored_as(ctx, init, param):
                yield from self.epoch_loops(attribute, init, depth - 1)
            return
        helper = self._helper(call)
        if helper is not None:
            param = _param_for(helper, call, arg) if depth > 0 else None
            if param is None:
                return
            inside = list(self.epoch_loops(param, helper, depth - 1))
            for inner, site in inside:
                if inner is not None:
                    yield inner, site
                else:
                    yield self._epoch(around, name), call
            if not inside and site_loop is None and _hands_on(ctx, helper, param):
                # `bar = rank_zero_bar(loader)`: the result is the loader, or a bar over it
                yield from self._bound_result(call, name, depth)
        elif self._project_helper(call):
            if not trains_nothing_with(ctx, call, arg):  # `test_accuracy(model, loader)`
                yield self._epoch(around, name), call
        elif site_loop is None and wrapped_iterable(ctx, call) is not None:
            yield from self._bound_result(call, name, depth)

    def _bound_result(
        self, call: cst.Call, name: str, depth: int
    ) -> Iterator[tuple[EpochLoop | None, cst.CSTNode]]:
        """Where the local name that `call`'s result is bound to is iterated, the result
        being the loader `name` or a wrapper over it (`it = tqdm(loader)`)."""
        ctx = self.ctx
        bound = entered_name(ctx, call) or bound_name(ctx, call)[0]
        if depth <= 0 or bound is None or "." in bound:
            return
        for inner, site in self.epoch_loops(bound, ctx.scope(call), depth - 1):
            if inner is None and name.startswith("self."):
                # `it = tqdm(self.loader)` in a method the epoch loop calls
                callers = list(self._method_callers(site, name))
                if callers:
                    yield from callers
                    continue
            # the wrapper (`it = tqdm(loader)`) has no sampler: name the loader
            wrapped = inner and EpochLoop(inner.loop, name, inner.is_sampler)
            yield wrapped, site

    def without_set_epoch(
        self, name: str, scope: Scope, made: cst.CSTNode, others: frozenset[str] = frozenset()
    ) -> Iterator[EpochLoop]:
        """Epoch loops iterating `name` (seen from `scope`) that do not build it anew each
        pass (`made`, where the loader or sampler is built, is outside them) and call no
        `set_epoch` (but on the other samplers named in `others`), nor does a loop around
        them. A `while` loop or an endless read (whose passes no epoch counter names)
        counts only where the file calls no `set_epoch` at all."""
        ctx = self.ctx
        for epoch, _site in self.epoch_loops(name, scope):
            if epoch is None:
                continue
            loops = [epoch.loop, *outer_loops(ctx, epoch.loop)]
            if any(ctx.is_inside(made, outer) for outer in loops):
                continue
            if not epoch.is_for and self.file_sets_epoch:
                continue
            if not any(self.loop_sets_epoch(outer, others) for outer in loops):
                yield epoch

    @property
    def file_sets_epoch(self) -> bool:
        """Some call of the file sets a sampler's epoch (directly or through a helper)."""
        if self._file_sets_epoch is None:
            setters = self.setters()
            self._file_sets_epoch = any(self._sets_epoch(c, setters) for c in self.ctx.calls)
        return self._file_sets_epoch

    def _endless_read(self, call: cst.Call) -> bool | None:
        """True when `call` reads its argument pass after pass: `itertools.cycle(x)`, or
        `iter(x)` inside a loop of its function (made anew each pass); False for `iter(x)`
        outside any loop (one pass); None for any other call."""
        ctx = self.ctx
        if ctx.call_name(call) == _CYCLE:
            return True
        func = call.func
        if type(func) is cst.Name and func.value == "iter" and "iter" not in ctx.functions:
            return ctx.enclosing_loop(call) is not None
        return None

    def _reads_index(self) -> dict[str, list[cst.BaseExpression]]:
        """Whole dotted names read in the file (`loader`, `self.loader`; not the `loader`
        inside `loader.sampler`), indexed once per file."""
        if self._reads is None:
            ctx = self.ctx
            index: dict[str, list[cst.BaseExpression]] = defaultdict(list)
            for node in ctx.nodes_of(cst.Name, cst.Attribute):
                parent = ctx.parent(node)
                if type(parent) in _NOT_WHOLE_READS:  # exact types: no slow ABC misses
                    continue
                name = dotted(node)  # type: ignore[arg-type]
                if name is not None:
                    index[name].append(node)  # type: ignore[arg-type]
            self._reads = index
        return self._reads

    def reads(self, name: str) -> list[cst.BaseExpression]:
        """Every read of the whole dotted name `name` in the file (`_reads_index`)."""
        return self._reads_index().get(name, [])

    def _usages(self, name: str, scope: Scope) -> Iterator[cst.BaseExpression]:
        reads = self._reads_index().get(name, [])
        if name.startswith("self."):
            return iter(reads)
        local = self._reads_by_scope.get(name)
        if local is None:  # grouped once per name, so that asking in every scope stays linear
            local = self._reads_by_scope[name] = defaultdict(list)
            for node in reads:
                local[self.ctx.scope(node)].append(node)
            for node in self._entry_reads().get(name, []):
                local[self.ctx.scope(node)].append(node)
        return iter(local.get(scope, []))

    def _entry_reads(self) -> dict[str, list[cst.BaseExpression]]:
        """By the name it holds, each read of a string-keyed entry of a dict literal
        (`loaders["train"]` where `loaders = {"train": train_loader, ...}`, in its scope):
        the same object as the name. Not where the entry is ever stored to
        (`loaders["train"] = ...`) or changed (`loaders.update(...)`), nor where the dict is
        bound more than once."""
        if self._entries is None:
            ctx = self.ctx
            self._entries = defaultdict(list)
            subscripts = cast("list[cst.Subscript]", ctx.nodes_of(cst.Subscript))
            stored = {
                (dotted(node.value), string_key(node))
                for node in subscripts
                if type(ctx.parent(node)) is cst.AssignTarget
            }
            changed = {  # `loaders.update(train=...)`: any entry may hold another loader
                dotted(call.func.value)
                for call in cast("list[cst.Call]", ctx.nodes_of(cst.Call))
                if type(call.func) is cst.Attribute and call.func.attr.value in _DICT_CHANGES
            }
            for node in subscripts:
                holder = dotted(node.value)
                if holder is None or holder in changed:
                    continue
                if type(ctx.parent(node)) in _NOT_WHOLE_READS:
                    continue
                keys, keyed_by = _keys(ctx, node)
                for key in keys:
                    held = None if (holder, key) in stored else _entry_name(ctx, holder, key, node)
                    if held is not None:
                        self._entries[held].append(node)
                        if keyed_by is not None:
                            self._keyed_by[id(node)] = keyed_by
        return self._entries

    def _around(self, site: cst.CSTNode, node: cst.CSTNode) -> cst.For | cst.While | None:
        """The loop around `site`, where `node` reads the loader; past the loop choosing
        the key of an entry read (`loaders[phase]`): each pass of `for phase in ("train",
        "val")` reads another loader, the loop around it reads this one again."""
        outer = self.ctx.enclosing_loop(site)
        if outer is not None and outer is self._keyed_by.get(id(node)):
            return self.ctx.enclosing_loop(outer)
        return outer

    def _epoch(self, loop: cst.For | cst.While | None, name: str) -> EpochLoop | None:
        if type(loop) is cst.For or (type(loop) is cst.While and not _runs_once(loop)):
            return EpochLoop(loop, name, is_sampler=False)
        return None

    def _helper(self, call: cst.Call) -> cst.FunctionDef | None:
        func = call.func
        if type(func) is cst.Name:
            defs = self.ctx.functions.get(func.value)
            if defs and len(defs) == 1 and type(self.ctx.scope(defs[0])) is cst.Module:
                return defs[0]
        return None

    def _method_callers(
        self, loop: cst.CSTNode, name: str
    ) -> Iterator[tuple[EpochLoop | None, cst.CSTNode]]:
        """Calls of the method holding `loop` (`self.method(...)`, or `trainer.method(...)`
        on an object of its class), each with the loop around it (the epoch loop of a
        trainer class)."""
        ctx = self.ctx
        method = ctx.model.frame(loop)
        if type(method) is not cst.FunctionDef:
            return
        for call in ctx.model.calls_by_name.get(method.name.value, ()):
            if type(call.func) is cst.Attribute and method in ctx.resolver.callees(call):
                # seen from the caller: `trainer.loader` where the method reads `self.loader`
                holder = dotted(call.func.value) if type(call.func) is cst.Attribute else None
                if holder in (None, "self"):
                    yield self._epoch(ctx.enclosing_loop(call), name), call
                    continue
                seen = f"{holder}.{name[len('self.') :]}"
                epoch = self._epoch(ctx.enclosing_loop(call), seen)
                yield (epoch and EpochLoop(epoch.loop, seen, False, through_object=True)), call

    def _constructor(self, call: cst.Call) -> cst.FunctionDef | None:
        """The `__init__` of a class of this file that `Cls(...)` runs."""
        if type(call.func) is not cst.Name:
            return None
        found = [f for f in self.ctx.resolver.callees(call) if f.name.value == "__init__"]
        return found[0] if len(found) == 1 else None

    def _project_helper(self, call: cst.Call) -> bool:
        project = project_of(self.ctx)
        return project is not None and project.resolve(self.ctx, call) is not None


def _hands_on(ctx: FileContext, func: cst.FunctionDef, param: str) -> bool:
    """Every return of `func` gives its parameter `param`, as it stands or inside an
    iterable wrapper (`return tqdm(loader) if main else loader`)."""
    returns = ctx.model.returns.get(func, [])

    def handed(expr: cst.BaseExpression) -> bool:
        if type(expr) is cst.IfExp:
            return handed(expr.body) and handed(expr.orelse)
        inner = unwrapped(ctx, expr)
        return type(inner) is cst.Name and inner.value == param

    return bool(returns) and all(r.value is not None and handed(r.value) for r in returns)


def _alias(ctx: FileContext, node: cst.CSTNode) -> str | None:
    """The plain local name that `node` is bound to as it stands (`batches = loader`)."""
    statement = ctx.parent(node)
    if type(statement) is not cst.Assign or statement.value is not node:
        return None
    if len(statement.targets) != 1:
        return None
    target = statement.targets[0].target
    return target.value if type(target) is cst.Name else None


def _stored_as(ctx: FileContext, init: cst.FunctionDef, param: str | None) -> list[str]:
    """The attributes `__init__` stores its parameter in as it stands (`self.loader =
    loader`)."""
    if param is None:
        return []
    found = []
    for node in ctx.nodes_within(init, cst.Assign):
        if (
            type(node) is cst.Assign
            and type(node.value) is cst.Name
            and node.value.value == param
            and len(node.targets) == 1
            and ctx.scope(node) is init
        ):
            target = dotted(node.targets[0].target)
            if target is not None and target.startswith("self."):
                found.append(target)
    return found


def _runs_once(loop: cst.While) -> bool:
    """The `while` body ends in a `break` at its top level (a retry loop): one pass."""
    body = loop.body
    if type(body) is not cst.IndentedBlock or not body.body:
        return False
    last = body.body[-1]
    return type(last) is cst.SimpleStatementLine and any(type(s) is cst.Break for s in last.body)
