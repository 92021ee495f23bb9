"""A trainer class whose checkpoint method lost its calls: both lines that called it are
commented out, and no other code names it, so whether it ever runs is unknown."""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, model, loader, optimizer):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.model = DDP(model.to(self.local_rank), device_ids=[self.local_rank])
        self.loader = loader
        self.optimizer = optimizer

    def _run_epoch(self, epoch):
        self.loader.sampler.set_epoch(epoch)
        for inputs, targets in self.loader:
            inputs, targets = inputs.to(self.local_rank), targets.to(self.local_rank)
            loss = torch.nn.functional.cross_entropy(self.model(inputs), targets)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def _save_checkpoint(self, epoch):
        if dist.get_rank() == 0:
            torch.save(self.model.state_dict(), f"checkpoint_{epoch}.pt")  # expect-preview: DDP006

    def train(self, epochs):
        for epoch in range(epochs):
            self._run_epoch(epoch)
            # if self.local_rank == 0:
            #     self._save_checkpoint(epoch)


def evaluate(model, path, loader):
    model.load_state_dict(torch.load(path, map_location="cpu"))
    model.eval()
    with torch.no_grad():
        return sum((model(x).argmax(1) == y).sum().item() for x, y in loader)


def main(model, loader, optimizer, epochs):
    dist.init_process_group("nccl")
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    Trainer(model, loader, optimizer).train(epochs)
    dist.destroy_process_group()
