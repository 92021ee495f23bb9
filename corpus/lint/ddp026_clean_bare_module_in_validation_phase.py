"""One epoch loop for both phases: training calls the DDP wrapper; only the validation
phase, which never backpropagates, unwraps it (no gradient sync to miss there)."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class Trainer:
    def __init__(self, model, optimizer, rank):
        self.model = DDP(model.cuda(rank), device_ids=[rank])
        self.optimizer = optimizer
        self.loss_fn = nn.CrossEntropyLoss()

    def run_epoch(self, phase, loader):
        net = self.model
        if phase == "train":
            net.train()
        else:
            if dist.get_world_size() > 1:
                net = self.model.module
            net.eval()
        total = 0.0
        for images, labels in loader:
            loss = self.loss_fn(net(images.cuda()), labels.cuda())
            if phase == "train":
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            total += loss.item()
        return total / max(len(loader), 1)


def main():
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    model = nn.Linear(32, 10)
    trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1), rank)
    data = [(torch.randn(8, 32), torch.randint(0, 10, (8,))) for _ in range(4)]
    for _ in range(3):
        trainer.run_epoch("train", data)
        with torch.no_grad():
            trainer.run_epoch("val", data)


if __name__ == "__main__":
    main()
