"""Multi-node image classification with one spawned worker per GPU.

Start the same command on every node, changing only --node:

    python train.py /data/imagenet --nodes 2 --node 0 --master tcp://10.0.0.1:29500
    python train.py /data/imagenet --nodes 2 --node 1 --master tcp://10.0.0.1:29500

Each node spawns as many workers as it has GPUs. A worker's spawn index is its local
rank (its GPU); its global rank is node * gpus_here + local.
"""
import argparse
import os
import shutil
import time

import torch
from torch.backends import cudnn
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from torchvision import datasets, models
from torchvision import transforms as T

cli = argparse.ArgumentParser(description="spawn-per-GPU classifier training")
cli.add_argument("root", help="folder with train/ and val/ image folders")
cli.add_argument("--arch", default="resnet50")
cli.add_argument("--nodes", type=int, default=1)
cli.add_argument("--node", type=int, default=0, help="index of this node")
cli.add_argument("--master", default="tcp://127.0.0.1:29500")
cli.add_argument("--node-batch", type=int, default=512, help="images per step on one node")
cli.add_argument("--node-loaders", type=int, default=32, help="loader workers per node")
cli.add_argument("--epochs", type=int, default=100)
cli.add_argument("--lr", type=float, default=0.2)
cli.add_argument("--wd", type=float, default=5e-5)
cli.add_argument("--resume", default="")

MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


def launch():
    cfg = cli.parse_args()
    gpus_here = torch.cuda.device_count()
    # from here on, the world counts processes, not nodes
    cfg.world = cfg.nodes * gpus_here
    mp.spawn(worker, args=(gpus_here, cfg), nprocs=gpus_here)


def worker(local, gpus_here, cfg):
    cfg.local = local
    cfg.global_rank = cfg.node * gpus_here + local
    dist.init_process_group(
        "nccl", init_method=cfg.master, rank=cfg.global_rank, world_size=cfg.world
    )
    torch.cuda.set_device(cfg.local)

    net = getattr(models, cfg.arch)()
    net.cuda(cfg.local)
    net = nn.SyncBatchNorm.convert_sync_batchnorm(net)
    net = nn.parallel.DistributedDataParallel(net, device_ids=[cfg.local])
    # the node's batch and loader workers are shared by its processes
    batch = cfg.node_batch // gpus_here
    loaders = max(1, cfg.node_loaders // gpus_here)

    loss_fn = nn.CrossEntropyLoss().cuda(cfg.local)
    sgd = torch.optim.SGD(net.parameters(), lr=cfg.lr, momentum=0.9, weight_decay=cfg.wd)
    decay = torch.optim.lr_scheduler.MultiStepLR(sgd, milestones=[30, 60, 90], gamma=0.1)

    first, best = 0, 0.0
    if cfg.resume and os.path.isfile(cfg.resume):
        saved = torch.load(cfg.resume, map_location=f"cuda:{cfg.local}")
        net.module.load_state_dict(saved["model"])
        sgd.load_state_dict(saved["optimizer"])
        decay.load_state_dict(saved["decay"])
        first, best = saved["next_epoch"], saved["best"]

    cudnn.benchmark = True  # fixed input size: let cuDNN pick its fastest kernels
    norm = T.Normalize(MEAN, STD)
    augment = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(), norm])
    center = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(), norm])
    train_set = datasets.ImageFolder(os.path.join(cfg.root, "train"), augment)
    val_set = datasets.ImageFolder(os.path.join(cfg.root, "val"), center)
    train_split = DistributedSampler(train_set, drop_last=True)
    val_split = DistributedSampler(val_set, shuffle=False, drop_last=True)
    train_loader = DataLoader(
        train_set, batch, sampler=train_split, num_workers=loaders, pin_memory=True
    )
    val_loader = DataLoader(val_set, batch, sampler=val_split, num_workers=loaders, pin_memory=True)

    for epoch in range(first, cfg.epochs):
        train_split.set_epoch(epoch)
        one_epoch(net, loss_fn, sgd, train_loader, epoch, cfg)
        top1 = measure(net, loss_fn, val_loader, cfg)
        decay.step()

        improved = top1 > best
        best = max(best, top1)
        # one copy per node: the first worker of each node writes to its local disk
        if cfg.global_rank % gpus_here == 0:
            state = {
                "next_epoch": epoch + 1,
                "arch": cfg.arch,
                "model": net.module.state_dict(),
                "best": best,
                "optimizer": sgd.state_dict(),
                "decay": decay.state_dict(),
            }
            store(state, improved)
    dist.destroy_process_group()


def one_epoch(net, loss_fn, sgd, loader, epoch, cfg):
    net.train()
    tick = time.time()
    for step, (images, labels) in enumerate(loader):
        images = images.cuda(cfg.local, non_blocking=True)
        labels = labels.cuda(cfg.local, non_blocking=True)
        loss = loss_fn(net(images), labels)
        sgd.zero_grad()
        loss.backward()
        sgd.step()
        if cfg.global_rank == 0 and step % 50 == 0:
            took = time.time() - tick
            print(f"epoch {epoch} step {step}/{len(loader)} loss {loss.item():.3f} ({took:.2f}s)")
        tick = time.time()


def measure(net, loss_fn, loader, cfg):
    """Top-1 accuracy over the whole validation set: every rank adds its counts."""
    net.eval()
    totals = torch.zeros(3, device=f"cuda:{cfg.local}")  # summed loss, hits, seen
    with torch.no_grad():
        for images, labels in loader:
            images = images.cuda(cfg.local, non_blocking=True)
            labels = labels.cuda(cfg.local, non_blocking=True)
            logits = net(images)
            totals += torch.stack(
                [
                    loss_fn(logits, labels) * len(labels),
                    (logits.argmax(dim=1) == labels).sum(),
                    torch.tensor(len(labels), device=totals.device),
                ]
            )
    dist.all_reduce(totals)
    loss_sum, hits, seen = totals.tolist()
    if cfg.global_rank == 0:
        print(f"val top1 {100 * hits / seen:.2f}% loss {loss_sum / seen:.3f}")
    return 100 * hits / seen


def store(state, improved, path="last.pth"):
    """Write through a temporary name, so a crash never leaves a torn file."""
    torch.save(state, path + ".part")
    os.replace(path + ".part", path)
    if improved:
        shutil.copyfile(path, "best.pth.part")
        os.replace("best.pth.part", "best.pth")


if __name__ == "__main__":
    launch()
