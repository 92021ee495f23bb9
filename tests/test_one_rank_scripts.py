"""A script that starts its process group at import as a world of one (`rank=0,
world_size=1`) and trains from its `__main__` block runs as one process everywhere in
the file: rules whose harm needs several processes stay silent there."""

from __future__ import annotations

SCRIPT = """\
import os
import random

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler

os.environ["MASTER_ADDR"] = "127.0.0.1"
os.environ["MASTER_PORT"] = "29511"
dist.init_process_group("nccl", init_method="env://", rank=0, world_size={size})


class Flips(Dataset):
    def __init__(self, images, labels):
        self.images, self.labels = images, labels

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        image = self.images[index]
        if torch.rand(1).item() < 0.5:
            image = image.flip(-1)
        return image, self.labels[index]


def setup_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def train(dataset, net, epochs):
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler, num_workers=4)
    model = DDP(net.cuda(), device_ids=[0])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    setup_seed(0)
    data = torch.load("data.pt")
    train(Flips(data["images"], data["labels"]), torch.load("net.pt"), 10)
"""


def findings(cli, write, size: str) -> list[tuple[str, int]]:
    path = write("train.py", SCRIPT.replace("{size}", size))
    result = cli("check", "--exit-zero", "--output-format", "json", str(path))
    assert result.code == 0, result.err
    return sorted((d["code"], d["location"]["row"]) for d in result.json())


def test_a_world_of_one_started_at_import_is_one_process(cli, write):
    assert findings(cli, write, "1") == []


def test_a_world_of_several_shares_one_gpu_and_one_seed(cli, write):
    found = findings(cli, write, "int(os.environ['WORLD_SIZE'])")
    assert ("DDP001", 38) in found
    assert ("DDP035", 50) in found
