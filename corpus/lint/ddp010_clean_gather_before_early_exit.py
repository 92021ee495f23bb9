"""An evaluator in the detectron2 style: every rank synchronizes and gathers, then the other
ranks return early and rank 0 alone summarizes; plus a reduction skipped on one process."""
import itertools
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def is_main_process():
    return dist.get_rank() == 0


def all_mean(value, world_size):
    if world_size == 1:
        return value
    dist.all_reduce(value)
    return value / world_size


class Evaluator:
    def __init__(self):
        self.predictions = []

    def process(self, outputs, targets):
        correct = (outputs.argmax(dim=1) == targets).sum().item()
        self.predictions.append((correct, targets.numel()))

    def evaluate(self):
        dist.barrier()
        gathered = [None] * dist.get_world_size()
        dist.all_gather_object(gathered, self.predictions)
        if not is_main_process():
            return {}
        pairs = list(itertools.chain(*gathered))
        correct = sum(c for c, _ in pairs)
        total = sum(n for _, n in pairs)
        return {"accuracy": correct / max(total, 1)}


def main(epochs=2):
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    world_size = dist.get_world_size()
    data = TensorDataset(torch.randn(512, 8), torch.randint(0, 4, (512,)))
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler, num_workers=2)
    val_loader = DataLoader(data, batch_size=64, sampler=DistributedSampler(data, shuffle=False))  # expect-preview: DDP003
    model = DDP(nn.Linear(8, 4).cuda(local_rank), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:
            x, y = x.cuda(local_rank, non_blocking=True), y.cuda(local_rank, non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        evaluator = Evaluator()
        with torch.no_grad():
            for x, y in val_loader:
                evaluator.process(model(x.cuda(local_rank)), y.cuda(local_rank))
        metrics = evaluator.evaluate()
        mean_loss = all_mean(loss.detach(), world_size)
        if is_main_process():
            print(epoch, metrics, mean_loss.item())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
