"""Where code seeds torch's generator, and where a data pipeline draws at random: the
facts that decide whether the ranks of a job repeat each other's random draws."""

from __future__ import annotations

import re

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.apis import LOADER_CLASSES
from ddplint.domain.rank_values import differs_by_rank
from ddplint.engine.flow import fixed_terms
from ddplint.engine.resolve import Value, argument
from ddplint.names import dotted

TORCH_SEEDS = frozenset({"torch.manual_seed", "torch.random.manual_seed"})
_CUDA_TESTS = frozenset({"torch.cuda.is_available", "torch.cuda.device_count"})
# Library helpers that seed torch with the value given, the same on every process.
LIBRARY_SEEDS = frozenset(
    {
        "transformers.set_seed",
        "transformers.trainer_utils.set_seed",
        "accelerate.utils.set_seed",
        "lightning.seed_everything",
        "lightning.fabric.seed_everything",
        "lightning.pytorch.seed_everything",
        "pytorch_lightning.seed_everything",
    }
)
_HELPER_NAME = re.compile(
    r"(set|fix|init|setup)_?(random_|global_|all_)?seeds?|seed_?everything|seed_all|"
    r"set_random_seed|random_seed"
)
_TRANSFORM_MODULES = ("torchvision.transforms.", "albumentations.")
_RANDOM_TRANSFORM = re.compile(
    r"Random\w*|RandAugment|AutoAugment|TrivialAugmentWide|AugMix|ColorJitter|"
    r"HorizontalFlip|VerticalFlip|ShiftScaleRotate|ElasticTransform|GaussNoise"
)
_RANDOM_CALLS = ("random.", "numpy.random.", "torch.rand", "torch.randint", "torch.randn")
_OTHER_GENERATORS = ("random.", "numpy.random.")
# Transform libraries that never draw from torch's generator: albumentations draws from
# `random` and NumPy (before 1.4.21) or from its own state (`Compose(seed=...)`, since).
_OUTSIDE_TORCH_TRANSFORMS = ("albumentations.",)
_SAMPLE_METHOD = "__getitem__"
_TRANSFORM_METHOD = "__call__"
# Seeds and generators of their own: no draw from the process's generators.
_NOT_DRAWS = frozenset(
    {
        "random.seed",
        "random.Random",
        "random.SystemRandom",
        "numpy.random.seed",
        "numpy.random.default_rng",
        "numpy.random.RandomState",
        "numpy.random.Generator",
        "numpy.random.SeedSequence",
    }
)


def is_seeding_name(name: str) -> bool:
    """`name` reads as a seeding helper's (`set_seed`, `fix_random_seeds`,
    `seed_everything`)."""
    return _HELPER_NAME.fullmatch(name.lstrip("_")) is not None


def seeds_torch(ctx: FileContext, call: cst.Call) -> bool:
    """`call` seeds torch's global generator with its argument (`torch.manual_seed`, a
    library helper such as `transformers.set_seed` not asked for a per-device seed)."""
    name = ctx.call_name(call)
    if name in TORCH_SEEDS:
        return True
    if name not in LIBRARY_SEEDS:
        return False
    specific = argument(call, 1, "device_specific")
    return specific is None or (type(specific) is cst.Name and specific.value == "False")


def runs_only_without_cuda(ctx: FileContext, call: cst.Call) -> bool:
    """`call` runs only where CUDA is absent: in the `else` of a test that needs CUDA
    (`if torch.cuda.is_available(): torch.cuda.manual_seed_all(s) else:
    torch.manual_seed(s)`), or under `if not torch.cuda.is_available():`. A GPU job never
    runs it."""
    for condition in ctx.flow.conditions(call):
        if not condition.holds and all(
            _tests_cuda(ctx, term) for term, _ in fixed_terms(condition.test, True)
        ):
            return True
        if any(not holds and _tests_cuda(ctx, term) for term, holds in condition.terms()):
            return True
    return False


def _tests_cuda(ctx: FileContext, term: cst.BaseExpression) -> bool:
    """`torch.cuda.is_available()`, or `torch.cuda.device_count()` compared above 0 or
    taken as a truth value."""
    if type(term) is cst.Comparison and len(term.comparisons) == 1:
        target = term.comparisons[0]
        if not (
            isinstance(target.operator, (cst.GreaterThan, cst.NotEqual))
            and type(target.comparator) is cst.Integer
            and target.comparator.value == "0"
        ):
            return False
        term = term.left
    return type(term) is cst.Call and ctx.call_name(term) in _CUDA_TESTS


def seeds_alike(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """`func` seeds torch with a value that does not depend on the rank, and with no
    rank-dependent value anywhere (`def set_seed(seed): torch.manual_seed(seed)`); a seed
    only a machine without CUDA runs (`runs_only_without_cuda`) does not count."""
    ranks = domain_of(ctx).ranks
    seeds = [
        c
        for c in ctx.calls_within(func)
        if seeds_torch(ctx, c) and not runs_only_without_cuda(ctx, c)
    ]
    return bool(seeds) and not any(
        a.star or differs_by_rank(ranks, a.value, c) for c in seeds for a in c.args
    )


def random_augmentation(ctx: FileContext) -> cst.CSTNode | None:
    """A random transform built in this file (torchvision, albumentations, or a class of
    the file whose `__call__` draws: `built_transform_draw`), or a random draw in a
    dataset's `__getitem__` (`sample_draw`); None when the file shows neither."""
    transform = next((c for c in ctx.calls if _is_library_transform(ctx, c)), None)
    if transform is not None:
        return transform
    for func in ctx.functions.get(_SAMPLE_METHOD, []):
        found = sample_draw(ctx, func)
        if found is not None:
            return found
    return built_transform_draw(ctx)


def drawing_classes(ctx: FileContext) -> tuple[str, ...]:
    """The classes of this file that draw for the samples they make: transforms whose
    `__call__` draws (`FlipAxes`), datasets whose own `__getitem__` draws (`sample_draw`)
    or that build a random transform within them (`self.augment = RandomCrop(224)`,
    `Chain([FlipAxes()])`), and those without a `__getitem__` of their own
    whose base is such a class of this file.
    Every class, where a random transform is built outside any class (a module-level
    `train_transform` any dataset may use)."""
    classes = ctx.model.classes
    transforms = [c for c in ctx.calls if _is_library_transform(ctx, c)]
    if any(not any(type(a) is cst.ClassDef for a in ctx.ancestors(c)) for c in transforms):
        return tuple(sorted(classes))
    drawing_transforms = {  # classes of the file whose `__call__` draws (`FlipAxes()`)
        owner.name.value
        for method in ctx.functions.get(_TRANSFORM_METHOD, [])
        if (owner := ctx.model.enclosing_class(method)) is not None
        and sample_draw(ctx, method) is not None
    }
    found = set(drawing_transforms)
    plain: dict[str, list[str]] = {}  # classes with no `__getitem__` of their own: bases
    for name, owners in classes.items():
        for owner in owners:
            getitem = next(
                (
                    f
                    for f in ctx.functions.get(_SAMPLE_METHOD, [])
                    if ctx.model.enclosing_class(f) is owner
                ),
                None,
            )
            builds = any(ctx.is_inside(c, owner) for c in transforms) or any(
                ctx.is_inside(c, owner)
                for transform in drawing_transforms
                for c in ctx.model.calls_by_name.get(transform, ())
            )
            if builds or (getitem is not None and sample_draw(ctx, getitem) is not None):
                found.add(name)
            elif getitem is None:
                plain.setdefault(name, []).extend(dotted(b.value) or "" for b in owner.bases)
    changed = True
    while changed:
        changed = False
        for name, bases in plain.items():
            if name not in found and any(b in found for b in bases):
                found.add(name)
                changed = True
    return tuple(sorted(found))


def draws_outside_torch_only(ctx: FileContext) -> bool:
    """Every draw of the file's data pipeline in sight comes from NumPy's or `random`'s
    global generator (`np.random.randint` in `__getitem__`) or from a library that never
    draws from torch's (an albumentations random transform), and no torchvision random
    transform is built: torch's seed decides these draws only through the workers it
    seeds, so in a loader without workers torch's seed does not reach them."""
    draws = [c for c in ctx.calls if draws_from_process_generators(ctx, c)]
    transforms = [c for c in ctx.calls if _is_library_transform(ctx, c)]
    if not (draws or transforms) or any(
        not (ctx.call_name(c) or "").startswith(_OUTSIDE_TORCH_TRANSFORMS) for c in transforms
    ):
        return False
    return all((ctx.call_name(c) or "").startswith(_OTHER_GENERATORS) for c in draws)


def _is_library_transform(ctx: FileContext, call: cst.Call) -> bool:
    """A random transform of torchvision or albumentations (`RandomResizedCrop(224)`)."""
    name = ctx.call_name(call) or ""
    return name.startswith(_TRANSFORM_MODULES) and bool(
        _RANDOM_TRANSFORM.fullmatch(name.rsplit(".", 1)[-1])
    )


def built_transform_draw(ctx: FileContext) -> cst.Call | None:
    """A draw from the process's generators in the `__call__` of a class of this file (or
    a function of the file it calls) that the file also builds (`Compose([RandomFlip(),
    ...])`, `self.augment = RandomCrop(224)`): a hand-written random transform in use."""
    for method in ctx.functions.get(_TRANSFORM_METHOD, []):
        owner = ctx.model.enclosing_class(method)
        if owner is None:
            continue
        built = any(
            type(call.func) is cst.Name and not ctx.is_inside(call, owner)
            for call in ctx.model.calls_by_name.get(owner.name.value, ())
        )
        if built:
            found = sample_draw(ctx, method)
            if found is not None:
                return found
    return None


def sample_draw(ctx: FileContext, method: cst.FunctionDef) -> cst.Call | None:
    """A draw from the process's generators in `method` (a dataset's `__getitem__`) or in
    a function of this file it calls (`img = random_crop(img)`, `self.augment(img)`)."""
    calls = [c for c in ctx.calls_within(method) if not _makes_stand_in(ctx, c, method)]
    for call in calls:
        if draws_from_process_generators(ctx, call):
            return call
    for call in calls:
        for helper in ctx.resolver.callees(call):
            if helper is method:
                continue
            found = next(
                (c for c in ctx.calls_within(helper) if draws_from_process_generators(ctx, c)),
                None,
            )
            if found is not None:
                return found
    return None


def _makes_stand_in(ctx: FileContext, call: cst.Call, method: cst.FunctionDef) -> bool:
    """`call` lies in a branch of `method` taken only when the dataset holds no data, and
    that returns there (`if len(self.files) == 0: return torch.randn(1, 64, 64)`): it
    makes stand-in samples for a test run, not the augmentation of the samples read."""
    for ancestor in ctx.ancestors(call):
        if ancestor is method:
            return False
        if (
            type(ancestor) is cst.If
            and ctx.is_inside(call, ancestor.body)
            and _tests_no_data(ancestor.test)
            and _returns(ancestor.body)
        ):
            return True
    return False


def _tests_no_data(test: cst.BaseExpression) -> bool:
    """`len(x) == 0`, `len(x) < 1`, `not len(x)` or `not x`: true when a collection is
    empty."""
    if type(test) is cst.UnaryOperation and type(test.operator) is cst.Not:
        operand = test.expression
        return isinstance(operand, cst.Name | cst.Attribute) or _is_len(operand)
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    bound = target.comparator
    if not (_is_len(test.left) and type(bound) is cst.Integer):
        return False
    return (type(target.operator) is cst.Equal and bound.value == "0") or (
        type(target.operator) is cst.LessThan and bound.value == "1"
    )


def _is_len(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Call and dotted(expr.func) == "len" and len(expr.args) == 1


def _returns(body: cst.BaseSuite) -> bool:
    """The last statement of `body` is a `return`."""
    if type(body) is not cst.IndentedBlock or not body.body:
        return False
    last = body.body[-1]
    return type(last) is cst.SimpleStatementLine and type(last.body[-1]) is cst.Return


def draws_from_process_generators(ctx: FileContext, call: cst.Call) -> bool:
    """`random.randint(...)`, `np.random.rand(...)`, `torch.rand(...)`: a draw from the
    process's generators, not from one of the call's own (`generator=g`), and neither a
    seed nor a new generator (`np.random.default_rng(seed + idx)`)."""
    name = ctx.call_name(call) or ""
    if not name.startswith(_RANDOM_CALLS) or name in _NOT_DRAWS:
        return False
    return argument(call, None, "generator") is None


def agreement_drawn(ctx: FileContext) -> cst.Call | None:
    """A value the ranks must agree on, drawn from the process's generators: a sampler's
    epoch (`sampler.set_epoch(np.random.randint(n))`) or a `DistributedSampler`'s
    `seed=`, directly or through a name bound to the draw. The ranks agree on it only
    because every rank seeds its generators alike: a seed per rank would make their
    shards overlap. Returns the call that needs the agreement."""
    for call in ctx.method_calls("set_epoch"):
        if call.args and _drawn(ctx, call.args[0].value, call):
            return call
    for call in ctx.calls:
        name = ctx.call_name(call) or ""
        if name.rpartition(".")[2] != "DistributedSampler":
            continue
        seed = argument(call, 4, "seed")
        if seed is not None and _drawn(ctx, seed, call):
            return call
    return None


def _drawn(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`expr`, or a value a name in it is bound to, holds a draw from the process's
    generators (`draws_from_process_generators`)."""
    exprs = [expr, *(v.expr for v in ctx.resolver.sources(expr, at, 2))]
    return any(
        type(node) is cst.Call and draws_from_process_generators(ctx, node)
        for e in exprs
        for node in ctx.walk(e)
    )


def reseeds_workers(ctx: FileContext) -> bool:
    """A loader of the file seeds its workers itself (`worker_init_fn=`, `generator=`),
    other than from torch's per-worker seed: that seed is the iterator's base seed, drawn
    from the main process's generator, plus the worker index, so
    `np.random.seed(torch.initial_seed() % 2**32)` keeps the workers of the ranks in step
    when the ranks seed torch alike."""
    for loader in ctx.calls_to(*LOADER_CLASSES):
        if argument(loader, None, "generator") is not None:
            return True
        init = argument(loader, None, "worker_init_fn")
        if init is not None and not derives_from_base_seed(ctx, init):
            return True
    return False


# What a `worker_init_fn` that only re-derives torch's per-worker seed may call.
_WORKER_SEEDS = frozenset({"numpy.random.seed", "random.seed", "torch.manual_seed"})
_BASE_SEEDS = frozenset({"torch.initial_seed", "torch.utils.data.get_worker_info"})
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Modulo, cst.FloorDivide, cst.Power)
_CONVERSIONS = frozenset({"int", "abs"})


def derives_from_base_seed(ctx: FileContext, init: cst.BaseExpression) -> bool:
    """`init` names the one function of this file (or is a lambda) that seeds NumPy, Python
    or torch from torch's per-worker seed (`torch.initial_seed()`, the worker info's
    `seed`), with only the worker index and literals besides, and calls nothing else."""
    func: cst.FunctionDef | cst.Lambda | None = init if type(init) is cst.Lambda else None
    if type(init) is cst.Name:
        defs = ctx.functions.get(init.value, [])
        func = defs[0] if len(defs) == 1 else None
    if func is None:
        return False
    params = func.params.params
    index = params[0].name.value if params else None
    based = False
    for call in ctx.calls_within(func):
        name = ctx.call_name(call)
        if name in _WORKER_SEEDS:
            kind = _seed_kind(ctx, call.args[0].value, call, index, 4) if call.args else None
            if len(call.args) != 1 or kind is None:
                return False
            based = based or kind
        elif name not in _BASE_SEEDS and not _is_conversion(ctx, call):
            return False
    return based


def _is_conversion(ctx: FileContext, call: cst.Call) -> bool:
    func = call.func
    return (
        type(func) is cst.Name
        and func.value in _CONVERSIONS
        and not ctx.model.bindings.get(func.value)
    )


def _seed_kind(
    ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode, index: str | None, depth: int
) -> bool | None:
    """True when `expr` holds torch's per-worker seed (with the worker index and literals
    besides), False when only the index and literals, None for anything else."""
    if depth < 0:
        return None
    if type(expr) is cst.Integer:
        return False
    if type(expr) is cst.BinaryOperation:
        if not isinstance(expr.operator, _ARITHMETIC):
            return None
        left = _seed_kind(ctx, expr.left, at, index, depth - 1)
        right = _seed_kind(ctx, expr.right, at, index, depth - 1)
        return None if left is None or right is None else left or right
    if type(expr) is cst.Call:
        if ctx.call_name(expr) == "torch.initial_seed":
            return True
        if not _is_conversion(ctx, expr) or len(expr.args) != 1:
            return None
        return _seed_kind(ctx, expr.args[0].value, at, index, depth - 1)
    if type(expr) is cst.Attribute and expr.attr.value in ("seed", "id"):
        if not _is_worker_info(ctx, expr.value, at):
            return None
        return expr.attr.value == "seed"
    if type(expr) is cst.Name:
        if expr.value == index:
            return False
        kinds = [_seed_kind(ctx, v.expr, v.at, index, depth - 1) for v in _leaves(ctx, expr, at)]
        if not kinds or None in kinds:
            return None
        return any(kinds)
    return None


def _is_worker_info(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`expr` is `get_worker_info()`, or a name bound only to it."""
    if type(expr) is cst.Call:
        return ctx.call_name(expr) == "torch.utils.data.get_worker_info"
    leaves = _leaves(ctx, expr, at) if type(expr) is cst.Name else []
    return bool(leaves) and all(_is_worker_info(ctx, v.expr, v.at) for v in leaves)


def _leaves(ctx: FileContext, expr: cst.BaseExpression, at: cst.CSTNode) -> list[Value]:
    return [v for v in ctx.resolver.values(expr, at) if v.leaf and v.expr is not expr]


# torch's functions and tensor methods that draw from its generators.
_TORCH_DRAWS = frozenset(
    {
        "torch.rand",
        "torch.randn",
        "torch.randint",
        "torch.randperm",
        "torch.rand_like",
        "torch.randn_like",
        "torch.randint_like",
        "torch.normal",
        "torch.bernoulli",
        "torch.multinomial",
    }
)
_DRAWING_METHODS = frozenset({"normal_", "uniform_", "bernoulli_", "random_", "exponential_"})


def draws_from_torch(ctx: FileContext, call: cst.Call) -> bool:
    """`call` draws from torch's default generator (`torch.randn_like(x)`,
    `noise.normal_()`), not from a generator of its own (`generator=g`)."""
    if argument(call, None, "generator") is not None:
        return False
    name = ctx.call_name(call)
    if name is not None:
        return name in _TORCH_DRAWS
    func = call.func
    return type(func) is cst.Attribute and func.attr.value in _DRAWING_METHODS


def step_draw(ctx: FileContext) -> cst.Call | None:
    """A draw from torch's generator that every rank makes at each training step: in the
    body of a training loop, or in a step function that runs `backward()` itself outside
    any loop, on every rank and not for evaluation. None as well when any draw of the file
    runs on some ranks only: the ranks' streams then part ways."""
    domain = domain_of(ctx)
    found = None
    for call in ctx.calls:
        if not draws_from_torch(ctx, call):
            continue
        if domain.gates.gate(call) is not None:
            return None  # one rank draws more: the streams are no longer in step
        if found is None and _in_step(ctx, call) and not domain.loops.is_evaluation(call):
            found = call
    return found


def _in_step(ctx: FileContext, call: cst.Call) -> bool:
    loops = domain_of(ctx).loops
    loop = ctx.enclosing_loop(call)
    while loop is not None:
        if loops.is_training_loop(loop):
            return True
        loop = ctx.enclosing_loop(loop)
    func = ctx.enclosing_function(call)
    if func is None:
        return False
    backward = domain_of(ctx).backward
    return any(
        ctx.enclosing_function(site.call) is func and ctx.enclosing_loop(site.call) is None
        for site in backward.sites
    )


# Calls that draw a random order of items (a permutation, a shuffle, a sample).
_ORDER_DRAWS = frozenset(
    {
        "torch.randperm",
        "numpy.random.permutation",
        "numpy.random.shuffle",
        "numpy.random.choice",
        "random.shuffle",
        "random.sample",
    }
)


def draws_an_order(ctx: FileContext, func: cst.FunctionDef) -> cst.Call | None:
    """A call in `func` that draws a random order of items (`torch.randperm(n)`,
    `random.shuffle(files)`), or calls a function of this file that does: each call of
    `func` works on a new order."""
    for call in ctx.calls_within(func):
        if ctx.call_name(call) in _ORDER_DRAWS:
            return call
    for call in ctx.calls_within(func):
        for callee in ctx.resolver.callees(call):
            if callee is not func and any(
                ctx.call_name(c) in _ORDER_DRAWS for c in ctx.calls_within(callee)
            ):
                return call
    return None
