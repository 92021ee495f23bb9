"""DDP049: the process group's size fixed by a default of the script, not by the launcher."""

from __future__ import annotations

import os
from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.apis import PROCESS_CLASSES, SAMPLER_CLASSES
from ddplint.domain.launch_commands import passed_by_every_command
from ddplint.domain.option_defaults import option_default, option_flag
from ddplint.domain.ranks import int_literal, strip_conversion
from ddplint.domain.spawned_workers import spawns
from ddplint.domain.value_leaves import deciding_leaves
from ddplint.engine.resolve import argument
from ddplint.project_files import project_root
from ddplint.rule import Finding, Rule, register

_INIT = "torch.distributed.init_process_group"
# init_process_group(backend, init_method, timeout, world_size, rank, store, group_name, ...)
_INIT_METHOD, _WORLD_SIZE, _RANK = 1, 3, 4
_ENV = "env://"
_REPLICAS = 1  # DistributedSampler(dataset, num_replicas, rank, shuffle, seed, drop_last)
_SET = " (unproven: every command of the project that starts this script passes the option)"


@register
class WorldSizeNotFromLauncher(Rule):
    code = "DDP049"
    name = "world-size-not-from-launcher"
    severity = Severity.WARNING
    # opt-in: first contact, fresh103 to fresh141 (bench/realworld/first_contact.py): 0 / 0 / 3
    default = False
    needs_several = False  # a size fixed above one waits in a world of one too
    summary = "init_process_group(world_size=...) fixed by a default, overriding the launcher's"
    explanation = """
## What it does
Flags `init_process_group(world_size=...)` in a script a launcher starts (torchrun,
`torch.distributed.launch`, SLURM: the rendezvous is `env://`, the default, and the file
starts no processes itself) when the world size given is a number the script fixes: a
literal (`world_size=4`) or a command-line option with a numeric default
(`parser.add_argument("--world_size", default=4, type=int)`) that the file never
overwrites (from `WORLD_SIZE`, say). Not flagged: a default of `-1` (torch then reads
`WORLD_SIZE`), a group of one process (deliberate, for a library that needs one), a
size read from the environment or the launcher, scripts that start their own workers
(`mp.spawn`, `Process`: they size the job themselves), a rendezvous other than
`env://` (`tcp://`, `file://`), and a rank given from anything but the environment.
Unproven (`--preview`) where every command of the project that starts the script passes
the option (`--num_gpu 8` beside `--nproc_per_node=8`): the launches it ships set it.

The same for `DistributedSampler(num_replicas=...)` so fixed in a script whose process
group takes its size from the launcher.

## Why is this bad?
Given `world_size`, the `env://` rendezvous ignores the `WORLD_SIZE` the launcher sets.
Launched on another number of processes without the matching option, the job does not
start: with fewer processes, each waits for the missing ranks until the rendezvous
timeout (tens of minutes), then fails; with more, the ranks past the default are out of
range and fail (gloo: "rank < size" at the rendezvous; NCCL: at the first collective, the
DDP wrap's) and the launcher stops the others. The script runs only on the
process count its default names. A sampler told a fixed number of replicas shards the
data for that many processes: on fewer, part of the data is never read; on more, the
extra ranks fail ("Invalid rank").

## Example
```python
parser.add_argument("--world_size", default=4, type=int)
args = parser.parse_args()
dist.init_process_group("nccl", world_size=args.world_size)
```

## Use instead
```python
dist.init_process_group("nccl")  # env:// reads WORLD_SIZE and RANK from the launcher
```

## Fix safety
No fix is offered: the option may be used elsewhere (to split the batch, say).

## References
- https://pytorch.org/docs/stable/distributed.html#environment-variable-initialization
- https://pytorch.org/docs/stable/elastic/run.html
"""
    flag = (
        """
import argparse
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", default=-1, type=int)
parser.add_argument("--world_size", default=4, type=int)
args = parser.parse_args()
dist.init_process_group(backend="nccl", world_size=args.world_size)
""",
        """
import os
import torch.distributed as dist

dist.init_process_group("nccl", rank=int(os.environ["RANK"]), world_size=8)
""",
        """
import argparse
import torch.distributed as dist

def setup(args):
    size = int(args.world_size)
    dist.init_process_group("nccl", init_method=args.dist_url, world_size=size)

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--dist-url", default="env://")
    setup(parser.parse_args())
""",
    )
    allow = (
        """
import argparse
import os
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--world_size", default=4, type=int)
args = parser.parse_args()
if "WORLD_SIZE" in os.environ:
    args.world_size = int(os.environ["WORLD_SIZE"])
dist.init_process_group(backend="nccl", world_size=args.world_size)
""",
        """
import argparse
import torch.distributed as dist
import torch.multiprocessing as mp

def worker(rank, args):
    dist.init_process_group("nccl", init_method="env://", world_size=args.world_size, rank=rank)

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--world_size", default=4, type=int)
    args = parser.parse_args()
    mp.spawn(worker, nprocs=args.world_size, args=(args,))
""",
        """
import argparse
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--world-size", default=-1, type=int)
args = parser.parse_args()
dist.init_process_group("nccl", world_size=args.world_size)
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        inits = list(ctx.calls_to(_INIT))
        if not inits or spawns(ctx) or any(ctx.calls_to(*PROCESS_CLASSES)):
            return
        launcher_sized = False
        for call in inits:
            if not self._env_rendezvous(ctx, call):
                continue
            size = argument(call, _WORLD_SIZE, "world_size")
            if size is None or ctx.resolver.environ_key(size, call) == "WORLD_SIZE":
                launcher_sized = True
                continue
            fixed = self._fixed_size(ctx, size, call)
            if fixed is not None:
                unproven = _set_at_every_launch(ctx, fixed[1])
                message = self._message(ctx, size, *fixed) + (_SET if unproven else "")
                yield Finding(size, message, unproven=unproven)
        if not launcher_sized:
            return
        for sampler in ctx.calls_to(*SAMPLER_CLASSES):
            replicas = argument(sampler, _REPLICAS, "num_replicas")
            fixed = self._fixed_size(ctx, replicas, sampler) if replicas is not None else None
            if replicas is not None and fixed is not None:
                unproven = _set_at_every_launch(ctx, fixed[1])
                message = self._sampler_message(ctx, replicas, *fixed) + (_SET if unproven else "")
                yield Finding(replicas, message, unproven=unproven)

    @staticmethod
    def _env_rendezvous(ctx: FileContext, call: cst.Call) -> bool:
        """The rendezvous is `env://` (no `init_method`, or one that is `"env://"` as
        written or as an option's default) and the rank, if given, is the launcher's."""
        method = argument(call, _INIT_METHOD, "init_method")
        if method is not None:
            shown = option_default(ctx, method, call) or method
            if not (type(shown) is cst.SimpleString and shown.evaluated_value == _ENV):
                return False
        rank = argument(call, _RANK, "rank")
        return rank is None or ctx.resolver.environ_key(rank, call) in ("RANK", "SLURM_PROCID")

    @staticmethod
    def _fixed_size(
        ctx: FileContext, size: cst.BaseExpression, at: cst.CSTNode
    ) -> tuple[int, cst.BaseExpression | None] | None:
        """(the number, the option read or None for a literal) when every value `size`
        may hold is that one number fixed by the script; None otherwise, and for 1 (a
        group of one process, made for a library that needs one, is deliberate)."""
        leaves = deciding_leaves(ctx.resolver, size, at)
        if len(leaves) != 1:
            return None
        read = strip_conversion(leaves[0].expr)
        number = int_literal(read)
        if number is not None:
            return (number, None) if number > 1 else None
        default = option_default(ctx, read, leaves[0].at)
        number = int_literal(strip_conversion(default)) if default is not None else None
        return (number, read) if number is not None and number > 1 else None

    @staticmethod
    def _sampler_message(
        ctx: FileContext,
        replicas: cst.BaseExpression,
        number: int,
        option: cst.BaseExpression | None,
    ) -> str:
        flag = option_flag(ctx, option, option) or ctx.code(option) if option is not None else ""
        source = f"`{flag}` (default {number})" if option is not None else str(number)
        unless = f" without `{flag}`" if option is not None else ""
        return (
            f"`num_replicas={ctx.code(replicas)}` splits the data into {source} shards, "
            "while the process group takes its size from the launcher: launched on another "
            f"number of processes{unless}, the shards do not match the ranks (on "
            f"{number // 2} processes only {number // 2} of the {number} shards are read each "
            f"epoch; on more than {number}, ranks {number} and up fail building the sampler); "
            "leave `num_replicas` out so that the sampler asks the process group"
        )

    @staticmethod
    def _message(
        ctx: FileContext, size: cst.BaseExpression, number: int, option: cst.BaseExpression | None
    ) -> str:
        if option is None:
            where = f"`world_size={ctx.code(size)}` fixes the process group at {number} processes"
            unless = ""
        else:
            flag = option_flag(ctx, option, option) or ctx.code(option)
            where = (
                f"`world_size={ctx.code(size)}` takes the process count from `{flag}` "
                f"(default {number}), not from the launcher's WORLD_SIZE"
            )
            unless = f" without `{flag}`"
        more = f"ranks {number} and up"
        return (
            f"{where}: launched on any other number of processes{unless}, it fails at "
            f"start (with fewer, the ranks wait for the missing ones until the rendezvous "
            f"timeout; with more, {more} are out of range and fail, and the launcher stops "
            "the others); "
            "leave `world_size` out so that `env://` reads WORLD_SIZE"
        )


def _set_at_every_launch(ctx: FileContext, option: cst.BaseExpression | None) -> bool:
    """Every command of the project that starts the file passes the option the size is
    read from (`--num_gpu 8` beside `--nproc_per_node=8`): the default never decides on
    the launches it ships, so the harm needs one it does not."""
    flag = option_flag(ctx, option, option) if option is not None else None
    if flag is None or not os.path.isfile(ctx.path):
        return False
    name = flag.lstrip("-")
    spellings = {name, name.replace("-", "_"), name.replace("_", "-")}
    return passed_by_every_command(ctx.path, project_root(ctx.path), spellings)
