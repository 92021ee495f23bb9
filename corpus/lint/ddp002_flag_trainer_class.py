"""A trainer class: the loader is handed to the constructor, stored on `self`, read by one
method and the epoch loop lives in another; the sampler comes out of a tuple assignment."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Trainer:
    def __init__(self, model, train_loader, local_rank, epochs):
        self.model = model
        self.train_loader = train_loader
        self.local_rank = local_rank
        self.epochs = epochs
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)

    def _train_epoch(self):
        self.model.train()
        for x, y in self.train_loader:
            x, y = x.cuda(self.local_rank), y.cuda(self.local_rank)
            loss = nn.functional.cross_entropy(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def fit(self):
        for epoch in range(self.epochs):  # expect: DDP002
            self._train_epoch()
            if dist.get_rank() == 0:
                print(f"epoch {epoch} done")


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    train_set = TensorDataset(torch.randn(2048, 20), torch.randint(0, 5, (2048,)))
    sampler, shuffle = None, True
    if dist.get_world_size() > 1:
        sampler, shuffle = DistributedSampler(train_set, drop_last=True), False
    loader = DataLoader(train_set, batch_size=64, shuffle=shuffle, sampler=sampler)
    model = DDP(nn.Linear(20, 5).cuda(local_rank), device_ids=[local_rank])
    Trainer(model, loader, local_rank, epochs=30).fit()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
