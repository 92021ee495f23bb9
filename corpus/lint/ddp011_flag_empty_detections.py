"""A detector's training step returns early when the model finds no box in this rank's
images: how many boxes a model proposes depends on the images, so one rank can skip
`backward()` while the others wait in DDP's gradient all-reduce."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Conv2d(3, 8, 3, padding=1)
        self.score = nn.Conv2d(8, 1, 1)

    def forward(self, images):
        scores = self.score(torch.relu(self.backbone(images))).flatten(1)
        return [s[s > 0.5] for s in scores.sigmoid()]


class DetectionTrainer:
    def __init__(self, local_rank):
        self.device = torch.device("cuda", local_rank)
        self.model = DDP(Detector().to(self.device), device_ids=[local_rank])
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=1e-4)

    def step(self, images, counts):
        detections = self.model(images.to(self.device))
        found = torch.cat(detections)
        if len(found) == 0:
            return None  # expect: DDP011
        loss = (found.sum() - counts.to(self.device).sum()).abs()
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.detach()


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    data = TensorDataset(torch.rand(512, 3, 32, 32), torch.randint(0, 5, (512,)).float())
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    trainer = DetectionTrainer(local_rank)
    for epoch in range(12):
        sampler.set_epoch(epoch)
        for images, counts in loader:
            trainer.step(images, counts)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
