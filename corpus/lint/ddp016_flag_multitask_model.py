"""Multi-task model whose auxiliary head is always used: find_unused_parameters was
copied from an older branchy version of the model and is no longer needed."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(32, 128), nn.ReLU())
        self.cls_head = nn.Linear(128, 10)
        self.reg_head = nn.Linear(128, 1)

    def forward(self, x):
        h = self.trunk(x)
        return self.cls_head(h), self.reg_head(h)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    model = MultiTask().cuda(local_rank)
    model = DDP(model, device_ids=[local_rank], find_unused_parameters=True)  # expect: DDP016
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)

    data = TensorDataset(torch.randn(4096, 32), torch.randint(0, 10, (4096,)), torch.randn(4096, 1))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler, num_workers=2)
    for epoch in range(10):
        sampler.set_epoch(epoch)
        for x, y, t in loader:
            x, y, t = x.cuda(local_rank), y.cuda(local_rank), t.cuda(local_rank)
            logits, value = model(x)
            loss = nn.functional.cross_entropy(logits, y) + nn.functional.mse_loss(value, t)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
