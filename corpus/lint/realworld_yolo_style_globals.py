"""Single-stage detector training in the style of the YOLO repositories.

The launcher's ranks are read once, at import, into module constants (-1 when the script
runs as one plain process); `RANK in (-1, 0)` picks the process that logs and saves, and
the label cache is built by local rank 0 while the other ranks of the node wait.

    python -m torch.distributed.run --nproc_per_node 4 train.py --data coco.yaml
"""
import argparse
import math
import os
from contextlib import contextmanager
from copy import deepcopy
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from detkit.data import LabeledImages, stack_batch
from detkit.loss import DetectionLoss
from detkit.net import SingleStageNet

# set by torchrun; absent when the script runs as one plain process
LOCAL_RANK = int(os.environ.get("LOCAL_RANK", -1))
RANK = int(os.environ.get("RANK", -1))
WORLD_SIZE = int(os.environ.get("WORLD_SIZE", 1))


@contextmanager
def local_leader_first(local):
    """Local rank 0 runs the block first (it writes the cache); the others wait, then read it."""
    if local > 0:
        dist.barrier(device_ids=[local])
    yield
    if local == 0:
        dist.barrier(device_ids=[0])


def bare(model):
    wrapped = isinstance(model, (nn.DataParallel, DistributedDataParallel))
    return model.module if wrapped else model


class Ema:
    """Moving average of the weights, with a decay that ramps up over the first updates."""

    def __init__(self, model, target=0.9999, ramp=2000):
        self.copy = deepcopy(bare(model)).eval()
        self.count = 0
        self.target, self.ramp = target, ramp
        self.copy.requires_grad_(False)

    def update(self, model):
        self.count += 1
        keep = self.target * (1 - math.exp(-self.count / self.ramp))
        live = bare(model).state_dict()
        with torch.no_grad():
            for name, value in self.copy.state_dict().items():
                if value.dtype.is_floating_point:
                    value.mul_(keep).add_(live[name].detach(), alpha=1 - keep)


def build_loader(root, size, batch, local_rank=-1, workers=8, shuffle=False):
    with local_leader_first(local_rank):  # one process per node scans the labels
        images = LabeledImages(root, size, augment=shuffle)
    batch = min(batch, len(images))
    order = None
    if local_rank != -1:
        order = DistributedSampler(images, shuffle=shuffle, drop_last=True)
    loader = DataLoader(
        images,
        batch_size=batch,
        sampler=order,
        shuffle=order is None and shuffle,
        num_workers=min(workers, os.cpu_count() or 1),
        collate_fn=stack_batch,
        pin_memory=True,
    )
    return loader, images


def fit(hyp, device):
    out = Path(hyp.out)
    latest = out / "weights" / "latest.pt"
    on_gpu = device.type == "cuda"

    net = SingleStageNet(hyp.model_cfg, classes=hyp.classes).to(device)
    nominal = 64  # the batch the hyper-parameters were tuned for
    accumulate = max(1, round(nominal / hyp.batch))  # micro-batches per optimizer step
    sgd = torch.optim.SGD(net.parameters(), lr=hyp.lr, momentum=0.937, nesterov=True)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        sgd, lambda e: 1.0 - (1.0 - hyp.final_lr) * e / hyp.epochs
    )

    ema = Ema(net) if RANK in (-1, 0) else None
    if hyp.sync_bn and on_gpu and RANK != -1:
        net = nn.SyncBatchNorm.convert_sync_batchnorm(net).to(device)

    per_rank = hyp.batch // WORLD_SIZE
    loader, _ = build_loader(
        hyp.images, hyp.size, per_rank, local_rank=LOCAL_RANK, workers=hyp.workers, shuffle=True
    )
    batches = len(loader)

    if on_gpu and RANK != -1:
        net = DistributedDataParallel(net, device_ids=[LOCAL_RANK], output_device=LOCAL_RANK)

    scaler = torch.cuda.amp.GradScaler(enabled=on_gpu)
    criterion = DetectionLoss(bare(net))
    stepped_at = -1
    for epoch in range(hyp.epochs):
        net.train()
        if RANK != -1:
            loader.sampler.set_epoch(epoch)
        sgd.zero_grad()
        for i, (imgs, boxes, _paths, _shapes) in enumerate(loader):
            seen = epoch * batches + i
            imgs = imgs.to(device, non_blocking=True).float() / 255
            with torch.cuda.amp.autocast(on_gpu):
                preds = net(imgs)
                loss, parts = criterion(preds, boxes.to(device))
            scaler.scale(loss).backward()  # expect: DDP024 (true, info)
            if seen - stepped_at >= accumulate:
                scaler.unscale_(sgd)
                nn.utils.clip_grad_norm_(net.parameters(), max_norm=10.0)
                scaler.step(sgd)
                scaler.update()
                sgd.zero_grad()
                if ema is not None:
                    ema.update(net)
                stepped_at = seen
        schedule.step()

        if RANK in (-1, 0):
            snapshot = {
                "epoch": epoch,
                "model": deepcopy(bare(net)).half(),
                "ema": deepcopy(ema.copy).half(),
                "ema_count": ema.count,
                "optimizer": sgd.state_dict(),
            }
            staged = latest.with_suffix(".staged")
            torch.save(snapshot, staged)
            staged.replace(latest)
            del snapshot
    torch.cuda.empty_cache()
    return latest


def run(hyp):
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    if LOCAL_RANK != -1:
        if hyp.batch % WORLD_SIZE:
            raise SystemExit(f"--batch {hyp.batch} is not a multiple of {WORLD_SIZE} ranks")
        device = torch.device(f"cuda:{LOCAL_RANK}")
        torch.cuda.set_device(device)
        dist.init_process_group("nccl" if dist.is_nccl_available() else "gloo")
    fit(hyp, device)
    if WORLD_SIZE > 1:
        if RANK == 0:
            print("training done, leaving the process group")
        dist.destroy_process_group()


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-cfg", default="cfg/det-small.yaml")
    ap.add_argument("--images", default="datasets/det/train")
    ap.add_argument("--out", default="runs/det/exp")
    ap.add_argument("--classes", type=int, default=80)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--batch", type=int, default=32, help="total over all GPUs")
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--final-lr", type=float, default=0.01, help="fraction of --lr at the end")
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--sync-bn", action="store_true")
    return ap.parse_args()


if __name__ == "__main__":
    run(parse())
