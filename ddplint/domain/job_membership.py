"""Whether the processes that run a file are members of a job of several processes: the
positive evidence a harm that needs the ranks of one job on one machine asks for (a
hard-coded GPU index every rank of a node shares). A script that starts no job, and that
no module starting one calls into, runs as a process of its own, whatever it imports."""

from __future__ import annotations

from ddplint.context import FileContext
from ddplint.domain.apis import STARTERS
from ddplint.domain.ddp_facts import facts_of
from ddplint.domain.project_view import project_of


def joins_here(ctx: FileContext) -> bool:
    """The module's own code starts a job (a process group, a device mesh, spawned
    workers) or wraps a model in DistributedDataParallel."""
    return any(True for _ in ctx.calls_to(*STARTERS)) or bool(facts_of(ctx).ddp_wraps)


def in_job(ctx: FileContext) -> bool:
    """The file joins a job itself (`joins_here`), through project code it calls
    (`utils.init_distributed_mode(args)`, a helper returning the DDP model), or a module of
    the project that joins one calls into it, through any chain of callers (the loss
    module a trainer imports: `ProjectView.joins_job`). False when nothing in sight
    does: the file may still run under a launcher that starts several copies of it, but
    then as processes that share no job."""
    return ctx.memo(_in_job)


def _in_job(ctx: FileContext) -> bool:
    if joins_here(ctx) or facts_of(ctx).helper_wraps:
        return True
    project = project_of(ctx)
    return project is not None and project.joins_job(ctx.path)
