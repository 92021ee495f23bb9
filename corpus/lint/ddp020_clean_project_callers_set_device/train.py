"""Entry point: torchrun --nproc_per_node=4 train.py"""
import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

import comm
import launcher


def main():
    local_rank = launcher.setup()
    model = DDP(nn.Linear(16, 2).cuda(), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = TensorDataset(torch.randn(512, 16), torch.randint(0, 2, (512,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        seen = 0
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            seen += len(y)
        print(epoch, comm.world_mean(loss.item()), sum(comm.gather_counts(seen)))


if __name__ == "__main__":
    main()
