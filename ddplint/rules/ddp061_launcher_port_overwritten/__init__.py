"""DDP061: a script that replaces the MASTER_PORT its launcher exported."""

from __future__ import annotations

import os
from collections.abc import Iterator

from ddplint.context import FileContext
from ddplint.diagnostics import Applicability, Severity
from ddplint.domain.versions import installs_torch_since
from ddplint.project_files import project_root
from ddplint.rule import Finding, FixSpec, Rule, register
from ddplint.rules.ddp061_launcher_port_overwritten.overwrites import PORT, port_overwrites

# The first torch whose torchrun hands its workers the agent's store by default.
SHARED_STORE = (2, 5)


@register
class LauncherPortOverwritten(Rule):
    code = "DDP061"
    name = "launcher-port-overwritten"
    severity = Severity.ERROR
    needs_several = False  # the launcher's store waits for one process too
    fixable = Applicability.UNSAFE
    summary = "MASTER_PORT overwritten under a launcher: torchrun's workers wait at start-up"
    explanation = """
## What it does
Flags `os.environ["MASTER_PORT"] = "12355"` (a port written in the code, not under a test
of the port itself) before, in the same function, an `init_process_group` that meets through
the environment (`env://`, the default) and is handed no rank or store: RANK must then come
from a launcher (torchrun, `torch.distributed.launch`, a cluster operator), which exports
its own MASTER_PORT with it. A file that sets a rank or world-size variable itself
(`os.environ["RANK"] = ...`, `env={"RANK": ...}` for a child) launches its processes itself
and is not flagged; nor is `os.environ.setdefault("MASTER_PORT", ...)`, a write under a test
of the port (`if "MASTER_PORT" not in os.environ:`), a port read from an option or the
environment, or a write after the process group starts.

The harm needs PyTorch 2.5 or later: proven where the project installs torch with no upper
bound or pins a 2.5 or later release, unproven (`--preview`) where nothing it ships names
its torch, and not reported where its pins stop before 2.5.

## Why is this bad?
With one process there is no process group. With N processes started by torchrun, from
PyTorch 2.5 on, the launcher's agent hosts the rendezvous store at the port it exports, and
`init_process_group` in every worker only connects to it as a client
(`TORCHELASTIC_USE_AGENT_STORE=True`). Replace the port and no process serves it: every
rank retries the connection until the store timeout (10 minutes on NCCL, 30 on gloo) and
then fails, on a single node as on many. The script works when its author starts it in
another way, which is why the line survives.

## Example
```python
def setup():
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
```

## Use instead
```python
def setup():
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "12355")
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
```

## Fix safety
The fix writes the port only where the environment has none
(`os.environ.setdefault("MASTER_PORT", ...)`). It is unsafe: a MASTER_PORT exported in the
shell now wins over the one in the code.

## References
- https://pytorch.org/docs/stable/elastic/run.html
- https://pytorch.org/docs/stable/distributed.html#environment-variable-initialization
"""
    flag = (
        """
import os
import torch
import torch.distributed as dist

def ddp_setup():
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group(backend="nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
""",
        """
import os
import torch.distributed as dist

PORT = 29501

def init_distributed():
    os.environ["MASTER_PORT"] = str(PORT)
    dist.init_process_group("nccl", init_method="env://")
    return dist.get_rank()
""",
        """
import os
import torch
import torch.distributed as dist

class Trainer:
    def __init__(self, model):
        os.environ["MASTER_ADDR"] = "127.0.0.1"
        os.environ["MASTER_PORT"] = "29500"
        dist.init_process_group(backend="nccl", init_method="env://")
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.model = model.to(self.local_rank)
""",
    )
    allow = (
        """
import os
import torch.distributed as dist

def setup():
    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", "12355")
    dist.init_process_group("nccl")
""",
        """
import os
import torch.distributed as dist
import torch.multiprocessing as mp

def worker(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group("nccl", rank=rank, world_size=world_size)

if __name__ == "__main__":
    mp.spawn(worker, args=(4,), nprocs=4)
""",
        """
import os
import torch.distributed as dist

def setup_slurm():
    os.environ["MASTER_PORT"] = "29500"
    os.environ["RANK"] = os.environ["SLURM_PROCID"]
    os.environ["WORLD_SIZE"] = os.environ["SLURM_NTASKS"]
    dist.init_process_group("nccl")
""",
        """
import os
import torch.distributed as dist

def setup(args):
    if "MASTER_PORT" not in os.environ:
        os.environ["MASTER_PORT"] = "12355"
    os.environ["MASTER_ADDR"] = os.environ.get("MASTER_ADDR", "localhost")
    dist.init_process_group("nccl")
""",
        """
import os
import torch.distributed as dist

def setup(args):
    os.environ["MASTER_PORT"] = str(args.port)
    dist.init_process_group("nccl")
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        found_any = port_overwrites(ctx)
        if not found_any:
            return
        root = project_root(ctx.path) if os.path.isfile(ctx.path) else None
        shared_store = installs_torch_since(root, ctx.path, SHARED_STORE) if root else None
        if shared_store is False:
            return  # the project's torch predates the launcher's shared store
        for found in found_any:
            shown = ctx.code(found.value)
            yield Finding(
                found.assign,
                f"`{ctx.code(found.assign)}` replaces the port the launcher exported, and "
                f"`{ctx.code(found.init.func)}(...)` below takes its rank from that launcher: "
                "under torchrun (PyTorch 2.5 and later) every worker only connects to the "
                "store torchrun hosts at its own port, so no process serves this one and "
                "every rank waits in `init_process_group` until the store timeout (10 "
                "minutes on NCCL, 30 on gloo); set it only where the environment has none",
                fix=FixSpec(
                    "Set the port only where the environment has none",
                    replacements=(
                        (
                            found.assign,
                            f'{ctx.code(found.environ)}.setdefault("{PORT}", {shown})',
                        ),
                    ),
                    applicability=Applicability.UNSAFE,
                ),
                unproven=shared_store is None,
            )
