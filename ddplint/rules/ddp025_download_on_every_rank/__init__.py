"""DDP025: dataset download / from_pretrained run by every rank at once."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from ddplint.context import FileContext
from ddplint.diagnostics import Severity
from ddplint.domain.downloads import costs_only, download_message, one_rank_first
from ddplint.domain.paths import mentions_rank
from ddplint.domain.processes import runs_in_one_process, single_process
from ddplint.domain.project_view import project_of
from ddplint.rule import Finding, Rule, register


@register
class DownloadOnEveryRank(Rule):
    code = "DDP025"
    name = "download-on-every-rank"
    severity = Severity.WARNING
    default = False
    summary = "Dataset download / from_pretrained run by every rank at once"
    explanation = """\
## What it does
Flags downloads every rank starts at the same moment: a dataset class called with
`download=True` (torchvision, torchaudio, torchtext), `X.from_pretrained("org/name")` with
a hub id, `datasets.load_dataset("name")`, `hf_hub_download`, `snapshot_download`,
`torch.hub.load` and `torch.hub.load_state_dict_from_url`. Left alone: calls under a rank
condition, inside `with torch_distributed_zero_first(rank):` / `main_process_first()` /
`FileLock(...)`, after an `if rank != 0: dist.barrier()`, after a rank-0 download followed
by a barrier, in a helper only called in those ways, in the constructor of a class kept
only in module-level tables (`SPECS = {"fd": dict(cls=Detector)}`, named in no other file)
whose every read but a membership test runs in those ways (a factory that builds the class
by name on rank 0 first), in the parent process before it calls `mp.spawn`, in code that
never runs (a function nothing calls, `ddplint.domain.liveness`), on the single-process
side of a distributed switch, in a test that runs in the one test process (a
`unittest.TestCase` that starts no job), in a command-line subcommand that starts no job
where another one does (`python main.py download` before `torchrun main.py
train`), `download=False`, and local paths.

Opt-in (not in the default rule set; `--extend-select DDP025`): at first contact with
unseen repositories most of its findings were torchvision downloads of a small dataset that
maintainers keep as they are (the dataset is usually present after the first run, and
torchvision checks the archive before extracting again).

## Why is this bad?
N processes start the same download into the same directory at once. torchvision's
downloaders write and extract archives in place with no locking, so ranks can read a
half-written or doubly-extracted archive (warning). `torch.hub.load` extracts a GitHub
repository into one hub folder after removing the old copy, so a rank can import a
half-extracted repository (warning). The Hugging Face cache takes file locks, so on one
machine the other ranks wait; every rank still queries the hub, and on a filesystem shared
across nodes the locks may not hold. `torch.hub.load_state_dict_from_url` writes each
download to a temporary file and renames it into place. Those two cost time and traffic
rather than corrupt files, and are reported as information. Downloads into a folder per
rank (`root / str(rank)`) and scripts that run as a single process are left alone. Let one
process download first, then the others read the cache.

## Example
```python
train_set = torchvision.datasets.CIFAR10("data", train=True, download=True)
```

## Use instead
```python
if dist.get_rank() != 0:
    dist.barrier()          # wait for rank 0 to download
train_set = torchvision.datasets.CIFAR10("data", train=True, download=True)
if dist.get_rank() == 0:
    dist.barrier()          # release the others
```
or download in a separate step before launching and pass `download=False`.

## Fix safety
No fix: where the barrier goes depends on the process-group setup.

## References
- https://pytorch.org/vision/stable/datasets.html
- https://huggingface.co/docs/transformers/main_classes/trainer#transformers.TrainingArguments.main_process_first
"""
    flag = (
        """\
import torch.distributed as dist
from torchvision import datasets, transforms

def build(root):
    dist.init_process_group("nccl")
    tf = transforms.ToTensor()
    return datasets.CIFAR10(root, train=True, download=True, transform=tf)
""",
        """\
import torch.distributed as dist
from transformers import AutoModelForSequenceClassification, AutoTokenizer

MODEL = "bert-base-uncased"

def load(local_rank):
    dist.init_process_group("nccl")
    tokenizer = AutoTokenizer.from_pretrained(MODEL)
    model = AutoModelForSequenceClassification.from_pretrained(MODEL, num_labels=2)
    return tokenizer, model
""",
        """\
import torch.distributed as dist
from datasets import load_dataset

dist.init_process_group("nccl")
raw = load_dataset("imdb", split="train")
""",
    )
    allow = (
        """\
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torchvision import datasets

def worker(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    train_set = datasets.MNIST("data", train=True)

def main():
    datasets.MNIST("data", train=True, download=True)
    world_size = torch.cuda.device_count()
    mp.spawn(worker, args=(world_size,), nprocs=world_size)
""",
        """\
import torch.distributed as dist
from torchvision import datasets

def build(root):
    rank = dist.get_rank()
    if rank != 0:
        dist.barrier()
    train_set = datasets.MNIST(root, train=True, download=True)
    if rank == 0:
        dist.barrier()
    return train_set
""",
        """\
import os
import torch.distributed as dist
from transformers import AutoModel

def load(args):
    dist.init_process_group("nccl")
    base = AutoModel.from_pretrained("./checkpoints/base")
    other = AutoModel.from_pretrained(os.path.join(args.out, "best"))
    return base, other
""",
        """\
import torch.distributed as dist
import torchvision
from contextlib import contextmanager

@contextmanager
def torch_distributed_zero_first(rank):
    if rank not in (-1, 0):
        dist.barrier()
    yield
    if rank == 0:
        dist.barrier()

def build(root, rank):
    with torch_distributed_zero_first(rank):
        train = torchvision.datasets.CIFAR100(root, train=True, download=True)
    if rank == 0:
        torchvision.datasets.CIFAR100(root, train=False, download=True)
    dist.barrier()
    val = torchvision.datasets.CIFAR100(root, train=False, download=False)
    return train, val
""",
    )

    def check(self, ctx: FileContext) -> Iterator[Finding]:
        if single_process(ctx):
            return
        for call in ctx.calls:
            what = download_message(ctx, call)
            if what is None or _runs_once_or_nowhere(ctx, call) or _reported_by_callers(ctx, call):
                continue
            # Downloads through a temporary file or under file locks cost time, they do not
            # corrupt anything: reported as information.
            safe = costs_only(ctx, call)
            yield Finding(call, what, severity=Severity.INFO if safe else None)
        project = project_of(ctx)
        if project is None:
            return
        for call in ctx.calls:
            if project.helper_downloads(ctx, call) and not _runs_once_or_nowhere(ctx, call):
                yield Finding(
                    call,
                    f"`{ctx.code(call.func).strip()}()` downloads in place (`download=True` or "
                    "`torch.hub.load`) and runs here on every rank at once: concurrent "
                    "downloads and extractions into one directory can leave corrupt files; "
                    "let rank 0 call it first, then barrier",
                )


def _runs_once_or_nowhere(ctx: FileContext, call: cst.Call) -> bool:
    """One rank downloads first (a rank guard, a zero-first context, a barrier order, the
    parent before `mp.spawn`, here or at every call of the function), each rank into its own
    folder (`root / str(rank)`), the call runs in one process (the single-process side of a
    switch, a single-process test). Code nothing calls is left to the checker
    (`ddplint.domain.liveness`)."""
    return (
        one_rank_first(ctx, call)
        or runs_in_one_process(ctx, call)
        or any(mentions_rank(ctx, arg.value) for arg in call.args)
    )


def _reported_by_callers(ctx: FileContext, call: cst.Call) -> bool:
    """The call's function runs distributed only because a distributed module calls it by
    name, and that module reports its call (`Project.distributed_callers_call`)."""
    func = ctx.enclosing_function(call)
    project = project_of(ctx)
    return func is not None and project is not None and project.distributed_callers_call(ctx, func)
