"""The pipeline engine's shape, but this backward runs the micro-batch's forward itself and
tests the loss it computed from this rank's data: a rank whose loss is not finite returns
before `backward()`, and the other ranks wait in DDP's gradient all-reduce."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class StageState:
    def __init__(self):
        self.losses = []


class StageEngine:
    def forward_backward(self, state, model, micro_batch):
        out = model(micro_batch["inputs"])
        loss = nn.functional.mse_loss(out, micro_batch["targets"])
        if not torch.isfinite(loss):
            return  # expect: DDP011
        state.losses.append(loss.detach())
        loss.backward()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 4))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    model = DDP(nn.Linear(16, 4).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    engine = StageEngine()
    for epoch in range(5):
        sampler.set_epoch(epoch)
        state = StageState()
        for inputs, targets in loader:
            optimizer.zero_grad(set_to_none=True)
            micro_batch = {"inputs": inputs.cuda(local_rank), "targets": targets.cuda(local_rank)}
            engine.forward_backward(state, model, micro_batch)
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
