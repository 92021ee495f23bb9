"""PDE surrogate trainer: each sample picks random collocation points with NumPy inside
`__getitem__`, and the loader has no workers, so the draws come from each rank's own
unseeded NumPy generator; the torch seed only fixes the initial weights, which DDP
broadcasts from rank 0 anyway."""
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class Trajectories(Dataset):
    def __init__(self, fields, points_per_sample=512):
        self.fields = fields
        self.points_per_sample = points_per_sample

    def __len__(self):
        return len(self.fields)

    def __getitem__(self, index):
        field = self.fields[index]
        picked = np.random.randint(0, field.shape[0], self.points_per_sample)
        return torch.from_numpy(field[picked]).float()


def main():
    torch.manual_seed(0)
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    fields = np.load("burgers.npy")
    data = Trajectories(fields)
    sampler = DistributedSampler(data, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    net = nn.Sequential(nn.Linear(3, 128), nn.Tanh(), nn.Linear(128, 1))
    model = DDP(net.cuda(), device_ids=[local_rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(500):
        sampler.set_epoch(epoch)
        for batch in loader:
            batch = batch.cuda()
            loss = (model(batch[..., :3]).squeeze(-1) - batch[..., 3]).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
