import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Regressor(nn.Module):
    def __init__(self, width=128):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(16, width), nn.GELU(), nn.Linear(width, 1))

    def forward(self, x):
        return self.body(x).squeeze(-1)


def train(epochs=3, accum_steps=1):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(0)  # expect: DDP001
    dist.init_process_group("nccl")
    net = Regressor().cuda(0)  # expect: DDP001
    net = DistributedDataParallel(net, device_ids=[local_rank])
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    scaler = torch.cuda.amp.GradScaler()
    ds = TensorDataset(torch.randn(4096, 16), torch.randn(4096))
    sampler = DistributedSampler(ds, drop_last=True)
    loader = DataLoader(ds, batch_size=128, sampler=sampler, num_workers=2)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank), y.cuda(local_rank)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = nn.functional.mse_loss(net(x), y)
            opt.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
    dist.destroy_process_group()


if __name__ == "__main__":
    train()
