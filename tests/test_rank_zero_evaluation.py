"""DDP038 where one rank evaluates over a sharded loader (`if rank == 0: evaluate(...)`):
the metric covers that rank's 1/N of the evaluation set, and the rest is never evaluated.
Reached through a dict of result lists, a name bound to the evaluation function, a
subclass's override of the method a base trainer calls, and the one-GPU branch of a
count of GPUs; left alone where the rank-0 loader has no DistributedSampler."""

from __future__ import annotations

import pytest

RANK_ZERO_DICT = """\
import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def main(model, val_set, steps):
    dist.init_process_group("nccl")
    val_loader = DataLoader(val_set, batch_size=8, sampler=DistributedSampler(val_set))
    best = float("inf")
    for step in range(steps):
        if dist.get_rank() == 0:
            model.eval()
            metrics = {"loss": [], "accuracy": []}
            with torch.no_grad():
                for batch in val_loader:
                    out = model(batch)
                    metrics["loss"].append(out.loss.item())
                    metrics["accuracy"].append(out.accuracy)
            val_loss = np.mean(metrics["loss"])
            if val_loss < best:
                best = val_loss
                torch.save(model.module.state_dict(), "best.pt")
"""

ALIASED = """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


class Meter:
    def __init__(self):
        self.sum = self.count = 0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


def train(epoch, loader):
    pass


def test(epoch, loader):
    top1 = Meter()
    with torch.no_grad():
        for x, y in loader:
            top1.update((model(x).argmax(1) == y).float().mean().item(), len(y))
    print(f"epoch {epoch} accuracy {top1.avg:.3f}")


if __name__ == "__main__":
    gpu_count = torch.cuda.device_count()
    if gpu_count > 1:
        dist.init_process_group("nccl")
        rank = dist.get_rank()
    else:
        rank = 0
    if gpu_count == 1:
        test_loader = DataLoader(test_set, batch_size=64)
    else:
        test_loader = DataLoader(test_set, batch_size=64, sampler=DistributedSampler(test_set))
    train_fn, test_fn = train, test
    for epoch in range(10):
        train_fn(epoch, None)
        if rank == 0:
            test_fn(epoch, test_loader)
"""

OVERRIDE = """\
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


class Trainer:
    def __init__(self, valid_set):
        dist.init_process_group("nccl")
        self.rank = dist.get_rank()
        self.valid_loader = DataLoader(
            valid_set, batch_size=16, sampler=DistributedSampler(valid_set)
        )
        self.best = float("inf")

    def fit(self, epochs):
        for epoch in range(epochs):
            loss = self.validate(self.valid_loader)
            if loss < self.best and self.rank == 0:
                self.best = loss
                torch.save(self.model.module.state_dict(), "best.pt")

    def validate(self, loader):
        raise NotImplementedError


class RegressionTrainer(Trainer):
    def validate(self, loader):
        total = 0.0
        with torch.no_grad():
            for x, y in loader:
                total += torch.nn.functional.mse_loss(self.model(x), y).item()
        return total / len(loader)


if __name__ == "__main__":
    RegressionTrainer(torch.load("valid.pt")).fit(10)
"""

PLAIN_RANK_ZERO = """\
import numpy as np
import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler


def main(model, train_set, val_set, steps):
    dist.init_process_group("nccl")
    train_loader = DataLoader(train_set, batch_size=8, sampler=DistributedSampler(train_set))
    val_loader = DataLoader(val_set, batch_size=8)  # rank 0 reads the whole set
    for step in range(steps):
        if dist.get_rank() == 0:
            metrics = {"loss": []}
            with torch.no_grad():
                for batch in val_loader:
                    metrics["loss"].append(model(batch).loss.item())
            print("val loss", np.mean(metrics["loss"]))
"""


def ddp038(cli, write, name: str, source: str) -> list[tuple[int, str]]:
    path = write(name, source)
    result = cli("check", "--exit-zero", "--select", "DDP038", "--output-format", "json", str(path))
    assert result.code == 0, result.err
    return [(d["location"]["row"], d["message"]) for d in result.json()]


def test_rank_zero_evaluation_into_a_dict_of_lists(cli, write):
    found = ddp038(cli, write, "dpo.py", RANK_ZERO_DICT)
    assert [row for row, _ in found] == [21]
    message = found[0][1]
    assert "the one rank that evaluates" in message
    assert "the rest is never evaluated" in message
    assert "each rank may decide differently" not in message


def test_evaluation_function_called_through_a_bound_name_on_rank_zero(cli, write):
    found = ddp038(cli, write, "snn.py", ALIASED)
    assert [row for row, _ in found] == [28]
    assert "the one rank that evaluates" in found[0][1]


def test_only_the_count_that_starts_the_job_marks_a_one_process_branch(cli, write):
    # `gpu_count == 1` is the other side of `gpu_count > 1`, under which the process group
    # starts: its plain loader is read by one process. A count that starts nothing says
    # nothing about the loader built under it, which rank 0 may then read whole.
    other = ALIASED.replace("    if gpu_count == 1:\n", "    if len(test_set) == 1:\n")
    assert ddp038(cli, write, "other.py", other) == []


def test_a_base_trainers_call_reaches_the_subclass_override(cli, write):
    found = ddp038(cli, write, "trainers.py", OVERRIDE)
    assert [row for row, _ in found] == [18]
    assert "returned by `validate()`" in found[0][1]


@pytest.mark.parametrize(
    "source",
    [
        PLAIN_RANK_ZERO,
        OVERRIDE.replace("sampler=DistributedSampler(valid_set)", "shuffle=False"),
    ],
)
def test_rank_zero_evaluation_of_the_whole_set_is_left_alone(cli, write, source):
    assert ddp038(cli, write, "clean.py", source) == []
