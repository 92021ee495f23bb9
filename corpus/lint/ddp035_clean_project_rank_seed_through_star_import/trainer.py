"""Self-supervised depth trainer (torchrun --nproc_per_node=4 trainer.py).

`os` reaches this file through `from utils import *`: the local rank read from the
environment is still the rank, so `init_seeds(1 + self.local_rank)` seeds each rank on
its own and the random crops differ between ranks.
"""
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler

from utils import *


class StereoPairs(Dataset):
    def __len__(self):
        return 2000

    def __getitem__(self, index):
        left = torch.rand(3, 96, 320)
        right = torch.rand(3, 96, 320)
        top = torch.randint(0, 32, ()).item()
        if torch.rand(()) < 0.5:
            left, right = right.flip(-1), left.flip(-1)
        return left[:, top : top + 64], right[:, top : top + 64]


class Trainer:
    def __init__(self, log_dir="logs"):
        dist.init_process_group(backend="nccl")
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        init_seeds(1 + self.local_rank)
        if dist.get_rank() == 0:
            save_code("./trainer.py", log_dir)
        net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 1, 3, padding=1))
        self.model = nn.parallel.DistributedDataParallel(net.cuda(), device_ids=[self.local_rank])
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4)
        data = StereoPairs()
        self.sampler = DistributedSampler(data, shuffle=True, drop_last=True)
        self.loader = DataLoader(data, batch_size=8, sampler=self.sampler, num_workers=4)

    def train(self, epochs=20):
        for epoch in range(epochs):
            self.sampler.set_epoch(epoch)
            for left, right in self.loader:
                disparity = self.model(left.cuda())
                loss = F.l1_loss(disparity.expand_as(right[:, :1]), right[:, :1].cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()


if __name__ == "__main__":
    Trainer().train()
