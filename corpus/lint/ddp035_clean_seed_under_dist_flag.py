"""An anomaly-detection trainer with a `dist: bool` switch: the fixed seed is set only on
the one-process path (`if not dist:`); under torchrun nothing seeds the ranks alike."""
import os
import random

import numpy as np
import torch
import torch.distributed as dist_api
import torchvision.transforms as T
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


def init_seeds(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class Patches(Dataset):
    def __init__(self):
        self.augment = T.Compose([T.RandomRotation(15), T.RandomHorizontalFlip()])

    def __len__(self):
        return 8000

    def __getitem__(self, index):
        return self.augment(torch.rand(3, 64, 64)), index % 2


def run(model, dist: bool, epochs=10):
    data = Patches()
    if dist:
        local_rank = int(os.environ["LOCAL_RANK"])
        dist_api.init_process_group("nccl")
        torch.cuda.set_device(local_rank)
        sampler = DistributedSampler(data)
        loader = DataLoader(data, batch_size=64, sampler=sampler, num_workers=4)
        model = DDP(model.cuda(), device_ids=[local_rank])
    else:
        sampler = None
        loader = DataLoader(data, batch_size=64, shuffle=True, num_workers=4)
        model = model.cuda()
    if not dist:
        init_seeds(0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        for x, y in loader:
            x = x.cuda() + 0.05 * torch.randn(x.shape, device="cuda")
            loss = torch.nn.functional.cross_entropy(model(x), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.Flatten(), torch.nn.LazyLinear(2))
    run(net, dist="LOCAL_RANK" in os.environ)
