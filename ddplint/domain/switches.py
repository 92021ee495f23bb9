"""A project's own distributed switch: a flag (`train_config.enable_fsdp`, `use_ddp`) under
which a module of the project starts its process group or wraps its model, every time
(`job_switches`; and it calls no project helper that starts one under no condition,
`Project.switch_named`), and which no module starts one under the other way. Where the
flag is the other way (`if not train_config.enable_fsdp:`), in any module of the project,
one process runs.

A flag is known by its last name (`enable_fsdp` in `cfg.enable_fsdp` and
`self.train_config.enable_fsdp`: the config travels between modules) and must be named
for distribution (`_NAMED`), so a flag that only happens to enclose the wrap
(`if cfg.use_peft:`) is no switch. A count of GPUs or processes compared as more than one
(`if args.n_GPUs > 1:`) is a flag too, known by the count's name: on where it holds."""

from __future__ import annotations

import functools
import re

import libcst as cst

from ddplint.context import FileContext
from ddplint.domain.apis import DDP_CLASSES, OTHER_DISTRIBUTED_WRAPPERS, STARTERS
from ddplint.domain.project_view import project_of
from ddplint.engine.flow import fixed_terms

_NAMED = re.compile(
    r"distributed|(^|_)dist(_|$)|ddp|fsdp|parallel|multi_?(gpu|node|proc)|launch|slurm"
    r"|deepspeed|horovod",
    re.IGNORECASE,
)


# A count of GPUs or processes (`args.n_GPUs`, `num_gpus`, `ngpus`, `nprocs`), which
# compared as more than one says "several" (`n_GPUs > 1`, `num_gpus >= 2`).
_COUNT = re.compile(
    r"^(?:n_?|num_?)?(?:gpus|procs|processes)$|^n_?gpu$|^gpus?_?(?:nums?|counts?)$", re.IGNORECASE
)


def flag_name(term: cst.BaseExpression) -> str | None:
    """The name of the flag a test term reads (`flag_reading`), else None."""
    reading = flag_reading(term)
    return None if reading is None else reading[0]


def flag_reading(term: cst.BaseExpression) -> tuple[str, bool] | None:
    """The flag a test term reads, with whether the term holding means the flag is on:
    a flag read whole and named for distribution (`cfg.enable_fsdp`, `use_ddp`: on), or a
    count of GPUs or processes compared with one (`args.n_GPUs > 1`, `>= 2`: on;
    `gpu_nums == 1`, `<= 1`, `< 2`: off); else None."""
    if type(term) is cst.Comparison:
        return _several(term)
    if type(term) is cst.Attribute:
        name = term.attr.value
    elif type(term) is cst.Name:
        name = term.value
    else:
        return None
    return (name, True) if named_for_distribution(name) else None


# (comparison, number) of a count: whether it holding means several (the flag on).
_COUNT_TESTS: dict[tuple[type[cst.BaseCompOp], str], bool] = {
    (cst.GreaterThan, "1"): True,
    (cst.GreaterThanEqual, "2"): True,
    (cst.Equal, "1"): False,
    (cst.LessThanEqual, "1"): False,
    (cst.LessThan, "2"): False,
}


def _several(test: cst.Comparison) -> tuple[str, bool] | None:
    """(`n_GPUs`, True) for `args.n_GPUs > 1` or `n_gpus >= 2`; (`n_gpus`, False) for
    `n_gpus == 1`, `<= 1` or `< 2`."""
    left = test.left
    if len(test.comparisons) != 1 or not isinstance(left, (cst.Name, cst.Attribute)):
        return None
    target = test.comparisons[0]
    bound = target.comparator
    number = bound.value if type(bound) is cst.Integer else ""
    on = _COUNT_TESTS.get((type(target.operator), number))
    if on is None:
        return None
    name = left.attr.value if isinstance(left, cst.Attribute) else left.value
    return (name, on) if _COUNT.match(name) else None


def named_for_distribution(name: str) -> bool:
    """`name` says distribution (`enable_fsdp`, `use_ddp`, `multi_gpu`): it may be a switch."""
    return _NAMED.search(name) is not None


def _job_starts() -> frozenset[str]:
    """The calls that start a job or wrap a model for one."""
    return STARTERS | DDP_CLASSES | OTHER_DISTRIBUTED_WRAPPERS


@functools.cache
def _job_start_words() -> re.Pattern[str]:
    words = sorted({name.rsplit(".", 1)[-1] for name in _job_starts()})
    return re.compile(rf"\b(?:{'|'.join(map(re.escape, words))})\b")


def names_a_job_start(text: str) -> bool:
    """The module's text names a call that starts a job (the last name of each,
    `init_process_group`, `spawn`, `DistributedDataParallel`, ...): a module that names
    none has no `job_switches`, so a search for a switch need not parse it."""
    return _job_start_words().search(text) is not None


def job_switches(ctx: FileContext) -> tuple[tuple[str, bool | None], ...]:
    """For each flag named for distribution that a job start of the module runs under (a
    process group started by `init_process_group` or `mp.spawn`, a model wrapped in DDP,
    FSDP, DeepSpeed): the value every start runs under (`if cfg.enable_fsdp:`), or None
    when some start runs without it or under the other value (`if use_fsdp: FSDP(...)
    else: DDP(...)`: no switch)."""
    starts = _job_starts()
    sites = [
        {
            (reading[0], value == reading[1])
            for condition in ctx.flow.conditions(call)
            for term, value in condition.terms()
            if (reading := flag_reading(term)) is not None
        }
        for call in ctx.calls
        if ctx.call_name(call) in starts
    ]
    found: list[tuple[str, bool | None]] = []
    for name in sorted({name for terms in sites for name, _ in terms}):
        values = [{v for n, v in terms if n == name} for terms in sites]
        every = {v for vs in values for v in vs} if all(len(vs) == 1 for vs in values) else set()
        found.append((name, every.pop() if len(every) == 1 else None))
    return tuple(found)


def hands_switch_off(ctx: FileContext, call: cst.Call) -> bool:
    """`call` hands project code a distributed switch of the project, off
    (`build_model(device, distributed=False)`): what it runs there is one process."""
    return _handed_switches(ctx, call) is True


def turns_switches_off(ctx: FileContext) -> bool:
    """The file hands a distributed switch of the project to project code, always off
    (`Trainer(model, use_distributed=False)`): what it runs through them is one process."""
    found = False
    for call in ctx.calls:
        handed = _handed_switches(ctx, call)
        if handed is False:
            return False
        found = found or handed is True
    return found


def _handed_switches(ctx: FileContext, call: cst.Call) -> bool | None:
    """How `call` hands the project's distributed switches by keyword: True when it hands
    one or more and each is off, False when one is not off, None when it hands none (or
    no project is in sight)."""
    project = project_of(ctx)
    if project is None:
        return None
    found = None
    for arg in call.args:
        name = flag_name(arg.keyword) if arg.keyword is not None else None
        on = project.switch_named(ctx.path, name) if name is not None else None
        if on is None:
            continue
        if not (type(arg.value) is cst.Name and arg.value.value == str(not on)):
            return False
        found = True
    return found


def flags_read(ctx: FileContext) -> tuple[str, ...]:
    """The flags named for distribution the module tests (`if not cfg.enable_fsdp:`) or
    passes by keyword (`use_distributed=False`): the switches its findings depend on."""
    names: set[str] = set()
    for node in ctx.nodes_of(cst.If, cst.IfExp, cst.While, cst.BooleanOperation):
        test = node.left if type(node) is cst.BooleanOperation else node.test  # type: ignore[attr-defined]
        for holds in (True, False):
            names.update(filter(None, (flag_name(t) for t, _ in fixed_terms(test, holds))))
    for call in ctx.calls:
        names.update(filter(None, (flag_name(a.keyword) for a in call.args if a.keyword)))
    return tuple(sorted(names))
