"""Metrics that change with the number of processes, where the loader or the reduction
lies in another function or module: a padded evaluation loader returned by its builder and
reduced by a helper of another module (DDP003, unproven: the combination is out of sight),
and a shard's loss that a process-group helper of another module does not combine (DDP038)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

import ddplint.project.summaries
import ddplint.runner
from ddplint.cli import main
from ddplint.context import FileContext
from ddplint.project.summaries import ModuleHead, ModuleSummary

REDUCE_UTILS = """\
import torch.distributed as dist


def reduce_tensor(tensor):
    total = tensor.clone()
    dist.all_reduce(total)
    return total / dist.get_world_size()
"""

INIT_UTILS = """\
import os

import torch
import torch.distributed as dist


def init_distributed_mode(args):
    args.gpu = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(args.gpu)
    dist.init_process_group("nccl")
    dist.barrier()
"""

PADDED = """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler
from utils import reduce_tensor


def get_loaders(train_set, test_set):
    train_loader = DataLoader(train_set, sampler=DistributedSampler(train_set), drop_last=True)
    test_sampler = DistributedSampler(test_set, shuffle=False)
    test_loader = DataLoader(test_set, batch_size=16, sampler=test_sampler)
    return train_loader, test_loader


@torch.no_grad()
def validate(loader, model):
    for i, (x, y) in enumerate(loader):
        acc = (model(x).argmax(1) == y).float().mean()
        acc = {reduce}
    return acc


def main(model, train_set, test_set):
    dist.init_process_group("nccl")
    train_loader, test_loader = get_loaders(train_set, test_set)
    print(validate(test_loader, model))
"""

ONE_SHARD = """\
import argparse

import torch
from torch.utils.data import DataLoader, DistributedSampler
from utils import init_distributed_mode


def main(model, criterion, val_set):
    args = argparse.Namespace()
    init_distributed_mode(args)
    loader = DataLoader(val_set, batch_size=8, sampler=DistributedSampler(val_set, shuffle=False))
    losses = []
    model.eval()
    with torch.no_grad():
        for x, y in loader:
            losses.append(criterion(model(x), y).item())
    print(sum(losses) / len(losses))
"""


def findings(tmp_path: Path, capsys, files: dict[str, str], code: str) -> list[dict]:
    (tmp_path / "pyproject.toml").write_text("", encoding="utf-8")
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    args = ["check", "--no-cache", "--exit-zero", "--output-format", "json", "--preview"]
    main([*args, "--select", code, str(tmp_path / "train.py")])
    return json.loads(capsys.readouterr().out)


def test_padded_loader_reduced_by_an_imported_helper_is_unproven(tmp_path, capsys):
    train = PADDED.replace("{reduce}", "reduce_tensor(acc)")
    (found,) = findings(tmp_path, capsys, {"train.py": train, "utils.py": REDUCE_UTILS}, "DDP003")
    assert found["location"]["row"] == 9
    assert "(-len(dataset)) % N" in found["message"] and "none when N divides" in found["message"]
    assert found["unproven"] is True


def test_a_padded_loader_whose_results_stay_on_the_rank_is_not_ddp003s(tmp_path, capsys):
    train = PADDED.replace("{reduce}", "acc.item()")
    assert findings(tmp_path, capsys, {"train.py": train, "utils.py": REDUCE_UTILS}, "DDP003") == []


def test_a_process_group_helper_does_not_combine_a_shards_loss(tmp_path, capsys):
    files = {"train.py": ONE_SHARD, "utils.py": INIT_UTILS}
    (found,) = findings(tmp_path, capsys, files, "DDP038")
    assert found["message"].startswith("`losses` collects the results of this rank's shard")


def test_a_helper_that_reduces_silences_ddp038(tmp_path, capsys):
    train = (
        ONE_SHARD.replace(
            "init_distributed_mode(args)", "init_distributed_mode(args)\n    reduce_tensor"
        )
        .replace(
            "print(sum(losses) / len(losses))",
            "print(reduce_tensor(torch.tensor(sum(losses) / len(losses))))",
        )
        .replace(
            "from utils import init_distributed_mode",
            "from utils import init_distributed_mode, reduce_tensor",
        )
    )
    files = {"train.py": train, "utils.py": INIT_UTILS + "\n\n" + REDUCE_UTILS.split("\n", 2)[2]}
    assert findings(tmp_path, capsys, files, "DDP038") == []


@pytest.fixture
def summaries(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    counted: Counter[str] = Counter()
    real = ddplint.project.summaries.summarize

    def summarize(ctx: FileContext, head: ModuleHead | None = None) -> ModuleSummary:
        counted[Path(ctx.path).name] += 1
        return real(ctx, head)

    monkeypatch.setattr(ddplint.runner, "summarize", summarize)
    return counted


def test_a_one_file_run_summarises_only_the_imported_helper(tmp_path, capsys, summaries):
    (tmp_path / "other.py").write_text(REDUCE_UTILS, encoding="utf-8")
    train = PADDED.replace("{reduce}", "reduce_tensor(acc)")
    findings(tmp_path, capsys, {"train.py": train, "utils.py": REDUCE_UTILS}, "DDP003")
    assert "other.py" not in summaries and sum(summaries.values()) <= 2
