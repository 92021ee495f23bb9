"""A pipeline engine: `forward` registers each micro-batch's loss in a state object, and
`backward` later pops what the stage holds. The last pipeline stage holds a loss, the other
stages none, and that depends on the schedule, the same on every data-parallel replica,
not on this rank's data: the early `return` skips the same backward on every replica."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class StageState:
    def __init__(self):
        self.pending = []
        self.microbatches_done = 0

    def register_for_backward(self, loss):
        self.pending.append(loss)

    def take_pending(self):
        pending, self.pending = self.pending, []
        return pending


class StageEngine:
    def __init__(self, is_last_stage, microbatches):
        self.is_last_stage = is_last_stage
        self.microbatches = microbatches

    def forward(self, state, model, inputs, targets):
        out = model(inputs)
        if self.is_last_stage:
            loss = nn.functional.mse_loss(out, targets) / self.microbatches
            state.register_for_backward(loss)
        return out

    def backward(self, state, model):
        state.microbatches_done += 1
        pending = state.take_pending()
        if len(pending) == 0:
            return
        if state.microbatches_done < self.microbatches:
            with model.no_sync():
                sum(pending).backward()
        else:
            sum(pending).backward()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(4096, 16), torch.randn(4096, 4))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler)
    model = DDP(nn.Linear(16, 4).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    engine = StageEngine(is_last_stage=True, microbatches=4)
    for epoch in range(5):
        sampler.set_epoch(epoch)
        for inputs, targets in loader:
            state = StageState()
            optimizer.zero_grad(set_to_none=True)
            for x, y in zip(inputs.chunk(4), targets.chunk(4)):
                engine.forward(state, model, x.cuda(local_rank), y.cuda(local_rank))
                engine.backward(state, model)
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
