"""A small trainer class: validation accuracy over the sharded validation loader, logged
by every rank against the size of the whole validation set."""
import logging
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

log = logging.getLogger(__name__)


class Trainer:
    def __init__(self, model, train_set, val_set, local_rank):
        self.device = torch.device("cuda", local_rank)
        self.model = DDP(model.to(self.device), device_ids=[local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=2e-4)
        self.train_sampler = DistributedSampler(train_set, drop_last=True)
        self.train_loader = DataLoader(train_set, batch_size=32, sampler=self.train_sampler)
        self.val_loader = DataLoader(
            val_set, batch_size=128, sampler=DistributedSampler(val_set, shuffle=False)
        )

    def train_epoch(self):
        self.model.train()
        for x, y in self.train_loader:
            x, y = x.to(self.device), y.to(self.device)
            loss = nn.functional.cross_entropy(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    @torch.no_grad()
    def validate(self, epoch):
        self.model.eval()
        hits = 0
        for x, y in self.val_loader:
            logits = self.model(x.to(self.device))
            hits += (logits.argmax(-1) == y.to(self.device)).sum().item()
        accuracy = hits / len(self.val_loader.dataset)  # expect: DDP028
        log.info("epoch %d val accuracy %.4f", epoch, accuracy)

    def fit(self, epochs):
        for epoch in range(epochs):
            self.train_sampler.set_epoch(epoch)
            self.train_epoch()
            self.validate(epoch)


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(8000, 64), torch.randint(0, 4, (8000,)))
    val_set = TensorDataset(torch.randn(2000, 64), torch.randint(0, 4, (2000,)))
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 4))
    Trainer(model, train_set, val_set, local_rank).fit(10)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
