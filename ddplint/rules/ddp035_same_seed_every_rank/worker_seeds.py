"""A sharded loader's `worker_init_fn` that re-seeds the worker's generators from the
worker index alone (`np.random.seed(worker_id)`, `set_seed(info.id + conf.seed)`): worker
k of every rank gets the same seed."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.apis import LOADER_CLASSES, SAMPLER_CLASSES
from ddplint.domain.random_draws import derives_from_base_seed, is_seeding_name
from ddplint.domain.rank_values import differs_by_rank
from ddplint.engine.resolve import argument
from ddplint.names import dotted

# Seeds of a worker's generators: NumPy's, Python's, torch's and imgaug's.
_SEEDS = frozenset(
    {
        "numpy.random.seed",
        "random.seed",
        "torch.manual_seed",
        "torch.random.manual_seed",
        "imgaug.seed",
        "imgaug.random.seed",
    }
)
_WORKER_INFO = "torch.utils.data.get_worker_info"
_GENERATOR = "torch.Generator"
_INITS = frozenset(f"{name}.__init__" for name in LOADER_CLASSES)
_CONVERSIONS = frozenset({"int", "abs"})


@dataclass(frozen=True)
class WorkerSeed:
    """A seeding call of a `worker_init_fn` given to a sharded `loader`."""

    call: cst.Call
    loader: cst.Call
    function: cst.FunctionDef | cst.Lambda
    sampler_known: bool  # torch's DistributedSampler, not a class only named like it


def worker_seeds(ctx: FileContext) -> Iterator[WorkerSeed]:
    """The seeding calls of the file's `worker_init_fn`s, given to a loader on a
    DistributedSampler, whose seed is the worker index plus values the same on every rank
    (literals, settings), never the rank or a per-process seed (`torch.initial_seed()`)."""
    for loader in _loaders(ctx):
        init = argument(loader, None, "worker_init_fn")
        func = _function(ctx, init) if init is not None else None
        sharded = _sharded(ctx, loader) if func is not None else None
        if func is None or sharded is None:
            continue
        for call in ctx.calls_within(func):
            if _seeds(ctx, call) and _by_worker_index(ctx, call, func):
                yield WorkerSeed(call, loader, func, sharded)


def _loaders(ctx: FileContext) -> Iterator[cst.Call]:
    """The file's DataLoader constructions (`DataLoader(...)`, a subclass's
    `super().__init__(...)`)."""
    for call in ctx.calls:
        name = ctx.call_name(call)
        if name in LOADER_CLASSES or name in _INITS:
            yield call


def _function(ctx: FileContext, expr: cst.BaseExpression) -> cst.FunctionDef | cst.Lambda | None:
    """The lambda `expr` is, or the module-level function of this file it names."""
    if type(expr) is cst.Lambda:
        return expr
    if type(expr) is not cst.Name:
        return None
    defs = ctx.functions.get(expr.value, [])
    if len(defs) != 1 or ctx.scope(defs[0]) is not ctx.module:
        return None
    return defs[0]


def _sharded(ctx: FileContext, loader: cst.Call) -> bool | None:
    """True when the loader draws from torch's DistributedSampler (`sampler=`, or
    `batch_sampler=` built on one), False when from a class named like it (a project's
    copy), None otherwise."""
    found = None
    for keyword in ("sampler", "batch_sampler"):
        given = argument(loader, None, keyword)
        if given is None:
            continue
        for value in ctx.resolver.values(given, loader):
            expr = value.expr
            if type(expr) is not cst.Call:
                continue
            inner = argument(expr, 0, "sampler") if keyword == "batch_sampler" else None
            candidates = [expr] if inner is None else [expr, *_calls(ctx, inner, expr)]
            for call in candidates:
                kind = _sampler_kind(ctx, call)
                if kind:
                    return True
                if kind is False:
                    found = False
    return found


def _calls(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> list[cst.Call]:
    return [v.expr for v in ctx.resolver.values(expr, at) if type(v.expr) is cst.Call]


def _sampler_kind(ctx: FileContext, call: cst.Call) -> bool | None:
    """True for torch's DistributedSampler, False for a class named like one, else None."""
    name = ctx.call_name(call)
    if name in SAMPLER_CLASSES:
        return True
    shown = name or (dotted(call.func) or "")
    return False if shown.rpartition(".")[2].endswith("DistributedSampler") else None


def _seeds(ctx: FileContext, call: cst.Call) -> bool:
    """`call` seeds a generator with its first argument: a known seed function, or a
    function named like a seeding helper (`set_seed`)."""
    if not call.args or call.args[0].keyword is not None or call.args[0].star:
        return False
    name = ctx.call_name(call)
    if name in _SEEDS:
        return True
    func = call.func
    last = func.value if type(func) is cst.Name else None
    if type(func) is cst.Attribute and name is not None:
        last = func.attr.value
    return last is not None and is_seeding_name(last)


def _by_worker_index(ctx: FileContext, call: cst.Call, func: cst.FunctionDef | cst.Lambda) -> bool:
    """The seed holds the worker index (`func`'s first parameter, or `.id` of
    `get_worker_info()`) and otherwise only values alike on every rank."""
    params = func.params.params
    index = params[0].name.value if params else None
    seed = call.args[0].value
    if differs_by_rank(domain_of(ctx).ranks, seed, call):
        return False
    return _kind(ctx, seed, call, index, 4) is True


def _kind(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, index: str | None, depth: int
) -> bool | None:
    """True when `expr` holds the worker index (with values alike on every rank), False
    when it holds only values alike on every rank (literals, settings read from an
    object), None for anything else (a call, torch's per-worker seed, an unknown name)."""
    if depth < 0:
        return None
    if type(expr) is cst.Integer:
        return False
    if type(expr) is cst.BinaryOperation:
        left = _kind(ctx, expr.left, at, index, depth - 1)
        right = _kind(ctx, expr.right, at, index, depth - 1)
        return None if left is None or right is None else left or right
    if type(expr) is cst.Call:
        func = expr.func
        if type(func) is cst.Name and func.value in _CONVERSIONS and len(expr.args) == 1:
            return _kind(ctx, expr.args[0].value, at, index, depth - 1)
        return None
    if type(expr) is cst.Name and index is not None and expr.value == index:
        return True
    if (
        type(expr) is cst.Attribute
        and type(expr.value) is cst.Name
        and _is_worker_info(ctx, expr.value, at)
    ):
        return True if expr.attr.value == "id" else None  # `info.seed`: per rank
    if not isinstance(expr, (cst.Name, cst.Attribute)):
        return None
    held = [v for v in ctx.resolver.values(expr, at) if v.leaf]
    if not held:
        return None
    kinds = []
    for value in held:
        if value.expr is expr:
            # not assigned in sight: a setting read from an object is alike on every rank
            kinds.append(False if type(expr) is cst.Attribute else None)
        else:
            kinds.append(_kind(ctx, value.expr, value.at, index, depth - 1))
    if any(kind is None for kind in kinds):
        return None
    return any(kinds)


def _is_worker_info(ctx: FileContext, name: cst.Name, at: cst.CSTNode) -> bool:
    """`name` holds what `torch.utils.data.get_worker_info()` returned."""
    return any(
        type(v.expr) is cst.Call and ctx.call_name(v.expr) == _WORKER_INFO
        for v in ctx.resolver.values(name, at)
    )


@dataclass(frozen=True)
class GeneratorSeed:
    """A sharded `loader` given `generator=` a torch generator that `call` seeds with a
    value alike on every rank (`g.manual_seed(0)`)."""

    call: cst.Call
    loader: cst.Call
    sampler_known: bool  # torch's DistributedSampler, not a class only named like it


def generator_seeds(ctx: FileContext) -> Iterator[GeneratorSeed]:
    """Sharded loaders whose `generator` is seeded alike on every rank. The iterator draws
    its workers' base seed from that generator, so worker k of every rank gets the same
    seed, unless a `worker_init_fn` re-seeds the workers by other means than that base
    seed (those are `worker_seeds`' or left alone)."""
    for loader in _loaders(ctx):
        generator = argument(loader, None, "generator")
        if generator is None:
            continue
        init = argument(loader, None, "worker_init_fn")
        if init is not None and not derives_from_base_seed(ctx, init):
            continue
        sharded = _sharded(ctx, loader)
        if sharded is None:
            continue
        seeds = _generator_seeding(ctx, generator, loader)
        if seeds and all(_kind(ctx, s.args[0].value, s, None, 4) is False for s in seeds):
            yield GeneratorSeed(seeds[0], loader, sharded)


def _generator_seeding(
    ctx: FileContext, generator: cst.BaseExpression, at: cst.CSTNode
) -> list[cst.Call]:
    """The `manual_seed` calls seeding the torch generator `generator` holds: chained on
    its construction (`torch.Generator().manual_seed(0)`), or on the name or attribute
    holding it, anywhere in the file (`self.generator.manual_seed(0)`). Empty when the
    generator is not certainly a fresh `torch.Generator()`, or is seeded with more than
    one plain argument."""
    made = False
    seeds: list[cst.Call] = []
    for value in ctx.resolver.values(generator, at):
        if not value.leaf:
            continue
        expr = value.expr
        if type(expr) is not cst.Call:
            return []
        if ctx.call_name(expr) == _GENERATOR:
            made = True
        elif _seeds_generator(ctx, expr):
            seeds.append(expr)
            made = True
        else:
            return []
    if not made:
        return []
    text = ctx.code(generator)
    for call in ctx.model.calls_by_name.get("manual_seed", ()):
        func = call.func
        if type(func) is cst.Attribute and ctx.code(func.value) == text:
            seeds.append(call)
    if not seeds or any(len(s.args) != 1 or s.args[0].keyword or s.args[0].star for s in seeds):
        return []
    return seeds


def _seeds_generator(ctx: FileContext, call: cst.Call) -> bool:
    """`torch.Generator().manual_seed(v)`: the seeded generator it returns."""
    func = call.func
    return (
        type(func) is cst.Attribute
        and func.attr.value == "manual_seed"
        and type(func.value) is cst.Call
        and ctx.call_name(func.value) == _GENERATOR
    )
