"""Whether a file runs as several processes at all: rules about ranks contending (every
rank saving, every rank downloading) have nothing to say about one process."""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Callable
from typing import TypeVar, cast

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain import domain_of
from ddplint.domain.apis import PROCESS_STARTERS, SPAWN_FUNCTIONS, STARTERS
from ddplint.domain.call_reach import functions_reached
from ddplint.domain.cli_commands import subcommands
from ddplint.domain.ddp_facts import (
    DDP_CLASSES,
    facts_of,
    is_true,
    keyword,
    last_name,
    string_value,
)
from ddplint.domain.entry_pins import pins_one_process
from ddplint.domain.one_rank_groups import (
    is_one,
    launches_one_process,
    one_rank_group,
    plays_one_rank,
    spawn_factors,
    spawns_one_process,
)
from ddplint.domain.process_group import uses_process_group_at
from ddplint.domain.project_view import project_of
from ddplint.domain.ray_actors import in_single_actor
from ddplint.domain.scripts import is_script, main_blocks
from ddplint.domain.switches import hands_switch_off, turns_switches_off
from ddplint.domain.test_modules import JOB_WORDS, collected_by_pytest, shows_job
from ddplint.engine.constants import certainly
from ddplint.engine.resolve import argument, methods_named, sole_constructor, top_level_asserts
from ddplint.names import dotted
from ddplint.project_files import named_in_other_files

_LAUNCHERS = (
    "deepspeed.",
    "accelerate.",
    "lightning.",
    "pytorch_lightning.",
    "horovod.",
    "mmengine.",
)
# Command-line options only a distributed launch sets (`--local_rank`, `--launcher`).
_LAUNCH_OPTIONS = ("local_rank", "local-rank", "launcher")
_RANK_CALLS = frozenset({"get_rank", "get_local_rank", "get_world_size"})


def _joins_job(ctx: FileContext, call: cst.Call) -> bool:
    """`call` starts or joins a process group (directly, through a project helper, or by
    constructing a project class whose constructor does), or asks for a rank or the world
    size."""
    if (ctx.call_name(call) or "") in STARTERS:
        return True
    func = call.func
    name = func.attr.value if type(func) is cst.Attribute else dotted(func)
    if name in _RANK_CALLS or facts_of(ctx).is_rank_value(call):
        return True
    project = project_of(ctx)
    return project is not None and project.helper_joins_job(ctx, call)


def _multi_process_call(ctx: FileContext, call: cst.Call) -> bool:
    if _joins_job(ctx, call) or (ctx.call_name(call) or "").startswith(_LAUNCHERS):
        return True
    func = call.func
    name = func.attr.value if type(func) is cst.Attribute else dotted(func)
    return name == "add_argument" and any(
        any(option in (string_value(arg.value) or "") for option in _LAUNCH_OPTIONS)
        for arg in call.args
    )


def _reads_rank(ctx: FileContext) -> bool:
    facts = facts_of(ctx)
    return any(
        type(node) is cst.Subscript and facts.is_rank_value(node)
        for node in ctx.nodes_of(cst.Subscript)
    )


def _runs_alone(ctx: FileContext) -> bool:
    """Nothing in the file starts, joins or asks about a multi-process job: no process
    group, no spawn, no DDP wrap (direct or through a helper), no rank read."""
    facts = facts_of(ctx)
    if facts.ddp_wraps or any(not hands_switch_off(ctx, c) for c in facts.helper_wraps):
        return False  # a helper told `distributed=False` wraps nothing
    if any(_multi_process_call(ctx, call) for call in ctx.calls):
        return False
    return not _reads_rank(ctx)


_T = TypeVar("_T")


def _per_file(compute: Callable[[FileContext], _T]) -> Callable[[FileContext], _T]:
    """`compute(ctx)` computed once per file (`FileContext.memo`): asked for every node,
    the answer stays linear in the file."""

    @functools.wraps(compute)
    def once(ctx: FileContext) -> _T:
        return ctx.memo(compute)

    return once


@_per_file
def single_process(ctx: FileContext) -> bool:
    """The file runs as one process: an entry script (`__main__`) or a script that hands
    the project's distributed switch off to its code (`Trainer(use_distributed=False)`,
    `turns_switches_off`) that starts no multi-process job, a script on
    `nn.DataParallel` with no ranks, or a script whose entry stops unless its job is one
    process (`pins_one_process`: `assert args.num_gpus == 1` where the workers set
    `WORLD_SIZE` from it, `assert not args.distributed`)."""
    if pins_one_process(ctx, lambda statement: _starts_job(ctx, statement)):
        return True
    if not _runs_alone(ctx):
        return False
    if is_script(ctx.module) or turns_switches_off(ctx):
        return True
    return any(True for _ in ctx.calls_to("torch.nn.DataParallel"))


def _starts_job(ctx: FileContext, statement: cst.CSTNode) -> bool:
    """`statement` starts, joins or asks about a job, or calls a function of this file
    that does: where a script's entry stops pinning (`pins_one_process`)."""
    for call in ctx.walk(statement):
        if type(call) is not cst.Call:
            continue
        if _multi_process_call(ctx, call) or ctx.call_name(call) in PROCESS_STARTERS:
            return True
        if any(_reaches_job(ctx, callee) for callee in ctx.resolver.callees(call)):
            return True
    return False


def _is_test_case(node: cst.ClassDef) -> bool:
    """A `unittest.TestCase`, also through a project base named like one
    (`AccelerateTestCase`) unless the name says it runs a job (`MultiProcessTestCase`)."""
    names = [last_name(base.value) or "" for base in node.bases]
    return any(name.endswith("TestCase") and not JOB_WORDS.search(name) for name in names)


def _pytest_holder(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """`func` sits where pytest collects test functions, in a file it collects (named as a
    test module, or importing pytest; not a training script's `def test(epoch):`): at
    module level, or in a `Test...` class with no base that starts, joins or asks about no
    job itself."""
    if not collected_by_pytest(ctx):
        return False
    holder = ctx.parent(func)
    if holder is ctx.module:
        return True
    cls = ctx.parent(holder) if type(holder) is cst.IndentedBlock else None
    return (
        type(cls) is cst.ClassDef
        and not cls.bases
        and cls.name.value.startswith("Test")
        and not _joins_in(ctx, cls)
    )


def _joins_in(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` starts, joins or asks about a job of more than one process: a job of one
    rank (`one_rank_group`, also through a project helper) is one process."""
    if not any(type(call) is cst.Call and _joins_job(ctx, call) for call in ctx.walk(node)):
        return False
    return not _one_rank_job(ctx, node)


def _one_rank_job(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` sets the world size to one (directly or through a project helper) and
    spawns no workers."""
    project = project_of(ctx)
    calls = [call for call in ctx.walk(node) if type(call) is cst.Call]
    if any(ctx.call_name(call) in SPAWN_FUNCTIONS for call in calls):
        return False
    if one_rank_group(ctx, node, lambda call: _joins_job(ctx, call)):
        return True
    return project is not None and any(
        project.helper_starts_one_rank_group(ctx, call) for call in calls
    )


def _skipped_when_launched(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """`@pytest.mark.skipif("WORLD_SIZE" in os.environ, ...)`: the test runs only outside
    a distributed launch."""
    ranks = domain_of(ctx).ranks
    for decorator in func.decorators:
        expr = decorator.decorator
        if (
            type(expr) is cst.Call
            and last_name(expr.func) == "skipif"
            and expr.args
            and ranks.single_process_when(expr.args[0].value) is False
        ):
            return True
    return False


def _single_process_test_function(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """A pytest test function that runs in the one test process: skipped whenever the job
    is launched distributed, or with no sign of a job in its name, markers, fixtures or
    body."""
    if _skipped_when_launched(ctx, func):
        return True
    return not shows_job(ctx, func) and not _joins_in(ctx, func)


def _plays_one_rank_test(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """A test method that joins no job itself (nor does its class's `setUp`, as
    `MultiProcessTestCase` spawns there) and stands in for one rank of it (`plays_one_rank`:
    a single-process sharded-inference test in a multi-process test class)."""
    holder = ctx.parent(func)
    cls = ctx.parent(holder) if type(holder) is cst.IndentedBlock else None
    return (
        type(cls) is cst.ClassDef
        and plays_one_rank(ctx, func)
        and not _reaches_job(ctx, func)
        and not any(_reaches_job(ctx, s) for s in methods_named(cls, "setUp"))
    )


@_per_file
def single_process_tests(ctx: FileContext) -> list[cst.ClassDef | cst.FunctionDef]:
    """Tests that run in the one test process, whatever the rest of the file does:
    `unittest.TestCase` classes (also through a project base like `AccelerateTestCase`)
    that start, join or ask about no multi-process job (no process group, no spawn, no
    rank or world size asked in their body; `MultiProcessTestCase` is not one) or only a
    job of one rank, pytest test functions (at module level or in a `Test...` class) that
    are skipped under a distributed launch or show no sign of one, and test methods that
    stand in for one rank of a job (`_plays_one_rank_test`)."""
    found: list[cst.ClassDef | cst.FunctionDef] = []
    for node in ctx.nodes_of(cst.ClassDef, cst.FunctionDef):
        if type(node) is cst.ClassDef:
            if _is_test_case(node) and not _joins_in(ctx, node):
                found.append(node)
        elif (
            type(node) is cst.FunctionDef
            and node.name.value.startswith("test")
            and (
                (_pytest_holder(ctx, node) and _single_process_test_function(ctx, node))
                or _plays_one_rank_test(ctx, node)
            )
        ):
            found.append(node)
    return found


def runs_in_one_process(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs only when the job is not distributed (`Gates.single_process`: under
    `if not args.distributed:`, after `if world_size > 1: return`), in a test that runs
    in the one test process (`single_process_tests`) or a subcommand that runs no job
    (`lone_subcommands`), in a Ray actor the file makes once (`in_single_actor`), in the
    parent that launches the workers (`_parent_functions`, a `__main__` block once the
    workers it spawns have joined), is a parameter a test
    helper gives such tests (`_parametrizes_tests`), in a worker spawned as one process
    (`_lone_workers`), in a file that runs as one process (`single_process`), or in a
    class whose constructor asserts one process (`_in_pinned_class`)."""
    if domain_of(ctx).gates.single_process(node) or _in_fake_group(ctx, node):
        return True
    if _in_one_rank_job(ctx, node):
        return True
    if single_process(ctx):
        return True
    if _parametrizes_tests(ctx, node) or in_single_actor(ctx, node) or _in_self_test(ctx, node):
        return True
    if ctx.enclosing_function(node) in _parent_functions(ctx) or _in_lone_worker(ctx, node):
        return True
    if ctx.enclosing_function(node) is None and _in_launching_main_block(ctx, node):
        return True
    if _in_pinned_class(ctx, node) or _beside_the_start(ctx, node):
        return True
    return any(
        ctx.is_inside(node, alone) for alone in (*single_process_tests(ctx), *lone_subcommands(ctx))
    )


def _beside_the_start(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs on the branch of an `if` whose other branch starts the job and whose
    own starts none (`if torch.cuda.device_count() > 1: setup_distributed() ... else:
    device = "cuda:0"`): the test chooses between a job and one process, and no start
    came before it in the function."""
    for condition in ctx.flow.conditions(node):
        branch = condition.gate
        if type(branch) is not cst.If or branch.orelse is None:
            continue
        alone = ctx.remembered(_side_alone, (branch, condition.holds))
        if alone is not None:
            return alone
    return False


def _side_alone(ctx: FileContext, side: tuple[cst.If, bool]) -> bool | None:
    """For the side of the `if` where its test holds (or fails): None unless the other
    side starts the job and this one neither starts nor talks to one (nor tests
    `is_initialized()`); then whether it runs in one process: nothing before the `if` in
    its function starts a job, and nothing after it needs one on every path. Asked once
    per `if` and side."""
    branch, holds = side
    orelse = branch.orelse
    assert orelse is not None  # `_beside_the_start` asks only of an `if` with an `else`
    other = orelse if holds else branch.body
    own = branch.body if holds else orelse
    if not _starts_in(ctx, other) or _starts_in(ctx, own) or _in_job(ctx, own, branch.test):
        return None
    func = ctx.model.frame(branch)
    outside = [c for c in ctx.calls_within(func) if not ctx.is_inside(c, branch)]
    earlier = [c for c in outside if ctx.before(c, branch)]
    later = [c for c in outside if ctx.before(branch, c)]
    return not any(_starts(ctx, c) for c in earlier) and not any(
        _needs_job(ctx, c) and not ctx.flow.conditions(c) for c in later
    )


def _needs_job(ctx: FileContext, call: cst.Call) -> bool:
    """`call` needs a process group: a DDP wrap, a collective, a rank query."""
    return (ctx.call_name(call) or "") in DDP_CLASSES or uses_process_group_at(ctx, call)


def _in_job(ctx: FileContext, block: cst.CSTNode, test: cst.BaseExpression) -> bool:
    """`block` asks about or talks to a job (`dist.get_rank()`, a collective), or the
    test choosing it asks whether one was started (`if dist.is_initialized(): ... else:
    init_process_group()`): it runs in a job started elsewhere."""
    return any(
        uses_process_group_at(ctx, c)
        for c in ctx.nodes_within(block, cst.Call)
        if type(c) is cst.Call
    ) or any(
        (ctx.call_name(c) or "").endswith("is_initialized")
        for c in ctx.nodes_within(test, cst.Call)
        if type(c) is cst.Call
    )


def _starts_in(ctx: FileContext, block: cst.CSTNode) -> bool:
    """A call in `block` starts a job (`_starts`); answered once per block."""
    return ctx.remembered(_block_starts, block)


def _block_starts(ctx: FileContext, block: cst.CSTNode) -> bool:
    return any(_starts(ctx, c) for c in ctx.nodes_within(block, cst.Call) if type(c) is cst.Call)


def _starts(ctx: FileContext, call: cst.Call) -> bool:
    """`call` starts a job: a process group, a mesh, an RPC world, spawned workers, or a
    project helper that does (`setup_distributed()`); also a function of this file that
    does."""
    if (ctx.call_name(call) or "") in STARTERS:
        return True
    project = project_of(ctx)
    if project is not None and project.helper_starts_processes(ctx, call):
        return True
    return any(
        (ctx.call_name(inner) or "") in STARTERS
        for callee in ctx.resolver.callees(call)
        for inner in ctx.calls_within(callee)
    )


def _in_pinned_class(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` lies in a method of a class whose constructor asserts the job is one
    process (`assert not self.distribute`, `assert not args.distributed`): no object of
    the class exists in a distributed job."""
    func = ctx.enclosing_function(node)
    owner = ctx.model.enclosing_class(func) if func is not None else None
    constructor = sole_constructor(owner) if owner is not None else None
    if constructor is None:
        return False
    ranks = domain_of(ctx).ranks
    return any(
        ranks.single_process_when(statement.test) is True
        for statement in top_level_asserts(constructor)
    )


def _in_self_test(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` lies in the `__main__` block of a module other files of the project import (a
    helper module's self-test: `python model_utils.py` builds a model and runs one input),
    and the block starts, joins or asks about no job, here or through this file's
    functions: that program is one process, whatever the module's functions do for the
    trainers that import them."""
    blocks = [b for b in main_blocks(ctx.module) if ctx.is_inside(node, b)]
    if not blocks or not os.path.isfile(ctx.path):
        return False
    module = os.path.splitext(os.path.basename(ctx.path))[0]
    if not named_in_other_files(ctx.path, module):
        return False
    return not any(_starts_job(ctx, statement) for statement in blocks[0].body.body)


@_per_file
def _launching_parents(ctx: FileContext) -> set[cst.FunctionDef]:
    """The functions that hand a worker of this file (`_is_worker`) to a launcher
    (`mp.spawn`, a helper named for the job such as
    `self._run_multi_process_test(callable=worker)`), never call a worker themselves (as a
    fallback without spawn) and join no job: they run in the one parent process, building
    each rank's inputs (rank 1's shard on `cuda:1`)."""
    return {
        cast("cst.FunctionDef", func)
        for func in ctx.nodes_of(cst.FunctionDef)
        if _only_launches(ctx, func)
    }


def _only_launches(ctx: FileContext, scope: cst.CSTNode) -> bool:
    """`scope` hands a worker of this file to a launcher, never calls a worker itself and
    joins no job: it runs in the parent process."""
    launched = [(call, _launched_workers(ctx, call)) for call in ctx.calls_within(scope)]
    workers = {name for _, names in launched for name in names}
    return bool(workers) and not any(
        dotted(call.func) in workers or (not names and _joins_job(ctx, call))
        for call, names in launched
    )


def _in_launching_main_block(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs in a `__main__` block that launches the workers (`_only_launches`), after
    the launch has joined them: `mp.spawn(train, nprocs=n)`, then the parent's own work
    once they are gone (loading the final checkpoint on `cuda:0`). What runs before the
    launch prepares the workers (their environment), and is theirs to judge."""
    for block in main_blocks(ctx.module):
        if not ctx.is_inside(node, block) or not _only_launches(ctx, block):
            continue
        return any(
            ctx.before(call, node) and not ctx.is_inside(node, call) and _joins_workers(call)
            for call in ctx.calls_within(block)
            if _launched_workers(ctx, call)
        )
    return False


def _joins_workers(call: cst.Call) -> bool:
    """The launch waits for its workers: `join` left at `mp.spawn`'s default or written
    `True` (keyword or fourth argument); a value out of sight may not."""
    join = argument(call, 3, "join")
    return join is None or is_true(join)


@_per_file
def _parent_functions(ctx: FileContext) -> set[cst.FunctionDef]:
    """The functions that run only in the parent process of the workers: the launching
    parents (`_launching_parents`); the functions of the file that call one (`main()`
    running `_bench_ddp()`, which spawns); and the functions whose every call, in a file no
    other names them in, is made by such a function (a one-process baseline `main()` runs
    beside the spawned benchmark). A worker, or a function that joins a job or issues a
    collective itself, never counts."""
    parents = set(_launching_parents(ctx))
    if not parents:
        return parents
    launched = {name for call in ctx.calls for name in _launched_workers(ctx, call)}
    functions = [cast("cst.FunctionDef", f) for f in ctx.nodes_of(cst.FunctionDef)]
    facts = facts_of(ctx)
    candidates = [
        f
        for f in functions
        if f not in parents
        and f.name.value not in launched
        and not any(_joins_job(ctx, c) or facts.is_collective_call(c) for c in ctx.calls_within(f))
    ]
    changed = True
    while changed:
        changed = False
        names = {f.name.value for f in parents}
        for func in candidates:
            if func in parents:
                continue
            if any(dotted(c.func) in names for c in ctx.calls_within(func)):
                parents.add(func)
                changed = True
        for func in candidates:
            if func in parents:
                continue
            sites = ctx.model.calls_by_name.get(func.name.value, ())
            if (
                sites
                and all(ctx.enclosing_function(site) in parents for site in sites)
                and not named_in_other_files(ctx.path, func.name.value)
            ):
                parents.add(func)
                changed = True
    return parents


@_per_file
def _lone_workers(ctx: FileContext) -> set[cst.FunctionDef]:
    """The workers of this file that every launch spawns as one process: `mp.spawn(worker,
    nprocs=world_size)` after `world_size = 1` (`spawns_one_process`), or handed to a
    launcher a helper makes for one process (`_launcher_factors`); each runs alone,
    whatever it asks of its group."""
    alone: set[str] = set()
    shared: set[str] = set()
    for call in ctx.calls:
        names = _launched_workers(ctx, call)
        (alone if spawns_one_process(ctx, call) else shared).update(names)
        launcher = call.func
        factors = _launcher_factors(ctx, launcher) if type(launcher) is cst.Call else ()
        if factors and type(launcher) is cst.Call:
            one = launches_one_process(ctx, launcher, factors)
            names = [a.value.value for a in call.args if type(a.value) is cst.Name]
            (alone if one else shared).update(names)
    return {f for name in alone - shared for f in ctx.functions.get(name, ())}


def _launcher_factors(ctx: FileContext, call: cst.Call) -> tuple[tuple[str, int], ...]:
    """The spawn factors (`spawn_factors`) of the helper of this file or of the project
    that `call` calls: it makes a launcher of as many processes as their product
    (`init_distributed(tp=1, dp=1, pp=1)(worker)`)."""
    defs = ctx.functions.get(dotted(call.func) or "", ())
    if defs:
        return next(filter(None, (spawn_factors(ctx, f) for f in defs)), ())
    project = project_of(ctx)
    summary = project.function_called(ctx, call) if project is not None else None
    return summary.spawn_factors if summary is not None else ()


def _in_lone_worker(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs in a worker spawned as one process (`_lone_workers`)."""
    func = ctx.enclosing_function(node)
    return func is not None and func in _lone_workers(ctx)


def _launched_workers(ctx: FileContext, call: cst.Call) -> list[str]:
    """Names of the workers of this file (`_is_worker`) `call` launches: `mp.spawn`, or a
    helper named for the job, given the function."""
    name = ctx.call_name(call)
    if name not in SPAWN_FUNCTIONS and not JOB_WORDS.search(last_name(call.func) or ""):
        return []
    return [
        arg.value.value
        for arg in call.args
        if type(arg.value) is cst.Name
        and any(_is_worker(ctx, worker) for worker in ctx.functions.get(arg.value.value, ()))
    ]


def _is_worker(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """`func` joins the job or issues a collective itself."""
    facts = facts_of(ctx)
    return _reaches_job(ctx, func) or any(
        facts.is_collective_call(call) for call in ctx.calls_within(func)
    )


@_per_file
def lone_subcommands(ctx: FileContext) -> list[cst.FunctionDef]:
    """Subcommands of the script's command line that start, join or ask about no job,
    where another subcommand does (`fire.Fire({"download": download_datasets, "train":
    run_training})`): the user runs each as its own process, so they run as one process.
    None when code at module level joins the job (every command runs in it)."""
    commands = subcommands(ctx)
    module_joins = any(
        _multi_process_call(ctx, call) for call in ctx.calls if ctx.enclosing_function(call) is None
    )
    if len(commands) < 2 or module_joins:
        return []
    alone = [c for c in commands if not _reaches_job(ctx, c)]
    return alone if len(alone) < len(commands) else []


def _reaches_job(ctx: FileContext, func: cst.FunctionDef) -> bool:
    """`func`, or a function of this file it calls, starts, joins or asks about a job."""
    return any(
        _multi_process_call(ctx, call) or (ctx.call_name(call) or "") in DDP_CLASSES
        for reached in itertools.chain((func,), functions_reached(ctx, func))
        for call in ctx.calls_within(reached)
    )


_PARAMETRIZE = frozenset({"pytest.param", "pytest.mark.parametrize"})


def _parametrizes_tests(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` is a value of a pytest parametrization a helper builds for tests it does
    not know (`devices.append(pytest.param(torch.device("cuda:0")))` in a `withCUDA`
    decorator): pytest hands it to tests in the one pytest process. A parametrization
    written on a test itself is that test's, and the test decides."""
    for ancestor in ctx.ancestors(node):
        if type(ancestor) is cst.Call and ctx.call_name(ancestor) in _PARAMETRIZE:
            func = ctx.enclosing_function(ancestor)
            return func is not None and not func.name.value.startswith("test")
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            return False
    return False


def _in_one_rank_job(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node` runs in a function, the `if __name__ == "__main__":` block, or a script's top
    level, whose every process-group start is given `world_size=1`
    (`init_process_group("nccl", rank=0, world_size=1)` in a one-process demo, `init_rpc(...,
    world_size=1)`) and that spawns no workers: the job is this one process; anywhere in
    a file whose only starts are such ones at its top level (a script that starts its
    one-rank group on import, then trains from its `__main__` block)."""
    return _start_scope(ctx, node) in _one_rank_scopes(ctx) or _one_rank_script(ctx)


@_per_file
def _one_rank_script(ctx: FileContext) -> bool:
    """Every process-group start of the file is a one-rank one at its top level."""
    starts = list(ctx.calls_to(*STARTERS))
    return bool(starts) and all(
        _start_scope(ctx, call) is ctx.module and _starts_one_rank(ctx, call) for call in starts
    )


def _start_scope(ctx: FileContext, node: cst.CSTNode) -> cst.CSTNode:
    """The function, `__main__` block, or else module (a script's top level) running
    `node`."""
    scope: cst.CSTNode | None = ctx.enclosing_function(node)
    if scope is None:
        scope = next((b for b in main_blocks(ctx.module) if ctx.is_inside(node, b)), None)
    return scope if scope is not None else ctx.module


@_per_file
def _one_rank_scopes(ctx: FileContext) -> list[cst.CSTNode]:
    """The functions, `__main__` blocks and scripts' top levels that start only process
    groups (or RPC worlds) of one rank and spawn no workers (`_in_one_rank_job`)."""
    starts: dict[int, tuple[cst.CSTNode, list[cst.Call]]] = {}
    for call in ctx.calls_to(*STARTERS):
        scope = _start_scope(ctx, call)
        starts.setdefault(id(scope), (scope, []))[1].append(call)
    return [
        scope
        for scope, calls in starts.values()
        if all(_starts_one_rank(ctx, call) for call in calls)
    ]


def _starts_one_rank(ctx: FileContext, call: cst.Call) -> bool:
    """`call` starts a process group given `world_size=1` (never a spawn)."""
    if ctx.call_name(call) in SPAWN_FUNCTIONS:
        return False
    size = keyword(call, "world_size")
    return size is not None and certainly(ctx.resolver, size.value, call, is_one)


def _in_fake_group(ctx: FileContext, node: cst.CSTNode) -> bool:
    """`node`'s function calls `init_process_group("fake", rank=0, world_size=n)` (before
    or after `node`): one process that only simulates a job of `n` ranks
    (compile-on-one-rank tracing)."""
    func = ctx.enclosing_function(node)
    return func is not None and func in _faking_functions(ctx)


@_per_file
def _faking_functions(ctx: FileContext) -> set[cst.FunctionDef | None]:
    """The functions that start a fake process group (`_in_fake_group`)."""
    return {
        ctx.enclosing_function(call)
        for call in ctx.calls_to("torch.distributed.init_process_group")
        if _backend(call) == "fake"
    }


def _backend(call: cst.Call) -> str | None:
    """The backend a process-group start names (`"nccl"`, `backend="fake"`)."""
    for index, arg in enumerate(call.args):
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword == "backend" or (keyword is None and index == 0 and not arg.star):
            return string_value(arg.value)
    return None
