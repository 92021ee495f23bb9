"""DDP045 (a sharded script whose model nothing wraps): gradients synchronised by hand are
a wrapper's work done otherwise, whichever collectives carry them; an all-reduce, or a
gather on rank 0 and a scatter of the mean back (a course assignment's way)."""

from __future__ import annotations

import pytest

from ddplint.api import lint_source

SCRIPT = """\
import os

import torch
import torch.distributed as dist
import torchvision
from torch.utils.data import DataLoader, DistributedSampler


class ClassIds(torch.utils.data.Dataset):
    def __len__(self):
        return 1000

    def __getitem__(self, index):
        return index
{sync}

def invert(generator, loader, device, steps):
    for class_ids in loader:
        targets = class_ids.to(device)
        images = torch.randn((len(targets), 3, 224, 224), device=device, requires_grad=True)
        optimizer = torch.optim.Adam([images, *generator.parameters()], lr=0.25)
        for _ in range(steps):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(generator(images), targets)
            loss.backward()
            {call}
            optimizer.step()


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    generator = torchvision.models.resnet18().to(device)
    dataset = ClassIds()
    loader = DataLoader(dataset, batch_size=50, sampler=DistributedSampler(dataset))
    invert(generator, loader, device, steps=1000)


if __name__ == "__main__":
    main()
"""

GATHER_SCATTER = """

def sync(model):
    rank, size = dist.get_rank(), dist.get_world_size()
    for param in model.parameters():
        if rank == 0:
            parts = [torch.empty_like(param.grad) for _ in range(size)]
            dist.gather(param.grad, gather_list=parts, dst=0)
            dist.scatter(param.grad, scatter_list=[torch.stack(parts).mean(0)] * size, src=0)
        else:
            dist.gather(param.grad, dst=0)
            dist.scatter(param.grad, src=0)
"""

ALL_REDUCE = """

def sync(model):
    for param in model.parameters():
        dist.all_reduce(param.grad)
        param.grad /= dist.get_world_size()
"""


def _codes(sync: str, call: str) -> list[str]:
    source = SCRIPT.format(sync=sync, call=call)
    return [d.code for d in lint_source(source, select=["DDP045"])]


def test_an_unsynchronised_copy_per_rank_is_reported() -> None:
    assert _codes("", "pass") == ["DDP045"]


@pytest.mark.parametrize("sync", [GATHER_SCATTER, ALL_REDUCE], ids=["gather-scatter", "all-reduce"])
def test_gradients_synchronised_by_hand_are_left_alone(sync: str) -> None:
    assert _codes(sync, "sync(generator)") == []
