"""DDP051: one file deleted by every rank at once."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.downloads import one_rank_first
from ddplint.domain.file_writes import file_writes, shared_file, shown_path
from ddplint.domain.runners import every_rank
from ddplint.names import dotted
from ddplint.rule import Finding, Rule, register

# Exceptions whose handler absorbs a delete that another rank made first.
_ABSORBING = frozenset({"FileNotFoundError", "OSError", "IOError", "Exception", "BaseException"})


@register
class FileDeletedByEveryRank(Rule):
    code = "DDP051"
    name = "file-deleted-by-every-rank"
    severity = Severity.WARNING
    default = False  # opt-in until judged at first contact (session 14: unjudged on the tuned sets)
    summary = "Every rank deletes the same file: the ranks that come second raise FileNotFoundError"
    explanation = """
## What it does
Flags `os.remove`, `os.unlink`, `shutil.rmtree` and `Path.unlink()` that every process of
the job runs on the same path (a path that spells a file name, nothing in it differing
between processes; no rank gate on some path from the call up to module level or the
script's entry point). Left alone: deletes under a rank gate (here or at every call of the
function), in zero-first contexts or file locks, in one process; deletes that tolerate a
missing file (`shutil.rmtree(..., ignore_errors=True)`, `Path.unlink(missing_ok=True)`, a
`try` that catches `FileNotFoundError` or `OSError`). A delete in a function nothing in
this file calls depends on its callers elsewhere: reported as unproven (`--preview`).

## Why is this bad?
The N processes race to delete one file. The first delete succeeds; a rank whose delete
comes after it raises `FileNotFoundError` and stops, and the launcher then stops the job.
An `os.path.exists` test before the delete does not help: every rank can pass the test
before the first one deletes the file.

## Example
```python
if os.path.exists(os.path.join(out_dir, "best.pt")):
    os.remove(os.path.join(out_dir, "best.pt"))
```

## Use instead
```python
if dist.get_rank() == 0 and os.path.exists(os.path.join(out_dir, "best.pt")):
    os.remove(os.path.join(out_dir, "best.pt"))
dist.barrier()  # if the other ranks must not see the old file
```

## Fix safety
No automatic fix: the right rank test, and whether the other ranks must wait, depend on
the script.

## References
- https://docs.python.org/3/library/os.html#os.remove
"""
    flag = (
        """import os
import torch.distributed as dist
def main():
    dist.init_process_group("nccl")
    if os.path.exists("outputs/best.pt"):
        os.remove("outputs/best.pt")
if __name__ == "__main__":
    main()
""",
        """import shutil
import torch.distributed as dist
def reset(out_dir):
    shutil.rmtree(f"{out_dir}/samples")
def main():
    dist.init_process_group("nccl")
    reset("runs")
if __name__ == "__main__":
    main()
""",
        """from pathlib import Path
import torch.distributed as dist
def main():
    dist.init_process_group("nccl")
    flag = Path("runs") / "done.flag"
    if flag.exists():
        flag.unlink()
if __name__ == "__main__":
    main()
""",
    )
    allow = (
        """import os
import shutil
import torch.distributed as dist
def main():
    dist.init_process_group("nccl")
    if dist.get_rank() == 0 and os.path.exists("outputs/best.pt"):
        os.remove("outputs/best.pt")
    shutil.rmtree("outputs/tmp", ignore_errors=True)
    try:
        os.remove("outputs/last.pt")
    except FileNotFoundError:
        pass
if __name__ == "__main__":
    main()
""",
        """import os
import torch.distributed as dist
def main():
    dist.init_process_group("nccl")
    lock = f"worker{dist.get_rank()}.lock"
    if os.path.exists(lock):
        os.remove(lock)
if __name__ == "__main__":
    main()
""",
        """import os
import shutil
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
def worker(rank, n):
    dist.init_process_group("nccl", rank=rank, world_size=n)
def launch():
    shutil.rmtree("runs/samples")
    n = torch.cuda.device_count()
    mp.spawn(worker, args=(n,), nprocs=n)
if __name__ == "__main__":
    launch()
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        for write in file_writes(ctx):
            if not write.deletes or _absorbed(ctx, write.call):
                continue
            shared = shared_file(ctx, write.path, write.call, write.folder)
            runs = every_rank(ctx, write.call, one_rank_first) if shared is not False else False
            if shared is False or runs is False:
                continue
            file = shown_path(ctx, write.path, write.call, write.folder)
            yield Finding(
                write.call,
                f"every rank {write.how.format(file=file)}: the first delete succeeds and a "
                "rank whose delete comes after it raises `FileNotFoundError`; delete it on "
                "one rank (`if rank == 0:`)",
                unproven=not (shared and runs),
            )


def _absorbed(ctx: FileContext, call: cst.Call) -> bool:
    """`call` runs in a `try` whose handlers catch a missing file (`except OSError:`, a bare
    `except:`)."""
    for ancestor in ctx.ancestors(call):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            return False
        if (
            type(ancestor) is cst.Try
            and ctx.is_inside(call, ancestor.body)
            and any(_catches_missing(handler) for handler in ancestor.handlers)
        ):
            return True
    return False


def _catches_missing(handler: cst.ExceptHandler) -> bool:
    kinds = handler.type
    if kinds is None:
        return True
    names = [e.value for e in kinds.elements] if type(kinds) is cst.Tuple else [kinds]
    return any((dotted(n) or "").rsplit(".", 1)[-1] in _ABSORBING for n in names)
