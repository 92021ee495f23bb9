"""DDP062: a rendezvous address pinned to the local machine in a job counted over several."""

from __future__ import annotations

from collections.abc import Iterator

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.rule import Finding, Rule, register
from ddplint.rules.ddp062_loopback_address_multi_node.spans import loopback_spans


@register
class LoopbackAddressMultiNode(Rule):
    code = "DDP062"
    name = "loopback-address-multi-node"
    severity = Severity.ERROR
    # opt-in: first contact, fresh103 to fresh147 (bench/realworld/first_contact.py): 2 / 1 / 0
    default = False
    summary = "MASTER_ADDR pinned to localhost while the world size counts several machines"
    explanation = """
## What it does
Flags `os.environ["MASTER_ADDR"] = "localhost"` (or `127.0.0.1`, `0.0.0.0`: an address
written in the code, and the only one the file writes) in a file whose process group meets
through the environment (`env://`, the default) and whose world size multiplies a count of
machines (`args.world_size = args.gpus * args.nodes`, `world_size=ngpus * num_nodes`, an
`nprocs=` of that kind). Not flagged: a write under a test of that count (`if args.nodes
== 1:`), a file that asserts the count is one, a write under a test of MASTER_ADDR itself
or by `os.environ.setdefault`, an address from an option or the environment, or a group
that meets through a `tcp://` or `file://` address.

## Why is this bad?
With one machine, `localhost` is where rank 0 serves the rendezvous store, and the job
starts. The script offers more (`--nodes`), and counts the world over them: launched on
two machines, each process looks for the store on its own machine. Rank 0's machine waits
for processes that never arrive, the other machines' processes find no store (or one no
rank 0 serves), and `init_process_group` waits until its timeout on every machine. The
multi-node mode the script offers cannot start.

## Example
```python
args.world_size = args.gpus * args.nodes
os.environ["MASTER_ADDR"] = "localhost"
os.environ["MASTER_PORT"] = "8888"
mp.spawn(train, nprocs=args.gpus, args=(args,))
```

## Use instead
```python
args.world_size = args.gpus * args.nodes
os.environ["MASTER_ADDR"] = args.master_addr  # the first machine's host name
os.environ["MASTER_PORT"] = "8888"
mp.spawn(train, nprocs=args.gpus, args=(args,))
```

## Fix safety
No fix is offered: the address of the first machine is the author's to give (an option,
or the scheduler's host list).

## References
- https://pytorch.org/docs/stable/distributed.html#environment-variable-initialization
"""
    flag = (
        """
import argparse
import os
import torch.distributed as dist
import torch.multiprocessing as mp

def train(gpu, args):
    rank = args.nr * args.gpus + gpu
    dist.init_process_group("nccl", rank=rank, world_size=args.world_size)

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", "--nodes", default=1, type=int)
    parser.add_argument("-g", "--gpus", default=1, type=int)
    parser.add_argument("-nr", "--nr", default=0, type=int)
    args = parser.parse_args()
    args.world_size = args.gpus * args.nodes
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "8888"
    mp.spawn(train, nprocs=args.gpus, args=(args,))
""",
        """
import os
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

def ddp_setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group(backend="nccl", rank=rank, world_size=world_size)

def main_worker(gpu, world_size):
    ddp_setup(gpu, world_size)

def main(args):
    ngpus_per_node = torch.cuda.device_count()
    world_size = ngpus_per_node * args.num_nodes
    mp.spawn(main_worker, nprocs=ngpus_per_node, args=(world_size,))
""",
        """
import os
import torch.distributed as dist

def launch(cfg, local_rank):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = str(cfg.port)
    dist.init_process_group(
        "nccl",
        world_size=cfg.gpus_per_node * cfg.n_machines,
        rank=cfg.machine_rank * cfg.gpus_per_node + local_rank,
    )
""",
    )
    allow = (
        """
import os
import torch.distributed as dist
import torch.multiprocessing as mp

def train(gpu, args):
    dist.init_process_group("nccl", rank=args.nr * args.gpus + gpu, world_size=args.world_size)

def main(args):
    args.world_size = args.gpus * args.nodes
    os.environ["MASTER_ADDR"] = args.master_addr
    os.environ["MASTER_PORT"] = "8888"
    mp.spawn(train, nprocs=args.gpus, args=(args,))
""",
        """
import os
import torch.distributed as dist
import torch.multiprocessing as mp

def train(gpu, args):
    dist.init_process_group("nccl", rank=gpu, world_size=args.world_size)

def main(args):
    args.world_size = args.gpus * args.num_nodes
    if args.num_nodes == 1:
        os.environ["MASTER_ADDR"] = "localhost"
    mp.spawn(train, nprocs=args.gpus, args=(args,))
""",
        """
import os
import torch.distributed as dist
import torch.multiprocessing as mp

def train(gpu, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group("nccl", rank=gpu, world_size=world_size)

def main(ngpus):
    mp.spawn(train, nprocs=ngpus, args=(ngpus,))
""",
        """
import os
import torch.distributed as dist

def setup(args, rank):
    os.environ["MASTER_ADDR"] = "localhost"
    world_size = args.gpus * args.nodes
    dist.init_process_group("nccl", init_method=args.dist_url, rank=rank, world_size=world_size)
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for span in loopback_spans(ctx):
            yield Finding(
                span.write.assign,
                f"`{ctx.code(span.write.assign)}` makes every process look for the "
                "rendezvous store on its own machine, while the world size counts the "
                f"processes of `{ctx.code(span.nodes)}` machines "
                f"(`{ctx.code(span.product)}`): with more than one machine, the other "
                "machines' processes never reach rank 0's store and `init_process_group` "
                "waits until its timeout everywhere; take the first machine's address from "
                "an option or the environment",
            )
