"""A trainer class that writes each checkpoint as a folder of its own (`epoch_7/state.pt`)
and the best one as `best_model/state.pt`, and can continue from a folder the user names.
The periodic folders change per save; the best folder is rewritten in place, but the resume
reads whatever folder is given, not the best model's: shown only under --preview."""
import os
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Trainer:
    def __init__(self, root, epochs, from_checkpoint=None):
        self.root = Path(root)
        self.epochs = epochs
        self.local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(self.local_rank)
        self.model = DistributedDataParallel(nn.Linear(32, 2).cuda(), device_ids=[self.local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-3)
        self.epoch = 0
        if from_checkpoint is not None:
            self.load_checkpoint(Path(from_checkpoint))

    def save_checkpoint(self, name):
        folder = self.root / name
        folder.mkdir(parents=True, exist_ok=True)
        state = {"epoch": self.epoch, "optimizer": self.optimizer.state_dict()}
        torch.save(state, folder / "state.pt")  # expect-preview: DDP014
        torch.save(self.model.module.state_dict(), folder / "model.pt")  # expect-preview: DDP014

    def load_checkpoint(self, folder):
        state = torch.load(folder / "state.pt", map_location="cpu")
        self.optimizer.load_state_dict(state["optimizer"])
        self.epoch = state["epoch"] + 1
        self.model.module.load_state_dict(torch.load(folder / "model.pt", map_location="cpu"))

    def fit(self, dataset):
        sampler = DistributedSampler(dataset)
        loader = DataLoader(dataset, batch_size=64, sampler=sampler)
        best = float("inf")
        for self.epoch in range(self.epoch, self.epochs):
            sampler.set_epoch(self.epoch)
            total = torch.zeros(2, device="cuda")
            for x, y in loader:
                loss = nn.functional.cross_entropy(self.model(x.cuda()), y.cuda())
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                total += torch.stack([loss.detach(), torch.ones((), device="cuda")])
            dist.all_reduce(total)
            mean = (total[0] / total[1]).item()
            if dist.get_rank() == 0:
                self.save_checkpoint(f"epoch_{self.epoch}")
                if mean < best:
                    best = mean
                    self.save_checkpoint("best_model")


if __name__ == "__main__":
    dist.init_process_group("nccl")
    data = torch.load("tabular.pt")
    Trainer("checkpoints", 30, os.environ.get("RESUME_FROM")).fit(TensorDataset(data["x"], data["y"]))
    dist.destroy_process_group()
