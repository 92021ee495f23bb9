"""DistributedSamplers of a file and the DataLoaders built on them."""

from __future__ import annotations

import operator
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import cast

import libcst as cst

from ddplint.context import FileContext, Scope
from ddplint.domain import domain_of
from ddplint.domain.ddp_facts import (
    LOADER_CLASSES,
    SAMPLER_CLASSES,
    argument,
    is_false,
    is_true,
    keyword,
)
from ddplint.domain.loader_classes import constructions, loader_classes
from ddplint.domain.project_view import project_of
from ddplint.engine.model import all_params, parameter_positions
from ddplint.engine.resolve import methods_named
from ddplint.names import dotted

# Positions in `DistributedSampler(dataset, num_replicas, rank, shuffle, seed, drop_last)`
# and `DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers,
# collate_fn, pin_memory, drop_last)`.
SAMPLER_SHUFFLE = 3
SAMPLER_DROP_LAST = 5
LOADER_SAMPLER = 3
LOADER_BATCH_SAMPLER = 4
LOADER_WORKERS = 5
LOADER_DROP_LAST = 8


@dataclass
class LoaderUse:
    """A `DataLoader(...)` built on a sampler."""

    call: cst.Call
    name: str | None
    # "sampler", "batch_sampler", "returned_sampler" (a helper's return value), or
    # "subclass" (`call` constructs a DataLoader subclass that builds the sampler itself)
    via: str


@dataclass
class SamplerUse:
    """A `DistributedSampler(...)` call, the name it is bound to and its loaders. A sampler
    that a function of this file returns as it builds it (`return DistributedSampler(ds,
    shuffle=shuffle)`) has one use per call of that function (`factory`, the call `site`),
    named and linked to loaders where that call is."""

    call: cst.Call
    name: str | None
    binding_value: cst.BaseExpression | None
    loaders: list[LoaderUse] = field(default_factory=list)
    factory: tuple[cst.FunctionDef, cst.Call] | None = None
    # `call` is a project function's that returns a DistributedSampler as built: how it
    # shuffles (`factory_shuffle`); its arguments are not the sampler's.
    made_by: str | None = None

    @property
    def arguments_known(self) -> bool:
        """`call`'s arguments are the sampler's own (not a project factory's)."""
        return self.made_by is None

    @property
    def site(self) -> cst.Call:
        """Where the sampler is obtained: the factory's call, or the sampler's own."""
        return self.factory[1] if self.factory is not None else self.call


def shuffle_of(call: cst.Call) -> bool | None:
    """True / False when the sampler's shuffling is known, None when it is computed."""
    value = argument(call, SAMPLER_SHUFFLE, "shuffle")
    if value is None or is_true(value):
        return True
    if is_false(value):
        return False
    return None


def bound_name(ctx: FileContext, node: cst.BaseExpression) -> tuple[str | None, cst.BaseExpression]:
    """The dotted name `node` is assigned to (through `x if c else y`), and the value
    expression of that assignment."""
    current: cst.BaseExpression = node
    parent = ctx.parent(current)
    while isinstance(parent, (cst.IfExp, cst.BooleanOperation)):
        current = parent
        parent = ctx.parent(current)
    if type(parent) is cst.Element:  # `sampler, shuffle = DistributedSampler(ds), False`
        values = ctx.parent(parent)
        return _unpacked_name(ctx, parent), values if type(values) is cst.Tuple else current
    if type(parent) is cst.Assign and len(parent.targets) == 1:
        return dotted(parent.targets[0].target), current
    if type(parent) is cst.AnnAssign:
        return dotted(parent.target), current
    return None, current


def shuffles(ctx: FileContext, sampler: SamplerUse) -> bool | None:
    """`shuffle_of`, the factory's parameter read as what its call passes (or its
    default) where the sampler comes from a factory."""
    if sampler.made_by is not None:
        return _project_shuffle(ctx, sampler.call, sampler.made_by)
    known = shuffle_of(sampler.call)
    value = argument(sampler.call, SAMPLER_SHUFFLE, "shuffle")
    if known is not None or sampler.factory is None or type(value) is not cst.Name:
        return known
    func, site = sampler.factory
    params = (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params)
    param = next((p for p in params if p.name.value == value.value), None)
    if param is None:
        return None
    passed = ctx.resolver.passed(site, func, value.value) or param.default
    if passed is None:
        return None
    leaves = [v.expr for v in ctx.resolver.values(passed, site) if v.leaf]
    if leaves and all(is_true(leaf) for leaf in leaves):
        return True
    if leaves and all(is_false(leaf) for leaf in leaves):
        return False
    return None


def factory_shuffle(ctx: FileContext, func: cst.FunctionDef) -> str:
    """How a function that returns `DistributedSampler(...)` as built shuffles: "true",
    "false", "param:<i>:<name>:<default>" (its parameter at position i, default
    "true"/"false"/"" when none or unknown), "unknown"; "" when it returns no sampler."""
    found = ""
    for ret in ctx.nodes_within(func, cst.Return):
        value = ret.value if type(ret) is cst.Return else None
        if type(value) is not cst.Call or ctx.scope(ret) is not func:
            continue
        if not is_sampler_call(ctx, value):
            continue
        found = _shuffle_text(func, value)
    return found


def _shuffle_text(func: cst.FunctionDef, call: cst.Call) -> str:
    known = shuffle_of(call)
    if known is not None:
        return str(known).lower()
    value = argument(call, SAMPLER_SHUFFLE, "shuffle")
    params = [*func.params.posonly_params, *func.params.params]
    for index, param in enumerate(params):
        if type(value) is cst.Name and param.name.value == value.value:
            return _parameter_text(index, param)
    return "unknown"


def _parameter_text(index: int, param: cst.Param) -> str:
    """ "param:<index>:<name>:<default>" (see `factory_shuffle`)."""
    default = param.default
    shown = (
        ""
        if default is None
        else ("true" if is_true(default) else "false" if is_false(default) else "")
    )
    return f"param:{index}:{param.name.value}:{shown}"


def _project_shuffle(ctx: FileContext, call: cst.Call, made_by: str) -> bool | None:
    if made_by in ("true", "false"):
        return made_by == "true"
    if not made_by.startswith("param:"):
        return None
    _, index, name, default = made_by.split(":", 3)
    passed = argument(call, int(index), name)
    if passed is None:
        return {"true": True, "false": False}.get(default)
    leaves = [v.expr for v in ctx.resolver.values(passed, call) if v.leaf]
    if leaves and all(is_true(leaf) for leaf in leaves):
        return True
    if leaves and all(is_false(leaf) for leaf in leaves):
        return False
    return None


def _project_uses(ctx: FileContext) -> list[SamplerUse]:
    """Calls of project functions named for a sampler (`make_data_sampler(ds, shuffle,
    distributed)`) whose summary says they return a DistributedSampler as built, and of
    subclasses of DistributedSampler that keep its order (`sampler_subclasses`), of this
    file or another project module."""
    project = project_of(ctx)
    own = dict(sampler_subclasses(ctx))
    uses = []
    for call in ctx.calls:
        name = (dotted(call.func) or "").rpartition(".")[2]
        if "sampler" not in name.lower() or ctx.call_name(call) in SAMPLER_CLASSES:
            continue
        if type(call.func) is cst.Name and name in own:
            shuffle = own[name]
        elif project is None:
            continue
        else:
            summary = project.function_called(ctx, call)
            shuffle = summary.sampler_shuffle if summary is not None else ""
            shuffle = shuffle or project.sampler_subclass(ctx, call)
        if shuffle:
            bound, value = bound_name(ctx, call)
            uses.append(SamplerUse(call, bound, value if bound else None, made_by=shuffle))
    return uses


def sampler_subclasses(ctx: FileContext) -> tuple[tuple[str, str], ...]:
    """The classes of the file that subclass DistributedSampler, directly or through
    another such class of the file, and keep its order of samples (no `__iter__` of their
    own, or one that draws from `super().__iter__()`: a sampler that resumes mid-epoch),
    each with how it shuffles, in `factory_shuffle`'s terms (its `__init__`'s `shuffle`
    parameter, or DistributedSampler's own where it has no `__init__`)."""
    return ctx.memo(_sampler_subclasses)


# DistributedSampler(dataset, num_replicas=None, rank=None, shuffle=True, ...)
_INHERITED_SHUFFLE = "param:3:shuffle:true"


def _sampler_subclasses(ctx: FileContext) -> tuple[tuple[str, str], ...]:
    if "Sampler" not in ctx.source:
        return ()
    found: dict[str, str] = {}
    changed = True
    while changed:
        changed = False
        for name, classes in ctx.model.classes.items():
            if name in found or len(classes) != 1:
                continue
            cls = classes[0]
            inherited = [
                found[b.value.value]
                if type(b.value) is cst.Name and b.value.value in found
                else _INHERITED_SHUFFLE
                for b in cls.bases
                if ctx.qualname(b.value) in SAMPLER_CLASSES
                or (type(b.value) is cst.Name and b.value.value in found)
            ]
            if inherited and _keeps_order(cls):
                found[name] = _init_shuffle(cls, inherited[0])
                changed = True
    return tuple(sorted(found.items()))


def _keeps_order(cls: cst.ClassDef) -> bool:
    """`cls` has no `__iter__`, or one that iterates `super().__iter__()`."""
    methods = methods_named(cls, "__iter__")
    if not methods:
        return True
    return "super().__iter__()" in cst.Module([]).code_for_node(methods[0]).replace(" ", "")


def _init_shuffle(cls: cst.ClassDef, inherited: str) -> str:
    """How `cls` shuffles (see `sampler_subclasses`): its `__init__`'s `shuffle`
    parameter, counted without `self`; the base's where it has no `__init__`."""
    inits = methods_named(cls, "__init__")
    if not inits:
        return inherited
    params = [*inits[0].params.posonly_params, *inits[0].params.params][1:]
    for index, param in enumerate(params):
        if param.name.value == "shuffle":
            return _parameter_text(index, param)
    return "unknown"


def _factory_uses(ctx: FileContext, call: cst.Call) -> list[SamplerUse]:
    """One use per call of the function of this file that returns `call` as built."""
    parent = ctx.parent(call)
    func = ctx.scope(call)
    if type(parent) is not cst.Return or type(func) is not cst.FunctionDef:
        return []
    uses = []
    for site in ctx.model.calls_by_name.get(func.name.value, ()):
        if func in ctx.resolver.callees(site):
            name, value = bound_name(ctx, site)
            uses.append(SamplerUse(call, name, value if name else None, factory=(func, site)))
    return uses


def _unpacked_name(ctx: FileContext, element: cst.Element) -> str | None:
    """The name a tuple assignment binds to `element` of its value tuple."""
    values = ctx.parent(element)
    assign = ctx.parent(values) if type(values) is cst.Tuple else None
    if type(values) is not cst.Tuple or type(assign) is not cst.Assign:
        return None
    if len(assign.targets) != 1 or type(assign.targets[0].target) is not cst.Tuple:
        return None
    targets = assign.targets[0].target.elements
    if len(targets) != len(values.elements) or any(type(e) is cst.StarredElement for e in targets):
        return None
    return dotted(targets[values.elements.index(element)].value)


def _refers_to(ctx: FileContext, expr: cst.BaseExpression | None, sampler: SamplerUse) -> bool:
    if expr is None:
        return False
    for node in ctx.walk(expr):
        if node is sampler.site:
            return True
        if (
            sampler.name is not None
            and isinstance(node, (cst.Name, cst.Attribute))
            and dotted(node) == sampler.name
            and not _rebound_before(ctx, sampler, node)
        ):
            return True
    return False


def _rebound_before(ctx: FileContext, sampler: SamplerUse, use: cst.CSTNode) -> bool:
    """Every binding of the sampler's name reaching `use` is an assignment of something
    else (`sampler = SequentialSampler(eval_set)` after the training sampler): the name
    no longer holds it there."""
    assert sampler.name is not None
    reaching = ctx.resolver.reaching(sampler.name, use)
    return bool(reaching) and all(
        binding.kind == "assign"
        and not any(node is sampler.site for node in ctx.walk(binding.value))
        for binding in reaching
    )


def sampler_calls(ctx: FileContext) -> list[cst.Call]:
    """Calls that build a DistributedSampler: of the class itself, or of a name the file
    binds to it on the distributed path (`sampler_cls = RandomSampler if args.local_rank
    == -1 else DistributedSampler`, then `sampler_cls(train_set)`), in source order."""
    direct = list(ctx.calls_to(*SAMPLER_CLASSES))
    direct.extend(c for c in ctx.calls_to(*_MONAI_SAMPLERS) if _padding_by_keywords(c))
    if not _sampler_aliases(ctx):
        return sorted(direct, key=ctx.model.position)
    found = [call for call in ctx.calls if _alias_call(ctx, call)]
    return sorted([*direct, *found], key=ctx.model.position)


def is_sampler_call(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """`expr` builds a DistributedSampler (see `sampler_calls`)."""
    if type(expr) is not cst.Call:
        return False
    name = ctx.call_name(expr)
    if name in _MONAI_SAMPLERS:
        return _padding_by_keywords(expr)
    return name in SAMPLER_CLASSES or _alias_call(ctx, expr)


# MONAI's subclass of torch's DistributedSampler: `(dataset, even_divisible=True,
# num_replicas=None, rank=None, shuffle=True, **kwargs)`, its keywords torch's.
_MONAI_SAMPLERS = frozenset(
    {"monai.data.DistributedSampler", "monai.data.utils.DistributedSampler"}
)


def _padding_by_keywords(call: cst.Call) -> bool:
    """A MONAI sampler call read as torch's: no positional argument after the dataset
    (its positions differ from torch's), and not `even_divisible=False` (which pads
    nothing: the ranks' shards then differ in length)."""
    if any(arg.keyword is None for arg in call.args[1:]):
        return False
    even = keyword(call, "even_divisible")
    return even is None or is_true(even.value)


def is_alias_call(ctx: FileContext, call: cst.Call) -> bool:
    """`call` builds a DistributedSampler through a name that holds another class on some
    path (`sampler_cls(train_set)`): the loader's sampler may lack `set_epoch` there."""
    return ctx.call_name(call) not in SAMPLER_CLASSES and _alias_call(ctx, call)


def _alias_call(ctx: FileContext, call: cst.Call) -> bool:
    func = call.func
    return (
        type(func) is cst.Name
        and func.value in _sampler_aliases(ctx)
        and any(
            _names_sampler_class(ctx, v.expr) for v in ctx.resolver.values(func, call) if v.leaf
        )
    )


def _sampler_aliases(ctx: FileContext) -> frozenset[str]:
    """Names the file assigns an expression naming the DistributedSampler class without
    calling it (`sampler_cls = DistributedSampler`, or one branch of a conditional)."""
    return ctx.memo(_find_aliases)


def _find_aliases(ctx: FileContext) -> frozenset[str]:
    found: set[str] = set()
    for node in ctx.nodes_of(cst.Assign):
        assert type(node) is cst.Assign
        value = node.value
        branches = [value.body, value.orelse] if type(value) is cst.IfExp else [value]
        if len(node.targets) != 1 or type(node.targets[0].target) is not cst.Name:
            continue
        if any(_names_sampler_class(ctx, branch) for branch in branches):
            found.add(node.targets[0].target.value)
    return frozenset(found)


def _names_sampler_class(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.Name, cst.Attribute)) and ctx.qualname(expr) in SAMPLER_CLASSES


def distributed_samplers(ctx: FileContext) -> tuple[SamplerUse, ...]:
    """Every DistributedSampler of the file with the DataLoaders built on it, found once
    per file."""
    return ctx.memo(_distributed_samplers)


def _distributed_samplers(ctx: FileContext) -> tuple[SamplerUse, ...]:
    samplers: list[SamplerUse] = []
    for call in sampler_calls(ctx):
        factory_uses = _factory_uses(ctx, call)
        if factory_uses:
            samplers.extend(factory_uses)
            continue
        name, value = bound_name(ctx, call)
        samplers.append(SamplerUse(call, name, value if name else None))
    samplers.extend(_project_uses(ctx))
    if not samplers:
        return ()
    # `return dataset, train_sampler` in a data helper, the loader built by its caller
    # (torchvision's `load_data`): the caller's names for the returned sampler.
    returned = {
        id(s): returned_names(ctx, s.name, ctx.scope(s.site)) if s.name is not None else []
        for s in samplers
    }
    # Only a sampler without a name, of the module, returned by a helper or of the loader's
    # own scope can serve a loader: look at those alone (linear in samplers per function).
    anywhere = set()
    by_scope: dict[Scope, list[int]] = {}
    for index, sampler in enumerate(samplers):
        scope = ctx.scope(sampler.site)
        by_scope.setdefault(scope, []).append(index)
        if sampler.name is None or scope is ctx.module or returned[id(sampler)]:
            anywhere.add(index)
    for loader in ctx.calls_to(*LOADER_CLASSES):
        direct = argument(loader, LOADER_SAMPLER, "sampler")
        batch = argument(loader, LOADER_BATCH_SAMPLER, "batch_sampler")
        for index in sorted(anywhere.union(by_scope.get(ctx.scope(loader), ()))):
            sampler = samplers[index]
            via = None
            if sampler.name is None or _same_scope_or_module(ctx, sampler.site, loader):
                if _refers_to(ctx, direct, sampler):
                    via = "sampler"
                elif any(_refers_to(ctx, b, sampler) for b in _with_values(ctx, batch, loader)):
                    via = "batch_sampler"
            else:
                for alias, scope in returned[id(sampler)]:
                    if scope is not ctx.scope(loader):
                        continue
                    if direct is not None and dotted(direct) == alias:
                        via = "returned_sampler"
                    elif any(dotted(b) == alias for b in _with_values(ctx, batch, loader)):
                        via = "batch_sampler"
            if via is not None:
                loader_name, _ = bound_name(ctx, loader)
                sampler.loaders.append(LoaderUse(loader, loader_name, via))
    _link_loader_classes(ctx, samplers)
    return tuple(samplers)


def _link_loader_classes(ctx: FileContext, samplers: list[SamplerUse]) -> None:
    """A DataLoader subclass of the file handing a sampler of its `__init__` to
    `super().__init__(...)`: each construction that builds that sampler is a loader on it."""
    for loader_class in loader_classes(ctx):
        base = loader_class.base_call
        direct = argument(base, LOADER_SAMPLER, "sampler")
        batch = argument(base, LOADER_BATCH_SAMPLER, "batch_sampler")
        for sampler in samplers:
            if ctx.scope(sampler.site) is not loader_class.init:
                continue
            if not _refers_to(ctx, direct, sampler) and not any(
                _refers_to(ctx, b, sampler) for b in _with_values(ctx, batch, base)
            ):
                continue
            for site in constructions(ctx, loader_class, sampler.site):
                loader_name, _ = bound_name(ctx, site)
                sampler.loaders.append(LoaderUse(site, loader_name, "subclass"))


def _with_values(
    ctx: FileContext, expr: cst.BaseExpression | None, at: cst.CSTNode
) -> list[cst.BaseExpression]:
    if expr is None:
        return []
    name = dotted(expr)
    return [expr, *(ctx.values_of(name, at) if name else ())]


def _same_scope_or_module(ctx: FileContext, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    scope_a = ctx.scope(a)
    return scope_a is ctx.scope(b) or scope_a is ctx.module


def returned_positions(
    ctx: FileContext, name: str | None, scope: cst.FunctionDef, value: cst.CSTNode | None = None
) -> set[int | None]:
    """Where `scope` returns the value of `name` (or the expression `value`): None for the
    whole return value, an index for an element of a returned tuple."""

    def returned(expr: cst.BaseExpression) -> bool:
        return expr is value or (name is not None and dotted(expr) == name)

    positions: set[int | None] = set()
    for found in ctx.nodes_within(scope, cst.Return):
        node = cast("cst.Return", found)
        if node.value is not None and ctx.scope(node) is scope:
            if returned(node.value):
                positions.add(None)
            elif type(node.value) is cst.Tuple:
                for index, element in enumerate(node.value.elements):
                    if returned(element.value):
                        positions.add(index)
    return positions


def returned_loaders(ctx: FileContext) -> dict[str, set[int | None]]:
    """Functions of the file returning a DataLoader built on a shuffling training
    DistributedSampler, with where they return it (see `returned_positions`)."""
    return functions_returning(
        ctx,
        (
            (loader.call, loader.name)
            for sampler in distributed_samplers(ctx)
            if shuffle_of(sampler.call) is True and not is_evaluation_sampler(ctx, sampler)
            for loader in sampler.loaders
        ),
    )


# A parameter every training sampler a function returns a loader on is built under (`if
# dist:`, `if world_size > 1:`): its name, its position among a call's arguments, the truth
# value the sampler needs, its default's (None: no default, or one not written as a
# literal), and the comparison the test makes of it ("": its own truth; "> 1": compared
# with that integer).
LoaderSwitch = tuple[str, int, bool, bool | None, str]


def loader_switches(ctx: FileContext) -> dict[str, tuple[LoaderSwitch, ...]]:
    """For the functions of `returned_loaders`, the parameters every such sampler of the
    function is built under (`sampler = DistributedSampler(ds) if dist else None`, `if not
    dist: ... else: sampler = DistributedSampler(ds)`): a caller passing the other value gets
    a loader with no DistributedSampler (`build_dataloader(..., dist=False)`)."""
    by_function: dict[cst.FunctionDef, list[tuple[cst.CSTNode, ...]]] = {}
    for sampler in distributed_samplers(ctx):
        scope = ctx.scope(sampler.call)
        if (
            type(scope) is cst.FunctionDef
            and sampler.loaders
            and shuffle_of(sampler.call) is True
            and not is_evaluation_sampler(ctx, sampler)
        ):
            by_function.setdefault(scope, []).append((sampler.call,))
    return switches_of(ctx, by_function)


def switches_of(
    ctx: FileContext, by_function: dict[cst.FunctionDef, list[tuple[cst.CSTNode, ...]]]
) -> dict[str, tuple[LoaderSwitch, ...]]:
    """For each function, the tests of its parameters that every one of its ways to the
    value runs under (a parameter's truth, or its comparison with an integer: `world_size
    > 1`). A way is the nodes that must all run (a sampler and the loader built on it):
    the tests of any of them."""
    found: dict[str, tuple[LoaderSwitch, ...]] = {}
    for func, ways in by_function.items():
        positions = parameter_positions(func)
        common: set[tuple[str, bool, str]] | None = None
        for nodes in ways:
            tests = {
                (name, value, compare)
                for node in nodes
                for condition in ctx.flow.conditions(node)
                for term, value in condition.terms()
                if (named := _parameter_test(term, positions)) is not None
                for name, compare in (named,)
            }
            common = tests if common is None else common & tests
        if common:
            defaults = {p.name.value: p.default for p in all_params(func.params)}
            found[func.name.value] = tuple(
                sorted(
                    (
                        name,
                        positions[name],
                        value,
                        switch_truth(defaults.get(name), compare),
                        compare,
                    )
                    for name, value, compare in common
                )
            )
    return found


def _parameter_test(term: cst.BaseExpression, positions: dict[str, int]) -> tuple[str, str] | None:
    """(parameter, comparison) of a test term on one parameter: `dist` ("") or
    `world_size > 1` ("> 1")."""
    if type(term) is cst.Name:
        return (term.value, "") if term.value in positions else None
    if type(term) is not cst.Comparison or len(term.comparisons) != 1:
        return None
    target = term.comparisons[0]
    operator = _OPERATORS.get(type(target.operator))
    if (
        operator is None
        or type(term.left) is not cst.Name
        or term.left.value not in positions
        or type(target.comparator) is not cst.Integer
    ):
        return None
    return term.left.value, f"{operator} {int(target.comparator.evaluated_value)}"


_OPERATORS: dict[type[cst.BaseCompOp], str] = {
    cst.Equal: "==",
    cst.NotEqual: "!=",
    cst.LessThan: "<",
    cst.LessThanEqual: "<=",
    cst.GreaterThan: ">",
    cst.GreaterThanEqual: ">=",
}
_COMPARE = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def switched_on(ctx: FileContext, call: cst.Call, switch: LoaderSwitch) -> bool:
    """The call may give the parameter `switch` names the value its sampler needs: passed
    as a literal of that value, or not as a literal at all, or left at a default that is
    not the other literal. A keyword argument decides alone (Python refuses a second value
    from `*args` or `**kwargs`); otherwise `*args` may pass anything, and `**kwargs`
    holding only dict literals whose keys leave the parameter out (`{"num_workers": 0}` or
    `{}`) does not pass it."""
    name, position, needed, default, compare = switch
    given = next(
        (arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == name),
        None,
    )
    for index, arg in enumerate(call.args if given is None else ()):
        if arg.star == "**" and not _may_hold_key(ctx, arg.value, call, name):
            continue
        if arg.star:
            return True  # `*args`, `**kwargs`: what they hold is out of sight
        if arg.keyword is None and index == position:
            given = arg.value
    value = default if given is None else switch_truth(given, compare)
    return value is None or value == needed


def _may_hold_key(ctx: FileContext, mapping: cst.BaseExpression, at: cst.CSTNode, key: str) -> bool:
    """`mapping` may hold `key`: unless every value it may hold is a dict literal of
    string keys (no `**` inside) that leaves `key` out."""
    values = [v.expr for v in ctx.resolver.values(mapping, at) if v.leaf]
    if not values:
        return True
    for value in values:
        if type(value) is not cst.Dict:
            return True
        for element in value.elements:
            if type(element) is not cst.DictElement:
                return True  # `**other`
            if type(element.key) is not cst.SimpleString:
                return True
            if element.key.evaluated_value == key:
                return True
    return False


def switch_truth(expr: cst.BaseExpression | None, compare: str) -> bool | None:
    """The value of a switch's test (`compare`, see `LoaderSwitch`) for a literal
    argument, else None."""
    if not compare:
        return truth(expr)
    if type(expr) is not cst.Integer:
        return None
    symbol, _, bound = compare.partition(" ")
    return bool(_COMPARE[symbol](int(expr.evaluated_value), int(bound)))


def truth(expr: cst.BaseExpression | None) -> bool | None:
    """The truth value of a literal (`True`, `False`, `None`, a number), else None."""
    if type(expr) is cst.Name and expr.value in ("True", "False", "None"):
        return expr.value == "True"
    if type(expr) is cst.Integer:
        return int(expr.evaluated_value) != 0
    return None


def functions_returning(
    ctx: FileContext, values: Iterable[tuple[cst.Call, str | None]]
) -> dict[str, set[int | None]]:
    """The functions of the file that return one of `values` (a call, and the name it is
    bound to where it is), each with where it returns it (see `returned_positions`)."""
    found: dict[str, set[int | None]] = {}
    for call, name in values:
        scope = ctx.scope(call)
        if type(scope) is cst.FunctionDef:
            positions = returned_positions(ctx, name, scope, call)
            if positions:
                found.setdefault(scope.name.value, set()).update(positions)
    return found


def returned_names(
    ctx: FileContext, name: str | None, scope: Scope, value: cst.CSTNode | None = None
) -> list[tuple[str, Scope]]:
    """Names bound by callers of `scope` to the value `name` it returns (by position in
    a returned tuple), or to the expression `value` when it is returned as it stands
    (`return DataLoader(...)`); for a generator, the names a `for` over its call binds to
    what it yields (see `returned_bindings`)."""
    return [(bound, where) for bound, where, _ in returned_bindings(ctx, name, scope, value)]


def returned_bindings(
    ctx: FileContext, name: str | None, scope: Scope, value: cst.CSTNode | None = None
) -> list[tuple[str, Scope, cst.Call]]:
    """`returned_names`, each with the call of `scope` that binds it: `x = helper(...)`,
    `self.loader, _ = self.build_loaders()`, or `for _, _, loader in helper(...):` where
    `scope` yields the value."""
    if type(scope) is not cst.FunctionDef:
        return []
    positions = returned_positions(ctx, name, scope, value)
    yielded = _yielded_positions(ctx, name, scope, value)
    if not positions and not yielded:
        return []
    found: list[tuple[str, Scope, cst.Call]] = []
    for call in ctx.model.calls_by_name.get(scope.name.value, ()):
        if scope not in ctx.resolver.callees(call):  # `helper(...)`, `self.build(...)`
            continue
        where = ctx.scope(call)
        found.extend((bound, where, call) for bound in names_bound_to(ctx, call, positions))
        found.extend((bound, where, call) for bound in _names_iterated(ctx, call, yielded))
    return found


def _yielded_positions(
    ctx: FileContext, name: str | None, scope: cst.FunctionDef, value: cst.CSTNode | None
) -> set[int | None]:
    """Where the generator `scope` yields the value of `name` (or the expression
    `value`): None for the whole yielded value, an index for an element of a tuple."""

    def held(expr: cst.BaseExpression) -> bool:
        return expr is value or (name is not None and dotted(expr) == name)

    positions: set[int | None] = set()
    for found in ctx.nodes_within(scope, cst.Yield):
        node = cast("cst.Yield", found)
        if not isinstance(node.value, cst.BaseExpression) or ctx.scope(node) is not scope:
            continue
        if held(node.value):
            positions.add(None)
        elif type(node.value) is cst.Tuple:
            positions.update(i for i, e in enumerate(node.value.elements) if held(e.value))
    return positions


def _names_iterated(ctx: FileContext, call: cst.Call, positions: set[int | None]) -> list[str]:
    """The names `for target in call(...)` binds to each yielded value (None) or to the
    given elements of a yielded tuple."""
    loop = ctx.parent(call)
    if not positions or type(loop) is not cst.For or loop.iter is not call:
        return []
    found = []
    for position in positions:
        target: cst.BaseExpression | None = loop.target
        if position is not None:
            elements = target.elements if isinstance(target, (cst.Tuple, cst.List)) else ()
            target = elements[position].value if position < len(elements) else None
        bound = dotted(target) if target is not None else None
        if bound is not None:
            found.append(bound)
    return found


def assigned_alone(ctx: FileContext, call: cst.Call) -> bool:
    """`call` is the value of an assignment to one target (`x = call(...)`,
    `a, b = call(...)`): the only calls `names_bound_to` finds names for."""
    parent = ctx.parent(call)
    return type(parent) is cst.Assign and len(parent.targets) == 1


def names_bound_to(ctx: FileContext, call: cst.Call, positions: Iterable[int | None]) -> list[str]:
    """The names `x = call(...)` / `a, b = call(...)` binds to the return value (None) or
    to the given elements of a returned tuple."""
    if not assigned_alone(ctx, call):
        return []
    parent = ctx.parent(call)
    assert type(parent) is cst.Assign
    target = parent.targets[0].target
    found = []
    for position in positions:
        if position is None:
            bound = dotted(target)
        elif isinstance(target, (cst.Tuple, cst.List)) and position < len(target.elements):
            bound = dotted(target.elements[position].value)
        else:
            bound = None
        if bound is not None:
            found.append(bound)
    return found


def reads_evaluation_sampler(ctx: FileContext, loader: cst.Call) -> bool:
    """`loader` draws from a DistributedSampler of the file that serves evaluation
    (`shuffle=False`, or one serving validation or testing: `is_evaluation_sampler`)."""
    return any(
        shuffle_of(sampler.call) is False or is_evaluation_sampler(ctx, sampler)
        for sampler in distributed_samplers(ctx)
        if any(use.call is loader for use in sampler.loaders)
    )


def is_evaluation_sampler(ctx: FileContext, sampler: SamplerUse) -> bool:
    """The sampler serves validation or testing (`Loops.serves_evaluation`, from the
    sampler's, its dataset's and its loaders' names, where it is built and how its loaders
    are read): its shuffling and padding do not change what the model learns."""
    dataset = argument(sampler.call, 0, "dataset")
    names = [sampler.name or "", *(loader.name or "" for loader in sampler.loaders)]
    if dataset is not None:
        names.append(dotted(dataset) or "")
    loaders = [loader.call for loader in sampler.loaders]
    return domain_of(ctx).loops.serves_evaluation(sampler.call, names, dataset, loaders)
