"""A trainer class whose distributed mode shards the data and averages the logged loss, but
never wraps the model: each process fits its own adapter on its shard."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Trainer:
    def __init__(self, model, dataset, device, lr=1e-4):
        self.model = model.to(device)
        self.device = device
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)
        self.sampler = DistributedSampler(dataset, shuffle=True, drop_last=True)
        self.loader = DataLoader(dataset, batch_size=16, sampler=self.sampler)

    def fit(self, epochs):
        for epoch in range(epochs):
            self.sampler.set_epoch(epoch)
            total = torch.zeros(2, device=self.device)
            for x, y in self.loader:
                loss = nn.functional.mse_loss(self.model(x.to(self.device)), y.to(self.device))
                self.optimizer.zero_grad()
                loss.backward()  # expect: DDP045
                self.optimizer.step()
                total += torch.stack([loss.detach(), torch.ones((), device=self.device)])
            dist.all_reduce(total)
            if dist.get_rank() == 0:
                print(f"epoch {epoch}: {(total[0] / total[1]).item():.4f}")


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.randn(2048, 48), torch.randn(2048, 48))
    trainer = Trainer(nn.Linear(48, 48), data, torch.device("cuda", local_rank))
    trainer.fit(epochs=3)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
