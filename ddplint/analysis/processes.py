"""Whether a file runs as several processes at all: rules about ranks contending (every
rank saving, every rank downloading) have nothing to say about one process."""

from __future__ import annotations

import libcst as cst

from ddplint.context import FileContext
from ddplint.facts import last_name, string_value
from ddplint.names import dotted
from ddplint.project import STARTERS

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
    """`call` starts or joins a process group (directly or through a project helper), or
    asks for a rank or the world size."""
    if (ctx.call_name(call) or "") in STARTERS:
        return True
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else dotted(func)
    if name in _RANK_CALLS or ctx.facts.is_rank_value(call):
        return True
    project = ctx.project
    return project is not None and project.helper_starts_processes(ctx, call)


def _multi_process_call(ctx: FileContext, call: cst.Call) -> bool:
    if _joins_job(ctx, call) or (ctx.call_name(call) or "").startswith(_LAUNCHERS):
        return True
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else dotted(func)
    return name == "add_argument" and any(
        any(option in (string_value(arg.value) or "") for option in _LAUNCH_OPTIONS)
        for arg in call.args
    )


def _reads_rank(ctx: FileContext) -> bool:
    facts = ctx.facts
    return any(
        isinstance(node, cst.Subscript) and facts.is_rank_value(node)
        for node in ctx.nodes_of(cst.Subscript)
    )


def _is_entry_script(ctx: FileContext) -> bool:
    """The module has an `if __name__ == "__main__":` block."""
    for statement in ctx.module.body:
        if isinstance(statement, cst.If) and "__main__" in ctx.code(statement.test):
            return True
    return False


def _runs_alone(ctx: FileContext) -> bool:
    """Nothing in the file starts, joins or asks about a multi-process job: no process
    group, no spawn, no DDP wrap (direct or through a helper), no rank read."""
    facts = ctx.facts
    if facts.ddp_wraps or facts.helper_wraps:
        return False
    if any(_multi_process_call(ctx, call) for call in ctx.calls):
        return False
    return not _reads_rank(ctx)


def single_process(ctx: FileContext) -> bool:
    """The file runs as one process: an entry script (`__main__`) that starts no
    multi-process job, or a script on `nn.DataParallel` with no ranks."""
    if not _runs_alone(ctx):
        return False
    if _is_entry_script(ctx):
        return True
    return any(True for _ in ctx.calls_to("torch.nn.DataParallel"))


def _is_test_case(node: cst.ClassDef) -> bool:
    return any(last_name(base.value) == "TestCase" for base in node.bases)


def single_process_tests(ctx: FileContext) -> list[cst.ClassDef]:
    """`unittest.TestCase` classes that start, join or ask about no multi-process job (no
    process group, no spawn, no rank or world size asked in their body): their tests run in
    the one test process, whatever the rest of the file does (`MultiProcessTestCase` is not
    one)."""
    return [
        node
        for node in ctx.nodes_of(cst.ClassDef)
        if isinstance(node, cst.ClassDef)
        and _is_test_case(node)
        and not any(isinstance(call, cst.Call) and _joins_job(ctx, call) for call in ctx.walk(node))
    ]
