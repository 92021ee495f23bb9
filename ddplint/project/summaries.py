"""What one module's functions do that matters to the files importing them (issue a
collective, save a checkpoint, set a sampler's epoch, return a DDP model), read from the
module alone: a summary depends on its text only, so it is cached by content."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import libcst as cst

from ddplint.domain import domain_of
from ddplint.domain.apis import STARTERS, VALUELESS_COLLECTIVES
from ddplint.domain.checkpoint_formats import SavedFormat, saved_formats
from ddplint.domain.checkpoint_writes import helper_writes
from ddplint.domain.checkpoints import is_checkpoint_save, save_path, strips_module_prefix
from ddplint.domain.ddp_facts import ddp_subclasses, environ_key, facts_of, last_name
from ddplint.domain.device_setters import device_module, may_hold_device_module, sets_device
from ddplint.domain.downloads import costs_only, download_message, in_first_context
from ddplint.domain.job_membership import joins_here
from ddplint.domain.model_layers import constructs_buffered_batchnorm
from ddplint.domain.module_globals import world_size_globals
from ddplint.domain.one_gpu_each import asserts_one_gpu
from ddplint.domain.one_rank_groups import one_rank_group, spawn_factors
from ddplint.domain.paths import mentions_rank, per_rank_path
from ddplint.domain.process_group import (
    asks_given_group,
    asks_rank,
    uses_process_group,
    uses_process_group_at,
)
from ddplint.domain.random_draws import (
    drawing_classes,
    draws_outside_torch_only,
    random_augmentation,
    reseeds_workers,
    seeds_alike,
)
from ddplint.domain.rank_attributes import assigned_rank_attributes
from ddplint.domain.rank_flags import assigned_rank_flags
from ddplint.domain.rank_kinds import RANK_FUNCTIONS, combined
from ddplint.domain.samplers import (
    LoaderSwitch,
    factory_shuffle,
    loader_switches,
    returned_loaders,
    sampler_subclasses,
)
from ddplint.domain.shard_metrics import returned_sharded_loaders, shard_switches
from ddplint.domain.state_loads import helper_loads
from ddplint.domain.switches import flag_reading, flags_read, job_switches
from ddplint.domain.test_modules import runs_in_test_process
from ddplint.domain.written_files import HelperLoad, HelperWrite
from ddplint.engine.model import parameter_positions
from ddplint.engine.resolve import methods_named
from ddplint.names import dotted
from ddplint.parsing import parse
from ddplint.project_files import mentions_checkpoint_loading

if TYPE_CHECKING:
    from ddplint.context import FileContext

WHOLE = -1  # in `returned_loader`: the whole return value, not an element of a tuple
COLLECTIVE = "@collective"  # a site target: a torch.distributed collective carrying no value
COMBINING = "@combining"  # a site target: a collective carrying values from rank to rank
SAVE = "@save"  # a site target: `torch.save` into a file
START = "@start"  # a site target: starts or joins a multi-process job
DOWNLOAD = "@download"  # a site target: a download that writes in place
LOCAL_RANK_ENV = "@local_rank_env"  # a site target: reads the LOCAL_RANK environment variable
PROCESS_GROUP = "@process_group"  # a site target: another use of the process group
RANK_QUERY = "@rank_query"  # a site target: a helper asking the rank (`asks_rank`)
SET_DEVICE = "@set_device"  # a site target: sets the process's default device (`sets_device`)
BATCHNORM = "@batchnorm"  # a site target: BatchNorm with buffers (`constructs_buffered_batchnorm`)
ONE_GPU = "@one_gpu"  # a site target: asserts the process sees one GPU (`asserts_one_gpu`)
SEEDS = {
    "collective": frozenset({COLLECTIVE, COMBINING}),
    "certain_collective": frozenset({COLLECTIVE, COMBINING}),
    "combining": frozenset({COMBINING}),
    "saves": frozenset({SAVE}),
    "unguarded": frozenset({SAVE}),
    "starts": frozenset({START}),
    "joins": frozenset({START}),  # "starts", a class whose construction does included
    "downloads": frozenset({DOWNLOAD}),
    "local_rank_env": frozenset({LOCAL_RANK_ENV}),
    "process_group": frozenset(
        {COLLECTIVE, COMBINING, START, LOCAL_RANK_ENV, PROCESS_GROUP, RANK_QUERY}
    ),
    "sets_device": frozenset({SET_DEVICE}),
    "batchnorm": frozenset({BATCHNORM}),
    "one_gpu": frozenset({ONE_GPU}),
}
SITE_TARGETS = frozenset().union(*SEEDS.values())
# Methods that run when a class is called: constructing an object runs them.
CONSTRUCTION = ("__init__", "__post_init__")
# What `with C(...)` runs on entering, summarised per class as `C.__enter__`.
ENTER = "__enter__"
_MAY_SUBCLASS_DDP = "DistributedDataParallel"  # every name of `DDP_CLASSES` holds it


# A call of a summarised function: (callee, under a rank guard, under a condition, the
# flags it runs under with their values: `FunctionSummary`).
Site = tuple[str, bool, bool, tuple[tuple[str, bool], ...]]


@dataclass(frozen=True)
class FunctionSummary:
    """What one function (all definitions of the name in its module) does; for a class,
    what calling it does (its `CONSTRUCTION` methods); for `C.__enter__`, what entering
    an object of the class `C` in a `with` does.

    `sites`: (callee, under a rank guard, under a condition, flags) for each call that may issue a
    collective or save: `COLLECTIVE`, `SAVE`, a function of the same module (bare name) or
    an imported qualified name (with a dot); `RANK_QUERY` for a helper asking the rank or
    world size, `PROCESS_GROUP` for any other use of the process group
    (`uses_process_group_at`). "Under a rank guard" also holds for a save into
    a per-rank file; "under a condition" means any test but a mode check
    (`if dist.is_initialized():`), so the call may not run when the function does. The
    flags are those the call runs under, with their values (`_flags`): the project counts
    a call where its switch is off, or under one of its rank flags, as guarded. The rest
    is what the function does by itself."""

    sites: tuple[Site, ...] = ()
    set_epoch_params: tuple[int, ...] = ()
    returns_ddp: bool = False
    # the positions of a returned tuple that give a DDP model (`return model, optimizer`)
    ddp_elements: tuple[int, ...] = ()
    returned_loader: tuple[int, ...] = ()  # where it returns a loader that needs set_epoch
    # the parameters that loader's sampler is built under only (`samplers.loader_switches`)
    loader_switches: tuple[LoaderSwitch, ...] = ()
    # the parameters the loader of `returned_shard` is built under only (`shard_switches`)
    shard_switches: tuple[LoaderSwitch, ...] = ()
    one_rank_group: bool = False  # it starts a process group of one rank (`one_rank_group`)
    # What it returns objects of (`return Strategy(args)`): classes of this module by bare
    # name, else the qualified names called (which are project classes, `Project` decides).
    returns_made_by: tuple[str, ...] = ()
    returns_device_module: bool = False  # it returns a device module (`device_module`)
    returns_rank_test: str = ""  # the `Side` of the rank test every return gives, if any
    returned_rank: str = ""  # a function named for a rank: the kind it returns (`RankKind`)
    spawn_factors: tuple[tuple[str, int], ...] = ()  # parameters multiplying its spawn's count
    writes: tuple[HelperWrite, ...] = ()  # checkpoint writes its callers repeat (`helper_writes`)
    loads: tuple[HelperLoad, ...] = ()  # loads of a file the caller names (`helper_loads`)
    # It returns a DistributedSampler as built (`samplers.factory_shuffle`): "" when not.
    sampler_shuffle: str = ""
    seeds_alike: bool = False  # it seeds torch with a value not from the rank (`seeds_alike`)
    # where it returns a loader over one rank's shard (`returned_sharded_loaders`)
    returned_shard: tuple[int, ...] = ()
    # the parameters it calls as a model (`model(x)`) on every call (`_forwarded_params`)
    forwarded_params: tuple[tuple[str, int], ...] = ()
    # it runs `backward()`, itself or through functions of its module (`Loops.runs_backward`)
    runs_backward: bool = False
    # several definitions share the name (methods of several classes): what one of them
    # does, the summary cannot tell apart from what the others do
    merged: bool = False


@dataclass(frozen=True)
class ModuleSummary:
    """What one module offers its importers; computed from its own text only."""

    distributed: bool  # it uses the process group itself (`uses_process_group`)
    imports: tuple[str, ...]  # qualified names bound by its imports, and modules imported
    reexports: tuple[tuple[str, str], ...]  # local name -> qualified name, from imports
    functions: tuple[tuple[str, FunctionSummary], ...]
    strips_module_prefix: bool = False  # its loading code drops the DDP `module.` prefix
    loads_checkpoint: bool = False  # its text mentions loading a checkpoint or state dict
    calls: tuple[str, ...] = ()  # qualified names it calls that may be the project's
    classes: tuple[str, ...] = ()  # the classes it defines
    in_test_process: bool = False  # a test module run in one pytest process
    world_size_globals: tuple[str, ...] = ()  # module globals holding the world size
    main_only_decorators: tuple[str, ...] = ()  # its decorators that run on rank 0 only
    switches: tuple[tuple[str, bool | None], ...] = ()  # flags of its job starts (`switches`)
    flags: tuple[str, ...] = ()  # flags named for distribution it reads (`flags_read`)
    draws_at_random: bool = False  # a random transform or sample draw (`random_augmentation`)
    # its classes whose samples may be drawn at random (`random_draws.drawing_classes`)
    drawing_classes: tuple[str, ...] = ()
    # its draws all come from NumPy's or `random`'s generators (`draws_outside_torch_only`)
    draws_outside_torch: bool = False
    reseeds_workers: bool = False  # a loader of it seeds its own workers (`reseeds_workers`)
    # the formats of the checkpoints it writes (`checkpoint_formats.saved_formats`)
    checkpoint_formats: tuple[SavedFormat, ...] = ()
    ddp_subclasses: tuple[str, ...] = ()  # its classes that subclass DDP (`ddp_subclasses`)
    # its DistributedSampler subclasses, each with how it shuffles (`sampler_subclasses`)
    sampler_subclasses: tuple[tuple[str, str], ...] = ()
    # attributes it assigns a rank test: side, traced (`rank_flags.assigned_rank_flags`)
    rank_flags: tuple[tuple[str, str, bool], ...] = ()
    # attributes it sets to this process's rank, and whether to a value here rather than
    # only to a constant where not distributed (`rank_attributes.assigned_rank_attributes`)
    rank_attributes: tuple[tuple[str, bool], ...] = ()
    joins_job: bool = False  # it starts a job or wraps a model in DDP (`joins_here`)

    def function(self, name: str) -> FunctionSummary | None:
        return dict(self.functions).get(name)


@dataclass(frozen=True)
class ModuleHead:
    """The part of a module's summary a run decides its passes by (`ddplint.runner`):
    whether it uses the process group, what it imports, which flags it reads. A fraction
    of the summary's cost."""

    distributed: bool  # `ModuleSummary.distributed`
    imports: tuple[str, ...]  # `ModuleSummary.imports`
    flags: tuple[str, ...]  # `ModuleSummary.flags`


@dataclass(frozen=True)
class MemberHead:
    """What the project asks of every member it meets (`Project.head`): where its imports
    lead, whether it uses the process group, what it calls (`Project._uses_process_group`,
    the callers search) and whether it is a test module. A run hands it over for a file it
    checks without summarising it (`ddplint.runner`): the summary is then computed only
    when a question needs more."""

    distributed: bool  # `ModuleSummary.distributed`
    imports: tuple[str, ...]  # `ModuleSummary.imports`
    calls: tuple[str, ...]  # `ModuleSummary.calls`
    in_test_process: bool  # `ModuleSummary.in_test_process`


def module_head(ctx: FileContext) -> ModuleHead:
    """The `ModuleHead` of one parsed module."""
    imports = ctx.imports
    return ModuleHead(
        distributed=uses_process_group(ctx),
        imports=tuple(sorted({*imports.bindings.values(), *imports.modules})),
        flags=flags_read(ctx),
    )


def member_head(ctx: FileContext, head: ModuleHead) -> MemberHead:
    """The `MemberHead` of one parsed module whose `ModuleHead` is `head`."""
    calls = tuple(sorted(_outward_calls(ctx)))
    return MemberHead(head.distributed, head.imports, calls, runs_in_test_process(ctx))


def set_epoch_parameters(ctx: FileContext, func: cst.FunctionDef) -> tuple[int, ...]:
    """Positions of the parameters of `func` on which it calls `set_epoch` (the
    parameter itself or its `.sampler`/`.batch_sampler`), also through a name holding one
    (`sampler = loader.sampler`, then `sampler.set_epoch(epoch)`)."""
    params = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
    offset = 1 if params and params[0] in ("self", "cls") else 0
    positions: set[int] = set()
    for call in ctx.calls_within(func):
        if not (type(call.func) is cst.Attribute and call.func.attr.value == "set_epoch"):
            continue
        receiver = call.func.value
        held = [receiver]
        if type(receiver) is cst.Name:
            values = ctx.resolver.values(receiver, call)
            held.extend(v.expr for v in values if ctx.is_inside(v.expr, func))
        for expr in held:
            root = (dotted(expr) or "").split(".")[0]
            if root in params:
                positions.add(params.index(root) - offset)
    return tuple(sorted(p for p in positions if p >= 0))


def _outward(ctx: FileContext, call: cst.Call) -> str | None:
    """The qualified name `call` calls when it may be a function or class of another
    project module (dotted, outside the standard library), else None. A module under the
    project root is the project's whatever its name."""
    qualified = ctx.call_name(call)
    if qualified is None or "." not in qualified.lstrip("."):
        return None
    return None if qualified.split(".")[0] in sys.stdlib_module_names else qualified


def object_method(ctx: FileContext, call: cst.Call) -> str | None:
    """The method `call` runs on an object the value resolver sees made by a class call:
    `acc.prepare(...)` after `acc = Accelerator()` (`accelerate.Accelerator.prepare`, or
    the bare method name for a class of this module), `Accelerator().prepare(...)`,
    `model(x)` after `model = Net()` (`__call__`)."""
    func = call.func
    if type(func) is cst.Attribute:
        receiver, method = func.value, func.attr.value
    elif type(func) is cst.Name and func.value not in ctx.functions:
        receiver, method = func, "__call__"
    else:
        return None
    if type(receiver) not in (cst.Name, cst.Attribute, cst.Call) or ctx.call_name(call) is not None:
        return None
    for value in ctx.resolver.values(receiver, call):
        made = value.expr
        if type(made) is not cst.Call:
            continue
        if type(made.func) is cst.Name and made.func.value in ctx.model.classes:
            if method in ctx.functions:
                return method
            return _inherited(ctx, made.func.value, method)
        maker = _outward(ctx, made)
        if maker is not None:
            return f"{maker}.{method}"
    return None


def _inherited(ctx: FileContext, name: str, method: str) -> str | None:
    """`Base.method` of another project module that objects of this module's class `name`
    inherit (`class Trainer(TrainerBase):` with no `start` of its own, then
    `trainer.start(...)`): the one base that names a class outside the module, outside
    torch; None where several bases might give it."""
    classes = ctx.model.classes.get(name, [])
    if len(classes) != 1:
        return None
    outside = []
    for base in classes[0].bases:
        if base.keyword is not None:
            continue
        qualified = ctx.qualname(base.value)
        if qualified is None or "." not in qualified.lstrip("."):
            return None  # a base of this module, or one the imports do not name
        if qualified.split(".")[0] not in _LIBRARY_BASES:
            outside.append(qualified)
    return f"{outside[0]}.{method}" if len(outside) == 1 else None


# Packages whose classes (`nn.Module`, `Dataset`) no project module defines: their methods
# are never the project's.
_LIBRARY_BASES = frozenset({"torch", *sys.stdlib_module_names})


def _starts_one_rank_group(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """`func` starts a process group (`STARTERS`) with the world size set to one."""

    def starts(call: cst.Call) -> bool:
        return ctx.call_name(call) in STARTERS

    return any(starts(call) for call in ctx.calls_within(func)) and one_rank_group(
        ctx, func, starts
    )


def _site_target(ctx: FileContext, call: cst.Call) -> str | None:
    facts = facts_of(ctx)
    if facts.is_collective_call(call):
        valueless = domain_of(ctx).collectives.qualname(call) in VALUELESS_COLLECTIVES
        return COLLECTIVE if valueless else COMBINING
    if is_checkpoint_save(ctx, call):
        return SAVE
    if ctx.call_name(call) in STARTERS:
        return START
    if sets_device(ctx, call):
        return SET_DEVICE
    if constructs_buffered_batchnorm(ctx, call):
        return BATCHNORM
    if asserts_one_gpu(ctx, call):
        return ONE_GPU
    if download_message(ctx, call) is not None and not costs_only(ctx, call):
        return DOWNLOAD
    func = call.func
    if type(func) is cst.Name and (func.value in ctx.functions or func.value in ctx.model.classes):
        return func.value
    if (
        type(func) is cst.Attribute
        and type(func.value) is cst.Name
        and func.value.value in ("self", "cls")
        and func.attr.value in ctx.functions
    ):
        return func.attr.value
    return _outward(ctx, call)  # a project module if one is found under the root


def _runs_once_per_file(ctx: FileContext, call: cst.Call, target: str) -> bool:
    """The call runs on one rank only (a rank gate of its function), or, for a save, writes
    a file of its own on each rank (`f"ckpt.rank{rank}.pt"`): no two ranks meet there. The
    gate only, not `runners`: a summary says what the function does for any caller, and a
    module that runs as one process on its own may be imported by a distributed one."""
    if domain_of(ctx).gates.gate(call) is not None:
        return True
    if target == DOWNLOAD:
        return in_first_context(ctx, call) or any(mentions_rank(ctx, a.value) for a in call.args)
    path = save_path(call) if target == SAVE else None
    return path is not None and per_rank_path(ctx, path, call)


def _conditional(ctx: FileContext, call: cst.Call) -> bool:
    """The call runs only under a condition of its function other than a mode check."""
    ranks = domain_of(ctx).ranks
    return any(not ranks.is_mode_check(c.test) for c in ctx.flow.conditions(call))


def _reads_local_rank_env(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """`func` reads `LOCAL_RANK` from the environment: `os.environ["LOCAL_RANK"]`,
    `os.environ.get("LOCAL_RANK")`, `os.getenv("LOCAL_RANK")`, or an environment read keyed
    by a loop over names that include it (`for v in ("LOCAL_RANK", "SLURM_LOCALID"): ...`)."""
    names_it = reads_environ = False
    for node in ctx.walk(func):
        if type(node) is cst.SimpleString:
            names_it = names_it or node.raw_value == "LOCAL_RANK"
            continue
        if type(node) is cst.Subscript:
            candidate = last_name(node.value) == "environ"
        elif type(node) is cst.Call:
            candidate = last_name(node.func) in ("get", "getenv")
        else:
            continue
        if candidate:
            reads_environ = True
            if environ_key(ctx, node) == "LOCAL_RANK":
                return True
    return names_it and reads_environ


def _returns_ddp(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """A `return` of `func` itself (not of a function nested in it) gives a DDP model."""
    facts = facts_of(ctx)
    return any(
        node.value is not None and facts.is_ddp_model(node.value, node)
        for node in ctx.model.returns.get(func, ())
    )


def _ddp_elements(ctx: FileContext, func: cst.FunctionDef) -> set[int]:
    """The positions at which a `return` of `func` itself gives a tuple element holding a
    DDP model (`return model, optimizer, scheduler`), before any starred element."""
    facts = facts_of(ctx)
    found: set[int] = set()
    for node in ctx.model.returns.get(func, ()):
        if type(node.value) is not cst.Tuple:
            continue
        for position, element in enumerate(node.value.elements):
            if type(element) is cst.StarredElement:
                break
            if facts.is_ddp_model(element.value, node):
                found.add(position)
    return found


def _returns_made_by(ctx: FileContext, func: cst.FunctionDef) -> set[str]:
    """`FunctionSummary.returns_made_by` of one definition."""
    found = set()
    for returned in ctx.model.returns.get(func, []):
        if returned.value is None:
            continue
        for value in ctx.resolver.values(returned.value, returned):
            made = value.expr
            if type(made) is not cst.Call:
                continue
            if type(made.func) is cst.Name and made.func.value in ctx.model.classes:
                found.add(made.func.value)
            else:
                found.update(filter(None, [_outward(ctx, made)]))
    return found


def _sites(
    ctx: FileContext, defs: Iterable[cst.FunctionDef], constructing: bool = False
) -> tuple[Site, ...]:
    """The sites of `FunctionSummary` for the functions `defs`; for `constructing` (a
    class's `CONSTRUCTION` methods) a helper asking the rank is a `RANK_QUERY` only, not
    a call to follow."""
    sites: dict[Site, None] = {}
    for func in defs:
        for call in ctx.calls_within(func):
            target = _site_target(ctx, call)
            site = target is not None and not (constructing and asks_rank(ctx, call))
            uses = (
                target not in SITE_TARGETS
                and uses_process_group_at(ctx, call)
                and not asks_given_group(ctx, call)
            )
            if not (site or uses):
                continue
            flags = _flags(ctx, call)  # the flow's conditions: for the calls kept only
            if target is not None and site:
                once = _runs_once_per_file(ctx, call, target)
                sites[(target, once, _conditional(ctx, call), flags)] = None
            if uses:
                use = RANK_QUERY if asks_rank(ctx, call) else PROCESS_GROUP
                sites[(use, False, _conditional(ctx, call), flags)] = None
        if "LOCAL_RANK" in ctx.source and _reads_local_rank_env(ctx, func):
            sites[(LOCAL_RANK_ENV, False, False, ())] = None
    return tuple(sites)


def _flags(ctx: FileContext, call: cst.Call) -> tuple[tuple[str, bool], ...]:
    """The flags the call runs under, each with the value it has there: those named for
    distribution (`flag_name`; the project decides which are its switches) and attributes
    read as a whole test (`args.print_progress`; the project decides which are its rank
    flags, `rank_flags`)."""
    return tuple(
        sorted(
            {
                (reading[0], value == reading[1])
                for condition in ctx.flow.conditions(call)
                for term, value in condition.terms()
                if (reading := flag_reading(term) or _attribute_reading(term)) is not None
            }
        )
    )


def _attribute_reading(term: cst.BaseExpression) -> tuple[str, bool] | None:
    """(`print_progress`, True) for a test reading `args.print_progress` whole."""
    return (term.attr.value, True) if type(term) is cst.Attribute else None


class _FunctionFacts:
    """What the functions of one module do (`FunctionSummary`), with the per-module scans
    it reads done once."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.loaders = returned_loaders(ctx)
        self.switches = loader_switches(ctx) if self.loaders else {}
        self.shards = returned_sharded_loaders(ctx)
        self.shard_switches = shard_switches(ctx) if self.shards else {}
        self.device_modules = may_hold_device_module(ctx.source)
        self.saving = "save" in ctx.source
        self.loading = "torch" in ctx.source and "load" in ctx.source

    def method_summary(self, defs: list[cst.FunctionDef]) -> FunctionSummary:
        """What a method does that a call on an object of its class asks: its sites,
        checkpoint writes and loads, and whether it runs `backward()`. The one class's own,
        beside the summary merging every class's method of that name."""
        ctx = self.ctx
        return FunctionSummary(
            sites=_sites(ctx, defs),
            writes=tuple(w for f in defs for w in helper_writes(ctx, f)) if self.saving else (),
            loads=tuple(x for f in defs for x in helper_loads(ctx, f)) if self.loading else (),
            runs_backward=any(domain_of(ctx).loops.runs_backward(f) for f in defs),
        )

    def summary(self, name: str, defs: list[cst.FunctionDef]) -> FunctionSummary:
        """The summary of the definitions `defs` of `name`: what a method's own summary
        holds (`method_summary`), and what the module's callers of a function ask."""
        ctx = self.ctx
        return replace(
            self.method_summary(defs),
            set_epoch_params=tuple(sorted({p for f in defs for p in set_epoch_parameters(ctx, f)})),
            returns_ddp=any(_returns_ddp(ctx, f) for f in defs),
            ddp_elements=tuple(sorted({i for f in defs for i in _ddp_elements(ctx, f)})),
            returned_loader=_positions(self.loaders.get(name, ())),
            loader_switches=self.switches.get(name, ()),
            one_rank_group=any(_starts_one_rank_group(ctx, f) for f in defs),
            returns_made_by=tuple(sorted(set().union(*(_returns_made_by(ctx, f) for f in defs)))),
            returns_device_module=self.device_modules
            and any(device_module(ctx, r, r) for f in defs for r in ctx.resolver.returned(f)),
            returns_rank_test=_returned_rank_test(ctx, defs),
            returned_rank=_returned_rank(ctx, name, defs),
            spawn_factors=next(filter(None, (spawn_factors(ctx, f) for f in defs)), ()),
            sampler_shuffle=factory_shuffle(ctx, defs[0]) if len(defs) == 1 else "",
            seeds_alike=any(seeds_alike(ctx, f) for f in defs),
            returned_shard=_positions(self.shards.get(name, ())),
            shard_switches=self.shard_switches.get(name, ()),
            forwarded_params=_forwarded_params(ctx, defs) if len(defs) == 1 else (),
            merged=len(defs) > 1,
        )


def _positions(found: Iterable[int | None]) -> tuple[int, ...]:
    return tuple(sorted(WHOLE if p is None else p for p in found))


def _by_class(ctx: FileContext, defs: list[cst.FunctionDef]) -> dict[str, list[cst.FunctionDef]]:
    """`defs` that are methods of module-level classes, by the class's name."""
    found: dict[str, list[cst.FunctionDef]] = {}
    for func in defs:
        cls = ctx.model.enclosing_class(func)
        if cls is not None and ctx.parent(func) is cls.body and ctx.parent(cls) is ctx.module:
            found.setdefault(cls.name.value, []).append(func)
    return found


def summarize(ctx: FileContext, head: ModuleHead | None = None) -> ModuleSummary:
    """The summary of one parsed module (computed without other modules); `head`, its
    `module_head` when known already."""
    head = head or module_head(ctx)
    functions: list[tuple[str, FunctionSummary]] = []
    for name, classes in ctx.model.classes.items():
        construction = [m for c in classes for n in CONSTRUCTION for m in methods_named(c, n)]
        sites = _sites(ctx, construction, constructing=True)
        if sites and name not in ctx.functions:
            functions.append((name, FunctionSummary(sites=sites)))
        entering = _sites(ctx, [m for c in classes for m in methods_named(c, ENTER)])
        if entering:
            functions.append((f"{name}.{ENTER}", FunctionSummary(sites=entering)))
    facts = _FunctionFacts(ctx)
    for name, defs in ctx.functions.items():
        summary = facts.summary(name, defs)
        if replace(summary, merged=False) == FunctionSummary():
            continue
        functions.append((name, summary))
        if summary.merged and name != ENTER:  # entering has its own (`Class.__enter__`)
            for cls, own in _by_class(ctx, defs).items():
                functions.append((f"{cls}.{name}", facts.method_summary(own)))
    return ModuleSummary(
        distributed=head.distributed,
        imports=head.imports,
        reexports=tuple(sorted(ctx.imports.bindings.items())),
        functions=tuple(sorted(functions)),
        strips_module_prefix=strips_module_prefix(ctx),
        loads_checkpoint=mentions_checkpoint_loading(ctx.source),
        calls=tuple(sorted(_outward_calls(ctx))),
        classes=tuple(sorted(ctx.model.classes)),
        in_test_process=runs_in_test_process(ctx),
        world_size_globals=world_size_globals(ctx),
        main_only_decorators=tuple(sorted(domain_of(ctx).gates.decorators.defined())),
        switches=job_switches(ctx),
        flags=head.flags,
        draws_at_random=random_augmentation(ctx) is not None,
        drawing_classes=drawing_classes(ctx),
        draws_outside_torch=draws_outside_torch_only(ctx),
        reseeds_workers=reseeds_workers(ctx),
        checkpoint_formats=saved_formats(ctx) if facts.saving else (),
        rank_flags=assigned_rank_flags(ctx),
        rank_attributes=assigned_rank_attributes(ctx),
        joins_job=joins_here(ctx),
        ddp_subclasses=tuple(ddp_subclasses(ctx))
        if "DistributedDataParallel" in ctx.source
        else (),
        sampler_subclasses=sampler_subclasses(ctx),
    )


def _forwarded_params(ctx: FileContext, defs: list[cst.FunctionDef]) -> tuple[tuple[str, int], ...]:
    """The parameters (name, position among a call's arguments) the function calls itself,
    as a model is run (`output = model(images)`), under no condition of its own but a mode
    check (a loop over batches is none): whatever the caller hands in there runs its
    forward each time the function is called."""
    func = defs[0]
    positions = parameter_positions(func)
    found = {}
    for call in ctx.calls_within(func):
        callee = call.func
        if (
            type(callee) is cst.Name
            and callee.value in positions
            and ctx.enclosing_function(call) is func
            and not _conditional(ctx, call)
        ):
            binding = facts_of(ctx).reaching_binding(callee.value, call)
            if binding is not None and binding.kind == "param":
                found[callee.value] = positions[callee.value]
    return tuple(sorted(found.items()))


def _returned_rank_test(ctx: FileContext, defs: list[cst.FunctionDef]) -> str:
    """The side of the rank test every return of `defs` gives (`FunctionSummary`)."""
    side = domain_of(ctx).ranks.returned_side(defs)
    return "" if side is None else side.value


def _returned_rank(ctx: FileContext, name: str, defs: list[cst.FunctionDef]) -> str:
    """For a function named for a rank (`get_local_rank`), the kind of rank it returns."""
    if name not in RANK_FUNCTIONS:
        return ""
    kind = combined(domain_of(ctx).rank_kinds.returned_kind(f) for f in defs)
    return kind.value if kind is not None else ""


def _outward_calls(ctx: FileContext) -> set[str]:
    """Qualified names of the functions, classes and methods of other modules the module
    calls (`ModuleSummary.calls`)."""
    found = set()
    for call in ctx.calls:
        name = _outward(ctx, call) or object_method(ctx, call)
        if name is not None and "." in name.lstrip("."):
            found.add(name)
    return found


def summarize_path(path: str) -> ModuleSummary | None:
    """The summary of the module at `path`, or None when it cannot be read or parsed."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    return summarize_bytes(path, data, parse)


def summarize_bytes(
    path: str, data: bytes, parse: Callable[[str, bytes], object]
) -> ModuleSummary | None:
    from ddplint.context import FileContext

    parsed = parse(path, data)
    if not isinstance(parsed, tuple):
        return None
    try:
        source, module = parsed
        return summarize(FileContext(path, source, module))
    except RecursionError:
        return None
