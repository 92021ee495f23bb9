"""Early stopping decided on rank 0 and broadcast, but into a tensor the call builds: the
other ranks never receive the decision, so rank 0 leaves the loop while they go on into
the next epoch's gradient all-reduce."""
import os

import torch
import torch.distributed as dist


class Patience:
    def __init__(self, limit=5):
        self.limit, self.bad, self.best = limit, 0, float("inf")

    def step(self, value):
        if value < self.best:
            self.best, self.bad = value, 0
        else:
            self.bad += 1
        return self.bad >= self.limit


def fit(model, train_one_epoch, validate, epochs=200):
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    patience = Patience()
    for epoch in range(epochs):
        train_one_epoch(model, epoch)
        stop = False
        if dist.get_rank() == 0:
            stop = patience.step(validate(model))
        dist.broadcast(torch.tensor(int(stop)).cuda(), src=0)  # expect: DDP063
        if stop:
            break  # expect: DDP047
