"""Small CNN defined in the script; rank 0 alone measures accuracy through the DDP wrapper.

No `register_buffer` anywhere, but the BatchNorm layers keep running statistics: buffers
that DDP's forward broadcasts from rank 0, a collective the other ranks never join.
"""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class ConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)
        self.norm = nn.BatchNorm2d(cout)

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x)))


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(ConvBlock(3, 16), ConvBlock(16, 32), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = DDP(SmallNet().cuda(), device_ids=[local_rank])  # expect: DDP017
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    train = TensorDataset(torch.randn(2048, 3, 32, 32), torch.randint(0, 10, (2048,)))
    sampler = DistributedSampler(train, shuffle=True, drop_last=True)
    loader = DataLoader(train, batch_size=64, sampler=sampler)
    held_out = (torch.randn(256, 3, 32, 32).cuda(), torch.randint(0, 10, (256,)).cuda())

    for epoch in range(10):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            with torch.no_grad():
                acc = (model(held_out[0]).argmax(1) == held_out[1]).float().mean()  # expect: DDP021
            print(f"epoch {epoch}: held-out accuracy {acc.item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
