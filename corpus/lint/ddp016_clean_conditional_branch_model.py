"""Mixture-of-experts style model: experts are skipped per batch, so the flag is needed
and decided by the model itself (a variable that is not always True)."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class TinyMoE(nn.Module):
    has_dynamic_routing = True

    def __init__(self, n_experts=4):
        super().__init__()
        self.gate = nn.Linear(16, n_experts)
        self.experts = nn.ModuleList(nn.Linear(16, 16) for _ in range(n_experts))

    def forward(self, x):
        choice = self.gate(x).mean(0).argmax().item()
        return self.experts[choice](x)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    net = TinyMoE().cuda(local_rank)
    unused = False
    if net.has_dynamic_routing:
        unused = True
    model = DDP(net, device_ids=[local_rank], find_unused_parameters=unused)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    data = TensorDataset(torch.randn(1024, 16), torch.randn(1024, 16))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=32, sampler=sampler)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x.cuda(local_rank)), y.cuda(local_rank))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
