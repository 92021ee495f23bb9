"""DDP035: one torch seed on every rank of a job whose data loaders augment at random."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain import domain_of
from ddplint.domain.apis import PROCESS_CLASSES
from ddplint.domain.call_reach import functions_reached
from ddplint.domain.ddp_facts import is_true
from ddplint.domain.ddp_steps import trains_ddp_model
from ddplint.domain.object_reads import unread_by_object
from ddplint.domain.option_defaults import option_default
from ddplint.domain.project_view import project_of
from ddplint.domain.random_draws import (
    agreement_drawn,
    draws_outside_torch_only,
    is_seeding_name,
    random_augmentation,
    reseeds_workers,
    step_draw,
)
from ddplint.domain.rank_values import differs_by_rank
from ddplint.domain.runners import every_rank
from ddplint.domain.samplers import LOADER_WORKERS, reads_evaluation_sampler
from ddplint.domain.scripts import is_script
from ddplint.domain.spawned_workers import in_main_block, index_parameter, spawns
from ddplint.engine.dead_code import exclusive
from ddplint.engine.resolve import argument
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp035_same_seed_every_rank.augmentation import (
    drawing_modules,
    sharded_loaders,
)
from ddplint.rules.ddp035_same_seed_every_rank.seeds import SeedCall, seed_calls
from ddplint.rules.ddp035_same_seed_every_rank.worker_seeds import generator_seeds, worker_seeds


@register
class SameSeedEveryRank(Rule):
    code = "DDP035"
    name = "same-seed-every-rank"
    severity = Severity.WARNING
    default = True
    summary = "One torch seed on every rank: every rank draws the same augmentations or noise"
    explanation = """
## What it does
Flags `torch.manual_seed(seed)` (directly, in a helper of the same file such as
`set_seed(args)`, in a project helper of another module whose body does, such as
`utils.set_seed(args.seed)`, or through `transformers.set_seed` / Lightning's
`seed_everything`) that every rank of a distributed script runs with a value that does
not depend on the rank, when the file feeds a DataLoader from a `DistributedSampler` (its
own, one a name picks on the distributed path (`sampler_cls(train_set)`), or one a
project helper returns: the ranks' batches differ) and the ranks then draw
from that generator in step:
- its data pipeline augments at random (a torchvision or albumentations random
  transform, or `random` / `numpy.random` / `torch.rand` in a dataset's `__getitem__` or
  a function of its module that it calls, or in the `__call__` of a hand-written transform
  class that its module builds (`Compose([RandomFlip3D(), ...])`), in the file or a
  project module it imports); or
- its training step draws from torch's generator itself (`torch.randn_like(x)` noise,
  `torch.randint(...)` timesteps, `z.normal_()` latents in the training loop, or in a
  step function that runs `backward()`), and no draw of the file runs on some ranks only.

Also flags a `worker_init_fn` of such a loader that re-seeds the worker's generators
(`np.random.seed`, `random.seed`, `torch.manual_seed`, `imgaug.seed`, a `set_seed`
helper) from the worker index and values alike on every rank (`worker_id`,
`get_worker_info().id + cfg.seed`), with no rank and no per-process seed
(`torch.initial_seed()`, `get_worker_info().seed`). And flags a training loader's
`generator` seeded with a value alike on every rank (`g = torch.Generator();
g.manual_seed(cfg.seed)`, `generator=torch.Generator().manual_seed(0)`: the recipe of
torch's reproducibility notes, written for one process), unless its `worker_init_fn`
re-seeds the workers other than from their base seed. Both are proven where the sampler
is torch's and the draws are in sight (the file, or the module of the loader's dataset
class); otherwise they are shown under `--preview` only.

Left alone: a seeding in a function that trains nothing and runs an evaluation pass
after it (a loop in eval mode or with gradients off: `validate()` re-seeding so that
every rank scores the whole, unsharded validation set alike), where the script seeds
elsewhere too (that other seeding is the one reported); a seed set in the process that
starts the workers with `mp.spawn` or
`Process` (in the function that starts them, or under `if __name__ == "__main__":`: a
spawned worker starts with a fresh generator), a seed computed from the rank (`seed +
rank`, `args.seed + dist.get_rank()`, the index `mp.spawn` passes its worker, `seed +=
self.rank` on some path of the seeding helper), a file that seeds torch again with such
a value anywhere, loaders given a `worker_init_fn` or a `generator` (they choose their
workers' seeds themselves: the two checks above judge those), a dataset that re-seeds in
`__getitem__`, seeds under a rank test or on a one-process path, a
`torch.manual_seed` that runs only where CUDA is absent (the `else` of `if
torch.cuda.is_available(): torch.cuda.manual_seed_all(seed)`: a GPU job leaves the CPU
generator its loaders draw from unseeded), a seed on a branch that excludes every sharded
loader of the function (`if args.inference:` seeding a test pass, the `else:` building the
training loaders), and files with no random augmentation in sight.

A helper of another module named like a seeding function
(`utils.fix_random_seeds(args.seed)`, `seed_everything(cfg.seed)`) is shown only under
`--preview`, marked unproven: what it seeds is out of sight. So is a file whose random
draws are only in the text of a project module it imports (whether its loader uses them is
out of sight), unless the sharded loader's dataset is an object of a class that module
defines (`Vimeo90K_Train_Dataset(...)` from a `datasets` module whose `__getitem__`, or a
function of it that it calls, draws). So is every finding in a script (a `__main__` block) that
trains nothing in sight (no `backward()`, no optimizer, no `set_epoch`, no project helper
that runs a backward: a feature export or an evaluation), whose shared draws teach
nothing.

Where the file draws a value the ranks must agree on from a generator it seeds
(`sampler.set_epoch(np.random.randint(n))`, `DistributedSampler(seed=random.randint(0,
999))`), the shared seed is what keeps the shards apart: the message then advises a seed
per rank for torch's generator only, keeping that one alike (or broadcasting the value).

## Why is this bad?
Each time a DataLoader iterator starts, it draws its workers' base seed from the main
process's torch generator (from the loader's `generator` when it has one); worker k then
seeds `random`, NumPy and torch from `base_seed` and k. With the same seed on every rank
and the same code before the loop, every rank draws the same base seed, so worker k of
every rank replays the same random stream: the i-th sample it prepares gets the same
crop, flip and colour jitter on every rank. On one process every sample gets its own
draw; on N processes the N samples at the same position of the N shards share one draw,
so a step sees N times fewer distinct augmentations than its batch holds. A
`worker_init_fn` seeding from the worker index alone does the same for the generators it
seeds, whatever torch's seed: worker k of every rank starts from one seed, and (unless
`persistent_workers=True`) the workers started afresh each epoch replay it every epoch.
Draws in the training step itself (diffusion noise and timesteps, GAN latents, GPU
augmentation) are the same on every rank at each step in the same way. The model's
initial weights are not affected (DDP copies rank 0's parameters to every rank when it
wraps the model), so a shared seed is needed only where nothing random is drawn per
step.

## Example
```python
torch.manual_seed(args.seed)
sampler = DistributedSampler(train_set)
loader = DataLoader(train_set, sampler=sampler, num_workers=8)
```

## Use instead
```python
torch.manual_seed(args.seed + dist.get_rank())
sampler = DistributedSampler(train_set)  # its shuffle seed stays the same on every rank
loader = DataLoader(train_set, sampler=sampler, num_workers=8)
```

## Fix safety
No fix is offered: a per-rank seed changes each rank's random stream (dropout masks
too), which runs that must reproduce an earlier one may not want.

## References
- https://pytorch.org/docs/stable/data.html#randomness-in-multi-process-data-loading
- https://pytorch.org/docs/stable/notes/randomness.html
"""
    flag = (
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import transforms

def main(args, dataset_cls):
    dist.init_process_group("nccl")
    torch.manual_seed(args.seed)
    augment = transforms.Compose([transforms.RandomResizedCrop(224), transforms.ToTensor()])
    train_set = dataset_cls(transform=augment)
    loader = DataLoader(train_set, sampler=DistributedSampler(train_set), num_workers=8)
""",
        """
import random
import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Dataset, DistributedSampler

class Crops(Dataset):
    def __init__(self, images):
        self.images = images

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        top = random.randint(0, 32)
        return self.images[i][:, top:top + 224]

def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)

def main(images):
    dist.init_process_group("nccl")
    set_seed(42)
    data = Crops(images)
    sampler = DistributedSampler(data, shuffle=True)
    return DataLoader(data, batch_size=16, sampler=sampler, num_workers=4)
""",
        """
import os
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
import torchvision.transforms as T

SEED = 1234
torch.manual_seed(SEED)

def main(dataset_cls):
    dist.init_process_group("nccl", rank=int(os.environ["RANK"]))
    train_set = dataset_cls(T.Compose([T.RandomHorizontalFlip(), T.ToTensor()]))
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=64, sampler=sampler, num_workers=6)
""",
    )
    allow = (
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import transforms

def main(args, dataset_cls):
    dist.init_process_group("nccl")
    torch.manual_seed(args.seed + dist.get_rank())
    augment = transforms.Compose([transforms.RandomResizedCrop(224), transforms.ToTensor()])
    train_set = dataset_cls(transform=augment)
    loader = DataLoader(train_set, sampler=DistributedSampler(train_set), num_workers=8)
""",
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import transforms

def seed_worker(worker_id):
    torch.manual_seed(torch.initial_seed() + dist.get_rank())

def main(args, dataset_cls):
    dist.init_process_group("nccl")
    torch.manual_seed(args.seed)
    augment = transforms.Compose([transforms.RandomResizedCrop(224), transforms.ToTensor()])
    train_set = dataset_cls(transform=augment)
    loader = DataLoader(train_set, sampler=DistributedSampler(train_set), num_workers=8,
                        worker_init_fn=seed_worker)
""",
        """
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
from torchvision import transforms

def main(args, dataset_cls):
    dist.init_process_group("nccl")
    torch.manual_seed(args.seed)
    plain = transforms.Compose([transforms.Resize(256), transforms.ToTensor()])
    train_set = dataset_cls(transform=plain)
    loader = DataLoader(train_set, sampler=DistributedSampler(train_set), num_workers=8)
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        trains: bool | None = None  # asked at the first proven finding
        for finding in self._findings(ctx):
            if not finding.unproven:
                trains = _script_trains(ctx) if trains is None else trains
                if not trains:
                    finding = dataclasses.replace(
                        finding, message=finding.message + _NO_TRAINING, unproven=True
                    )
            yield finding

    def _findings(self, ctx: FileContext) -> Iterator[Finding]:
        yield from _worker_findings(ctx)
        yield from _generator_findings(ctx)
        seeds = seed_calls(ctx)
        if not seeds:
            return
        if not _shards_data(ctx):
            return  # the ranks' batches are not proven different: nothing is shared
        step = step_draw(ctx)
        if step is not None and not _after_a_seed(ctx, step, seeds):
            step = None  # drawn in another job of the file (`example()`, spawned apart)
        pipeline = _pipeline_draws(ctx) if step is None else True
        if pipeline is False:
            return
        unseen = _UNSEEN_DRAWS[ctx.memo(_draws_outside_torch)] if pipeline is None else ""
        if any(_in_sample_method(ctx, seed.call) for seed in seeds):
            return  # re-seeded per sample: the draws follow the sample, not the worker
        ranks = domain_of(ctx).ranks
        if any(
            arg.star
            or differs_by_rank(ranks, arg.value, seed.call)
            or _spawn_index(ctx, arg.value, seed.call)
            or _offset_by_rank(ctx, arg.value, seed.call)
            for seed in seeds
            for arg in seed.call.args
        ):
            return  # a per-rank seed somewhere on the way (or one out of sight)
        sharded = sharded_loaders(ctx)
        loaders = tuple(loader for loader in sharded if not unread_by_object(ctx, loader))
        if sharded and not loaders:
            return  # every sharded loader goes to an object whose called methods never read it
        reported: set[int] = set()
        agreed = agreement_drawn(ctx)
        sites = {id(seed): _seeding_sites(ctx, seed.call) for seed in seeds}
        every_site = [site for found in sites.values() for site in found]
        evaluating = {id(site) for site in every_site if _seeds_an_evaluation_pass(ctx, site)}
        for seed in seeds:
            if _reseeded_below(ctx, seed, seeds):
                continue  # the later seeding is the one the loop's draws follow
            for site in sites[id(seed)]:
                if every_rank(ctx, site) is not True:
                    continue
                if id(site) in evaluating and len(evaluating) < len(every_site):
                    continue  # `validate()` re-seeds its own pass; training's seed is elsewhere
                if _in_launching_parent(ctx, site):
                    continue  # spawned workers start with a fresh generator of their own
                if _apart_from_loaders(ctx, site, loaders):
                    continue  # `if args.inference:` seeds, the `else:` builds the loaders
                if id(site) not in reported:
                    reported.add(id(site))
                    message = _message(ctx, site, seed, step, agreed)
                    message += unseen
                    unproven = not seed.proven or pipeline is None
                    drawn = _drawn_per_process(ctx, seed.call)
                    if drawn is not None:  # `args.seed = random.randint(...)` when unset
                        message += (
                            f" (unproven: where no seed is given, each process draws its "
                            f"own with `{drawn}`)"
                        )
                        unproven = True
                    # a helper's call: its seeding call must run too (`if args.seed
                    # is not None:` in the helper, under an option no command passes)
                    yield Finding(
                        site,
                        message,
                        unproven=unproven,
                        rests_on=loaders,
                        runs_with=(seed.call,) if site is not seed.call else (),
                    )


def _after_a_seed(ctx: FileContext, draw: cst.Call, seeds: list[SeedCall]) -> bool:
    """`draw` runs in a process a seeding reaches: a seed at module level, or one in a
    function whose calls lead (in this file, a few calls deep) to the function of the
    draw; not a draw of a demo the file also spawns (`example()` beside `train()`)."""
    target = ctx.enclosing_function(draw)
    for seed in seeds:
        for site in _seeding_sites(ctx, seed.call):
            start = ctx.enclosing_function(site)
            if start is None or target is None or target is start:
                return True
            if any(f is target for f in functions_reached(ctx, start, depth=4)):
                return True
    return False


# Values each process draws for itself, unseeded: a seed taken from one differs by process.
_PER_PROCESS_DRAWS = frozenset(
    {
        "random.randint",
        "random.randrange",
        "random.random",
        "numpy.random.randint",
        "time.time",
        "time.time_ns",
        "os.getpid",
    }
)

# Why the pipeline's draws may not follow torch's seed, by `_draws_outside_torch`: draws
# from NumPy's or `random`'s generators in a loader whose worker count is out of sight, or
# draws only in the text of the modules the file imports.
_UNSEEN_DRAWS: dict[bool | None, str] = {
    True: (
        " (unproven: the draws come from NumPy's or `random`'s generators, which follow "
        "torch's seed only in a loader's workers, and the worker count is out of sight)"
    ),
    None: (
        " (unproven: the random draws are in the modules this file imports; whether its "
        "loaders use them is out of sight)"
    ),
}

_NO_TRAINING = (
    " (unproven: nothing in this file trains: no `backward()`, optimizer or epoch loop in "
    "sight, so the draws may only feed an evaluation or an export)"
)


def _apart_from_loaders(ctx: FileContext, site: cst.CSTNode, loaders: tuple[cst.Call, ...]) -> bool:
    """No run both reaches `site` and builds one of the sharded `loaders` (each in the same
    function, under a test that excludes the site's: `dead_code.exclusive`): the seed
    never precedes their draws."""
    return bool(loaders) and all(
        ctx.scope(loader) is ctx.scope(site) and exclusive(ctx.flow, ctx.resolver, site, loader)
        for loader in loaders
    )


def _drawn_per_process(ctx: FileContext, call: cst.Call) -> str | None:
    """The seeding `call`'s value may be drawn at random in each process (`if args.seed is
    None: args.seed = random.randint(1, 10000)`): the code of that draw, else None."""
    for arg in call.args:
        for value in ctx.resolver.values(arg.value, call):
            for node in ctx.walk(value.expr):
                if type(node) is cst.Call and ctx.call_name(node) in _PER_PROCESS_DRAWS:
                    return ctx.code(node).strip()
    return None


def _seeds_an_evaluation_pass(ctx: FileContext, site: cst.CSTNode) -> bool:
    """`site` re-seeds an evaluation pass of its own: its function trains nothing (no
    `backward()`, in it or in a function of this file it calls) and, after the site, runs
    a loop in eval mode or with gradients off (`model.eval()`, then `for batch in
    val_loader:`). Every rank then draws alike over that pass, which is what keeps the
    ranks' evaluations in step; what training draws follows the seeding the script does
    for training."""
    loops = domain_of(ctx).loops
    model = loops.model
    frame = model.frame(site)
    if type(frame) is not cst.FunctionDef or loops.runs_backward(frame):
        return False
    return any(
        type(node) is cst.For
        and model.before(site, node)
        and (loops.in_eval_mode(node) or loops.is_evaluation(node))
        for node in model.walk(frame.body)
    )


def _script_trains(ctx: FileContext) -> bool:
    """The file is no script of its own (a data module: the scripts importing it train),
    or it trains in sight (`_trains_in_sight`)."""
    return not is_script(ctx.module) or _trains_in_sight(ctx)


def _trains_in_sight(ctx: FileContext) -> bool:
    """The file trains: a `backward()` in it or an optimizer built (`Loops.trains`), a
    sampler's epoch moved (an epoch loop), or a call of a project helper that runs a
    backward or of a training function handed a DDP model. Shared draws matter to what
    the N processes learn; an evaluation or a feature export that only draws in its
    pipeline learns nothing from them."""
    if domain_of(ctx).loops.trains or any(True for _ in ctx.method_calls("set_epoch")):
        return True
    project = project_of(ctx)
    return any(
        trains_ddp_model(ctx, call)
        or (project is not None and project.helper_runs_backward(ctx, call))
        for call in ctx.calls
    )


def _reseeded_below(ctx: FileContext, seed: SeedCall, seeds: list[SeedCall]) -> bool:
    """A later statement of the same block seeds the same generator again (`torch.manual_seed(
    args.seed + 1)`, a dataset built, then `torch.manual_seed(args.seed)`): what the
    training draws follow is that later seeding, reported there."""
    line = _statement_line(ctx, seed.call)
    name = ctx.call_name(seed.call)
    if line is None or name is None:
        return False
    block = ctx.parent(line)
    for other in seeds:
        later = _statement_line(ctx, other.call)
        if (
            later is not None
            and later is not line
            and ctx.parent(later) is block
            and ctx.call_name(other.call) == name
            and ctx.before(line, later)
        ):
            return True
    return False


def _statement_line(ctx: FileContext, call: cst.Call) -> cst.SimpleStatementLine | None:
    """The statement line of a seeding call made as a statement of its own."""
    statement = ctx.parent(call)
    line = ctx.parent(statement) if type(statement) is cst.Expr else None
    return line if type(line) is cst.SimpleStatementLine else None


def _worker_findings(ctx: FileContext) -> Iterator[Finding]:
    """`worker_init_fn`s of sharded loaders seeding from the worker index alone; proven
    where the sampler is torch's and the file, or the module of the loader's dataset
    class, draws at random; shown under `--preview` otherwise."""
    reported: set[int] = set()
    for seed in worker_seeds(ctx):
        if id(seed.function) in reported:
            continue  # one finding per function: its first seeding call
        # Without a draw in sight, the seeding itself says the pipeline draws from NumPy
        # or `random`: shown under --preview.
        proven = seed.sampler_known and _draws_in_sight(ctx, seed.loader)
        reported.add(id(seed.function))
        persistent = argument(seed.loader, None, "persistent_workers")
        again = (
            ""
            if persistent is not None and is_true(persistent)
            else ", and the workers started afresh each epoch replay the same stream"
        )
        function = seed.function
        where = (
            f"`{function.name.value}`"
            if type(function) is cst.FunctionDef
            else "the `worker_init_fn` lambda"
        )
        yield Finding(
            seed.call,
            f"`{ctx.code(seed.call)}` in {where} seeds each DataLoader "
            "worker from its worker index, with nothing that differs by rank: worker k of every "
            "rank gets the same seed, so the k-th workers of the N ranks draw the same random "
            f"augmentation for the samples at the same positions of their shards{again}; "
            "add the rank to the seed",
            unproven=not proven,
        )


def _generator_findings(ctx: FileContext) -> Iterator[Finding]:
    """Sharded loaders drawing their workers' base seed from a `generator` seeded alike
    on every rank (`g.manual_seed(0)`, the recipe of torch's reproducibility notes);
    proven where the sampler is torch's and the file, or the module of the loader's
    dataset class, draws at random; shown under `--preview` where the draws are only in
    the text of a module the file imports."""
    ranks = domain_of(ctx).ranks
    reported: set[int] = set()
    for seed in generator_seeds(ctx):
        if id(seed.call) in reported or every_rank(ctx, seed.call) is not True:
            continue
        if differs_by_rank(ranks, seed.call.args[0].value, seed.call):
            continue
        if reads_evaluation_sampler(ctx, seed.loader):
            continue  # an evaluation pipeline rarely draws: its shared seed repeats nothing
        in_sight = _draws_in_sight(ctx, seed.loader)
        project = project_of(ctx)
        if not in_sight and (project is None or not project.pipeline_draws(ctx.path)[0]):
            continue
        reported.add(id(seed.call))
        yield Finding(
            seed.call,
            f"`{ctx.code(seed.call)}` seeds the DataLoader's `generator` with the same value "
            "on every rank: each iterator draws its workers' base seed from it, so worker k "
            "of every rank gets the same seed and the N ranks apply the same random "
            "augmentation to the samples at the same positions of their shards; add the "
            "rank to the seed (`seed + rank`)",
            unproven=not (seed.sampler_known and in_sight),
        )


def _draws_in_sight(ctx: FileContext, loader: cst.Call) -> bool:
    """The file draws at random for its samples, or the module of `loader`'s dataset
    class does."""
    return random_augmentation(ctx) is not None or bool(drawing_modules(ctx, [loader]))


def _pipeline_draws(ctx: FileContext) -> bool | None:
    """True where the file's sharded loaders prepare their samples with random draws that
    follow torch's seed in sight (a random transform or a draw in a dataset's
    `__getitem__` of this file, or a class of another module the file builds for its
    loaders) and no loader seeds its workers itself; None where such draws are only in the
    modules it imports (their text shows them, not that this file's loader uses them);
    False otherwise. The imported modules are read only when the file itself does not show
    both the loader and its draws.

    NumPy's and `random`'s draws follow torch's seed only in a loader's workers, which
    torch seeds from it: where every draw comes from them, the answer is whether a loader
    has workers (`_has_workers`)."""
    if reseeds_workers(ctx):
        return False
    outside_torch = ctx.memo(_draws_outside_torch)
    if outside_torch is not None:  # the loaders' draws are in sight
        return _has_workers(ctx, sharded_loaders(ctx)) if outside_torch else True
    project = project_of(ctx)
    if project is None:
        return False
    draws, reseeded = project.pipeline_draws(ctx.path)
    return None if draws and not reseeded else False


def _draws_outside_torch(ctx: FileContext) -> bool | None:
    """Whether every draw of the pipeline of the file's sharded loaders in sight comes from
    NumPy's or `random`'s generators: the file's own draws where it builds the loaders and
    draws too, else those of the project classes it builds for them (`drawing_modules`);
    None where no draw is in sight. Asked once per file (`ctx.memo`)."""
    loaders = sharded_loaders(ctx)
    if loaders and random_augmentation(ctx) is not None:
        return draws_outside_torch_only(ctx)
    modules = drawing_modules(ctx, loaders)
    return all(m.draws_outside_torch for m in modules) if modules else None


def _has_workers(ctx: FileContext, loaders: list[cst.Call]) -> bool | None:
    """Whether a loader of `loaders` prepares its samples in worker processes: False where
    each leaves `num_workers` out or gives 0 (a literal, or an option's default), True
    where one gives a positive number, None where a count is out of sight (a config's)."""
    counts: list[int | None] = []
    for loader in loaders:
        workers = argument(loader, LOADER_WORKERS, "num_workers")
        if workers is None:
            counts.append(0)
            continue
        known = {
            int(v.expr.evaluated_value) if type(v.expr) is cst.Integer else None
            for v in ctx.resolver.values(workers, loader)
            if v.leaf
        } or {None}
        default = option_default(ctx, workers, loader)
        if known == {None} and type(default) is cst.Integer:
            known = {int(default.evaluated_value)}
        counts.extend(known)
    if any(c is not None and c > 0 for c in counts):
        return True
    return False if None not in counts else None


def _shards_data(ctx: FileContext) -> bool:
    """A DataLoader of the file draws from a DistributedSampler, or a project helper the
    file calls returns one (`helper_returned_loader`)."""
    if sharded_loaders(ctx):
        return True
    project = project_of(ctx)
    return project is not None and any(project.helper_returned_loader(ctx, c) for c in ctx.calls)


def _message(
    ctx: FileContext,
    site: cst.Call,
    seed: SeedCall,
    step: cst.Call | None,
    agreed: cst.Call | None = None,
) -> str:
    """`agreed`: a call whose drawn argument the ranks agree on only through the shared
    seed (`agreement_drawn`): a seed per rank for every generator would break it, so the
    advice keeps that generator alike."""
    code = ctx.code(site)
    fix = "add the rank to the seed (`seed + rank`)"
    if agreed is not None:
        fix = (
            "give torch's generator a seed per rank (`torch.manual_seed(seed + rank)` after "
            f"this call), and keep the generator `{_shown(ctx, agreed)}` draws from "
            "seeded alike (or broadcast the drawn value): the ranks' shards stay apart only "
            "while they draw the same value there"
        )
    what = (
        f"`{code}` seeds torch the same on every rank"
        if seed.proven
        else f"if `{ctx.code(seed.call.func)}` seeds torch (its body is out of sight), "
        f"`{code}` seeds it the same on every rank"
    )
    if step is not None:
        return (
            f"{what}, and every training step draws from it (`{ctx.code(step)}`): "
            "each rank draws the same values at the same step, so the N processes "
            "apply one draw to N different batches where one process would draw N times; "
            f"{fix}"
        )
    return (
        f"{what}: each DataLoader iterator draws its workers' base seed from this "
        "generator (a loader without workers draws from it directly), so every rank replays "
        "the same random stream and the i-th sample each rank prepares gets the same random "
        f"augmentation (N samples per step share one draw on N processes); {fix}"
    )


def _shown(ctx: FileContext, call: cst.Call) -> str:
    code = " ".join(ctx.code(call).split())
    return code if len(code) <= 60 else code[:57] + "..."


def _in_sample_method(ctx: FileContext, call: cst.Call) -> bool:
    func = ctx.enclosing_function(call)
    return func is not None and func.name.value == "__getitem__"


def _in_launching_parent(ctx: FileContext, site: cst.CSTNode) -> bool:
    """`site` runs in the process that starts the workers (`mp.spawn`, `Process`), not in
    them: in a function that starts them, or in the `if __name__ == "__main__":` block of
    a file that starts them anywhere. A spawned worker imports the module afresh, so the
    parent's seed never reaches it (module-level code outside that block does)."""
    starts = [*spawns(ctx), *ctx.calls_to(*PROCESS_CLASSES)]
    if not starts:
        return False
    func = ctx.enclosing_function(site)
    if func is not None:
        return any(ctx.enclosing_function(start) is func for start in starts)
    return in_main_block(ctx, site)


def _offset_by_rank(ctx: FileContext, arg: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """The seed's name is changed by a rank-dependent value in its function, on some path
    (`if not global_seeding: seed += self.rank`): the seed is not proven alike."""
    func = ctx.enclosing_function(at)
    if func is None or type(arg) is not cst.Name:
        return False
    ranks = domain_of(ctx).ranks
    for node in ctx.nodes_within(func, cst.AugAssign):
        if (
            type(node) is cst.AugAssign
            and type(node.target) is cst.Name
            and node.target.value == arg.value
            and differs_by_rank(ranks, node.value, node)
        ):
            return True
    return False


def _spawn_index(ctx: FileContext, arg: cst.BaseExpression, at: cst.CSTNode) -> bool:
    """`arg` names the process index of the spawned worker it is in (`seed + gpu` in
    `def main_worker(gpu, ...)`): a rank, whatever its name."""
    func = ctx.enclosing_function(at)
    index = index_parameter(ctx, func) if func is not None else None
    return index is not None and index in ctx.names_in(arg)


def _seeding_sites(ctx: FileContext, call: cst.Call) -> list[cst.Call]:
    """Where the seed is set for the job: the call itself, or, inside a seeding helper of
    this file (`def set_seed(seed):`), the calls of that helper (`set_seed(42)`), in
    source order."""
    func = ctx.enclosing_function(call)
    if func is None or not is_seeding_name(func.name.value):
        return [call]
    callers = [
        c for c in ctx.calls if func in ctx.resolver.callees(c) and not ctx.is_inside(c, func)
    ]
    return callers or [call]
