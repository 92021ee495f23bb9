"""A 3D visual-grounding evaluation: each rank collects the IoU of every sample of its own
validation shard and computes Acc@0.25 / Acc@0.5 from them. The thresholds compare each
sample's IoU (no decision is made from one shard there); the logged accuracies are the
shard's, never gathered: that is the finding."""
import os

import numpy as np
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def box_iou(pred, target):
    low = torch.maximum(pred[:, :3], target[:, :3])
    high = torch.minimum(pred[:, 3:], target[:, 3:])
    inter = (high - low).clamp(min=0).prod(1)
    volume = lambda b: (b[:, 3:] - b[:, :3]).prod(1)  # noqa: E731
    return inter / (volume(pred) + volume(target) - inter)


def evaluate(model, loader):
    model.eval()
    ious = []
    with torch.no_grad():
        for points, boxes in loader:
            ious.extend(box_iou(model(points.cuda()), boxes.cuda()).tolist())
    acc50 = (np.array(ious) > 0.5).sum().astype(float) / len(ious)
    acc25 = np.mean(np.array(ious) >= 0.25)
    print(f"Acc@0.25 {acc25:.4f} Acc@0.5 {acc50:.4f}")  # expect: DDP038
    return acc50


def main():
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    data = torch.load("scenes_val.pt")
    val_set = TensorDataset(data["points"], data["boxes"])
    loader = DataLoader(val_set, batch_size=16, sampler=DistributedSampler(val_set, shuffle=False))
    model = DistributedDataParallel(nn.Linear(1024, 6).cuda(), device_ids=[local_rank])
    model.module.load_state_dict(torch.load("grounding.pth", map_location="cpu"))
    evaluate(model, loader)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
