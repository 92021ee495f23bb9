"""Voxel segmentation: every rank trains on its shard, rank 0 scores the whole
validation split (its loader is built with `distributed=False`, whatever the
config's other loader options say)."""

import argparse
import os

import torch
import torch.distributed as dist
import yaml
from torch.nn.parallel import DistributedDataParallel

from loaders import make_loader
from scenes import SceneDataset, VoxelNet


def point_accuracy(model, loader):
    model.eval()
    correct = 0
    total = 0
    with torch.no_grad():
        for voxels, labels in loader:
            predicted = model(voxels.cuda()).argmax(dim=1).cpu()  # expect-preview: DDP021
            correct += (predicted == labels).sum().item()
            total += labels.numel()
    model.train()
    return correct / max(total, 1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("config")
    parser.add_argument("--dist", action="store_true")
    args = parser.parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)

    if args.dist:
        dist.init_process_group("nccl")
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    rank = dist.get_rank() if args.dist else 0

    model = VoxelNet(cfg["classes"]).cuda()
    if args.dist:
        model = DistributedDataParallel(model, device_ids=[torch.cuda.current_device()])
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)

    train_set = SceneDataset(cfg["root"], "train")
    val_set = SceneDataset(cfg["root"], "val")
    train_loader = make_loader(train_set, training=True, distributed=args.dist, **cfg["train_loader"])
    val_loader = make_loader(val_set, training=False, distributed=False, **cfg["val_loader"])

    best = 0.0
    for epoch in range(cfg["epochs"]):
        if args.dist:
            train_loader.sampler.set_epoch(epoch)
        for voxels, labels in train_loader:
            loss = torch.nn.functional.cross_entropy(model(voxels.cuda()), labels.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if rank == 0:
            accuracy = point_accuracy(model, val_loader)
            print(f"epoch {epoch}: val point accuracy {accuracy:.3f}")
            if accuracy > best:
                best = accuracy
                torch.save(model.state_dict(), "best.pt")  # expect-preview: DDP006, DDP014


if __name__ == "__main__":
    main()
