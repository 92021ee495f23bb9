"""A detector trainer whose early stopper runs on the main process; the decision then goes
to every rank through `broadcast_object_list`, and the other ranks take it from the list
they received before the loop is left: every rank breaks at the same epoch."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

RANK = int(os.getenv("RANK", -1))
LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))


class EarlyStopping:
    def __init__(self, patience=30):
        self.best, self.best_epoch, self.patience = 0.0, 0, patience

    def __call__(self, epoch, fitness):
        if fitness >= self.best:
            self.best, self.best_epoch = fitness, epoch
        return epoch - self.best_epoch >= self.patience


def main(epochs=300):
    torch.cuda.set_device(LOCAL_RANK)
    dist.init_process_group("nccl")
    images = TensorDataset(torch.randn(1024, 3, 32, 32), torch.randint(0, 10, (1024,)))
    sampler = DistributedSampler(images, shuffle=True)
    loader = DataLoader(images, batch_size=16, sampler=sampler)
    model = DDP(nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 10)).cuda(LOCAL_RANK),
                device_ids=[LOCAL_RANK])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.937)
    stopper, stop = EarlyStopping(), False
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for images_batch, targets in loader:
            logits = model(images_batch.cuda(LOCAL_RANK, non_blocking=True))
            loss = nn.functional.cross_entropy(logits, targets.cuda(LOCAL_RANK))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        if RANK in {-1, 0}:
            fitness = -loss.item()
            stop = stopper(epoch, fitness)
        if RANK != -1:
            broadcast_list = [stop if RANK == 0 else None]
            dist.broadcast_object_list(broadcast_list, 0)
            if RANK != 0:
                stop = broadcast_list[0]
        if stop:
            break
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
