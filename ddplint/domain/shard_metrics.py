"""Values counted over one rank's shard: a loop over a DataLoader built on a
`DistributedSampler` (each rank reads its own 1/N of the dataset) that accumulates
(`correct += ...`, `val_loss += ...`) in a function where nothing combines the ranks'
values (no collective, no helper named for one), and the uses of those values after the
loop, in the function or, where it returns them, in its callers of this file that do not
combine them either."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst

from ddplint.context import Binding, FileContext, Scope
from ddplint.domain import domain_of
from ddplint.domain.apis import VALUELESS_COLLECTIVES
from ddplint.domain.combined_values import bound_names, combined_values
from ddplint.domain.iterable_wrappers import unwrapped
from ddplint.domain.project_view import project_of
from ddplint.domain.runners import handed_on
from ddplint.domain.samplers import (
    LoaderSwitch,
    bound_name,
    distributed_samplers,
    functions_returning,
    names_bound_to,
    returned_bindings,
    switched_on,
    switches_of,
)
from ddplint.domain.value_leaves import deciding_leaves
from ddplint.engine.resolve import Value, argument
from ddplint.names import dotted

# Helpers whose name says they combine the ranks' values (`reduce_tensor`, `all_gather`,
# `accelerator.gather_for_metrics`, `synchronize_between_processes`, `sync_dist`); not
# `torch.cuda.synchronize()`, nor the `ReduceLROnPlateau` scheduler.
_COMBINES = re.compile(
    r"reduce(?!lronplateau)|gather|all_?sum|between_processes|sync_(dist|across|metric|states?)",
    re.IGNORECASE,
)
_REPLICAS = 1  # DistributedSampler(dataset, num_replicas, ...)
# A loader class by its name (`DataLoader`, a project's `DataLoaderX`), not the call of a
# helper that returns one, whose first argument is no dataset.
_LOADER_NAME = re.compile(r"Loader\w*$")
# Attributes of collected results that say how many there are, not what they measure.
_MEASURES = frozenset({"shape", "size", "numel", "__len__", "count", "index", "dtype", "device"})


@dataclass
class ShardLoop:
    """A loop over sharded loaders, its function and the counts it accumulates."""

    loop: cst.For
    frame: Scope
    loaders: list[cst.Call]
    counts: list[cst.AugAssign]
    meters: list[str] = field(default_factory=list)  # `top1.update(...)` of a local meter
    # `preds = []` before the loop, `preds.append(...)` in it: the rank's results collected
    collected: list[cst.Assign] = field(default_factory=list)
    # counts of the loop that sum combined values (`test_loss += loss.item()` after
    # `dist.all_reduce(loss)`): a value computed from one of them is not one shard's
    combined: frozenset[str] = frozenset()
    # the loop iterates this parameter of its function, which every call of the function
    # in other project modules passes a sharded loader (`loaders` is then empty)
    parameter: str | None = None


def sharded_loaders(ctx: FileContext) -> set[cst.Call]:
    """DataLoaders built on a DistributedSampler that splits the data over every rank
    (`num_replicas` left out or the world size)."""
    sharded: set[cst.Call] = set()
    ranks = domain_of(ctx).ranks
    for sampler in distributed_samplers(ctx):
        replicas = argument(sampler.call, _REPLICAS, "num_replicas")
        if not sampler.arguments_known:
            replicas = None  # a project factory's arguments: it splits by default
        if replicas is None or ranks.is_world_size(replicas, sampler.call):
            sharded.update(loader.call for loader in sampler.loaders)
    return sharded


# Names bound to what a function of this file returns (`_returned_sharded`), by (name,
# id of the binding call): the sharded loader, or None where the call turns it off.
Returned = dict[tuple[str, int], cst.Call | None]


def returned_sharded_loaders(ctx: FileContext) -> dict[str, set[int | None]]:
    """Functions of the file returning a DataLoader on a DistributedSampler that splits
    the data over every rank (`sharded_loaders`), with where they return it (None: the
    whole return value; an index: an element of a returned tuple)."""
    return functions_returning(
        ctx, ((loader, bound_name(ctx, loader)[0]) for loader in sharded_loaders(ctx))
    )


def shard_switches(ctx: FileContext) -> dict[str, tuple[LoaderSwitch, ...]]:
    """For the functions of `returned_sharded_loaders`, the parameters every sharded
    loader of the function, or its sampler, is built under (`if world_size > 1:`, `if
    training:`): a caller passing the other value (`load_dataset(..., 1, None)`) gets a
    loader over the whole dataset."""
    sharded = sharded_loaders(ctx)
    by_function: dict[cst.FunctionDef, list[tuple[cst.CSTNode, ...]]] = {}
    for sampler in distributed_samplers(ctx):
        for loader in sampler.loaders:
            scope = ctx.scope(loader.call)
            if loader.call in sharded and type(scope) is cst.FunctionDef:
                by_function.setdefault(scope, []).append((sampler.call, loader.call))
    return switches_of(ctx, by_function)


def _helpers_sharded(ctx: FileContext) -> dict[tuple[str, int], cst.Call]:
    """The names bound to a sharded loader a project helper of another module returns
    (`train_loader, val_loader = prepare_dataloader(args, rank=rank, ...)`), keyed like
    `_returned_sharded`, each to the helper's call (the loader as this file sees it)."""
    project = project_of(ctx)
    if project is None:
        return {}
    found: dict[tuple[str, int], cst.Call] = {}
    for call in ctx.calls:
        positions = project.helper_returned_shard(ctx, call)
        for name in names_bound_to(ctx, call, positions) if positions else ():
            found[(name, id(call))] = call
    return found


def shard_loops(ctx: FileContext) -> tuple[ShardLoop, ...]:
    """Loops over sharded loaders (built in sight, returned by a function of this file or
    a project helper of another module, or a parameter every caller in another module
    passes one) that accumulate counts, in a function where nothing combines the ranks'
    values; found once per file (three rules ask)."""
    return ctx.memo(_shard_loops)


def _shard_loops(ctx: FileContext) -> tuple[ShardLoop, ...]:
    sharded, returned = _sharded_in(ctx)
    project = project_of(ctx)
    if not sharded and project is None:
        return ()
    found: list[ShardLoop] = []
    for node in ctx.nodes_of(cst.For):
        assert type(node) is cst.For
        loaders = iterated_loaders(ctx, node, sharded, returned) if sharded else []
        parameter = None if loaders else _loader_parameter(ctx, node)
        if not loaders and parameter is None:
            continue
        frame = ctx.scope(node)
        counts = [
            statement
            for statement in ctx.nodes_within(node.body, cst.AugAssign)
            if type(statement) is cst.AugAssign
            and type(statement.operator) is cst.AddAssign
            and type(statement.target) is cst.Name
            and ctx.scope(statement) is frame
            and not _clock_reading(ctx, statement.value, statement)
        ]
        meters = _meters(ctx, node, frame)
        collected = _collected(ctx, node, frame)
        if not (counts or meters or collected):
            continue
        if parameter is not None and not _sharded_elsewhere(ctx, node, parameter):
            continue
        combined = combined_values(ctx, frame, combines_call)
        if combined is None:
            continue  # something combines what this code cannot name
        summed = frozenset(dotted(c.target) or "" for c in counts if combined.counts(c))
        counts = [c for c in counts if not combined.counts(c)]
        metered = combined.fed_by(node, ("update",))
        meters = [m for m in meters if m not in metered]
        # containers filled with combined values, or holding meters fed with them
        # (`trackers[key].update(value)` after `losses = reduce_loss(losses)`)
        filled = combined.fed_by(node) | metered
        collected = [a for a in collected if not _targets(a) & filled]
        if counts or meters or collected:
            found.append(
                ShardLoop(node, frame, loaders, counts, meters, collected, summed, parameter)
            )
    return tuple(found)


def _sharded_in(ctx: FileContext) -> tuple[set[cst.Call], Returned]:
    """The sharded loaders of this file (built in sight, or returned by a project helper
    of another module), and the names bound to one a function returns; computed once."""

    def compute(ctx: FileContext) -> tuple[set[cst.Call], Returned]:
        sharded = sharded_loaders(ctx)
        returned = _returned_sharded(ctx, sharded) if sharded else {}
        from_helpers = _helpers_sharded(ctx)
        returned.update(from_helpers)
        return sharded | set(from_helpers.values()), returned

    return ctx.memo(compute)


def _loader_parameter(ctx: FileContext, loop: cst.For) -> str | None:
    """The parameter the loop iterates (`for x, y in loader:`, through a progress
    wrapper), of a module-level function or method that no code of this file calls: what
    it iterates is decided by the callers in other modules."""
    iterable = unwrapped(ctx, loop.iter)
    func = ctx.enclosing_function(loop)
    if type(iterable) is not cst.Name or func is None:
        return None
    name = iterable.value
    bindings = ctx.resolver.reaching(name, loop)
    if not any(b.kind == "param" for b in bindings) or not all(
        b.owner is func and (b.kind == "param" or _rewraps(ctx, b, name)) for b in bindings
    ):
        return None
    if ctx.resolver.calls_of(func) or handed_on(ctx, func.name.value):
        return None
    return name


def _rewraps(ctx: FileContext, binding: Binding, name: str) -> bool:
    """`binding` wraps the value of `name` itself in a progress bar (`loader =
    tqdm(loader)`): the same loader."""
    value = binding.value
    if binding.kind != "assign" or value is None:
        return False
    inner = unwrapped(ctx, value)
    return inner is not value and type(inner) is cst.Name and inner.value == name


def _sharded_elsewhere(ctx: FileContext, loop: cst.For, parameter: str) -> bool:
    """Every call of the loop's function in other project modules passes, for
    `parameter`, a sharded loader of that module (or, on some paths, a value bound
    only where the job runs in one process)."""
    project = project_of(ctx)
    func = ctx.enclosing_function(loop)
    if project is None or func is None:
        return False

    def holds(other: FileContext, call: cst.Call) -> bool:
        value = ctx.resolver.passed(call, func, parameter)
        sharded, returned = _sharded_in(other)
        return (
            value is not None
            and bool(sharded)
            and bool(held_loaders(other, value, call, sharded, returned))
        )

    return project.every_call_elsewhere(ctx, func, holds)


def _targets(statement: cst.Assign) -> set[str]:
    """The names an assignment binds (`preds, labels = [], []`: both)."""
    return {name for target in statement.targets for name in bound_names(target.target)}


def _collected(ctx: FileContext, loop: cst.For, frame: Scope) -> list[cst.Assign]:
    """The empty containers made before `loop` in its function (`preds = []`, `outputs =
    defaultdict(list)`) that it fills (`preds.append(out)`, `preds.extend(...)`,
    `outputs["pred"].append(out)`, `outputs["pred"] = torch.cat(...)`): the results of
    this rank's shard; not a container of clock readings only (`times.append(time.time()
    - tic)`), which times this process's own work."""
    found: list[cst.Assign] = []
    fills: dict[str, list[tuple[cst.BaseExpression | None, cst.CSTNode]]] = {}
    for held, value, at in _filled(ctx, loop, frame):
        fills.setdefault(held.value, []).append((value, at))
    for name, values in fills.items():
        if all(v is not None and _clock_reading(ctx, v, at) for v, at in values):
            continue  # `times.append(time.time() - tic)`: this process's own timing
        bindings = ctx.resolver.reaching(name, loop)
        if bindings and all(_empty_container_before(ctx, b, loop) for b in bindings):
            found.extend(
                b.statement
                for b in bindings
                if type(b.statement) is cst.Assign and b.statement not in found
            )
    return found


def _filled(
    ctx: FileContext, loop: cst.For, frame: Scope
) -> Iterator[tuple[cst.Name, cst.BaseExpression | None, cst.CSTNode]]:
    """The names of `frame` whose container `loop`'s body fills: appended or extended
    (itself or an item of it), or given an item; each with the value put in (None where
    none is given) and where."""
    for call in ctx.calls_within(loop.body):
        func = call.func
        if type(func) is cst.Attribute and func.attr.value in ("append", "extend"):
            held = func.value.value if type(func.value) is cst.Subscript else func.value
            if type(held) is cst.Name and ctx.scope(call) is frame:
                yield held, call.args[0].value if call.args else None, call
    for statement in ctx.nodes_within(loop.body, cst.Assign):
        assert type(statement) is cst.Assign
        for target in statement.targets:
            item = target.target
            if (
                type(item) is cst.Subscript
                and type(item.value) is cst.Name
                and ctx.scope(statement) is frame
            ):
                yield item.value, statement.value, statement


def _empty_container_before(ctx: FileContext, binding: Binding, loop: cst.For) -> bool:
    """`binding` assigns an empty list or dict before `loop` (`preds = []`, `preds, trues =
    [], []`, `outputs = defaultdict(list)`)."""
    value: cst.BaseExpression | None = binding.value
    if binding.index is not None:
        elements = value.elements if type(value) is cst.Tuple else ()
        value = elements[binding.index].value if binding.index < len(elements) else None
    return (
        binding.kind == "assign"
        and type(binding.statement) is cst.Assign
        and value is not None
        and _empty_container(ctx, value)
        and ctx.before(binding.statement, loop)
    )


def _empty_container(ctx: FileContext, value: cst.BaseExpression) -> bool:
    """`[]`, `{}`, `dict()`, `defaultdict(list)`, or a dict of empty containers (`{"loss":
    [], "acc": []}`, `{k: [] for k in keys}`)."""
    if type(value) is cst.Dict:
        return all(
            type(e) is cst.DictElement and _empty_container(ctx, e.value) for e in value.elements
        )
    if type(value) is cst.DictComp:
        return _empty_container(ctx, value.value)
    if type(value) is cst.List:
        return not value.elements
    if type(value) is not cst.Call:
        return False
    name = ctx.call_name(value) or dotted(value.func) or ""
    if name in ("list", "dict", "collections.OrderedDict"):
        return not value.args
    return name == "collections.defaultdict" and len(value.args) <= 1


def collected_from(
    ctx: FileContext,
    expr: cst.BaseExpression,
    at: cst.CSTNode,
    collected: list[cst.Assign],
    depth: int = 2,
) -> str | None:
    """The list of the loop's results (see `ShardLoop.collected`) that `expr` is computed
    from, if any (`mae, mse = metric(np.concatenate(preds), trues)`: `preds`; a value
    unpacked from a call is computed from the call's arguments)."""
    if not collected:
        return None
    for value in ctx.resolver.sources(expr, at, depth=4):
        if type(value.expr) is cst.Attribute:  # `preds.numpy()`: the results `preds` holds
            root = _results_root(value.expr)
            found = None if root is None else collected_from(ctx, root, value.at, collected, depth)
            if found is not None:
                return found
            continue
        if type(value.expr) is not cst.Name or _measured(ctx, value.expr):
            continue
        for binding in ctx.resolver.reaching(value.expr.value, value.at):
            if binding.statement in collected:
                return value.expr.value
            call = binding.value
            if depth > 0 and binding.index is not None and type(call) is cst.Call:
                for arg in call.args:
                    found = collected_from(ctx, arg.value, binding.statement, collected, depth - 1)
                    if found is not None:
                        return found
    return None


def _results_root(expr: cst.Attribute) -> cst.Name | None:
    """The name an attribute chain reads results from (`preds` of `preds.numpy`), unless
    the chain measures how many results there are (`preds.shape`, `preds.size`)."""
    node: cst.BaseExpression = expr
    while type(node) is cst.Attribute:
        if node.attr.value in _MEASURES:
            return None
        node = node.value
    return node if type(node) is cst.Name else None


def _clock_reading(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`expr` is computed from a reading of the clock (`time.time() - tic`, a name bound to
    `time.perf_counter() - start`): a timing of this process's own work, which is right
    per rank, not a count of the evaluation set."""
    for value in ctx.resolver.sources(expr, at, depth=3):
        for node in ctx.walk(value.expr):
            if type(node) is cst.Call and ctx.call_name(node) in _CLOCKS:
                return True
    return False


_CLOCKS = frozenset(
    f"time.{name}{suffix}"
    for name in ("time", "perf_counter", "monotonic", "process_time")
    for suffix in ("", "_ns")
)


def _measured(ctx: FileContext, name: cst.Name) -> bool:
    """`len(preds)`: how many results this rank holds, not a metric of them."""
    arg = ctx.parent(name)
    call = ctx.parent(arg) if type(arg) is cst.Arg else None
    return type(call) is cst.Call and type(call.func) is cst.Name and call.func.value == "len"


def _meters(ctx: FileContext, loop: cst.For, frame: Scope) -> list[str]:
    """Local names updated in `loop` (`top1.update(acc, n)`) that hold an instance of a
    class of this file built before the loop, none of whose methods combines ranks (a
    hand-written `AverageMeter`; not a torchmetrics metric, which syncs itself)."""
    found = []
    for call in ctx.calls_within(loop.body):
        func = call.func
        if not (
            type(func) is cst.Attribute
            and func.attr.value == "update"
            and type(func.value) is cst.Name
            and ctx.scope(call) is frame
        ):
            continue
        name = func.value.value
        if call.args and _clock_reading(ctx, call.args[0].value, call):
            continue  # `batch_time.update(time.time() - end)`: this process's own timing
        bindings = ctx.resolver.reaching(name, loop)
        if bindings and all(_local_meter(ctx, b.statement, loop) for b in bindings):
            found.append(name)
    return found


def _local_meter(ctx: FileContext, statement: cst.CSTNode, loop: cst.For) -> bool:
    if type(statement) is not cst.Assign or not ctx.before(statement, loop):
        return False
    made = statement.value
    if type(made) is not cst.Call or type(made.func) is not cst.Name:
        return False
    classes = ctx.model.classes.get(made.func.value, [])
    if len(classes) != 1 or made.func.value in ctx.functions:
        return False
    methods = [m for m in ctx.nodes_within(classes[0], cst.FunctionDef)]
    return not any(type(m) is cst.FunctionDef and combines(ctx, m) for m in methods)


def metered(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, meters: list[str]
) -> str | None:
    """The meter (`top1`) whose reading (`top1.avg`, `top1.get()`) `expr` is computed
    from, if any."""
    if not meters:
        return None
    for value in ctx.resolver.sources(expr, at, depth=3):
        node = value.expr
        if type(node) is cst.Call:
            node = node.func
        if (
            type(node) is cst.Attribute
            and type(node.value) is cst.Name
            and node.value.value in meters
            and node.attr.value != "update"
        ):
            return node.value.value
    return None


def evaluation_shard_loops(ctx: FileContext) -> Iterator[ShardLoop]:
    """`shard_loops` that evaluate (under `no_grad`, with a `no_grad` block of their own
    in the body, or after `model.eval()`, also in a function that trains elsewhere) and
    do not train."""
    loops = domain_of(ctx).loops
    for shard in shard_loops(ctx):
        if loops.is_training_loop(shard.loop) or _steps_optimizer(ctx, shard.loop):
            continue
        if (
            loops.is_evaluation(shard.loop)
            or loops.after_eval_switch(shard.loop)
            or loops.turns_gradients_off_inside(shard.loop)
        ):
            yield shard


def _steps_optimizer(ctx: FileContext, loop: cst.For) -> bool:
    """The loop's body zeroes gradients (`optimizer.zero_grad()`) or hands an optimizer to
    a call (`loss_scaler(loss, optimizer, ...)`, which steps it out of sight): it trains,
    whatever `no_grad` block it also holds."""
    for call in ctx.calls_within(loop.body):
        func = call.func
        if type(func) is cst.Attribute and func.attr.value == "zero_grad":
            return True
        if any("optim" in (dotted(arg.value) or "").lower() for arg in call.args):
            return True
    return False


def returned_counts(ctx: FileContext, shard: ShardLoop, counts: list[cst.AugAssign]) -> list[str]:
    """The counts the function of `shard` returns, whole or as elements of a returned
    tuple (`return test_loss, correct`), or the lists of results it returns a value
    computed from (`return sum(losses) / len(losses)`): names, in order of its returns."""
    func = shard.frame
    if type(func) is not cst.FunctionDef:
        return []
    found: list[str] = []
    for node in ctx.nodes_within(func, cst.Return):
        if type(node) is not cst.Return or node.value is None or ctx.scope(node) is not func:
            continue
        value = node.value
        parts = [e.value for e in value.elements] if type(value) is cst.Tuple else [value]
        for part in parts:
            count = (
                counted(ctx, part, node, counts)
                or metered(ctx, part, node, shard.meters)
                or collected_from(ctx, part, node, shard.collected)
            )
            if count is not None and count not in found:
                found.append(count)
    return found


def _returned_sharded(ctx: FileContext, sharded: set[cst.Call]) -> Returned:
    """The sharded loaders a function of this file returns, by the name its callers bind
    each to and the call that binds it (`train_loader, test_loader = make_loaders()`);
    None for a call that turns off the parameter its sampler is built under
    (`make_loader(..., distributed=False)`, or leaving that default): its loader reads the
    whole dataset."""
    found: Returned = {}
    switches = shard_switches(ctx)
    for loader in sharded:
        name, _ = bound_name(ctx, loader)
        scope = ctx.scope(loader)
        own = switches.get(scope.name.value, ()) if type(scope) is cst.FunctionDef else ()
        for bound, _where, call in returned_bindings(ctx, name, scope, loader):
            on = all(switched_on(ctx, call, switch) for switch in own)
            found[(bound, id(call))] = loader if on else None
    return found


def _held_loader(
    ctx: FileContext,
    leaf: cst.BaseExpression,
    at: cst.CSTNode,
    returned: Returned,
) -> cst.Call | None:
    """The sharded loader a name holds where every binding reaching it takes it from a
    function of this file that returns one (see `_returned_sharded`)."""
    if type(leaf) is not cst.Name or not returned:
        return None
    if type(at) is cst.Assign:
        # the resolver stops at `a, b = f()`, which binds the name: the call it unpacks
        return returned.get((leaf.value, id(at.value)))
    bindings = ctx.resolver.reaching(leaf.value, at)
    loaders = [returned.get((b.target, id(b.value))) for b in bindings]
    if not loaders or None in loaders or len(set(map(id, loaders))) != 1:
        return None
    return loaders[0]


def iterated_loaders(
    ctx: FileContext,
    loop: cst.For,
    sharded: set[cst.Call],
    returned: Returned | None = None,
) -> list[cst.Call]:
    """The sharded loaders `loop` iterates, when every value its iterable may hold is
    one (built in sight, or returned by a function of this file), or a loader built where
    the job runs in one process; else []."""
    return held_loaders(ctx, unwrapped(ctx, loop.iter), loop, sharded, returned)


def held_loaders(
    ctx: FileContext,
    expr: cst.BaseExpression,
    at: cst.CSTNode,
    sharded: set[cst.Call],
    returned: Returned | None = None,
) -> list[cst.Call]:
    """The sharded loaders `expr` holds at `at`, when every value it may hold is one, or
    a value bound where the job runs in one process; else []."""
    if _switched_off(ctx, expr, at, returned or {}):
        return []  # every binding takes the loader a call built without its sampler
    held = _held_loader(ctx, expr, at, returned or {})
    if held is not None:  # `a, b = make_loaders()`: the call that unpacks it ends the values
        return [held]
    values = _unwrapped_leaves(ctx, expr, at)
    leaves = [
        held if (held := _held_loader(ctx, v.expr, v.at, returned or {})) is not None else v.expr
        for v in values
    ]
    found = [v for v in leaves if type(v) is cst.Call and v in sharded]
    if not found or not all(v in found or _one_process_loader(ctx, v) for v in leaves):
        return []
    return found


def _switched_off(
    ctx: FileContext,
    expr: cst.BaseExpression,
    at: cst.CSTNode,
    returned: Returned,
    through_calls: bool = True,
) -> bool:
    """`expr` is a name every binding of which takes a loader from a call of this file that
    turns its sampler off (`test_loader = make_loader(..., train=False)`), or a parameter
    every call of its function (`through_calls`, one level) passes such a name for."""
    if type(expr) is not cst.Name:
        return False
    bindings = ctx.resolver.reaching(expr.value, at)
    if not bindings:
        return False
    func = ctx.enclosing_function(at)
    if through_calls and func is not None and all(b.kind == "param" for b in bindings):
        calls = ctx.resolver.calls_of(func)
        if not calls or handed_on(ctx, func.name.value):
            return False
        passed = [(ctx.resolver.passed(call, func, expr.value), call) for call in calls]
        return all(
            value is not None and _switched_off(ctx, value, call, returned, False)
            for value, call in passed
        )
    keys = [(b.target, id(b.value)) for b in bindings]
    return all(key in returned and returned[key] is None for key in keys)


def _unwrapped_leaves(
    ctx: FileContext, iterable: cst.BaseExpression, at: cst.CSTNode
) -> list[Value]:
    """`deciding_leaves` of the iterable, through a name bound to a progress or counting
    wrapper of a loader (`bar = tqdm(loader)`, then `for batch in bar:`)."""
    found: list[Value] = []
    for value in deciding_leaves(ctx.resolver, iterable, at) or _passed_in(ctx, iterable, at):
        inner = unwrapped(ctx, value.expr)
        if inner is value.expr:
            found.append(value)
        else:
            found.extend(deciding_leaves(ctx.resolver, inner, value.at))
    return found


def _passed_in(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> list[Value]:
    """For a parameter of the function around `at` (`def evaluate(model, loader):`),
    what every call of the function in this file passes for it (`evaluate(model,
    val_loader)`), followed to its values; [] when the function is handed on or a call
    passes nothing for it (its default, `*args`): callers out of sight may pass anything."""
    func = ctx.enclosing_function(at)
    if type(expr) is not cst.Name or func is None:
        return []
    bindings = ctx.resolver.reaching(expr.value, at)
    if not bindings or any(b.kind != "param" or b.owner is not func for b in bindings):
        return []
    calls = ctx.resolver.calls_of(func)
    if not calls or handed_on(ctx, func.name.value):
        return []
    found: list[Value] = []
    for call in calls:
        if any(arg.star for arg in call.args):
            return []
        passed = ctx.resolver.passed(call, func, expr.value)
        if passed is None:
            return []
        leaves = deciding_leaves(ctx.resolver, passed, call)
        # a name unpacked from a helper's result (`_held_loader` decides what it holds)
        found.extend(leaves or [v for v in ctx.resolver.values(passed, call) if v.leaf])
    return found


def _one_process_loader(ctx: FileContext, expr: cst.BaseExpression) -> bool:
    """`expr` is a loader taken where the job is not distributed (the `else` of `if
    args.distributed:` builds a DataLoader, or picks `loaders["train"]`): with one process
    there is no shard to miss."""
    return domain_of(ctx).gates.single_process(expr)


def counted(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, counts: list[cst.AugAssign]
) -> str | None:
    """The name of the loop's count that `expr` is computed from, if any (also through a
    conversion of it: `correct.float()`, `total_loss.item()`)."""
    for value in ctx.resolver.sources(expr, at, depth=3):
        found = value.expr
        while (
            type(found) is cst.Call
            and type(found.func) is cst.Attribute
            and found.func.attr.value in _CONVERSIONS
            and not found.args
        ):
            found = found.func.value
        if type(found) is not cst.Name:
            continue
        for binding in ctx.resolver.reaching(found.value, value.at):
            if binding.kind == "augassign" and binding.statement in counts:
                return found.value
    return None


# Methods that convert a count without changing its value.
_CONVERSIONS = frozenset({"float", "double", "item", "cpu", "detach", "clone", "long", "int"})


def returned_by(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> set[str]:
    """Names of this file's functions whose call `expr` is computed from."""
    found: set[str] = set()
    for value in ctx.resolver.sources(expr, at, depth=3):
        if type(value.expr) is cst.Call:
            found.update(f.name.value for f in ctx.resolver.callees(value.expr))
    return found


def combines(ctx: FileContext, frame: Scope) -> bool:
    """Code of `frame` issues a collective or calls a helper named for combining ranks."""
    return any(combines_call(ctx, call) for call in ctx.model.calls_by_frame(frame))


def combines_call(ctx: FileContext, call: cst.Call) -> bool:
    """`call` issues a collective that carries values from rank to rank, directly or
    through a function of this file or a project helper, or calls a helper named for
    combining ranks; not a barrier, nor a helper whose only collectives are barriers
    (`synchronize()`), nor a helper of another module that starts the process group
    (`init_distributed_mode(args)`, whose barrier combines nothing)."""
    name = (dotted(call.func) or "").rpartition(".")[2]
    if _COMBINES.search(name):
        return True
    collectives = domain_of(ctx).collectives
    if collectives.is_collective(call):
        return collectives.qualname(call) not in VALUELESS_COLLECTIVES
    if not collectives.issues(call):
        return False
    local = [f for f in ctx.resolver.callees(call) if type(f) is cst.FunctionDef]
    if local:
        return any(_combines_within(ctx, f, set()) for f in local)
    project = project_of(ctx)
    return project is None or (
        not project.helper_starts_processes(ctx, call) and project.helper_combines(ctx, call)
    )


def _combines_within(ctx: FileContext, func: cst.FunctionDef, seen: set[int]) -> bool:
    """A call in `func` combines values (`combines_call`), through the functions of this
    file it calls too (each asked once)."""
    if id(func) in seen:
        return False
    seen.add(id(func))
    for call in ctx.calls_within(func):
        local = [f for f in ctx.resolver.callees(call) if type(f) is cst.FunctionDef]
        if local:
            if any(_combines_within(ctx, f, seen) for f in local):
                return True
        elif combines_call(ctx, call):
            return True
    return False


def escapes(ctx: FileContext, node: cst.CSTNode, frame: Scope) -> bool:
    """The value of `node` leaves the function: it, or the name its statement assigns,
    is part of a returned value."""
    if type(frame) is not cst.FunctionDef:
        return False
    statement = ctx.statement(node)
    names: set[str] = set()
    if type(statement) is cst.Assign:
        names = {n for t in statement.targets if (n := dotted(t.target)) is not None}
    elif type(statement) is cst.AugAssign:
        names = {n for n in [dotted(statement.target)] if n is not None}
    for found in ctx.nodes_within(frame, cst.Return):
        returned = found.value if type(found) is cst.Return else None
        if returned is None or ctx.scope(found) is not frame:
            continue
        if ctx.is_inside(node, returned) or names & set(ctx.names_in(returned)):
            return True
    return False


def callers_keep_it(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """`func` is called in this file, and none of the functions calling it combines the
    ranks' values (which could sum the returned fractions into the right one); or, called
    nowhere in this file, it is called in other project modules and none of their
    functions calling it combines them."""
    found = ctx.resolver.calls_of(func)
    if found:
        return not any(combines(ctx, ctx.scope(call)) for call in found)
    project = project_of(ctx)
    return project is not None and project.every_call_elsewhere(
        ctx, func, lambda other, call: not combines(other, other.scope(call))
    )


def division(node: cst.CSTNode) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(numerator, denominator) of `a / b` or `a /= b`."""
    if type(node) is cst.BinaryOperation and type(node.operator) is cst.Divide:
        return node.left, node.right
    if type(node) is cst.AugAssign and type(node.operator) is cst.DivideAssign:
        return node.target, node.value
    return None


def whole_dataset(
    ctx: FileContext,
    denominator: cst.BaseExpression,
    at: cst.CSTNode,
    loaders: list[cst.Call],
    parameter: str | None = None,
) -> bool:
    """`denominator` is `len(...)` of the dataset of one of `loaders`: `len(loader.dataset)`,
    or `len(x)` where `x` holds the dataset the loader was built on; or, for a loop over
    the loader `parameter` of its function, `len(parameter.dataset)`."""
    datasets = {
        _identity(ctx, v.expr, v.at)
        for loader in loaders
        if _LOADER_NAME.search(ctx.call_name(loader) or dotted(loader.func) or "")
        and (dataset := argument(loader, 0, "dataset")) is not None
        for v in deciding_leaves(ctx.resolver, dataset, loader)
    }
    for value in ctx.resolver.values(denominator, at):
        sized = value.expr
        if not (
            type(sized) is cst.Call
            and type(sized.func) is cst.Name
            and sized.func.value == "len"
            and len(sized.args) == 1
        ):
            continue
        measured = sized.args[0].value
        if (
            parameter is not None
            and type(measured) is cst.Attribute
            and measured.attr.value == "dataset"
            and type(measured.value) is cst.Name
            and measured.value.value == parameter
        ):
            return True
        if type(measured) is cst.Attribute and measured.attr.value == "dataset":
            held = [v.expr for v in deciding_leaves(ctx.resolver, measured.value, value.at)]
            if held and all(h in loaders for h in held):
                return True
        held_ids = [
            _identity(ctx, v.expr, v.at) for v in deciding_leaves(ctx.resolver, measured, value.at)
        ]
        if held_ids and all(h in datasets for h in held_ids):
            return True
    return False


def _identity(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> object:
    """What a value the resolver could not follow further is: the expression itself, or
    for a name, the bindings it reads (a parameter no caller passes is the same dataset
    wherever the function reads it)."""
    if isinstance(expr, (cst.Name, cst.Attribute)):
        key = dotted(expr)
        bindings = ctx.resolver.reaching(key, at) if key is not None else []
        if bindings:
            return tuple(sorted(id(b) for b in bindings))
    return id(expr)
