"""DDP055: a process group that rendezvouses through a `file://` path that is the same in
every run and never deleted."""

from __future__ import annotations

from collections.abc import Iterator

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.rendezvous_files import fixed_rendezvous_files
from ddplint.rule import Finding, Rule, register


@register
class FixedRendezvousFile(Rule):
    code = "DDP055"
    name = "fixed-rendezvous-file"
    severity = Severity.WARNING
    # default: opt-in while new; its findings at first contact read 4 / 0 / 0 (fresh164,
    # fresh167, the --select=ALL runs; bench/realworld/first_contact.py)
    summary = "Process group on a fixed file:// path: a file a killed run left hangs the next run"
    explanation = """
## What it does
Flags `init_process_group(init_method="file://...")` when the path is proven the same in
every run (built from string literals, `__file__` and path functions such as
`os.path.join` and `os.path.abspath`) and the file never deletes it (`os.remove`,
`os.unlink`, `Path.unlink`, `shutil.rmtree` of a name that holds it). A path taken from an
argument, the environment, a temporary directory (`tempfile`), a time stamp or a random
value is not flagged. Opt-in: the harm needs an earlier run that did not exit cleanly.

## Why is this bad?
With one process there is no process group. With N processes they meet through the file:
the file store writes to it, and PyTorch's documentation says each initialisation "will
need a brand new empty file": the store deletes it when the processes exit cleanly, but a
run that crashed or was killed leaves it behind, and the next run that initialises on the
same path reads the old run's keys and can hang or fail in `init_process_group`. Until
someone deletes the file by hand, every restart meets it.

## Example
```python
init_file = os.path.abspath(os.path.join("./", ".torch_distributed_init"))
dist.init_process_group("nccl", init_method=f"file://{init_file}", rank=rank, world_size=n)
```

## Use instead
```python
with tempfile.TemporaryDirectory() as tmp:  # in the parent, handed to every worker
    init_file = os.path.join(tmp, ".torch_distributed_init")
    mp.spawn(worker, args=(init_file,), nprocs=n)
```
Or delete the file before spawning the workers, or use `init_method="env://"` or a
`tcp://` address.

## Fix safety
No fix is offered: where a fresh path comes from (a temporary directory, the run's output
folder) is the author's choice.

## References
- https://pytorch.org/docs/stable/distributed.html#shared-file-system-initialization
"""
    flag = (
        """
import os
import torch.distributed as dist
import torch.multiprocessing as mp

def worker(rank, world_size):
    init_file = os.path.abspath(os.path.join("./", ".torch_distributed_init"))
    dist.init_process_group("nccl", init_method=f"file://{init_file}", rank=rank,
                            world_size=world_size)

if __name__ == "__main__":
    mp.spawn(worker, args=(4,), nprocs=4)
""",
        """
import torch.distributed as dist

INIT_URL = "file:///mnt/shared/ddp_rendezvous"

def setup(rank, world_size):
    dist.init_process_group("nccl", init_method=INIT_URL, rank=rank, world_size=world_size)
""",
        """
from pathlib import Path
import torch.distributed as dist

def setup(rank, world_size):
    store = Path(__file__).resolve().parent / "dist_init"
    dist.init_process_group(
        backend="gloo",
        init_method="file://" + str(store),
        rank=rank,
        world_size=world_size,
    )
""",
    )
    allow = (
        """
import os
import tempfile
import torch.distributed as dist
import torch.multiprocessing as mp

def worker(rank, world_size, temp_dir):
    init_file = os.path.abspath(os.path.join(temp_dir, ".torch_distributed_init"))
    dist.init_process_group("nccl", init_method=f"file://{init_file}", rank=rank,
                            world_size=world_size)

if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as temp_dir:
        mp.spawn(worker, args=(4, temp_dir), nprocs=4)
""",
        """
import os
import torch.distributed as dist
import torch.multiprocessing as mp

INIT_FILE = "/tmp/ddp_init"

def worker(rank, world_size):
    dist.init_process_group("gloo", init_method="file://" + INIT_FILE, rank=rank,
                            world_size=world_size)

if __name__ == "__main__":
    if os.path.exists(INIT_FILE):
        os.remove(INIT_FILE)
    mp.spawn(worker, args=(2,), nprocs=2)
""",
        """
import torch.distributed as dist

def setup(args, rank):
    dist.init_process_group("nccl", init_method=args.dist_url, rank=rank,
                            world_size=args.world_size)
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for found in fixed_rendezvous_files(ctx):
            yield Finding(
                found.init_method,
                f"the process group meets through a file at a fixed path "
                f"(`{ctx.code(found.init_method)}`) that this file never deletes: the file "
                "store needs a new empty file each time; a run that crashed or was killed "
                "leaves it behind, and every later run on this path can hang or fail in "
                "`init_process_group` until it is deleted by hand; use a fresh path per run "
                "(a temporary directory) or delete the file before the workers start",
            )
