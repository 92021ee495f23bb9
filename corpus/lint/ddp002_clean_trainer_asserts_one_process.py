"""A continual-learning trainer whose distributed path is written but switched off: the
constructor asserts one GPU, so the DistributedSampler branch and the `.module` forward
never run (every launch trains in one process with a shuffling DataLoader)."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


class Trainer:
    def __init__(self, rank, config, model):
        self.rank = rank
        self.config = config
        self.distribute = config["n_gpu"] > 1  # multi-GPU training is not supported yet
        assert not self.distribute
        if self.distribute:
            dist.init_process_group("nccl", rank=rank, world_size=config["n_gpu"])
            model = DDP(model.cuda(rank), device_ids=[rank])
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])

    def loader(self, dataset):
        if self.distribute:
            sampler = DistributedSampler(dataset, shuffle=True)
            return DataLoader(dataset, batch_size=self.config["batch_size"], sampler=sampler)
        return DataLoader(dataset, batch_size=self.config["batch_size"], shuffle=True)

    def train_task(self, dataset, epochs):
        loader = self.loader(dataset)
        model = self.model.module if self.distribute else self.model
        for epoch in range(epochs):
            for inputs, labels in loader:
                loss = model.observe(inputs, labels)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
