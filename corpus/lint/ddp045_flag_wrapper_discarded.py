"""A recommender trainer class that sets up distribution itself: it wraps the model in
DDP and keeps only `.module`, so the training loop steps an unwrapped model on each rank's
shard."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler


class Trainer:
    def __init__(self, model, dataset, epochs=5):
        self.model = model
        self.dataset = dataset
        self.epochs = epochs

    def setup(self):
        dist.init_process_group("nccl")
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        self.model.cuda(local_rank)
        self.model = DistributedDataParallel(self.model, device_ids=[local_rank]).module  # expect: DDP045
        return local_rank

    def fit(self):
        local_rank = self.setup()
        optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        sampler = DistributedSampler(self.dataset, shuffle=True, drop_last=True)
        loader = DataLoader(self.dataset, batch_size=256, sampler=sampler)
        for epoch in range(self.epochs):
            sampler.set_epoch(epoch)
            for items, target in loader:
                scores = self.model(items.cuda(local_rank))
                loss = torch.nn.functional.cross_entropy(scores, target.cuda(local_rank))
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        if dist.get_rank() == 0:
            torch.save(self.model.state_dict(), "recommender.pt")
