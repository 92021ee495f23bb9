"""A forecasting trainer class whose early stopping is decided and taken on rank 0 alone:
rank 0 leaves the epoch loop, the others start the next epoch. Their first step's backward
(a scaled loss) all-reduces the gradients through DDP, which rank 0 never joins, before the
epoch's loss reduction. The model comes from a builder the base class calls and the
subclass overrides (`self._build_model()`), which wraps it in DDP: the message names the
backward."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Experiment:
    def __init__(self, local_rank):
        self.local_rank = local_rank
        self.model = self._build_model()
        self.scaler = torch.cuda.amp.GradScaler()

    def _build_model(self):
        raise NotImplementedError


class Forecaster(Experiment):
    def _build_model(self):
        net = nn.Sequential(nn.Linear(96, 256), nn.GELU(), nn.Linear(256, 24)).cuda()
        return DistributedDataParallel(net, device_ids=[self.local_rank])

    def train(self, dataset, epochs=100):
        sampler = DistributedSampler(dataset)
        loader = DataLoader(dataset, batch_size=64, sampler=sampler)
        optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        best, patience = float("inf"), 0
        for epoch in range(epochs):
            sampler.set_epoch(epoch)
            train_loss = torch.zeros((), device="cuda")
            for x, y in loader:
                with torch.autocast("cuda"):
                    loss = nn.functional.mse_loss(self.model(x.cuda()), y.cuda())
                optimizer.zero_grad()
                self.scaler.scale(loss).backward()
                self.scaler.step(optimizer)
                self.scaler.update()
                train_loss += loss.detach()
            dist.reduce(train_loss, 0, op=dist.ReduceOp.SUM)
            if self.local_rank == 0:
                if train_loss.item() < best:
                    best, patience = train_loss.item(), 0
                else:
                    patience += 1
                if patience >= 10:
                    break  # expect-preview: DDP047


if __name__ == "__main__":
    dist.init_process_group("nccl")
    rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(rank)
    windows = torch.load("traffic_windows.pt")
    Forecaster(rank).train(TensorDataset(windows["x"], windows["y"]))
    dist.destroy_process_group()
