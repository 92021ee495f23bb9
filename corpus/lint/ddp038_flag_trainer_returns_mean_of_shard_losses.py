"""Time-series forecaster: a trainer class whose validation method returns the mean of
the losses it collected over its sampler's shard, used for checkpoints and early stopping."""
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Forecaster:
    def __init__(self, model, optimizer, train_loader, valid_loader, patience):
        self.model = model
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.valid_loader = valid_loader
        self.patience = patience

    def fit(self, epochs):
        best, stale = float("inf"), 0
        for epoch in range(epochs):
            self.train_loader.sampler.set_epoch(epoch)
            self._train()
            valid_rmse = self._validate()
            print(f"epoch {epoch}: valid RMSE {valid_rmse:.4f}")  # expect: DDP038
            if valid_rmse < best:  # expect: DDP038
                best, stale = valid_rmse, 0
            else:
                stale += 1
                if stale >= self.patience:
                    break  # expect: DDP039

    def _train(self):
        self.model.train()
        for window, target in self.train_loader:
            loss = nn.functional.mse_loss(self.model(window.cuda()), target.cuda())
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    @torch.no_grad()
    def _validate(self):
        self.model.eval()
        errors = []
        for window, target in self.valid_loader:
            errors.append(nn.functional.mse_loss(self.model(window.cuda()), target.cuda()).item() ** 0.5)
        return sum(errors) / len(errors)


def run(rank, world_size):
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:23456", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    series = TensorDataset(torch.randn(8000, 48), torch.randn(8000, 12))
    train_set, valid_set = torch.utils.data.random_split(
        series, [7000, 1000], generator=torch.Generator().manual_seed(0)
    )
    train_loader = DataLoader(train_set, batch_size=64, sampler=DistributedSampler(train_set))
    valid_loader = DataLoader(valid_set, batch_size=64, sampler=DistributedSampler(valid_set, shuffle=False))
    model = DDP(nn.Sequential(nn.Linear(48, 128), nn.ReLU(), nn.Linear(128, 12)).cuda(), device_ids=[rank])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    Forecaster(model, optimizer, train_loader, valid_loader, patience=10).fit(300)
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(4,), nprocs=4)
