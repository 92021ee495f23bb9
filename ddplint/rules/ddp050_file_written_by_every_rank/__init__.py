"""DDP050: one file rewritten by every rank at once."""

from __future__ import annotations

from collections.abc import Iterator

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.downloads import one_rank_first
from ddplint.domain.file_writes import FileWrite, file_writes, shared_file, shown_path
from ddplint.domain.overwrites import before_error
from ddplint.domain.runners import every_rank
from ddplint.domain.samplers import distributed_samplers
from ddplint.rule import Finding, Rule, register


@register
class FileWrittenByEveryRank(Rule):
    code = "DDP050"
    name = "file-written-by-every-rank"
    severity = Severity.WARNING
    default = False  # opt-in until judged at first contact (session 14: unjudged on the tuned sets)
    summary = "Every rank truncates and rewrites the same file (a log, a results file, a cache)"
    explanation = """
## What it does
Flags a write that truncates a file and that every process of the job runs on the same
path: `open(path, "w")` (and `"wb"`, `"w+"`), a `logging.FileHandler(path, mode="w")`,
`logging.basicConfig(filename=..., filemode="w")`, `numpy.save` / `savez` / `savetxt`, and
`Path.write_text` / `write_bytes` / `open("w")` on a `pathlib.Path`. The path must spell a
file name (`eval_logs.json`, `dev.tsv`) with nothing in it that differs between processes,
and no rank gate may stand on some path from the write up to module level or the script's
entry point. Left alone: writes under `if rank == 0:` (here or at every call of the
function), inside zero-first contexts or file locks, in the parent before `mp.spawn`, in
branches that run without distribution only; names built from the rank, a process id, the
clock or a temporary file; appends (mode `"a"`). A write in a function nothing in this file
calls depends on its callers elsewhere: reported as unproven (`--preview`), and so is a
write right before an exception leaves its function (an error report before `raise`):
the ranks that meet the error write it, and which ones do depends on the data. Checkpoints
(`torch.save`) are DDP013's.

## Why is this bad?
Each of the N processes opens the file with truncation and writes from its own offset: the
file is emptied up to N times while others write, and the processes' bytes overwrite one
another, so a reader (or the next run) can find it cut short or holding a mix of their
contents. A log file opened with `mode="w"` by every rank ends up with lines of all ranks
overwriting each other.

## Example
```python
results = evaluate(model, val_loader)
with open(os.path.join(args.output_dir, "eval_results.json"), "w") as f:
    json.dump(results, f)
```

## Use instead
```python
results = evaluate(model, val_loader)
if dist.get_rank() == 0:
    with open(os.path.join(args.output_dir, "eval_results.json"), "w") as f:
        json.dump(results, f)
```

## Fix safety
No automatic fix: the right rank test, and whether the other ranks must wait for the file
(a barrier), depend on the script.

## References
- https://pytorch.org/tutorials/intermediate/ddp_tutorial.html#save-and-load-checkpoints
"""
    flag = (
        """import json
import os
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
def main(val_set, evaluate):
    dist.init_process_group("nccl")
    loader = DataLoader(val_set, sampler=DistributedSampler(val_set, shuffle=False))
    results = evaluate(loader)
    with open(os.path.join("out", "eval_results.json"), "w") as f:
        json.dump(results, f)
""",
        """import logging
import torch.distributed as dist
def main():
    dist.init_process_group("nccl")
    handler = logging.FileHandler("train.log", mode="w")
    logging.getLogger().addHandler(handler)
if __name__ == "__main__":
    main()
""",
        """import os
import numpy as np
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
def embed_all(model, data):
    loader = DataLoader(data, sampler=DistributedSampler(data))
    return np.concatenate([model(x).numpy() for x in loader])
def main(model, data):
    dist.init_process_group("nccl")
    np.save(os.path.join("out", "embeddings.npy"), embed_all(model, data))
""",
    )
    allow = (
        """import json
import os
import torch.distributed as dist
def main():
    dist.init_process_group("nccl")
    results = {"acc": 0.9}
    if dist.get_rank() == 0:
        with open(os.path.join("out", "eval_results.json"), "w") as f:
            json.dump(results, f)
if __name__ == "__main__":
    main()
""",
        """import os
import torch.distributed as dist
def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    with open(f"preds_rank{rank}.txt", "w") as f:
        f.write("...")
    with open("train.log", "a") as f:
        f.write("started")
if __name__ == "__main__":
    main()
""",
        """import json
import torch.distributed as dist
from torch.utils.data import DataLoader, SequentialSampler
def main(test_set, predict):
    dist.init_process_group("nccl")
    loader = DataLoader(test_set, sampler=SequentialSampler(test_set))
    with open("preds.json", "w") as f:  # every rank writes the same bytes: left alone
        json.dump(predict(loader), f)
""",
        """import logging
import os
import sys
import torch.distributed as dist
def main():
    dist.init_process_group("nccl")
    if dist.get_rank() == 0:
        logging.basicConfig(filename="train.log", filemode="w")
    else:
        sys.stdout = open(os.devnull, "w")
if __name__ == "__main__":
    main()
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        sharded = bool(distributed_samplers(ctx))
        for write in file_writes(ctx):
            if write.deletes:
                continue
            finding = _judged(ctx, write, sharded)
            if finding is not None:
                yield finding


def _judged(ctx: FileContext, write: FileWrite, sharded: bool) -> Finding | None:
    if not (write.logs or sharded):
        return None  # every rank computes the same: the same bytes, written N times
    shared = shared_file(ctx, write.path, write.call)
    runs = every_rank(ctx, write.call, one_rank_first) if shared is not False else False
    if shared is False or runs is False:
        return None
    if before_error(ctx, write.call):
        runs = None  # a report written before an error: the ranks that meet it write
    file = shown_path(ctx, write.path, write.call)
    message = (
        f"every rank {write.how.format(file=file)}: the N processes truncate this one "
        "file and write it from its start at the same time, so a reader can find it cut "
        f"short, and where the ranks' {'lines' if write.logs else 'contents'} differ they "
        "overwrite one another; write it on one rank (`if rank == 0:`)"
    )
    return Finding(write.call, message, unproven=not (shared and runs))
