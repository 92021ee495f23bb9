"""DDP035 where the loader's dataset class, in another module, draws only from `random`'s
(or NumPy's) generator: torch's seed reaches those draws only through the workers it
seeds, so the finding follows the loader's worker count: none (left out, 0, or an
option's default of 0) leaves the seed alone, a positive count is proven, and a count
read from a config is unproven, saying why."""

from __future__ import annotations

import pytest

DATASET = """\
import random

import torch


class CropDataset(torch.utils.data.Dataset):
    def __init__(self, clips, length):
        self.clips = clips
        self.length = length
        random.seed(1234)

    def __len__(self):
        return len(self.clips)

    def __getitem__(self, index):
        clip = self.clips[index]
        start = random.randint(0, clip.shape[-1] - self.length)
        return clip[..., start : start + self.length]
"""

TRAIN = """\
import argparse
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler

from clips import CropDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default={default})
    args = parser.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    torch.manual_seed(1234)
    cfg = torch.load("config.pt")
    model = DistributedDataParallel(torch.nn.Conv1d(1, 1, 3).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters())
    train_set = CropDataset(torch.load("clips.pt"), 8000)
    sampler = DistributedSampler(train_set)
    loader = DataLoader(train_set, batch_size=16, sampler=sampler{workers})
    for epoch in range(100):
        sampler.set_epoch(epoch)
        for clip in loader:
            loss = model(clip.cuda()).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    main()
"""


def ddp035(cli, write, workers: str, default: str = "0") -> list[tuple[int, bool, str]]:
    write("pyproject.toml", '[project]\nname = "crops"\nversion = "0.1"\n')
    write("clips.py", DATASET)
    path = write("train.py", TRAIN.format(workers=workers, default=default))
    result = cli(
        "check",
        "--exit-zero",
        "--preview",
        "--select",
        "DDP035",
        "--output-format",
        "json",
        str(path),
    )
    assert result.code == 0, result.err
    return [(d["location"]["row"], d["unproven"], d["message"]) for d in result.json()]


@pytest.mark.parametrize(
    ("workers", "default"),
    [("", "0"), (", num_workers=0", "0"), (", num_workers=args.workers", "0")],
)
def test_a_loader_without_workers_leaves_the_seed_alone(cli, write, workers, default):
    assert ddp035(cli, write, workers, default) == []


@pytest.mark.parametrize(
    ("workers", "default"), [(", num_workers=4", "0"), (", num_workers=args.workers", "8")]
)
def test_workers_seeded_from_torch_replay_the_same_crops(cli, write, workers, default):
    assert [(row, unproven) for row, unproven, _ in ddp035(cli, write, workers, default)] == [
        (19, False)
    ]


def test_a_worker_count_out_of_sight_is_unproven_and_says_why(cli, write):
    [(row, unproven, message)] = ddp035(cli, write, ", num_workers=cfg['workers']")
    assert (row, unproven) == (19, True)
    assert "follow torch's seed only in a loader's workers" in message
