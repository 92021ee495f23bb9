"""Detection-style loop that calls the inner model to reach a custom forward signature."""
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Detector(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU())
        self.box_head = nn.Conv2d(16, 4, 1)
        self.cls_head = nn.Conv2d(16, 5, 1)

    def forward(self, images, return_features=False):
        feats = self.backbone(images)
        out = self.box_head(feats), self.cls_head(feats)
        return (*out, feats) if return_features else out


def main():
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    device = torch.device("cuda", local_rank)

    data = TensorDataset(torch.randn(1024, 3, 32, 32), torch.randn(1024, 4, 32, 32),
                         torch.randint(0, 5, (1024, 32, 32)))
    model = DDP(Detector().to(device), device_ids=[local_rank])
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scaler = torch.cuda.amp.GradScaler()
    sampler = DistributedSampler(data, shuffle=True, drop_last=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler)

    for epoch in range(6):
        sampler.set_epoch(epoch)
        for images, boxes, classes in loader:
            images, boxes, classes = images.to(device), boxes.to(device), classes.to(device)
            with torch.autocast("cuda", dtype=torch.float16):
                box_pred, cls_pred, feats = model.module(images, return_features=True)  # expect: DDP026
                loss = nn.functional.smooth_l1_loss(box_pred, boxes)
                loss = loss + nn.functional.cross_entropy(cls_pred, classes)
                loss = loss + 1e-4 * feats.pow(2).mean()
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        if dist.get_rank() == 0:
            print(f"epoch {epoch} loss {loss.item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
