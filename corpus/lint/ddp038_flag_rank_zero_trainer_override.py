"""A frame-interpolation trainer: the base class runs the epochs and, on rank 0 only,
validates through `self.validate`, which the task's subclass defines. The validation
loader carries a DistributedSampler, so rank 0 scores its own quarter of the test clips
(with four processes) and picks `best.pth` on it; the other clips are never scored."""

import math
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler


class BaseTrainer:
    def __init__(self, model, train_set, test_set, epochs):
        dist.init_process_group("nccl")
        self.rank = dist.get_rank()
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        self.device = torch.device("cuda", local_rank)
        self.model = DDP(model.to(self.device), device_ids=[local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=2e-4)
        self.train_sampler = DistributedSampler(train_set, shuffle=True)
        self.train_loader = DataLoader(train_set, batch_size=8, sampler=self.train_sampler)
        self.test_loader = DataLoader(
            test_set, batch_size=4, sampler=DistributedSampler(test_set, shuffle=False)
        )
        self.epochs = epochs
        self.best_psnr = 0.0

    def fit(self):
        for epoch in range(self.epochs):
            self.train_sampler.set_epoch(epoch)
            self.train_one_epoch()
            if self.rank == 0:
                psnr = self.validate(self.test_loader)
                if psnr > self.best_psnr:  # expect: DDP038
                    self.best_psnr = psnr
                    torch.save(self.model.module.state_dict(), "best.pth.tmp")
                    os.replace("best.pth.tmp", "best.pth")
        dist.destroy_process_group()

    def train_one_epoch(self):
        self.model.train()
        for frames, target in self.train_loader:
            frames, target = frames.to(self.device), target.to(self.device)
            loss = F.l1_loss(self.model(frames), target)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

    def validate(self, loader):
        raise NotImplementedError


class InterpolationTrainer(BaseTrainer):
    def validate(self, loader):
        self.model.eval()
        scores = {"psnr": [], "l1": []}
        with torch.no_grad():
            for frames, target in loader:
                frames, target = frames.to(self.device), target.to(self.device)
                middle = self.model.module(frames).clamp(0, 1)
                mse = F.mse_loss(middle, target).item()
                scores["psnr"].append(10 * math.log10(1 / max(mse, 1e-10)))
                scores["l1"].append(F.l1_loss(middle, target).item())
        self.model.train()
        mean_psnr = sum(scores["psnr"]) / len(scores["psnr"])
        print(f"PSNR {mean_psnr:.2f}")  # expect: DDP038
        return mean_psnr


if __name__ == "__main__":
    clips = torch.load("vimeo_triplets.pt")
    InterpolationTrainer(torch.load("ifnet.pt"), clips["train"], clips["test"], 100).fit()
